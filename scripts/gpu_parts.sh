# The timed-part runner the GPU shell scripts share (scripts/gpu_run.sh, scripts/gpu_kv_write_fused.sh):
# `source` it after setting OUT. Every step runs under `timeout`, capped at the smaller of its own cap
# and what is left of the deadline (GPU_RUN_BUDGET_S seconds, default 540, from DEADLINE_T0: a script
# that runs several parts one after another calls start_deadline before each), and leaves one summary
# line (name, exit status, seconds, result); the summary is printed last and kept in $OUT/summary.txt.
#   run_part NAME CAP_S LOGFILE CMD...   returns 1 (and writes a SKIPPED line) when under 15 s are left
#   add_summary NAME RESULT              the line of the step run_part just ran
#   skip_line NAME WHY                   a line for a step that did not run
#   pytest_line LOGFILE                  pytest's last "N passed ... in Ts" line
#   device_header                        the GPU, driver, python, torch, triton (and nvcc) versions
#   print_summary                        the table (under $PARTS_LINE when set), tee'd to $OUT/summary.txt
BUDGET=${GPU_RUN_BUDGET_S:-540}
SUMMARY_W=${SUMMARY_W:-26}
LOGS=${LOGS:-$(mktemp -d /tmp/kvviz-logs.XXXX)}
DEADLINE_T0=$SECONDS
LAST_RC=-
LAST_S=0
summary=()

start_deadline() { DEADLINE_T0=$SECONDS; }
left() { echo $((BUDGET - (SECONDS - DEADLINE_T0))); }
summary_row() { printf "%-${SUMMARY_W}s %5s %6s  %s" "$1" "$2" "$3" "$4"; }
skip_line() { summary+=("$(summary_row "$1" "-" "-" "SKIPPED: $2")"); }
add_summary() { summary+=("$(summary_row "$1" "$LAST_RC" "${LAST_S}s" "$2")"); }
pytest_line() { grep -E ' in [0-9.]+s' "$1" | tail -1 | tr -d '=' | sed 's/^ *//'; }

run_part() {  # NAME CAP_S LOGFILE CMD...: time-boxed to min(CAP_S, what is left - 10 s), output tee'd
    local name=$1 cap=$2 log=$3
    shift 3
    local t=$(( $(left) - 10 ))
    [ "$t" -gt "$cap" ] && t=$cap
    if [ "$t" -lt 15 ]; then
        skip_line "$name" "out of time"
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

device_header() {
    echo "==== device ===="
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
    command -v nvcc >/dev/null && nvcc --version | tail -2
    date -u
}

print_summary() {
    echo
    echo "==== summary (rc, seconds; total ${SECONDS}s) ===="
    : > "$OUT/summary.txt"
    [ -n "${PARTS_LINE:-}" ] && echo "$PARTS_LINE" | tee -a "$OUT/summary.txt"
    summary_row "part" "rc" "time" "result" | tee -a "$OUT/summary.txt"
    echo | tee -a "$OUT/summary.txt"
    printf '%s\n' "${summary[@]}" | tee -a "$OUT/summary.txt"
}
