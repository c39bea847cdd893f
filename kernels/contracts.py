"""The launchers' contracts: what each argument must be before a kernel may run on it.

Every launcher in ``kernels/`` checks the shape, dtype, device, strides and size of every tensor
it is given (inputs and caller-provided outputs) and every host int that sizes the grid, before
the launch, through these helpers. A violation is one ``ValueError`` whose message starts with the
argument's name (``"out: needs shape (2, 8, 64), got (1, 8, 64)"``), so a bad call fails at the
Python line that made it instead of writing outside a buffer (which in Triton's CPU interpreter
corrupts the app's own heap, and on a GPU someone else's memory).

The checks read tensor attributes only (shape, stride, dtype, device): no device sync, no
``.item()``, cheap enough for launchers that run every step. What they cannot see is the values
inside device tensors (a page id past the cache, a ``query_start_loc`` that is not sorted): those
the kernels mask where they can, and the docstrings say where they trust.
"""
from __future__ import annotations


def _dtype_name(d) -> str:
    return str(d).replace("torch.", "")


def _dims(shape) -> str:
    return "(" + ", ".join("*" if s is None else str(s) for s in shape) + (",)" if len(shape) == 1 else ")")


def check_tensor(name: str, t, *, dtype=None, ndim: int | None = None, shape=None, min_shape=None,
                 min_numel: int | None = None, contiguous: bool = False, last_contiguous: bool = False,
                 non_overlapping: bool = False, device=None, optional: bool = False):
    """Raise ``ValueError("<name>: needs ..., got ...")`` unless ``t`` is a tensor that

    * ``dtype``: has this dtype (or one of a tuple of them);
    * ``ndim``: has this many dimensions;
    * ``shape``: has exactly this shape (``None`` entries match any size);
    * ``min_shape``: is at least this large in each dimension (``None``: any);
    * ``min_numel``: holds at least this many elements;
    * ``contiguous``: is contiguous (row-major, no gaps, no permutation, no broadcast);
    * ``last_contiguous``: has a unit stride in its last dimension (one that has more than one entry);
    * ``non_overlapping``: no two indices share an element (an output written through its strides:
      a window of a larger tensor passes, an expanded/broadcast view does not);
    * ``device``: lives on this device (a ``torch.device``, or a tensor whose device it takes).

    Attribute reads only (the common case about a microsecond a tensor on the CPU).

    ``optional``: ``None`` passes. Returns ``t``."""
    if t is None and optional:
        return t
    if not isinstance(t, _tensor_type()):
        raise ValueError(f"{name}: needs a torch tensor, got {type(t).__name__}")
    if dtype is not None:
        ok = dtype if isinstance(dtype, tuple) else (dtype,)
        if t.dtype not in ok:
            want = " or ".join(_dtype_name(d) for d in ok)
            raise ValueError(f"{name}: needs dtype {want}, got {_dtype_name(t.dtype)}")
    nd = t.dim()
    if ndim is not None and nd != ndim:
        raise ValueError(f"{name}: needs {ndim} dimensions, got {nd} (shape {tuple(t.shape)})")
    sh = t.shape
    if shape is not None:
        if nd != len(shape) or any(w is not None and w != sh[i] for i, w in enumerate(shape)):
            raise ValueError(f"{name}: needs shape {_dims(shape)}, got {tuple(sh)}")
    if min_shape is not None:
        if nd != len(min_shape) or any(w is not None and sh[i] < w for i, w in enumerate(min_shape)):
            raise ValueError(f"{name}: needs shape at least {_dims(min_shape)}, got {tuple(sh)}")
    if min_numel is not None and t.numel() < min_numel:
        raise ValueError(f"{name}: needs at least {int(min_numel)} entries, got {t.numel()}")
    if contiguous or non_overlapping:
        dense = t.is_contiguous()
        if contiguous and not dense:
            raise ValueError(f"{name}: needs a contiguous tensor, got strides {tuple(t.stride())} for shape "
                             f"{tuple(sh)} (a permuted, sliced or expanded view: pass .contiguous())")
        if non_overlapping and not dense and not _non_overlapping(t):
            raise ValueError(f"{name}: needs a tensor whose elements do not overlap, got strides "
                             f"{tuple(t.stride())} for shape {tuple(sh)} (an expanded view: pass .contiguous())")
    if last_contiguous and nd and sh[-1] > 1 and t.stride(-1) != 1:
        raise ValueError(f"{name}: needs a unit stride in its last dimension, got strides {tuple(t.stride())}")
    if device is not None:
        dev = device if isinstance(device, _device_type()) else device.device
        if t.device != dev and not (dev.index is None and t.device.type == dev.type):
            raise ValueError(f"{name}: needs device {dev}, got {t.device}")
    return t


_TYPES = []


def _tensor_type():
    if not _TYPES:
        import torch

        _TYPES.extend((torch.Tensor, torch.device))
    return _TYPES[0]


def _device_type():
    _tensor_type()
    return _TYPES[1]


def _non_overlapping(t) -> bool:
    """Sufficient test: sorted by stride, each dimension steps past everything the smaller ones span."""
    dims = sorted((t.stride(i), t.shape[i]) for i in range(t.dim()) if t.shape[i] > 1)
    span = 1
    for stride, size in dims:
        if stride < span:
            return False
        span = stride * size
    return True


def check_int(name: str, v, *, lo: int | None = 0, hi: int | None = None) -> int:
    """``v`` as an int in ``[lo, hi]`` (either bound ``None``: open); else ``ValueError("<name>: ...")``."""
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise ValueError(f"{name}: needs an int, got {type(v).__name__} {v!r}")
    v = int(v)
    if lo is not None and v < lo:
        raise ValueError(f"{name}: needs >= {lo}, got {v}")
    if hi is not None and v > hi:
        raise ValueError(f"{name}: needs <= {hi}, got {v}")
    return v
