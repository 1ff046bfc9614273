"""Reductions on the C reduction engine: ARGMAX, ACTIVATION_HARDMAX1, ACTIVATION_LOG_SOFTMAX1 (and their v0 forms)."""

from __future__ import annotations

from ..._core._native import LAST, OP_ARGMAX, OP_HARDMAX, OP_LOG_SOFTMAX, reduce
from ...enums import AxisDirection, OperatorType
from .. import register


def _mask(axes) -> int:
    mask = 0
    for axis in axes:
        mask |= 1 << axis
    return mask


@register(OperatorType.ARGMAX, "compiled")
def argmax(desc, inputs, outputs) -> None:
    flags = LAST if desc.axis_direction == AxisDirection.DECREASING else 0
    reduce(OP_ARGMAX, inputs[0], outputs[0], _mask(desc.axes), flags)


@register(OperatorType.ACTIVATION_HARDMAX1, "compiled")
def hardmax1(desc, inputs, outputs) -> None:
    reduce(OP_HARDMAX, inputs[0], outputs[0], _mask(desc.axes), 0)


@register(OperatorType.ACTIVATION_LOG_SOFTMAX1, "compiled")
def log_softmax1(desc, inputs, outputs) -> None:
    reduce(OP_LOG_SOFTMAX, inputs[0], outputs[0], _mask(desc.axes), 0)


# The v0 softmax family is its *1 operator over the last axis: the same engine, the same bits.
@register(OperatorType.ACTIVATION_HARDMAX, "compiled")
def hardmax(desc, inputs, outputs) -> None:
    reduce(OP_HARDMAX, inputs[0], outputs[0], _mask((inputs[0].ndim - 1,)), 0)


@register(OperatorType.ACTIVATION_LOG_SOFTMAX, "compiled")
def log_softmax(desc, inputs, outputs) -> None:
    reduce(OP_LOG_SOFTMAX, inputs[0], outputs[0], _mask((inputs[0].ndim - 1,)), 0)
