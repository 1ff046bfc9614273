"""Reductions on the C reduction engine: ARGMAX, ARGMIN, REDUCE, ACTIVATION_HARDMAX1, ACTIVATION_LOG_SOFTMAX1,
ACTIVATION_SOFTMAX1 (and their v0 forms)."""

from __future__ import annotations

import functools

import numpy as np

from ..._core import _native
from ..._core._native import LAST, MIN, OP_ARGMAX, OP_HARDMAX, OP_LOG_SOFTMAX, OP_SOFTMAX, reduce
from ...enums import AxisDirection, OperatorType, ReduceFunction
from .. import register
from ..reference import reduction as _reference


@functools.lru_cache(maxsize=256)
def _mask(axes: tuple[int, ...]) -> int:
    """The axes as the engine's bit mask (cached: a call's Python costs as much as a small tensor's kernel)."""
    mask = 0
    for axis in axes:
        mask |= 1 << axis
    return mask


_DECREASING = AxisDirection.DECREASING  # (an enum's attribute costs a lookup a call)


def _arg(minimum: int):
    def kernel(desc, inputs, outputs) -> None:
        flags = LAST if desc.axis_direction == _DECREASING else 0
        reduce(OP_ARGMAX, inputs[0], outputs[0], _mask(desc.axes), flags | minimum)

    return kernel


# ARGMIN is ARGMAX with the comparisons turned round (MIN).
argmax = register(OperatorType.ARGMAX, "compiled")(_arg(0))
argmin = register(OperatorType.ARGMIN, "compiled")(_arg(MIN))

RF = ReduceFunction
#: REDUCE's functions on the engine (op, flags); MIN is MAX as ARGMIN is ARGMAX; ARGMAX/ARGMIN are INCREASING.
_REDUCE = {
    RF.SUM: (_native.OP_SUM, 0),
    RF.SUM_SQUARE: (_native.OP_SUM_SQUARE, 0),
    RF.L1: (_native.OP_L1, 0),
    RF.AVERAGE: (_native.OP_AVERAGE, 0),
    RF.L2: (_native.OP_L2, 0),
    RF.LOG_SUM: (_native.OP_LOG_SUM, 0),
    RF.MAX: (_native.OP_MAX, 0),
    RF.MIN: (_native.OP_MAX, MIN),
    RF.ARGMAX: (OP_ARGMAX, 0),
    RF.ARGMIN: (OP_ARGMAX, MIN),
}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float16))
#: The functions the engine runs on floats only (the integer forms run on the NumPy kernel).
_FLOAT_ONLY = frozenset((RF.AVERAGE, RF.L2, RF.LOG_SUM))


@register(OperatorType.REDUCE, "compiled")
def reduce_(desc, inputs, outputs) -> None:
    """The engine's functions; the others (LOG_SUM_EXP, MULTIPLY; AVERAGE, L2 and LOG_SUM of integers) run on the
    NumPy kernel."""
    op = _REDUCE.get(desc.function)
    if op is None or (desc.function in _FLOAT_ONLY and inputs[0].dtype not in _FLOATS):
        return _reference.reduce(desc, inputs, outputs)
    reduce(op[0], inputs[0], outputs[0], _mask(desc.axes), op[1])


@register(OperatorType.ACTIVATION_HARDMAX1, "compiled")
def hardmax1(desc, inputs, outputs) -> None:
    reduce(OP_HARDMAX, inputs[0], outputs[0], _mask(desc.axes), 0)


@register(OperatorType.ACTIVATION_LOG_SOFTMAX1, "compiled")
def log_softmax1(desc, inputs, outputs) -> None:
    reduce(OP_LOG_SOFTMAX, inputs[0], outputs[0], _mask(desc.axes), 0)


@register(OperatorType.ACTIVATION_SOFTMAX1, "compiled")
def softmax1(desc, inputs, outputs) -> None:
    reduce(OP_SOFTMAX, inputs[0], outputs[0], _mask(desc.axes), 0)


# The v0 softmax family is its *1 operator over the last axis: the same engine, the same bits.
@register(OperatorType.ACTIVATION_HARDMAX, "compiled")
def hardmax(desc, inputs, outputs) -> None:
    reduce(OP_HARDMAX, inputs[0], outputs[0], _mask((inputs[0].ndim - 1,)), 0)


@register(OperatorType.ACTIVATION_LOG_SOFTMAX, "compiled")
def log_softmax(desc, inputs, outputs) -> None:
    reduce(OP_LOG_SOFTMAX, inputs[0], outputs[0], _mask((inputs[0].ndim - 1,)), 0)


@register(OperatorType.ACTIVATION_SOFTMAX, "compiled")
def softmax(desc, inputs, outputs) -> None:
    reduce(OP_SOFTMAX, inputs[0], outputs[0], _mask((inputs[0].ndim - 1,)), 0)
