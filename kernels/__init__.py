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
