"""Functions on plain arrays, in the spirit of DirectMLX: build the descriptors, compile once, execute.

Defaults that the raw descriptors do not have live here, as in DirectMLX (``alpha=0.2, beta=0.5``; ARGMAX
outputs UINT32). Compiled operators are cached per device and descriptor.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence

import numpy as np

from .device import CompiledOperator, Device
from .enums import AxisDirection, TensorDataType
from .errors import InvalidArgumentError
from .operators import (
    ActivationHardmax1OperatorDesc,
    ActivationHardSigmoidOperatorDesc,
    ActivationLogSoftmax1OperatorDesc,
    ArgmaxOperatorDesc,
    ElementWiseIfOperatorDesc,
)
from .schema import FieldKind, OperatorDesc
from .tensor import BufferTensorDesc, as_uint_tuple

__all__ = [
    "activation_hardmax1",
    "activation_log_softmax1",
    "element_wise_if",
    "argmax",
    "activation_hard_sigmoid",
    "default_device",
]


@functools.cache
def default_device() -> Device:
    """The device the functions use when none is given: the highest feature level opendml implements."""
    return Device()


@functools.lru_cache(maxsize=256)
def _compiled(device: Device, desc: OperatorDesc, float_bits: tuple[bytes, ...]) -> CompiledOperator:
    return device.compile_operator(device.create_operator(desc))


def _run(desc: OperatorDesc, inputs: Sequence[np.ndarray], device: Device | None) -> np.ndarray:
    # Descriptors compare FLOATs by value (-0.0 == 0.0, NaN != NaN); the cache must tell them apart by bits.
    floats = [getattr(desc, f.name) for f in desc.schema.fields if f.kind is FieldKind.FLOAT]
    float_bits = tuple(struct.pack("<d", value) for value in floats)
    (result,) = _compiled(device or default_device(), desc, float_bits).execute(list(inputs))
    return result


def _array(x, name: str) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise InvalidArgumentError(
            f"{name} must be a numpy.ndarray, not {type(x).__name__} (opendml never guesses a dtype)"
        )
    return x


def activation_hardmax1(x: np.ndarray, axes: Sequence[int], *, device: Device | None = None) -> np.ndarray:
    """ACTIVATION_HARDMAX1: 1 at the first maximum over ``axes``, 0 elsewhere."""
    desc = BufferTensorDesc.like(_array(x, "x"))
    return _run(ActivationHardmax1OperatorDesc(input_tensor=desc, output_tensor=desc, axes=axes), [x], device)


def activation_log_softmax1(x: np.ndarray, axes: Sequence[int], *, device: Device | None = None) -> np.ndarray:
    """ACTIVATION_LOG_SOFTMAX1: ``log(softmax(x))`` over ``axes``."""
    desc = BufferTensorDesc.like(_array(x, "x"))
    return _run(ActivationLogSoftmax1OperatorDesc(input_tensor=desc, output_tensor=desc, axes=axes), [x], device)


def element_wise_if(condition: np.ndarray, a: np.ndarray, b: np.ndarray, *, device: Device | None = None) -> np.ndarray:
    """ELEMENT_WISE_IF: ``a`` where ``condition`` (UINT8) is non-zero, else ``b``; all of one shape."""
    descs = [BufferTensorDesc.like(_array(v, n)) for v, n in ((condition, "condition"), (a, "a"), (b, "b"))]
    desc = ElementWiseIfOperatorDesc(
        condition_tensor=descs[0], a_tensor=descs[1], b_tensor=descs[2], output_tensor=descs[1]
    )
    return _run(desc, [condition, a, b], device)


def argmax(
    x: np.ndarray,
    axes: Sequence[int],
    axis_direction: AxisDirection = AxisDirection.INCREASING,
    output_data_type: TensorDataType = TensorDataType.UINT32,
    *,
    device: Device | None = None,
) -> np.ndarray:
    """ARGMAX over ``axes``; the result keeps x's rank with the reduced dimensions of size 1."""
    source = BufferTensorDesc.like(_array(x, "x"))
    reduced = set(as_uint_tuple(axes, "DML_OPERATOR_ARGMAX: Axes"))
    sizes = tuple(1 if d in reduced else s for d, s in enumerate(source.sizes))
    desc = ArgmaxOperatorDesc(
        input_tensor=source,
        output_tensor=BufferTensorDesc(output_data_type, sizes),
        axes=axes,
        axis_direction=axis_direction,
    )
    return _run(desc, [x], device)


def activation_hard_sigmoid(
    x: np.ndarray, alpha: float = 0.2, beta: float = 0.5, *, device: Device | None = None
) -> np.ndarray:
    """ACTIVATION_HARD_SIGMOID: ``max(0, min(alpha * x + beta, 1))``."""
    desc = BufferTensorDesc.like(_array(x, "x"))
    return _run(
        ActivationHardSigmoidOperatorDesc(input_tensor=desc, output_tensor=desc, alpha=alpha, beta=beta), [x], device
    )
