#!/usr/bin/env bash
# One run on the GPU machine: kernel tests compiled, compute-sanitizer memcheck over them,
# then the benchmark. Full logs and bench.json go to $OUT; a short table prints last.
#   usage: bash scripts/gpu_run.sh [--smoke]
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/kvviz-gpu}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
SMOKE=${1:-}
summary=()

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$OUT/device.txt"

# 1. every kernel and backend test, compiled (the gpu-marked ones included)
python3 -m pytest tests/test_kernels.py tests/test_backend.py -q -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log"
summary+=("pytest kernels+backend, compiled: $(tail -1 "$OUT/pytest.log")")
python3 -m pytest -m gpu tests -q -p no:cacheprovider -rs --continue-on-collection-errors 2>&1 | tee "$OUT/pytest_gpu.log"
summary+=("pytest -m gpu: $(tail -1 "$OUT/pytest_gpu.log")")

if [ "$SMOKE" = "--smoke" ]; then
    python3 -m kvviz bench --quick --no-progress --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.txt"
else
    # 2. memcheck over the kernel tests (no caching allocator, so every tensor's bounds are its own)
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 \
        python3 -m pytest tests/test_kernels.py -q -p no:cacheprovider -x 2>&1 | tee "$OUT/memcheck.log"
    rc=${PIPESTATUS[0]}
    summary+=("memcheck: rc=$rc, $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1) $(grep -E 'passed|failed' "$OUT/memcheck.log" | tail -1)")
    # 3. the benchmark
    python3 -m kvviz bench --json "$OUT/bench.json" 2>"$OUT/bench_progress.log" | tee "$OUT/bench.txt"
fi
echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
cat "$OUT/bench.txt"
