#!/usr/bin/env bash
# Run scripts/vllm_wheel_oracle.py for every release kvviz knows the wheel of (0.27.1 .. 0.34.0) from
# the wheel cache only, and print one summary line per release (agreed/cases per table).
#
#   scripts/wheel_oracle_all.sh [--device cuda] [more oracle options, e.g. --cases 2000 --mrv2-cases 2000]
#   scripts/wheel_oracle_all.sh --make-slim DIR     # write vllm-X.Y.Z-kvviz_slim.whl of each release to DIR
#
# The cache is $KVVIZ_WHEEL_CACHE (default ~/.cache/kvviz/wheels; the slim zips go there, flat or in X.Y.Z/);
# nothing is downloaded (--no-download). On the CPU the MRV2 kernels run in Triton's interpreter
# (--mrv2-interpret is added unless --device cuda is given). $PYTHON picks the interpreter (python3).
# JSON of each run: $KVVIZ_ORACLE_OUT/X.Y.Z.json (default a temporary folder). Exit 1 if any release
# disagreed or failed.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
PY="${PYTHON:-python3}"
VERSIONS="${KVVIZ_ORACLE_VERSIONS:-0.27.1 0.28.0 0.29.0 0.30.0 0.31.0 0.32.0 0.33.0 0.34.0}"
if [ "${1:-}" = "--make-slim" ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 --make-slim DIR" >&2; exit 2; }
  for v in $VERSIONS; do (cd "$ROOT" && "$PY" scripts/vllm_wheel_oracle.py "$v" --slim "$2") || exit 1; done
  exit 0
fi
extra=(--mrv2-interpret)
for a in "$@"; do case "$a" in cuda|--device=cuda) extra=() ;; esac; done
OUT="${KVVIZ_ORACLE_OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
status=0
for v in $VERSIONS; do
  (cd "$ROOT" && "$PY" scripts/vllm_wheel_oracle.py "$v" --no-download "${extra[@]}" "$@" \
      --json-out "$OUT/$v.json" > "$OUT/$v.txt" 2>&1)
  rc=$?
  [ $rc -eq 0 ] || status=1
  if [ -s "$OUT/$v.json" ]; then
    "$PY" - "$OUT/$v.json" "$rc" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
parts = []
for name, e in r["tables"].items():
    if e.get("skipped"):
        parts.append(f"{name} -")
        continue
    s = f"{name} {e['agreed']}/{e['cases']}"
    if e.get("errors"):
        s += f" ({e['errors']} err)"
    if e.get("interpreter_skipped"):
        s += f" (+{e['interpreter_skipped']} not run)"
    parts.append(s)
print(f"v{r['version']} {r['device']} rc={sys.argv[2]} {r['seconds']}s: " + ", ".join(parts))
PYEOF
  else
    echo "v$v rc=$rc: no result ($(tail -n 1 "$OUT/$v.txt"))"
  fi
done
echo "details: $OUT"
exit $status
