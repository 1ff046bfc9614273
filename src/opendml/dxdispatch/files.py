"""Opening the files a model names: regular files only, opened so that nothing can block.

A FIFO without a writer blocks ``open`` for reading forever (without a reader, ``open`` for writing), and a
device such as ``/dev/zero`` never ends; neither can be a model, a ``sourcePath`` or a ``writeFile`` target.
The kind of file is checked with ``stat`` before opening and again with ``fstat`` on the opened descriptor,
which is opened ``O_NONBLOCK`` so that a file swapped for a FIFO in between cannot block either.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFile", "open_regular"]

_FLAGS = {"rb": os.O_RDONLY, "wb": os.O_WRONLY | os.O_CREAT | os.O_TRUNC}


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a folder or a socket: ``str(error.strerror)`` says so."""

    def __init__(self, path: Path):
        super().__init__(errno.EINVAL, "it is not a regular file (a FIFO, a device or a folder)", str(path))


def open_regular(path: Path, mode: str = "rb") -> BinaryIO:
    """``path`` opened in ``mode`` ("rb", or "wb" which creates it); OSError (NotRegularFile) if it cannot be."""
    try:
        _check(os.stat(path).st_mode, path)
    except FileNotFoundError:
        if mode == "rb":
            raise
    descriptor = os.open(path, _FLAGS[mode] | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    try:
        _check(os.fstat(descriptor).st_mode, path)
        os.set_blocking(descriptor, True)  # a regular file never blocks: restore ordinary semantics
        return os.fdopen(descriptor, mode)
    except BaseException:
        os.close(descriptor)
        raise


def _check(mode: int, path: Path) -> None:
    if not stat.S_ISREG(mode):
        raise NotRegularFile(path)
