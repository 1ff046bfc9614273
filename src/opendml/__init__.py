"""opendml: DirectML's operator semantics, open and portable, on NumPy.

The public names mirror ``directml.h`` mechanically (see :mod:`opendml.deviations` for every difference)::

    import opendml as dml
    x = dml.BufferTensorDesc(dml.TensorDataType.FLOAT32, sizes=(2, 3))
    op = dml.Device().create_operator(dml.ActivationHardmax1OperatorDesc(input_tensor=x, output_tensor=x, axes=(1,)))
"""

from . import kernels as _kernels  # noqa: F401
from .binding import BufferBinding
from .device import CompiledOperator, Device, Operator
from .enums import *  # noqa: F403 (the mirror of directml.h's enumerations and constants)
from .enums import __all__ as _enums_all
from .errors import DMLError, InvalidArgumentError, OperatorNotImplementedError, UnsupportedError
from .kernels import reference as _reference_kernels  # noqa: F401 (registers the NumPy kernels)
from .operators import *  # noqa: F403
from .operators import __all__ as _operators_all
from .runtime import COMPILED_AVAILABLE, get_num_threads, runtime_info, set_num_threads  # compiled kernels, if built
from .schema import REGISTRY, OperatorDesc, OperatorSchema
from .structs import ScaleBias, Size2D
from .tensor import BufferTensorDesc, calc_buffer_tensor_size

__version__ = "0.1.0"

__all__ = [
    *_enums_all,
    *_operators_all,
    "BufferTensorDesc",
    "ScaleBias",
    "Size2D",
    "calc_buffer_tensor_size",
    "BufferBinding",
    "Device",
    "Operator",
    "CompiledOperator",
    "OperatorDesc",
    "OperatorSchema",
    "REGISTRY",
    "DMLError",
    "InvalidArgumentError",
    "UnsupportedError",
    "OperatorNotImplementedError",
    "COMPILED_AVAILABLE",
    "runtime_info",
    "set_num_threads",
    "get_num_threads",
]
