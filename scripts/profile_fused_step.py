"""One fused-step launch at a bench shape, for a profiler to look at (``ncu``): the inputs of
``kvviz.gpu.bench.fused.fused_inputs``, ``--warmup`` launches first (compile, caches), then
``--launches`` more. Every output is checked against the numpy core first (exit 1 on a mismatch).

    ncu --clock-control none -k regex:_fused_step_kernel --launch-skip 3 --launch-count 1 \
        --section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight \
        python3 scripts/profile_fused_step.py --shape 1x1 --groups 1 --runner v1
    python3 scripts/profile_fused_step.py --shape 256x1 --runner v2 --roles slot   # one role only

``--roles`` (comma-separated csr, slot, gather) launches only those program roles (the bench's
breakdown). ``scripts/gpu_run.sh --part bench`` runs it under ncu at three shapes.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kvviz  # noqa: E402,F401  (names the checkout's kernels/ kvviz_kernels)
import kvviz_kernels as kernels  # noqa: E402,F401  (TRITON_INTERPRET before triton is imported, without CUDA)
from kvviz.gpu.bench.fused import _check_variant, _launchers, _outputs, fused_inputs  # noqa: E402
from kvviz.gpu.device import sync, torch_device  # noqa: E402
from kvviz.gpu.harness import KernelMismatch  # noqa: E402
from kvviz_kernels.fused_step import ROLES  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="1x1", help="requests x tokens per request (default 1x1)")
    ap.add_argument("--groups", type=int, default=1, choices=(1, 2, 3, 4))
    ap.add_argument("--runner", default="v1", choices=("v1", "v2"))
    ap.add_argument("--roles", help="only these program roles (csr, slot, gather)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--launches", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        reqs, per = (int(x) for x in args.shape.split("x"))
    except ValueError:
        print(f"--shape {args.shape!r}: expected RxT, e.g. 256x1", file=sys.stderr)
        return 2
    dev = torch_device()
    s = fused_inputs(reqs, per, args.groups, dev)
    o = _outputs(s, dev)
    calls = _launchers(s, o)
    variant = f"{args.runner} fused"
    try:
        _check_variant(f"fused_step[{variant}] {args.shape} G{args.groups}", s, o, calls[variant])
    except KernelMismatch as e:
        print(e)
        return 1
    roles = tuple(args.roles.split(",")) if args.roles else None
    bad = [r for r in roles or () if r not in ROLES]
    if bad:
        print(f"--roles: {', '.join(bad)} not among {', '.join(ROLES)}", file=sys.stderr)
        return 2
    fn = calls[variant] if roles is None else (lambda: calls[variant](roles=roles))
    for _ in range(args.warmup + args.launches):
        fn()
    sync()
    print(f"profiled: {variant} {args.shape} G{args.groups}" + (f" roles {','.join(roles)}" if roles else "")
          + f", {args.warmup} warm-up + {args.launches} launches on {dev}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
