"""Kernels, registered per operator and backend: ``kernel(desc, inputs, outputs) -> None``.

Kernels assume a validated descriptor and bound arrays of exactly the descriptor's dtypes and sizes (possibly
strided views into caller buffers, inputs read-only). They write every element of each output and nothing
else. ``reference`` (NumPy, :mod:`opendml.kernels.reference`) is the semantics of record and exists for every
operator; ``compiled`` (the C core) registers beside it where it has a kernel. :func:`kernel_for` picks one
when an operator is compiled. A kernel may also carry ``prepare(desc) -> run(inputs, outputs)``, which does once
what depends only on the descriptor (descriptors are frozen); :func:`prepared` gives every kernel that form.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..enums import OperatorType

__all__ = ["BACKENDS", "KERNELS", "Kernel", "register", "kernel_for", "prepared", "apply_fused_activation"]

Kernel = Callable[[Any, tuple, tuple], None]

#: The backends, most preferred last: ``auto`` takes the last one that has a kernel for the operator.
BACKENDS = ("reference", "compiled")

#: operator type -> backend -> kernel
KERNELS: dict[OperatorType, dict[str, Kernel]] = {}


def register(operator_type: OperatorType, backend: str = "reference") -> Callable[[Kernel], Kernel]:
    """Decorator: ``kernel`` computes ``operator_type`` on ``backend``."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown kernel backend {backend!r}; expected one of {', '.join(BACKENDS)}")

    def add(kernel: Kernel) -> Kernel:
        per_backend = KERNELS.setdefault(OperatorType(operator_type), {})
        if backend in per_backend:
            raise ValueError(f"{OperatorType(operator_type).c_name} already has a {backend} kernel")
        per_backend[backend] = kernel
        return kernel

    return add


def kernel_for(operator_type: OperatorType, backend: str) -> tuple[str, Kernel]:
    """The kernel to run ``operator_type`` with, and the backend it belongs to.

    ``backend`` is ``auto`` (compiled where it exists, else reference), or one backend; a backend without a
    kernel for this operator falls back to the reference kernel.
    """
    per_backend = KERNELS[OperatorType(operator_type)]
    wanted = BACKENDS[::-1] if backend == "auto" else (backend, "reference")
    chosen = next(b for b in wanted if b in per_backend)
    return chosen, per_backend[chosen]


def prepared(kernel: Kernel, desc: Any) -> Callable[[tuple, tuple], None]:
    """``kernel`` bound to ``desc``: its ``prepare(desc)`` where it has one (a compiled operator's call then skips
    the descriptor's lookups: a small tensor's kernel costs no more), else the kernel with ``desc`` as its first
    argument."""
    prepare = getattr(kernel, "prepare", None)
    return prepare(desc) if prepare is not None else functools.partial(kernel, desc)


def apply_fused_activation(desc: Any, outputs: tuple) -> None:
    """Apply the host descriptor's ``fused_activation`` (if set) to its ``outputs``, in place, with the
    activation's own reference kernel: a fused result is, bit for bit, the host followed by the activation."""
    fused = getattr(desc, "fused_activation", None)
    if fused is None:
        return
    kernel = KERNELS[fused.operator_type]["reference"]
    for out in outputs:
        kernel(fused, (out,), (out,))
