"""Issue 25: the CLI's human output names vLLM releases, never a profile or its old aliases ("current",
"2025-11", "2025-early"); the JSON outputs keep their keys (a public contract)."""
import json
import re

from cli_golden_cases import GOLDEN, run_cli

WORDS = re.compile(r"\bprofile\b|\bcurrent\b|2025-11|2025-early")


def test_no_pinned_human_output_speaks_of_profiles():
    cases = json.loads(GOLDEN.read_text())
    human = [c for c in cases if "--json" not in c["argv"]]
    assert len(human) > 10
    for c in human:
        assert not WORDS.search(c["stdout"] + c["stderr"]), c["argv"]
    # the JSON keys stay: run --json still says "profile"
    run_json = [c for c in cases if c["argv"][:1] == ["run"] and "--json" in c["argv"]]
    assert run_json and all('"profile":' in c["stdout"] for c in run_json)


def test_run_and_check_say_the_release():
    out = run_cli(["run", "examples/scenarios/four_requests.json"])["stdout"]
    assert out.splitlines()[0].endswith("(8 steps, vLLM main, runner v1)"), out.splitlines()[0]
    dumps = sorted(p for p in (GOLDEN.parents[2] / "examples" / "dumps").glob("*.json"))
    assert dumps
    out = run_cli(["check", str(dumps[0].relative_to(GOLDEN.parents[2])), "--vllm", "2025-11"])["stdout"]
    assert "checked under vLLM v0.11.1" in out and not WORDS.search(out)
