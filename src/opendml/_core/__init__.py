"""The compiled core: C kernels behind :mod:`opendml.kernels.compiled` (build: ``setup.py``; sources here).

Importing this raises ImportError when the extension was not built; :mod:`opendml` then runs on NumPy alone.
At import the highest ISA variant the CPU (and OS) supports is chosen; ``OPENDML_ISA`` (``baseline``, ``avx2``,
``avx512``) forces a lower one and ``OPENDML_NUM_THREADS`` sets the thread count (default: every core).

How to add an operator: see the header comments of ``ops.h`` (the operator lists) and ``kernels.c`` (the two
engines and their tables of inner functions), then register a Python kernel in ``opendml/kernels/compiled``.
"""

from __future__ import annotations

import importlib.util
import os
import warnings

if importlib.util.find_spec(f"{__name__}._native") is None:
    raise ImportError("the compiled extension opendml._core._native is not built")
from . import _native

__all__ = ["isas", "isa", "set_isa", "num_threads", "set_num_threads", "parallel_min_bytes", "_native"]


def isas() -> list[str]:
    """The ISA variants this machine can run, lowest first."""
    return _native.isas()


def isa() -> str:
    """The ISA variant in use."""
    return _native.get_isa()


def set_isa(name: str) -> None:
    """Use another ISA variant (one of :func:`isas`); for tests and benchmarks."""
    if name not in _native.isas():
        raise ValueError(f"ISA {name!r} is not available here; available: {', '.join(_native.isas())}")
    _native.set_isa(name)


def num_threads() -> int:
    return _native.get_threads()[0]


def parallel_min_bytes() -> int:
    """Kernels touching fewer bytes than this run on the calling thread alone."""
    return _native.get_threads()[1]


def set_num_threads(n: int, parallel_min_bytes: int | None = None) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 256:
        raise ValueError(f"the number of threads must be an integer from 1 to 256, not {n!r}")
    if parallel_min_bytes is None:
        _native.set_threads(n)
    else:
        _native.set_threads(n, parallel_min_bytes)


def _from_environment() -> None:
    """OPENDML_ISA and OPENDML_NUM_THREADS; a value that cannot apply warns and leaves the default."""
    wanted = os.environ.get("OPENDML_ISA")
    if wanted:
        try:
            set_isa(wanted)
        except ValueError as error:
            warnings.warn(f"OPENDML_ISA ignored: {error}", RuntimeWarning, stacklevel=2)
    threads = os.environ.get("OPENDML_NUM_THREADS")
    if threads:
        try:
            set_num_threads(int(threads))
        except ValueError:
            warnings.warn(f"OPENDML_NUM_THREADS={threads!r} ignored: expected 1 to 256", RuntimeWarning, stacklevel=2)


_from_environment()
