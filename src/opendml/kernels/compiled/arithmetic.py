"""Issues 10 and 11's members on the C element-wise engine: ADD, SUBTRACT, MULTIPLY, LOGICAL_LESS_THAN, CLIP,
RELU, EXP, SIGMOID, TANH, GELU and QUANTIZE_LINEAR.

Each kernel takes the common layouts (float32/float16, the integer types the engine has, no ScaleBias) and hands
anything else (a ScaleBias, an INT32 input to QUANTIZE_LINEAR, a UINT32 comparison result, ...) to the reference
kernel, so that every descriptor the operator validates still runs.
"""

from __future__ import annotations

from ..._core import _native
from ...enums import OperatorType as OT
from .. import KERNELS, register

# dtypes by their one-letter codes (a string test is the cheapest dtype check, paid on every call)
_FLOATS = "ef"  # float16, float32
_NUMBERS = _FLOATS + "bhilqBHILQ"  # and every native integer width the engine maps


def _floats(desc, inputs, outputs) -> bool:
    return outputs[0].dtype.char in _FLOATS and getattr(desc, "scale_bias", None) is None


def _numbers(desc, inputs, outputs) -> bool:
    return outputs[0].dtype.char in _NUMBERS


def _less(desc, inputs, outputs) -> bool:
    return outputs[0].dtype.char == "B" and inputs[0].dtype.char in _NUMBERS


def _quantize(desc, inputs, outputs) -> bool:
    x, scale, zero_point = inputs
    return zero_point is not None and x.dtype.char in _FLOATS and scale.dtype.char in _FLOATS


def _native_or_reference(operator_type, op: int, accepts, params=None) -> None:
    """Register a compiled kernel running ``op`` where ``accepts(desc, inputs, outputs)``, else the reference."""

    def kernel(desc, inputs, outputs) -> None:
        if not accepts(desc, inputs, outputs):
            KERNELS[operator_type]["reference"](desc, inputs, outputs)
        elif params is None:
            _native.elementwise(op, tuple(inputs), outputs[0])
        else:
            _native.elementwise(op, tuple(inputs), outputs[0], *params(desc))

    kernel.__name__ = operator_type.name.lower()
    register(operator_type, "compiled")(kernel)


for _type, _op, _accepts in (
    (OT.ELEMENT_WISE_ADD, _native.OP_ADD, _numbers),
    (OT.ELEMENT_WISE_SUBTRACT, _native.OP_SUBTRACT, _numbers),
    (OT.ELEMENT_WISE_MULTIPLY, _native.OP_MULTIPLY, _numbers),
    (OT.ELEMENT_WISE_LOGICAL_LESS_THAN, _native.OP_LESS_THAN, _less),
    (OT.ACTIVATION_RELU, _native.OP_RELU, _floats),
    (OT.ELEMENT_WISE_EXP, _native.OP_EXP, _floats),
    (OT.ACTIVATION_SIGMOID, _native.OP_SIGMOID, _floats),
    (OT.ACTIVATION_TANH, _native.OP_TANH, _floats),
    (OT.ACTIVATION_GELU, _native.OP_GELU, _floats),
    (OT.ELEMENT_WISE_QUANTIZE_LINEAR, _native.OP_QUANTIZE_LINEAR, _quantize),
):
    _native_or_reference(_type, _op, _accepts)
_native_or_reference(OT.ELEMENT_WISE_CLIP, _native.OP_CLIP, _floats, lambda desc: (desc.min, desc.max))
