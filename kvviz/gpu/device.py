"""Where the kernels run (a CUDA GPU, compiled, or Triton's CPU interpreter), its label, and the
plain timer the harness and the bench share."""
from __future__ import annotations

import time

import kvviz_kernels as kernels  # sets TRITON_INTERPRET before any kernel is decorated when there is no GPU


def device_label() -> dict:
    """{"device", "mode", "triton", "torch"}: where and how the kernels run."""
    import torch
    import triton

    interp = kernels.interpreted()
    if not interp and torch.cuda.is_available():
        dev = torch.cuda.get_device_name(0)
    else:
        dev = "CPU"
    return {"device": dev, "mode": "interpreter" if interp else "compiled",
            "triton": triton.__version__, "torch": torch.__version__}


def label_string(label: dict | None = None) -> str:
    """'triton X, compiled (device)': the one-line label of ``label`` (default: this machine)."""
    lab = label or device_label()
    return f"triton {lab['triton']}, {lab['mode']} ({lab['device']})"


def torch_device() -> str:
    """The torch device the kernels' tensors live on: cuda when compiled, else cpu."""
    import torch

    return "cuda" if torch.cuda.is_available() and not kernels.interpreted() else "cpu"


def sync():
    """Wait for the device (nothing to wait for in the interpreter)."""
    import torch

    if torch_device() == "cuda":
        torch.cuda.synchronize()


def time_us(fn, *, rep_ms: int = 25) -> float:
    """Median µs of ``fn``: CUDA events (triton.testing.do_bench) on a GPU; one wall-clock call
    in the interpreter (a figure for the curious, not a kernel speed)."""
    if torch_device() == "cuda":
        import triton.testing

        return float(triton.testing.do_bench(fn, warmup=5, rep=rep_ms, return_mode="median")) * 1e3
    fn()  # the first interpreted call also builds the kernel's Python closure
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e6
