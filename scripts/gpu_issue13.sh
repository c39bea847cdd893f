#!/usr/bin/env bash
# Issue 13 on the GPU machine, in one device call (run from the repository root; $OUT gets the files):
#   1. the compiled tests of the kernels issue 13 changes: tests/gpu/test_fused_step.py and the KV-write,
#      slot-mapping and search tests of tests/gpu/test_kernels.py (gpu-marked ones included)
#   2. python3 scripts/issue13_gpu.py bench --json $OUT/issue13.json: the KV write at every dtype x layout
#      at 64K and 128K tokens against the measured copy bandwidth, and the fused step bench (all shapes,
#      1/2/4 groups, V1/V2, fused/separate, three timings), with the goals
#   3. compute-sanitizer memcheck over the fused step tests and the KV-write tests
#   4. python3 scripts/issue13_gpu.py sweep --json $OUT/sweep.json: KV-write tokens per program x warps;
#      fused step search fan-out x prefix load x CSR requests per program
#   5. ncu (--clock-control none) over one launch of each kernel at a few shapes: $OUT/ncu.csv
# then a summary. Everything is tee'd to $OUT/log.txt. Files: log.txt, summary.txt, issue13.json,
# sweep.json, ncu.csv. Each part has its own timeout; all share one deadline (GPU_RUN_BUDGET_S, 540 s).
#   usage: bash scripts/gpu_issue13.sh [PART ...]   (parts: tests bench memcheck sweep ncu; default all,
#          in that order; SWEEP_ONLY=kv|fused sweeps one kernel)
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/kvviz-gpu}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
BUDGET=${GPU_RUN_BUDGET_S:-540}
PARTS=${*:-tests bench memcheck sweep ncu}
LOGS=$(mktemp -d /tmp/kvviz-logs.XXXX)
summary=()

left() { echo $((BUDGET - SECONDS)); }
want() { [[ " $PARTS " == *" $1 "* ]]; }
run_part() {  # NAME CAP_S LOGFILE CMD...
    local name=$1 cap=$2 log=$3
    shift 3
    local t=$(( $(left) - 10 ))
    [ "$t" -gt "$cap" ] && t=$cap
    if [ "$t" -lt 15 ]; then
        summary+=("$(printf '%-22s %5s %6s  %s' "$name" "-" "-" "SKIPPED: out of time")")
        return 1
    fi
    echo
    echo "==== $name (timeout ${t}s) ===="
    local t0=$SECONDS
    timeout --kill-after=5 "$t" "$@" 2>&1 | tee "$log"
    LAST_RC=${PIPESTATUS[0]}
    LAST_S=$((SECONDS - t0))
    [ "$LAST_RC" = 124 ] && echo "(timed out after ${t}s)" | tee -a "$log"
    return 0
}
add_summary() { summary+=("$(printf '%-22s %5s %6s  %s' "$1" "$LAST_RC" "${LAST_S}s" "$2")"); }
pytest_line() { grep -E ' in [0-9.]+s' "$1" | tail -1 | tr -d '=' | sed 's/^ *//'; }
KTESTS="fused_step or kv_write or slot or search"   # -k matches the module name too: all of test_fused_step.py

main() {
echo "==== device ===="
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
date -u

if want tests; then
    run_part "pytest compiled" 150 "$LOGS/pytest.log" \
        python3 -m pytest tests/gpu/test_fused_step.py tests/gpu/test_kernels.py -k "$KTESTS" \
        -q -p no:cacheprovider -rs &&
    add_summary "pytest compiled" "$(pytest_line "$LOGS/pytest.log")"
fi
if want bench; then
    run_part "issue13 bench" 200 "$LOGS/bench.log" python3 scripts/issue13_gpu.py bench --json "$OUT/issue13.json" &&
    add_summary "issue13 bench" "$(grep -E '^issue13 bench:' "$LOGS/bench.log" | tail -1); $(grep -c '^GOAL MET' "$LOGS/bench.log") goals met, $(grep -c '^GOAL NOT MET' "$LOGS/bench.log") not"
fi
if want memcheck; then
    run_part "memcheck" 150 "$LOGS/memcheck.log" \
        env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 3 \
        python3 -m pytest tests/gpu/test_fused_step.py tests/gpu/test_kernels.py -k "fused_step or kv_write" \
        -q -p no:cacheprovider -x &&
    add_summary "memcheck" "$(grep -E 'ERROR SUMMARY' "$LOGS/memcheck.log" | tail -1 | sed 's/=* *//'); $(pytest_line "$LOGS/memcheck.log")"
fi
if want sweep; then
    run_part "issue13 sweep" 150 "$LOGS/sweep.log" python3 scripts/issue13_gpu.py sweep ${SWEEP_ONLY:+--only $SWEEP_ONLY} --json "$OUT/sweep.json" &&
    add_summary "issue13 sweep" "$(grep -E '^issue13 sweep:' "$LOGS/sweep.log" | tail -1)"
fi
if want ncu; then
    run_part "ncu" 90 "$LOGS/ncu.log" \
        ncu --clock-control none -k 'regex:_fused_step_kernel|_kv_write_kernel' --launch-skip 0 --launch-count 40 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section MemoryWorkloadAnalysis --csv --page details python3 scripts/issue13_gpu.py profile &&
    { grep -E '^"' "$LOGS/ncu.log" > "$OUT/ncu.csv"; add_summary "ncu" "$(wc -l < "$OUT/ncu.csv") csv lines"; }
fi

echo
echo "==== summary (rc, seconds; total ${SECONDS}s) ===="
printf '%-22s %5s %6s  %s\n' "part" "rc" "time" "result" | tee "$OUT/summary.txt"
printf '%s\n' "${summary[@]}" | tee -a "$OUT/summary.txt"
}

main 2>&1 | tee "$OUT/log.txt"
