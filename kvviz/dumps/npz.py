"""Reading an untrusted .npz archive safely: no unpickling, every member's declared size checked
before it is read, and any problem one ``BadInput`` sentence (a hostile archive never becomes a
traceback)."""
from __future__ import annotations

import zipfile

import numpy as np

from kvviz.errors import BadInput


def read_npz(src, name: str, max_bytes: int, keys, text_keys, check_shape=None) -> dict:
    """The arrays of an .npz without unpickling anything (as np.load(allow_pickle=False) would
    refuse), checking each array's declared size before reading it. Only the members named in
    ``keys`` are read (a newer writer's extra key is ignored); ``text_keys`` may hold strings.
    ``check_shape(key, shape)`` may refuse a member from its header alone, before its data is read
    (a small archive can declare a huge array: a zip bomb)."""
    try:
        zf = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError):
        raise BadInput(f"{name} is not a readable .npz archive (truncated or corrupt)") from None
    with zf:
        infos = zf.infolist()
        total = sum(i.file_size for i in infos)
        if total > max_bytes:
            raise BadInput(f"{name} unpacks to {total} bytes; the limit is {max_bytes}")
        out = {}
        for info in infos:
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if key not in keys:
                continue  # a newer writer's extra key: ignored
            if key in out:
                raise BadInput(f"{name} holds {key!r} twice")
            try:
                with zf.open(info) as f:
                    out[key] = _read_npy(f, key, info.file_size, text=key in text_keys, check_shape=check_shape)
            except BadInput as e:
                raise BadInput(f"{name}: {e}") from None
            except MemoryError:
                raise BadInput(f"{name}: array {key!r} is too large to load into memory") from None
            except Exception as e:  # noqa: BLE001 - anything a hostile member triggers (bad header
                # syntax, encryption, an unknown compression method, ...) is one clear sentence
                raise BadInput(f"{name}: array {key!r} cannot be read ({type(e).__name__}: {short_error(e)})") from None
        return out


def short_error(e: Exception) -> str:
    """The first line of an exception's message, at most 120 characters (for one-sentence errors)."""
    s = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return s[:120]


def _read_npy(f, key: str, member_size: int, text: bool = False, check_shape=None) -> np.ndarray:
    """One .npy member: integers (or, where ``text``, ASCII strings), never pickles, its declared
    size checked against the member's before reading."""
    fmt = np.lib.format
    version = fmt.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = fmt.read_array_header_1_0(f)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = fmt.read_array_header_2_0(f)
    else:
        raise BadInput(f"array {key!r} has an unknown .npy version {version}")
    if dtype.hasobject:
        raise BadInput(f"array {key!r} holds pickled Python objects, which dumps may not contain")
    if dtype.kind not in ("iubUS" if text else "iub") or dtype.itemsize == 0:
        raise BadInput(f"array {key!r} has dtype {dtype}; "
                       + ("a string (ASCII codes as uint8) is required" if text else "integers are required"))
    if any(int(d) < 0 for d in shape):
        raise BadInput(f"array {key!r} declares a negative dimension {tuple(shape)}")
    if check_shape is not None:
        check_shape(key, tuple(int(d) for d in shape))
    count = 1
    for d in shape:
        count *= int(d)
    nbytes = count * dtype.itemsize
    if nbytes > member_size:
        raise BadInput(f"array {key!r} claims shape {tuple(shape)} ({nbytes} bytes) but its file "
                       f"holds only {member_size} bytes")
    data = f.read(nbytes)
    if len(data) != nbytes:
        raise BadInput(f"array {key!r} is truncated ({len(data)} of {nbytes} bytes)")
    arr = np.frombuffer(data, dtype=dtype)
    return arr.reshape(shape, order="F" if fortran else "C")
