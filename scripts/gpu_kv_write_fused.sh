#!/usr/bin/env bash
# The KV write and the fused step on the GPU machine, in one device call (run from the repository root;
# $OUT gets the files; first written for issue 13):
#   1. the compiled tests of these kernels: tests/gpu/test_fused_step.py and the KV-write,
#      slot-mapping and search tests of tests/gpu/test_kernels.py (gpu-marked ones included)
#   2. python3 scripts/kv_write_fused_gpu.py bench --json $OUT/kv_write_fused.json: the KV write at every
#      dtype x layout at 64K and 128K tokens against the measured copy bandwidth, and the fused step bench
#      (all shapes, 1/2/4 groups, V1/V2, fused/separate, three timings), with the goals
#   3. compute-sanitizer memcheck over the fused step tests and the KV-write tests
#   4. python3 scripts/kv_write_fused_gpu.py sweep --json $OUT/sweep.json: KV-write tokens per program x
#      warps; fused step search fan-out x prefix load x CSR requests per program
#   5. ncu (--clock-control none) over one launch of each kernel at a few shapes: $OUT/ncu.csv
# then a summary. Everything is tee'd to $OUT/log.txt. Files: log.txt, summary.txt, kv_write_fused.json,
# sweep.json, ncu.csv. Each part has its own timeout; all share one deadline (GPU_RUN_BUDGET_S, 540 s;
# the runner is scripts/gpu_parts.sh).
#   usage: bash scripts/gpu_kv_write_fused.sh [PART ...]   (parts: tests bench memcheck sweep ncu; default
#          all, in that order; SWEEP_ONLY=kv|fused sweeps one kernel)
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/kvviz-gpu}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
SUMMARY_W=22
source scripts/gpu_parts.sh
PARTS=${*:-tests bench memcheck sweep ncu}
for p in $PARTS; do
    case $p in tests|bench|memcheck|sweep|ncu) ;; *) echo "unknown part '$p' (tests bench memcheck sweep ncu)" >&2; exit 2;; esac
done

want() { [[ " $PARTS " == *" $1 "* ]]; }
KTESTS="fused_step or kv_write or slot or search"   # -k matches the module name too: all of test_fused_step.py
SCRIPT=scripts/kv_write_fused_gpu.py

main() {
device_header

if want tests; then
    run_part "pytest compiled" 150 "$LOGS/pytest.log" \
        python3 -m pytest tests/gpu/test_fused_step.py tests/gpu/test_kernels.py -k "$KTESTS" \
        -q -p no:cacheprovider -rs &&
    add_summary "pytest compiled" "$(pytest_line "$LOGS/pytest.log")"
fi
if want bench; then
    run_part "kv_write_fused bench" 200 "$LOGS/bench.log" python3 $SCRIPT bench --json "$OUT/kv_write_fused.json" &&
    add_summary "kv_write_fused bench" "$(grep -E '^kv_write_fused bench:' "$LOGS/bench.log" | tail -1); $(grep -c '^GOAL MET' "$LOGS/bench.log") goals met, $(grep -c '^GOAL NOT MET' "$LOGS/bench.log") not"
fi
if want memcheck; then
    run_part "memcheck" 150 "$LOGS/memcheck.log" \
        env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 3 \
        python3 -m pytest tests/gpu/test_fused_step.py tests/gpu/test_kernels.py -k "fused_step or kv_write" \
        -q -p no:cacheprovider -x &&
    add_summary "memcheck" "$(grep -E 'ERROR SUMMARY' "$LOGS/memcheck.log" | tail -1 | sed 's/=* *//'); $(pytest_line "$LOGS/memcheck.log")"
fi
if want sweep; then
    run_part "kv_write_fused sweep" 150 "$LOGS/sweep.log" python3 $SCRIPT sweep ${SWEEP_ONLY:+--only $SWEEP_ONLY} --json "$OUT/sweep.json" &&
    add_summary "kv_write_fused sweep" "$(grep -E '^kv_write_fused sweep:' "$LOGS/sweep.log" | tail -1)"
fi
if want ncu; then
    run_part "ncu" 90 "$LOGS/ncu.log" \
        ncu --clock-control none -k 'regex:_fused_step_kernel|_kv_write_kernel' --launch-skip 0 --launch-count 40 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section MemoryWorkloadAnalysis --csv --page details python3 $SCRIPT profile &&
    { grep -E '^"' "$LOGS/ncu.log" > "$OUT/ncu.csv"; add_summary "ncu" "$(wc -l < "$OUT/ncu.csv") csv lines"; }
fi

print_summary
}

main 2>&1 | tee "$OUT/log.txt"
