"""The ``vllm.general_plugins`` entry point ``kvviz``: capture a running vLLM, step by step.

vLLM calls ``register()`` in every process it starts. Without ``KVVIZ_CAPTURE_DIR`` it returns at
once. With it, it wraps vLLM's methods where each step's tables are final, as each module is
imported (``sys.modules`` at once, a post-import hook otherwise), so a process that never imports
the model runner (an API server) pays nothing:

- V1 model runner (``vllm.v1.worker.gpu_model_runner.GPUModelRunner``, the CPU worker's base):
  ``execute_model`` marks the real step, ``_build_attention_metadata`` captures it when it returns.
  Warm-up, profiling and CUDA-graph capture call ``_build_attention_metadata`` outside
  ``execute_model`` (or with ``for_cudagraph_capture=True``): never captured.
- Model Runner V2 (``vllm.v1.worker.gpu.model_runner.GPUModelRunner``): ``execute_model`` marks the
  step, ``prepare_attn`` captures it (dummy runs use ``prepare_dummy_attn``).
- The scheduler (``vllm.v1.core.sched.scheduler.Scheduler``): ``kvviz.capture.scheduler``.

No vLLM code is copied and no vLLM file is edited. A method whose parameters are not the known ones
(another release) is left alone with one warning line. Any error while capturing is one log line,
then capture is off; the wrapped method's own result and exceptions always pass through unchanged.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import inspect
import logging
import os
import sys

from kvviz.capture.config import CaptureConfig
from kvviz.capture.writer import RunWriter
from kvviz.errors import BadInput

log = logging.getLogger("kvviz.capture")

V1_MODULE = "vllm.v1.worker.gpu_model_runner"
V2_MODULE = "vllm.v1.worker.gpu.model_runner"
SCHED_MODULE = "vllm.v1.core.sched.scheduler"
V1_PARAMS = ("num_tokens", "num_reqs", "num_tokens_padded", "num_reqs_padded", "for_cudagraph_capture",
             "slot_mappings")
V2_PARAMS = ("input_batch",)


class Session:
    """The capture's state in one process. Each engine started in it (a scheduler, a model runner)
    gets a run of its own: the first ``KVVIZ_CAPTURE_DIR``, a later one ``DIR/run-PID-K``, or the
    directory ``capture_to`` names."""

    def __init__(self, config: CaptureConfig, version: str, release: str):
        self.config, self.version, self.release = config, version, release
        self.on = True
        self.engines = 0
        self.next_dir: str | None = None
        self.writers: list[RunWriter] = []

    def new_run_dir(self) -> str:
        if self.next_dir is not None:
            directory, self.next_dir = self.next_dir, None
        elif self.engines == 0:
            directory = self.config.directory
        else:
            directory = os.path.join(self.config.directory, f"run-{os.getpid()}-{self.engines + 1}")
        self.engines += 1
        return directory

    def writer(self, manifest: dict | None, directory: str) -> RunWriter:
        w = RunWriter(self.config, manifest, directory)
        self.writers.append(w)
        return w

    def fail(self, where: str, e: BaseException) -> None:
        if self.on:
            self.on = False
            log.warning("kvviz capture: %s failed (%s: %s); capture is off, the engine goes on",
                        where, type(e).__name__, e)


_SESSION: Session | None = None


def capture_to(directory: str) -> None:
    """For scripts that start several engines in one process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``):
    the next engine started here writes its run to ``directory``. Nothing when capture is off
    (``KVVIZ_CAPTURE_DIR`` unset). Arms the plugin first if vLLM has not loaded it yet."""
    register()
    if _SESSION is not None:
        _SESSION.next_dir = os.path.abspath(directory)


def flush(timeout: float = 30.0) -> bool:
    """Waits until every step and request this process captured so far is on disk (in-process
    engines: read the run right after ``generate``). False when capture is off or a writer failed."""
    if _SESSION is None:
        return False
    return all([w.flush(timeout) for w in _SESSION.writers])


def register() -> None:
    """vLLM's plugin hook: arm the capture in this process when ``KVVIZ_CAPTURE_DIR`` is set."""
    global _SESSION
    if _SESSION is not None:
        return
    try:
        config = CaptureConfig.from_env()
    except BadInput as e:
        log.warning("kvviz capture: %s; capture is off", e)
        return
    if config is None:
        return
    try:
        import vllm
        from kvviz.core.versions import newer_than_known, resolve_version

        version = str(getattr(vllm, "__version__", ""))
        if newer_than_known(version):
            log.warning("kvviz capture: vLLM %s is newer than the releases kvviz knows; no capture", version)
            return
        release = resolve_version(version)
    except (ImportError, BadInput) as e:
        log.warning("kvviz capture: cannot tell the vLLM release (%s); no capture", e)
        return
    _SESSION = Session(config, version, release)
    for name, patch in ((V1_MODULE, _patch_v1), (V2_MODULE, _patch_v2), (SCHED_MODULE, _patch_scheduler)):
        _when_imported(name, patch)


# --- patching on import --------------------------------------------------------------------------

class _AfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, patch):
        self.name, self.patch = name, patch

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader, patch, finder = spec.loader, self.patch, self

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec_):
                return loader.create_module(spec_)

            def exec_module(self, module):
                loader.exec_module(module)
                if finder in sys.meta_path:
                    sys.meta_path.remove(finder)
                _safely(patch, module)

        spec.loader = _Loader()
        return spec


def _when_imported(name: str, patch) -> None:
    module = sys.modules.get(name)
    if module is not None:
        _safely(patch, module)
    else:
        sys.meta_path.insert(0, _AfterImport(name, patch))


def _safely(patch, module) -> None:
    try:
        patch(module)
    except Exception as e:  # noqa: BLE001 - an unknown shape: one line, the engine untouched
        log.warning("kvviz capture: cannot wrap %s (%s: %s); no capture there", module.__name__,
                    type(e).__name__, e)


def _known(cls, method: str, params: tuple[str, ...]) -> bool:
    fn = getattr(cls, method, None)
    if fn is None:
        return False
    names = set(inspect.signature(fn).parameters)
    return all(p in names for p in params)


def _refuse(what: str) -> None:
    log.warning("kvviz capture: %s in vLLM %s is not the shape kvviz knows; no capture for it",
                what, _SESSION.version if _SESSION else "?")


def _wrap_execute(cls) -> None:
    orig = cls.execute_model

    def execute_model(self, scheduler_output, *args, **kwargs):
        self._kvviz_output = scheduler_output
        try:
            return orig(self, scheduler_output, *args, **kwargs)
        finally:
            self._kvviz_output = None

    execute_model.__wrapped__ = orig
    cls.execute_model = execute_model


def _wrap_step_point(cls, name: str, what: str, capture) -> None:
    """Wraps ``cls.name`` (a runner's point where the step's tables are final): its first call inside
    ``execute_model`` captures the step after it returns, ``capture(runner, scheduler_output, args,
    kwargs, result)``; its result and exceptions pass through unchanged. Marks ``cls`` as wrapped."""
    orig = getattr(cls, name)

    def wrapper(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        out = getattr(self, "_kvviz_output", None)
        if out is not None and _SESSION is not None and _SESSION.on:
            self._kvviz_output = None                  # one capture per step
            try:
                capture(self, out, args, kwargs, result)
            except Exception as e:  # noqa: BLE001 - one line, capture off, the engine goes on
                _SESSION.fail(what, e)
        return result

    wrapper.__wrapped__ = orig
    setattr(cls, name, wrapper)
    _wrap_execute(cls)
    cls._kvviz_patched = True


def _patch_v1(module) -> None:
    cls = module.GPUModelRunner
    if getattr(cls, "_kvviz_patched", False):
        return
    if not (_known(cls, "_build_attention_metadata", V1_PARAMS) and _known(cls, "execute_model", ("scheduler_output",))):
        return _refuse("the V1 model runner's _build_attention_metadata / execute_model")
    sig = inspect.signature(cls._build_attention_metadata)

    def capture(runner, out, args, kwargs, result):
        from kvviz.capture.steps import capture_v1

        bound = sig.bind(runner, *args, **kwargs)
        bound.apply_defaults()
        capture_v1(_SESSION, runner, out, bound.arguments)

    _wrap_step_point(cls, "_build_attention_metadata", "the V1 step capture", capture)


def _patch_v2(module) -> None:
    cls = module.GPUModelRunner
    if getattr(cls, "_kvviz_patched", False):
        return
    if not (_known(cls, "prepare_attn", V2_PARAMS) and _known(cls, "execute_model", ("scheduler_output",))):
        return _refuse("Model Runner V2's prepare_attn / execute_model")

    def capture(runner, out, args, kwargs, result):
        from kvviz.capture.steps import capture_v2

        capture_v2(_SESSION, runner, out, args[0] if args else kwargs["input_batch"], result)

    _wrap_step_point(cls, "prepare_attn", "the Model Runner V2 step capture", capture)


def _patch_scheduler(module) -> None:
    cls = module.Scheduler
    if getattr(cls, "_kvviz_patched", False):
        return
    needed = {"add_request": ("request",), "finish_requests": ("request_ids", "finished_status"),
              "schedule": (), "update_from_output": ("scheduler_output",)}
    if not all(_known(cls, m, p) for m, p in needed.items()):
        return _refuse("the scheduler's add_request / finish_requests / schedule / update_from_output")
    from kvviz.capture.scheduler import SchedulerSide

    def side(scheduler):
        mine = getattr(scheduler, "_kvviz_side", None)
        if mine is None:
            mine = scheduler._kvviz_side = SchedulerSide(_SESSION, _SESSION.new_run_dir())
        return mine

    def after(name, body):
        orig = getattr(cls, name)

        def wrapper(self, *args, **kwargs):
            result = orig(self, *args, **kwargs)
            if _SESSION.on:
                try:
                    body(self, side(self), result, *args, **kwargs)
                except Exception as e:  # noqa: BLE001
                    _SESSION.fail(f"the scheduler's {name} capture", e)
            return result

        wrapper.__wrapped__ = orig
        setattr(cls, name, wrapper)

    after("add_request", lambda s, sd, res, request, *a, **k: sd.on_add_request(request))
    after("finish_requests", lambda s, sd, res, ids, status, *a, **k: sd.on_finish_requests(ids, status, res))
    after("schedule", lambda s, sd, res, *a, **k: sd.on_schedule(s, res))
    after("update_from_output", lambda s, sd, res, *a, **k: sd.on_update_from_output(res))
    cls._kvviz_patched = True
