"""The CLI invocations whose output on examples/ is pinned byte for byte (tests/data/cli_golden.json).

Regenerate only when an output is meant to change: ``python tests/cli/cli_golden_cases.py --write``.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "cli_golden.json"

_OFFSET = ["offset", "--block-size", "4", "--num-kv-heads", "2", "--head-dim", "8", "--num-blocks", "48"]


def cases() -> list[list[str]]:
    out: list[list[str]] = []
    for b in sorted((ROOT / "examples" / "batches").glob("*.json")):
        rel = str(b.relative_to(ROOT))
        out += [["compute", rel], ["compute", rel, "--profile", "2025-early"]]
    for lay in ("NHD", "HND"):
        for dt in ("float16", "fp8", "float32"):
            out.append(_OFFSET + ["--layout", lay, "--dtype", dt, "--slot", "18", "--head", "1", "--dim", "3",
                                  "--kv", "v"])
        for cl in ("flash_attn", "flashinfer", "flashinfer_packed"):
            out.append(_OFFSET + ["--layout", lay, "--dtype", "bfloat16", "--slot", "18", "--head", "0", "--dim", "0",
                                  "--cache-layout", cl])
            out.append(_OFFSET + ["--layout", lay, "--dtype", "bfloat16", "--byte-offset", "3001",
                                  "--cache-layout", cl])
    for s in sorted((ROOT / "examples" / "scenarios").glob("*.json")):
        rel = str(s.relative_to(ROOT))
        out += [["run", rel], ["run", rel, "--json"], ["run", rel, "--json", "--runner", "v1"]]
    pre = "examples/scenarios/preemption.json"
    for fault in ("skip_commit", "commit_too_few_rows", "move_row_no_clear"):
        out += [["run", pre, "--fault", fault], ["run", pre, "--json", "--fault", fault]]
    for d in sorted((ROOT / "examples" / "dumps").glob("*.json")):
        rel = str(d.relative_to(ROOT))
        out += [["check", rel], ["check", rel, "--json"], ["check", rel, "--profile", "2025-11"]]
    a, b = "examples/dumps/clean.json", "examples/dumps/commit_too_few_rows.json"
    out += [["diff", a, b], ["diff", a, b, "--json"], ["diff", a, a], ["diff", a, b, "--json", "--vllm", "v0.15.0"]]
    out += [["compute", "examples/batches/two_requests_padded.json", "--runner", "v1"],
            ["compute", "examples/batches/two_requests_padded.json", "--vllm", "v0.25.1", "--runner", "v2"],
            ["offset"] + _OFFSET[1:] + ["--layout", "HND", "--dtype", "bfloat16", "--slot", "18", "--head", "1",
                                        "--dim", "3", "--vllm", "v0.22.0", "--attn-backend", "triton"]]
    return out


def run_cli(argv: list[str]) -> dict:
    from kvviz.cli import main

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:  # argparse
                rc = e.code
    finally:
        os.chdir(cwd)
    return {"argv": argv, "rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if "--write" not in sys.argv:
        sys.exit("pass --write to regenerate the pinned outputs")
    GOLDEN.write_text(json.dumps([run_cli(c) for c in cases()], indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {GOLDEN}")
