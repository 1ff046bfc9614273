"""The NumPy kernels: the semantics of record, one small function per operator, grouped by family."""

from . import activation, element_wise, element_wise_logical, reduction  # noqa: F401 (importing registers the kernels)
