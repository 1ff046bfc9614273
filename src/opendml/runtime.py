"""Which kernel backends are available, the ISA the compiled one runs, and its thread count.

``set_num_threads(n)`` (or ``OPENDML_NUM_THREADS``) sets the threads the compiled kernels use for large
tensors (default: every core); tensors below a measured size run on the calling thread alone. Results never
depend on the thread count. ``OPENDML_ISA`` forces a lower ISA variant; ``OPENDML_KERNELS`` (or
``Device(kernels=...)``) picks the backend.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["COMPILED_AVAILABLE", "COMPILED_ERROR", "runtime_info", "set_num_threads", "get_num_threads"]

try:
    from . import _core
    from .kernels import compiled as _compiled  # noqa: F401 (registers the compiled kernels)

    COMPILED_AVAILABLE, COMPILED_ERROR = True, None
except ImportError as error:  # a pure-Python install: the NumPy kernels run everything
    _core = None
    COMPILED_AVAILABLE, COMPILED_ERROR = False, str(error)


def set_num_threads(n: int) -> None:
    """Threads for the compiled kernels (1 to 256). Without the compiled backend, only checked."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 256:
        raise ValueError(f"the number of threads must be an integer from 1 to 256, not {n!r}")
    if _core is not None:
        _core.set_num_threads(n)


def get_num_threads() -> int:
    """Threads the compiled kernels use for large tensors (1 without the compiled backend)."""
    return _core.num_threads() if _core is not None else 1


def runtime_info() -> dict[str, Any]:
    """What runs kernels here: backends, the compiled ISA variant (and the others available), threads."""
    info: dict[str, Any] = {
        "backends": ["reference", "compiled"] if COMPILED_AVAILABLE else ["reference"],
        "default_backend": os.environ.get("OPENDML_KERNELS") or "auto",
        "compiled": COMPILED_AVAILABLE,
    }
    if _core is None:
        info["compiled_error"] = COMPILED_ERROR
        return info
    info.update(
        isa=_core.isa(),
        isas=_core.isas(),
        threads=_core.num_threads(),
        cpus=os.cpu_count(),
        parallel_min_bytes=_core.parallel_min_bytes(),
    )
    return info
