#!/usr/bin/env bash
# One run on the GPU machine, everything in one device call:
#   0. install FlashInfer + apache-tvm-ffi from the wheels in .whl/ (carried; no registry there)
#   1. tests/gpu/test_kernels.py + tests/gpu/test_harness.py compiled (every test, gpu-marked ones included)
#   2. pytest -m gpu over the kernel test files (not the page tests: no streamlit there)
#   3. compute-sanitizer memcheck over tests/gpu/test_kernels.py + tests/gpu/test_harness.py
#   4. python3 -m kvviz bench --json $OUT/bench.json (its fused_step case at the quick shapes: part 8 times
#      the full set)
#   5. scripts/flashinfer_oracle.py (real FlashInfer against kvviz's chain)
#   6. tests/gpu/test_mrv2_kernels.py + test_mrv2_matches_simulator.py compiled (Model Runner V2 block-table kernels, gpu-marked tests
#      included; runs right after 2)
#   7. python3 scripts/bench_mrv2.py --json $OUT/mrv2.json (MRV2 kernels against a torch reference, then
#      timed; full sizes in both modes, about a minute; runs right after 4, before 5)
#   8. tests/gpu/test_fused_step.py compiled (gpu-marked tests included), then
#      python3 scripts/bench_fused_step.py --json $OUT/fused.json (the one-launch step metadata against
#      the separate launches; runs right after 7, before 5)
# then a short summary table, last. Everything is tee'd to $OUT/log.txt; $OUT gets only
# log.txt, summary.txt, bench.txt, bench.json, flashinfer_oracle.json, mrv2.json, fused.json (7 files; the
# device tool brings back 8 files at most). Each part has its own timeout, and all of them share
# one deadline (GPU_RUN_BUDGET_S, default 540 s) so the call ends inside the 10-minute limit.
#   usage: bash scripts/gpu_run.sh [--smoke]
set -u
export PYTHONUNBUFFERED=1
export FLASHINFER_CUDA_ARCH_LIST=${FLASHINFER_CUDA_ARCH_LIST:-9.0a}
OUT=${OUT:-/tmp/kvviz-gpu}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
SMOKE=${1:-}
BUDGET=${GPU_RUN_BUDGET_S:-540}
LOGS=$(mktemp -d /tmp/kvviz-logs.XXXX)
summary=()

left() { echo $((BUDGET - SECONDS)); }
# run_part NAME CAP_S LOGFILE CMD...: time-boxed to min(CAP_S, what is left), output tee'd
run_part() {
    local name=$1 cap=$2 log=$3
    shift 3
    local t=$(( $(left) - 10 ))
    [ "$t" -gt "$cap" ] && t=$cap
    if [ "$t" -lt 15 ]; then
        summary+=("$(printf '%-26s %5s %6s  %s' "$name" "-" "-" "SKIPPED: out of time")")
        return 1
    fi
    echo
    echo "==== $name (timeout ${t}s) ===="
    local t0=$SECONDS
    timeout --kill-after=5 "$t" "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    LAST_RC=$rc
    LAST_S=$((SECONDS - t0))
    [ "$rc" = 124 ] && echo "(timed out after ${t}s)" | tee -a "$log"
    return 0
}
add_summary() {  # NAME RESULT
    summary+=("$(printf '%-26s %5s %6s  %s' "$1" "$LAST_RC" "${LAST_S}s" "$2")")
}
pytest_line() { grep -E ' in [0-9.]+s' "$1" | tail -1 | tr -d '=' | sed 's/^ *//'; }

main() {
echo "==== device ===="
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
command -v nvcc >/dev/null && nvcc --version | tail -2

# 0. FlashInfer from the carried wheels
LAST_RC=-; LAST_S=0
if ls .whl/*.whl >/dev/null 2>&1; then
    t0=$SECONDS
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    LAST_RC=$?; LAST_S=$((SECONDS - t0))
    fi_ver=$(python3 -c "import flashinfer; print(flashinfer.__version__)" 2>&1 | tail -1)
    add_summary "install FlashInfer wheels" "flashinfer $fi_ver ($(ls .whl | tr '\n' ' '))"
else
    summary+=("$(printf '%-26s %5s %6s  %s' "install FlashInfer wheels" "-" "-" "no .whl/ carried: the oracle will SKIP")")
fi

# 1. every kernel and backend test, compiled
run_part "pytest kernels+backend" 120 "$LOGS/pytest.log" \
    python3 -m pytest tests/gpu/test_kernels.py tests/gpu/test_harness.py -q -p no:cacheprovider &&
add_summary "pytest kernels+backend" "$(pytest_line "$LOGS/pytest.log")"

# 2. the gpu-marked tests of the kernel test files (FlashInfer's first JIT compile happens here)
run_part "pytest -m gpu" 200 "$LOGS/pytest_gpu.log" \
    python3 -m pytest -m gpu tests/gpu/test_kernels.py tests/gpu/test_harness.py tests/gpu/test_kernels_compiled.py \
    tests/gpu/test_flashinfer_oracle.py -q -p no:cacheprovider -rs &&
add_summary "pytest -m gpu" "$(pytest_line "$LOGS/pytest_gpu.log")"

# 6. the MRV2 block-table kernels, compiled (hypothesis absent there: that one test skips)
run_part "pytest mrv2 kernels" 90 "$LOGS/pytest_mrv2.log" \
    python3 -m pytest tests/gpu/test_mrv2_kernels.py tests/gpu/test_mrv2_matches_simulator.py -q -p no:cacheprovider -rs &&
add_summary "pytest mrv2 kernels" "$(pytest_line "$LOGS/pytest_mrv2.log")"

if [ "$SMOKE" = "--smoke" ]; then
    run_part "bench --quick" 150 "$OUT/bench.txt" \
        python3 -m kvviz bench --quick --no-progress --json "$OUT/bench.json" &&
    add_summary "bench --quick" "see the table above"
else
    # 3. memcheck over the kernel tests (no caching allocator, so every tensor's bounds are its own)
    run_part "compute-sanitizer memcheck" 150 "$LOGS/memcheck.log" \
        env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 3 \
        python3 -m pytest tests/gpu/test_kernels.py tests/gpu/test_harness.py -q -p no:cacheprovider -x &&
    add_summary "compute-sanitizer memcheck" \
        "$(grep -E 'ERROR SUMMARY' "$LOGS/memcheck.log" | tail -1 | sed 's/=* *//'); $(pytest_line "$LOGS/memcheck.log")"
    # 4. the benchmark
    run_part "kvviz bench" 180 "$OUT/bench.txt" \
        env KVVIZ_BENCH_FUSED=quick python3 -m kvviz bench --no-progress --json "$OUT/bench.json" &&
    add_summary "kvviz bench" "$(grep -c '^GOAL MET' "$OUT/bench.txt") goals met, $(grep -c '^GOAL NOT MET' "$OUT/bench.txt") not met"
fi

# 7. the MRV2 kernels' benchmark (exits 1 on any mismatch against its torch reference)
run_part "mrv2 bench" 120 "$LOGS/mrv2_bench.log" \
    python3 scripts/bench_mrv2.py --json "$OUT/mrv2.json" &&
add_summary "mrv2 bench" "$(grep -E '^MRV2 bench:' "$LOGS/mrv2_bench.log" | tail -1)"

# 8. the fused step kernels, compiled, then their benchmark (exits 1 on any mismatch)
run_part "pytest fused step" 90 "$LOGS/pytest_fused.log" \
    python3 -m pytest tests/gpu/test_fused_step.py -q -p no:cacheprovider -rs &&
add_summary "pytest fused step" "$(pytest_line "$LOGS/pytest_fused.log")"
run_part "fused step bench" 150 "$LOGS/fused_bench.log" \
    python3 scripts/bench_fused_step.py --json "$OUT/fused.json" &&
add_summary "fused step bench" "$(grep -E '^fused_step bench:' "$LOGS/fused_bench.log" | tail -1)"

# 5. FlashInfer as the independent oracle
run_part "FlashInfer oracle" 200 "$LOGS/oracle.log" \
    python3 scripts/flashinfer_oracle.py --json "$OUT/flashinfer_oracle.json" &&
add_summary "FlashInfer oracle" "$(grep -E '^FlashInfer oracle:' "$LOGS/oracle.log" | tail -1)"

echo
echo "==== bench table ===="
cat "$OUT/bench.txt" 2>/dev/null
echo
echo "==== summary (rc, seconds; total ${SECONDS}s) ===="
printf '%-26s %5s %6s  %s\n' "part" "rc" "time" "result" | tee "$OUT/summary.txt"
printf '%s\n' "${summary[@]}" | tee -a "$OUT/summary.txt"
}

main "$@" 2>&1 | tee "$OUT/log.txt"
