"""Reading untrusted files and writing kvviz's own, safely.

Reading: only a regular file is read. It is opened without blocking (a FIFO would otherwise hang the
reader) and checked with ``fstat`` on the open descriptor, so a device, a FIFO, a socket or a
directory is refused before a byte is read, and the byte bound is enforced by reading at most one
byte past it, never by trusting the size the file system reports (``/dev/zero`` reports 0).

Writing: every file kvviz writes goes to a temporary file in the same directory, is flushed to disk
and then renamed over the target, so an interrupted run leaves the old file as it was.
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile

from kvviz.errors import BadInput, size_text

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _not_regular(mode: int) -> str:
    for test, what in _KINDS:
        if test(mode):
            return what
    return "not a regular file"


@contextlib.contextmanager
def open_regular(path: str):
    """An open binary file object for ``path`` if it is a regular file; BadInput otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise BadInput(f"cannot read {path}: {e.strerror or e}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise BadInput(f"{path} is {_not_regular(mode)}, not a regular file")
        f = os.fdopen(fd, "rb")
        fd = -1
        with f:
            yield f
    finally:
        if fd >= 0:
            os.close(fd)


def read_bounded(path: str, max_bytes: int, *, name: str | None = None) -> bytes:
    """All of a regular file, refused with BadInput past ``max_bytes`` (counted while reading)."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise BadInput(f"{name or path} is {size_text(size)}; the limit is {size_text(max_bytes)}")
        try:
            data = f.read(max_bytes + 1)
        except OSError as e:
            raise BadInput(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > max_bytes:   # it grew while being read
        raise BadInput(f"{name or path} is more than {size_text(max_bytes)}; the limit is {size_text(max_bytes)}")
    return data


@contextlib.contextmanager
def atomic_writer(path: str, mode: str = "w", *, fsync: bool = True):
    """A file object whose content replaces ``path`` only when the block ends without an error.
    ``fsync=False`` keeps the rename atomic (a reader never sees half a file) but skips the flush to
    disk (~7 ms a file here), for the capture's many small files."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~_umask())   # what open(path, "w") would have made, not mkstemp's 0600
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str, data: bytes, *, fsync: bool = True) -> None:
    with atomic_writer(path, "wb", fsync=fsync) as f:
        f.write(data)
