set -u
export PYTHONUNBUFFERED=1 FLASHINFER_CUDA_ARCH_LIST=9.0a
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
echo "== wheel oracle, cuda (MRV2 kernels compiled; V1 kernels too)"
KVVIZ_WHEEL_CACHE=$PWD/artifacts/wheels KVVIZ_ORACLE_OUT=$OUT/oracle KVVIZ_ORACLE_VERSIONS="0.34.0 0.33.0 0.32.0 0.31.0 0.30.0 0.29.0 0.28.0 0.27.1" \
  timeout 210 bash scripts/wheel_oracle_all.sh --device cuda --cases 500 --mrv2-cases 1000 2>&1 | tail -10
echo "== launcher contracts under memcheck"
timeout 170 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m pytest tests/gpu/test_launcher_contracts.py -q -p no:cacheprovider -x 2>&1 | grep -E "ERROR SUMMARY|passed|failed|error" | tail -4
echo "== kernels + harness compiled"
timeout 110 python3 -m pytest tests/gpu/test_kernels.py tests/gpu/test_harness.py -q -p no:cacheprovider -x 2>&1 | tail -2
date -u
