"""Copies of a step's tensors that do not stall the engine.

A CPU tensor (or numpy array) is copied at once. A CUDA tensor is copied into pinned host memory
with ``non_blocking=True`` and an event recorded after it on the current stream: the copy is ordered
after every kernel already enqueued (the slot mapping's, the gather's) and before the ones that
follow, so it holds the step's values, and the engine's thread never waits for the device. The
writer's thread waits on the event (``resolve``) before it reads the values.
"""
from __future__ import annotations

import numpy as np

from kvviz.dumps.capture import to_numpy

KERNEL_RATIO = "_kernel_ratio"      # a V2 mapping's gathered table still to expand into kernel blocks


class Pending:
    __slots__ = ("host", "event")

    def __init__(self, host, event):
        self.host, self.event = host, event

    def resolve(self) -> np.ndarray:
        self.event.synchronize()
        return self.host.numpy()


def snapshot(x):
    """The values of ``x`` now: a numpy copy, or a Pending copy of a CUDA tensor."""
    if getattr(x, "is_cuda", False):
        import torch

        host = x.new_empty(x.shape, device="cpu", pin_memory=True)
        host.copy_(x, non_blocking=True)
        event = torch.cuda.Event()
        event.record()
        return Pending(host, event)
    return to_numpy(x)


def resolve(mapping: dict) -> dict:
    """The mapping with every Pending copy waited for (on the writer's thread), and a V2 gathered
    table expanded into kernel blocks where ``KERNEL_RATIO`` asks for it."""
    out = {k: (v.resolve() if isinstance(v, Pending) else v) for k, v in mapping.items()}
    ratio = out.pop(KERNEL_RATIO, None)
    if ratio:
        from kvviz.core.slots_v2 import expand_kernel_blocks

        out["block_table"] = expand_kernel_blocks(out["block_table"], ratio)
    return out
