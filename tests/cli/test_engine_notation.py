"""`kvviz engine-notation`: its contract without an engine (the model alone, bad input, no venv).
tests/engines/test_sglang_notation.py runs it against SGLang itself."""
import json

from kvviz.cli import main


def _run(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_model_only_answers_for_the_page_batch(capsys):
    rc, out, err = _run(capsys, "engine-notation", "sglang", "--model-only", "--step", "2", "--page-size", "1")
    assert rc == 0 and err == ""
    d = json.loads(out)
    assert set(d) >= {"engine", "version", "ran_engine", "scenario", "knobs", "equal", "differences", "steps"}
    assert d["ran_engine"] is False and d["equal"] is False and d["knobs"] == {"page_size": 1, "pool_tokens": 1024}
    (st,) = d["steps"]
    assert st["step"] == 2 and st["engine"] is None
    assert st["kvviz"]["req_pool_indices"] == {"A": 3, "B": 1, "C": 2}
    assert st["kvviz"]["extend"]["matched"] == {"B": 256, "C": 0}
    assert st["vllm_slots"]["B"][:2] == [128, 129]       # vLLM's first block is the null block


def test_bad_step_scenario_and_missing_engine_exit_2(capsys, tmp_path, monkeypatch):
    rc, _, err = _run(capsys, "engine-notation", "sglang", "--model-only", "--step", "0")
    assert rc == 2 and "counted from 1" in err
    bad = tmp_path / "s.json"
    bad.write_text("{not json")
    rc, _, err = _run(capsys, "engine-notation", "sglang", str(bad), "--model-only")
    assert rc == 2 and err.count("\n") == 1
    monkeypatch.setenv("KVVIZ_ENGINES_DIR", str(tmp_path / "none"))
    rc, _, err = _run(capsys, "engine-notation", "sglang", "--step", "1")
    assert rc == 2 and "scripts/engines.sh sglang" in err


def test_a_pool_sglang_cannot_fill_is_one_line(capsys, tmp_path):
    sc = {"name": "tight", "config": {"num_blocks": 16, "block_size": 4, "max_num_reqs": 2,
                                       "max_num_batched_tokens": 32, "max_model_len": 48},
          "requests": [{"id": "A", "arrival": 0, "prompt_len": 30, "max_tokens": 4}]}
    p = tmp_path / "tight.json"
    p.write_text(json.dumps(sc))
    rc, _, err = _run(capsys, "engine-notation", "sglang", str(p), "--model-only", "--pool-tokens", "16",
                      "--page-size", "16")
    assert rc == 2 and "out of memory" in err


def test_llamacpp_model_only(capsys):
    rc, out, _ = _run(capsys, "engine-notation", "llamacpp", "--model-only", "--step", "2")
    assert rc == 0
    d = json.loads(out)
    (st,) = d["steps"]
    assert d["knobs"] == {"kv_unified": True} and st["engine"] is None
    assert st["kvviz"]["strip"].startswith("M" * 256)        # A's 256-token prefix, shared with B
    assert st["vllm_slots"]["C"][0] == 640
