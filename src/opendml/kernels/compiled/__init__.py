"""The compiled kernels: thin wrappers that hand the bound views to the C engines of :mod:`opendml._core`.

Importing this module raises ImportError when the extension is not built (``opendml`` then uses the NumPy
kernels alone). The C entry points check every array (dtype, shape, at most 8 dimensions, non-negative strides,
writable outputs) before a pointer reaches a kernel.
"""

from ... import _core  # noqa: F401 (ImportError here means: no compiled backend)
from . import arithmetic, elementwise, reduction  # noqa: F401 (importing registers the kernels)
