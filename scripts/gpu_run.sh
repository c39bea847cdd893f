#!/usr/bin/env bash
# The GPU run, in parts; each part is sized to end inside one 10-minute device call (its own deadline,
# GPU_RUN_BUDGET_S, default 540 s; every step time-boxed by scripts/gpu_parts.sh):
#   kernels  compute-sanitizer memcheck over EVERY kernel test file (tests/gpu/test_*.py but the ones
#            that launch no kernel: NOT_KERNEL_TESTS below), one file at a time, gpu-marked tests
#            included; the memcheck run is the compiled run (a failing test fails it). KERNEL_TESTS="a b"
#            runs those files only (a second call for the files a first one had no time for).
#   bench    python3 -m kvviz bench --json $OUT/bench.json (its fused_step case at the quick shapes;
#            --smoke: bench --quick), scripts/bench_mrv2.py --json $OUT/mrv2.json, then
#            scripts/bench_fused_step.py --json $OUT/fused.json (each exits 1 on any output mismatch)
#   oracles  FlashInfer + apache-tvm-ffi from the wheels in .whl/ (carried; no registry there), then
#            scripts/flashinfer_oracle.py --json $OUT/flashinfer_oracle.json (real FlashInfer against
#            kvviz's chain) FIRST, every time, then the gpu-marked tests/gpu/test_flashinfer_oracle.py
#   all      the three, in that order, each with its own deadline: about three device calls' time (a
#            machine without the 10-minute limit)
# Everything is tee'd to $OUT/log.txt; the summary, last, says which parts ran and which were skipped,
# and is kept in $OUT/summary.txt. $OUT gets at most log.txt, summary.txt, bench.txt, bench.json,
# mrv2.json, fused.json, flashinfer_oracle.json (7 files; the device tool brings back 8 at most).
#   usage: bash scripts/gpu_run.sh --part kernels|bench|oracles|all [--smoke] [--dry-run]
#          (--dry-run: say what would run, run nothing)
set -u
export PYTHONUNBUFFERED=1
export FLASHINFER_CUDA_ARCH_LIST=${FLASHINFER_CUDA_ARCH_LIST:-9.0a}
cd "$(dirname "$0")/.."
ALL_PARTS="kernels bench oracles"
NOT_KERNEL_TESTS="test_flashinfer_oracle test_harness_detail_text test_traffic"

usage() { sed -n '/^#   usage:/,/^#          (--dry-run/p' "$0" | sed 's/^# \{0,3\}//' >&2; exit 2; }
PART="" SMOKE="" DRY=""
while [ $# -gt 0 ]; do
    case $1 in
        --part) [ $# -ge 2 ] || usage; PART=$2; shift 2 ;;
        --part=*) PART=${1#--part=}; shift ;;
        --smoke) SMOKE=1; shift ;;
        --dry-run) DRY=1; shift ;;
        -h|--help) usage ;;
        *) echo "unknown argument '$1'" >&2; usage ;;
    esac
done
case $PART in
    kernels|bench|oracles) PARTS=$PART ;;
    all) PARTS=$ALL_PARTS ;;
    "") echo "no --part given" >&2; usage ;;
    *) echo "unknown part '$PART' (kernels, bench, oracles or all)" >&2; usage ;;
esac
kernel_tests() {
    if [ -n "${KERNEL_TESTS:-}" ]; then echo "$KERNEL_TESTS"; return; fi
    local f
    for f in tests/gpu/test_*.py; do
        [[ " $NOT_KERNEL_TESTS " == *" $(basename "$f" .py) "* ]] || echo "$f"
    done
}
if [ -n "$DRY" ]; then
    for p in $ALL_PARTS; do
        if [[ " $PARTS " == *" $p "* ]]; then echo "part $p: runs${SMOKE:+ (--smoke)}"; else echo "part $p: skipped (not asked)"; fi
    done
    [[ " $PARTS " == *" kernels "* ]] && echo "memcheck files:" $(kernel_tests)
    exit 0
fi

OUT=${OUT:-/tmp/kvviz-gpu}
mkdir -p "$OUT"
source scripts/gpu_parts.sh

part_kernels() {
    local f name
    for f in $(kernel_tests); do
        name="memcheck $(basename "$f" .py)"
        # no caching allocator, so every tensor's bounds are its own
        run_part "$name" 300 "$LOGS/$(basename "$f" .py).memcheck.log" \
            env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 3 \
            python3 -m pytest "$f" -q -p no:cacheprovider -x -rs &&
        add_summary "$name" "$(grep -E 'ERROR SUMMARY' "$LOGS/$(basename "$f" .py).memcheck.log" | tail -1 | sed 's/=* *//'); $(pytest_line "$LOGS/$(basename "$f" .py).memcheck.log")"
    done
}

part_bench() {
    if [ -n "$SMOKE" ]; then
        run_part "bench --quick" 150 "$OUT/bench.txt" \
            python3 -m kvviz bench --quick --no-progress --json "$OUT/bench.json" &&
        add_summary "bench --quick" "see the table above"
    else
        run_part "kvviz bench" 180 "$OUT/bench.txt" \
            env KVVIZ_BENCH_FUSED=quick python3 -m kvviz bench --no-progress --json "$OUT/bench.json" &&
        add_summary "kvviz bench" "$(grep -c '^GOAL MET' "$OUT/bench.txt") goals met, $(grep -c '^GOAL NOT MET' "$OUT/bench.txt") not met"
    fi
    run_part "mrv2 bench" 120 "$LOGS/mrv2_bench.log" \
        python3 scripts/bench_mrv2.py --json "$OUT/mrv2.json" &&
    add_summary "mrv2 bench" "$(grep -E '^MRV2 bench:' "$LOGS/mrv2_bench.log" | tail -1)"
    run_part "fused step bench" 150 "$LOGS/fused_bench.log" \
        python3 scripts/bench_fused_step.py --json "$OUT/fused.json" &&
    add_summary "fused step bench" "$(grep -E '^fused_step bench:' "$LOGS/fused_bench.log" | tail -1)"
    echo
    echo "==== bench table ===="
    cat "$OUT/bench.txt" 2>/dev/null
}

part_oracles() {
    LAST_RC=-; LAST_S=0
    if ls .whl/*.whl >/dev/null 2>&1; then
        local t0=$SECONDS
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
            && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
        LAST_RC=$?; LAST_S=$((SECONDS - t0))
        add_summary "install FlashInfer wheels" "flashinfer $(python3 -c "import flashinfer; print(flashinfer.__version__)" 2>&1 | tail -1) ($(ls .whl | tr '\n' ' '))"
    else
        skip_line "install FlashInfer wheels" "no .whl/ carried: the oracle will SKIP"
    fi
    # first in its part, so no other step can use up its time (FlashInfer's first JIT compile is here)
    run_part "FlashInfer oracle" 300 "$LOGS/oracle.log" \
        python3 scripts/flashinfer_oracle.py --json "$OUT/flashinfer_oracle.json" &&
    add_summary "FlashInfer oracle" "$(grep -E '^FlashInfer oracle:' "$LOGS/oracle.log" | tail -1)"
    run_part "pytest -m gpu oracle" 200 "$LOGS/pytest_oracle.log" \
        python3 -m pytest -m gpu tests/gpu/test_flashinfer_oracle.py -q -p no:cacheprovider -rs &&
    add_summary "pytest -m gpu oracle" "$(pytest_line "$LOGS/pytest_oracle.log")"
}

main() {
    device_header
    local p ran=() skipped=()
    for p in $ALL_PARTS; do
        if [[ " $PARTS " == *" $p "* ]]; then
            echo
            echo "######## part $p (deadline ${BUDGET}s) ########"
            start_deadline
            summary+=("[part $p]")
            "part_$p"
            ran+=("$p")
        else
            skip_line "[part $p]" "not asked"
            skipped+=("$p")
        fi
    done
    PARTS_LINE="parts ran: ${ran[*]:-none}; skipped (not asked with --part $PART): ${skipped[*]:-none}${SMOKE:+; --smoke}"
    print_summary
}

main 2>&1 | tee "$OUT/log.txt"
