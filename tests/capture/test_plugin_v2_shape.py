"""The plugin on Model Runner V2's shape (MRV2 needs Triton on the device, so it never runs on this
CPU): a stand-in module with vLLM's import path and method names (tests/capture/fake_vllm), filled from
kvviz's own MRV2 simulator, is wrapped on import; its steps are captured, dummy runs are not, and the
run checks clean, while a gather fault is caught at its first wrong step and row. A method whose
parameters are not the known ones is left alone with one warning line."""
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

SCRIPT = r'''
import json, sys, types
import numpy as np
from kvviz.capture import plugin
plugin.register()
import vllm.v1.worker.gpu.model_runner as mr          # wrapped on import by the plugin's hook
assert getattr(mr.GPUModelRunner, "_kvviz_patched", False), "not wrapped"
from kvviz.core.engine import Engine
from kvviz.core.scenario import parse_scenario

scenario = parse_scenario(json.load(open(sys.argv[1])))
scenario.config.profile, scenario.config.runner = "v0.34.0", "v2"
history = Engine(scenario).run(1000)
cfg = scenario.config
ns = types.SimpleNamespace
steps = []
for rec in history:
    inp = rec.inputs[0]
    gathered = rec.device_tables[0].copy()
    if sys.argv[2] == "fault" and rec.index == 3:
        gathered[0, 0] += 1                                  # a row gathered from the wrong state
    batch = ns(req_ids=[r for r in rec.rows[:rec.num_reqs]], num_reqs=rec.num_reqs,
               num_reqs_after_padding=rec.num_reqs_padded, idx_mapping_np=np.array(rec.idx_mapping),
               num_tokens=rec.num_tokens, num_tokens_after_padding=rec.num_tokens_padded,
               query_start_loc=inp.query_start_loc, seq_lens=inp.seq_lens, positions=inp.positions)
    steps.append((batch, (gathered,), inp.slot_mapping[None, :]))
runner = mr.GPUModelRunner()
runner.steps = steps
buf = lambda a: ns(gpu=a, np=a, cpu=a)
runner.block_tables = ns(block_sizes=[cfg.block_size], block_tables=[buf(None)], num_blocks=buf(None),
                         input_block_tables=[None], cp_size=1, cp_rank=0, cp_interleave=1,
                         _slot_mapping_enabled=[True])
runner.kv_cache_config = ns(num_blocks=cfg.num_blocks, kv_cache_groups=[ns(kv_cache_spec=ns(block_size=cfg.block_size), layer_names=["l0"])])
runner.attn_groups = [[ns(backend=ns(get_name=lambda: "FAKE"), kernel_block_size=None)]]
runner.vllm_config = ns(scheduler_config=ns(max_num_seqs=cfg.max_num_reqs), cache_config=ns(enable_prefix_caching=True),
                        parallel_config=ns(tensor_parallel_size=1), model_config=ns(model="fake", dtype="bf16", max_model_len=4096),
                        speculative_config=None)
runner.req_states = ns(req_id_to_index={})
runner.dummy_run(0)                                          # a warm-up: never a step
for rec in history:
    runner.block_tables.block_tables[0] = buf(rec.cpu_tables[0].copy())
    runner.block_tables.num_blocks = buf(rec.num_blocks_per_row[0][None, :].copy())
    runner.req_states.req_id_to_index = {r: i for i, r in enumerate(rec.state_rows) if r is not None}
    runner.execute_model(ns(index=rec.index, num_scheduled_tokens={s.req_id: s.num_tokens for s in rec.scheduled}))
assert plugin.flush()
print(json.dumps({"steps": len(history)}))
'''


def _run(tmp_path, mode: str, module_text: str | None = None):
    env = {**os.environ, "KVVIZ_CAPTURE_DIR": str(tmp_path / "run"),
           "PYTHONPATH": os.pathsep.join([str(HERE / "fake_vllm"), str(ROOT)])}
    env.pop("VLLM_PLUGINS", None)
    scenario = ROOT / "examples" / "scenarios" / "four_requests.json"
    return subprocess.run([sys.executable, "-c", SCRIPT, str(scenario), mode], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)


def kvviz(*args):
    return subprocess.run([sys.executable, "-m", "kvviz", *args], capture_output=True, text=True, cwd=ROOT)


def test_v2_steps_are_captured_and_check_clean(tmp_path):
    r = _run(tmp_path, "clean")
    assert r.returncode == 0, r.stderr[-2000:]
    n = json.loads(r.stdout.strip().splitlines()[-1])["steps"]
    run = tmp_path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    assert (manifest["vllm"], manifest["runner"], manifest["attn_backend"]) == ("v0.34.0", "v2", "FAKE")
    assert len(list((run / "steps").glob("*.json"))) == n            # the dummy run is not a step
    out = kvviz("check", str(run), "--json")
    assert out.returncode == 0, out.stdout
    meta = json.loads((run / "steps" / "00000000.json").read_text())
    assert meta["runner"] == "v2" and meta["state_rows"][0] is not None


def test_a_gather_fault_is_caught_at_its_step(tmp_path):
    r = _run(tmp_path, "fault")
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(kvviz("check", str(tmp_path / "run"), "--json").stdout)
    assert out["first"]["step"] == 3 and out["first"]["row"] == 0
    assert {f["check"] for f in out["findings"] if f["step"] == 3 and f["row"] == 0} >= {"v2-gather"}
    assert min(f["step"] for f in out["findings"]) == 3


def test_an_unknown_shape_is_left_alone_with_one_line(tmp_path):
    fake = tmp_path / "fake"
    (fake / "vllm" / "v1" / "worker" / "gpu").mkdir(parents=True)
    (fake / "vllm" / "__init__.py").write_text('__version__ = "0.34.0"\n')
    for p in ("vllm/v1", "vllm/v1/worker", "vllm/v1/worker/gpu"):
        (fake / p / "__init__.py").write_text("")
    (fake / "vllm/v1/worker/gpu/model_runner.py").write_text(
        "class GPUModelRunner:\n    def execute_model(self, scheduler_output):\n        return 1\n"
        "    def prepare_attn(self, batch, extra):\n        return 2\n")
    code = ("import logging; logging.basicConfig(level=logging.WARNING)\n"
            "from kvviz.capture import plugin; plugin.register()\n"
            "import vllm.v1.worker.gpu.model_runner as mr\n"
            "assert not hasattr(mr.GPUModelRunner, '_kvviz_patched')\n"
            "assert mr.GPUModelRunner().execute_model(None) == 1\n")
    env = {**os.environ, "KVVIZ_CAPTURE_DIR": str(tmp_path / "run"), "PYTHONPATH": os.pathsep.join([str(fake), str(ROOT)])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "kvviz capture" in ln]
    assert len(lines) == 1 and "not the shape kvviz knows" in lines[0]
    assert not (tmp_path / "run").exists()


def test_without_the_variable_nothing_is_wrapped(tmp_path):
    code = ("from kvviz.capture import plugin; plugin.register()\n"
            "import vllm.v1.worker.gpu.model_runner as mr\n"
            "assert not hasattr(mr.GPUModelRunner, '_kvviz_patched')\nprint('ok')\n")
    env = {k: v for k, v in os.environ.items() if k != "KVVIZ_CAPTURE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE / "fake_vllm"), str(ROOT)])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
