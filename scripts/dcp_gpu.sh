#!/usr/bin/env bash
# DCP on 2 GPUs (NCCL): the NCCL tests, then merged error and collective vs partial-attention time at
# 1K, 32K and 128K tokens of context. Extra arguments go to scripts/dcp_gpu.py (see its --help).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
exec "$PY" scripts/dcp_gpu.py "$@"
