"""Capturing a running vLLM: the ``vllm.general_plugins`` entry point and the captured-run format.

``pip install kvviz`` beside vLLM, set ``KVVIZ_CAPTURE_DIR=DIR`` and run vLLM unchanged: every
engine step's tables land in DIR as a *captured run* (a public contract, docs/captured-runs.md):

    DIR/manifest.json            once per run: release, runner, backend, block sizes, groups, knobs
    DIR/requests.json            every request seen: prompt ids, limits, arrival / abort / finish
                                 steps, generated token ids (rewritten atomically as they change)
    DIR/steps/00000012.json      one step: rows' request ids, token counts, the scheduler's side
    DIR/steps/00000012.g0.npz    that step's table dump of KV-cache group 0 (kvviz.dumps format v1)

A step's ``.json`` is written after its dumps, so a reader sees a step only once it is whole.

Modules: ``config`` (the environment knobs), ``plugin`` (registration and the method wrappers),
``worker_v1`` / ``worker_v2`` (what a step holds, per model runner), ``scheduler`` (the block pool and
the requests, in the scheduler's process), ``writer`` (the background writer and the ring),
``run`` (reading a captured run back, bounded).
"""
RUN_VERSION = 1
MANIFEST = "manifest.json"
REQUESTS = "requests.json"
STEPS = "steps"


def step_stem(step: int) -> str:
    """The file stem of a step: zero-padded so that names sort in step order."""
    return f"{int(step):08d}"
