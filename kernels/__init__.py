"""Triton kernels for the paged KV cache: slot mapping, CSR repack, KV write, paged decode.

Each module holds its ``@triton.jit`` kernels and the Python launchers that check
shapes, pick the grid and allocate outputs. Callers use the launchers only.

Triton picks interpreter or compiler when a kernel is *decorated*, so without a
CUDA device ``TRITON_INTERPRET=1`` has to be in the environment before the first
kernel module is imported; importing this package sets it in that case.
"""
import os


def _cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # no torch, or a broken one: the interpreter is all we have
        return False


if not _cuda_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


def interpreted() -> bool:
    """True when the kernels run in Triton's CPU interpreter."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


_LAZY = {"fused_step_v1": ".fused_step", "fused_step_v2": ".fused_step"}


def __getattr__(name):
    """``kernels.fused_step_v1`` / ``fused_step_v2``: imported on first use, so that importing this
    package still sets TRITON_INTERPRET before any kernel is decorated."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
