#!/usr/bin/env bash
# The GPU run, in parts; each part is sized to end inside one 10-minute device call (its own deadline,
# GPU_RUN_BUDGET_S, default 540 s; every step time-boxed by scripts/gpu_parts.sh):
#   kernels  compute-sanitizer memcheck over EVERY kernel test file (tests/gpu/test_*.py but the ones
#            that launch no kernel: NOT_KERNEL_TESTS below), KERNEL_JOBS (4) files at a time, gpu-marked
#            tests included; the memcheck run is the compiled run (a failing test fails it).
#            KERNEL_TESTS="a b" runs those files only.
#   bench    scripts/bench_fused_step.py --roles --only-vllm --json $OUT/fused.json FIRST (kvviz's fused
#            step beside vLLM's own step kernels, from the slim wheels in artifacts/wheels, carried: see
#            scripts/wheel_oracle_all.sh --make-slim), ncu over one fused launch at 1x1 G1 V1, 256x1 G1
#            V2 and 1024x128 G4 V1 (scripts/profile_fused_step.py), python3 -m kvviz bench --json
#            $OUT/bench.json (its fused_step case at the quick shapes; --smoke: bench --quick), then
#            scripts/bench_mrv2.py --json $OUT/mrv2.json (each exits 1 on any output mismatch)
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
export KVVIZ_WHEEL_CACHE=${KVVIZ_WHEEL_CACHE:-artifacts/wheels}   # vLLM's slim wheels (the step bench)
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
SLOW_FIRST="test_kernels test_bench_command test_fused_step test_mrv2_matches_simulator test_kernels_compiled"
kernel_tests() {  # every kernel test file, the slowest (by the last runs) first
    if [ -n "${KERNEL_TESTS:-}" ]; then echo "$KERNEL_TESTS"; return; fi
    local f n
    for n in $SLOW_FIRST; do [ -f "tests/gpu/$n.py" ] && echo "tests/gpu/$n.py"; done
    for f in tests/gpu/test_*.py; do
        n=$(basename "$f" .py)
        [[ " $NOT_KERNEL_TESTS $SLOW_FIRST " == *" $n "* ]] || echo "$f"
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

memcheck_one() {  # FILE CAP_S: one test file under memcheck; rc, seconds and the log under $LOGS
    local f=$1 cap=$2 name
    name=$(basename "$f" .py)
    local t0=$SECONDS t=$(( $(left) - 10 ))
    [ "$t" -gt "$cap" ] && t=$cap
    if [ "$t" -lt 15 ]; then echo skipped > "$LOGS/$name.rc"; return; fi
    # no caching allocator, so every tensor's bounds are its own
    # KVVIZ_UNDER_SANITIZER: the bench leaves out its graph and host-hidden timings (spin waits that
    # scale with the sanitized host time), and timing asserts skip; every kernel still runs
    timeout --kill-after=5 "$t" env PYTORCH_NO_CUDA_MEMORY_CACHING=1 KVVIZ_UNDER_SANITIZER=1 \
        compute-sanitizer --tool memcheck \
        --error-exitcode 3 python3 -m pytest "$f" -q -p no:cacheprovider -x -rs > "$LOGS/$name.memcheck.log" 2>&1
    echo $? > "$LOGS/$name.rc"
    echo $((SECONDS - t0)) > "$LOGS/$name.s"
    echo "memcheck $name: rc $(cat "$LOGS/$name.rc") in $((SECONDS - t0))s: $(grep -E 'ERROR SUMMARY' "$LOGS/$name.memcheck.log" | tail -1)"
}

part_kernels() {
    # KERNEL_JOBS files at a time (default 4: one GPU, 16 cores; the sanitizer is mostly host work),
    # the slowest files first; each file's log is printed after all have ended
    local f name jobs=${KERNEL_JOBS:-4} files
    files=$(kernel_tests)
    echo
    echo "==== memcheck over $(echo $files | wc -w) kernel test files, $jobs at a time (deadline $(left)s) ===="
    for f in $files; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        memcheck_one "$f" 420 &
    done
    wait
    for f in $files; do
        name=$(basename "$f" .py)
        if [ "$(cat "$LOGS/$name.rc" 2>/dev/null)" = skipped ]; then
            skip_line "memcheck $name" "out of time"
            continue
        fi
        echo
        echo "==== memcheck $name ===="
        tail -n 25 "$LOGS/$name.memcheck.log"
        LAST_RC=$(cat "$LOGS/$name.rc"); LAST_S=$(cat "$LOGS/$name.s")
        [ "$LAST_RC" = 124 ] && echo "(timed out)"
        add_summary "memcheck $name" "$(grep -E 'ERROR SUMMARY' "$LOGS/$name.memcheck.log" | tail -1 | sed 's/=* *//'); $(pytest_line "$LOGS/$name.memcheck.log")"
    done
}

part_bench() {
    # the step bench first (what issue 24 is judged on): kvviz's fused step beside vLLM's own
    # step kernels, from the slim wheels in artifacts/wheels (carried; else those rows are skipped)
    run_part "fused step bench" 250 "$LOGS/fused_bench.log" \
        python3 scripts/bench_fused_step.py --roles --only-vllm --json "$OUT/fused.json" &&
    add_summary "fused step bench" "$(grep -E '^fused_step bench:' "$LOGS/fused_bench.log" | tail -1)"
    # where a step's time goes: ncu over one fused launch at three shapes (stall reasons, registers,
    # occupancy, the SOL; ncu flushes the caches before the launch)
    local shape
    for shape in "1x1 1 v1" "256x1 1 v2" "1024x128 4 v1"; do
        set -- $shape
        run_part "ncu fused $1 G$2 $3" 40 "$LOGS/ncu_$1_$2_$3.log" \
            ncu --clock-control none -k regex:_fused_step_kernel --launch-skip 3 --launch-count 1 \
            --section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight \
            --section SchedulerStats python3 scripts/profile_fused_step.py --shape "$1" --groups "$2" --runner "$3" &&
        add_summary "ncu fused $1 G$2 $3" "$(grep -E '^ *Duration' "$LOGS/ncu_$1_$2_$3.log" | head -1 | tr -s ' ')"
    done
    if [ -n "$SMOKE" ]; then
        run_part "bench --quick" 90 "$OUT/bench.txt" \
            python3 -m kvviz bench --quick --no-progress --json "$OUT/bench.json" &&
        add_summary "bench --quick" "see the table above"
    else
        run_part "kvviz bench" 170 "$OUT/bench.txt" \
            env KVVIZ_BENCH_FUSED=quick python3 -m kvviz bench --no-progress --json "$OUT/bench.json" &&
        add_summary "kvviz bench" "$(grep -c '^GOAL MET' "$OUT/bench.txt") goals met, $(grep -c '^GOAL NOT MET' "$OUT/bench.txt") not met"
    fi
    run_part "mrv2 bench" 50 "$LOGS/mrv2_bench.log" \
        python3 scripts/bench_mrv2.py --json "$OUT/mrv2.json" &&
    add_summary "mrv2 bench" "$(grep -E '^MRV2 bench:' "$LOGS/mrv2_bench.log" | tail -1)"
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
