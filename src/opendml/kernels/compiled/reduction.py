"""Reductions on the C reduction engine: ARGMAX, ARGMIN, REDUCE, ACTIVATION_HARDMAX1, ACTIVATION_LOG_SOFTMAX1,
ACTIVATION_SOFTMAX1 (and their v0 forms)."""

from __future__ import annotations

import functools

from ..._core import _native
from ..._core._native import LAST, MIN, OP_ARGMAX, OP_HARDMAX, OP_LOG_SOFTMAX, OP_SOFTMAX, reduce
from ...enums import AxisDirection, OperatorType, ReduceFunction, TensorDataType
from .. import register
from ..reference import reduction as _reference


def _mask(axes: tuple[int, ...]) -> int:
    """The axes as the engine's bit mask (formed once per compiled operator: see _on_engine's prepare)."""
    mask = 0
    for axis in axes:
        mask |= 1 << axis
    return mask


_DECREASING = AxisDirection.DECREASING
_FLOAT_TYPES = (TensorDataType.FLOAT32, TensorDataType.FLOAT16)


def _on_engine(args_of, fallback=None):
    """A kernel that runs ``reduce(op, input, output, mask, flags)`` with ``args_of(desc)``'s (op, mask, flags),
    or ``fallback`` (the NumPy kernel) where that is None. ``prepare`` resolves them once per descriptor."""

    def prepare(desc):
        args = args_of(desc)
        if args is None:
            return functools.partial(fallback, desc)
        op, mask, flags = args

        def run(inputs, outputs) -> None:
            reduce(op, inputs[0], outputs[0], mask, flags)

        return run

    def kernel(desc, inputs, outputs) -> None:
        prepare(desc)(inputs, outputs)

    kernel.prepare = prepare
    return kernel


def _last(desc) -> int:
    """The mask of the last axis (the v0 softmaxes')."""
    return _mask((len(desc.input_tensor.sizes) - 1,))


def _arg(minimum: int):
    return _on_engine(
        lambda desc: (OP_ARGMAX, _mask(desc.axes), (LAST if desc.axis_direction == _DECREASING else 0) | minimum)
    )


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
#: The functions the engine runs on floats only (the integer forms run on the NumPy kernel).
_FLOAT_ONLY = frozenset((RF.AVERAGE, RF.L2, RF.LOG_SUM))


def _reduce_args(desc):
    """The engine's functions; the others (LOG_SUM_EXP, MULTIPLY; AVERAGE, L2 and LOG_SUM of integers) run on the
    NumPy kernel."""
    op = _REDUCE.get(desc.function)
    if op is None or (desc.function in _FLOAT_ONLY and desc.input_tensor.data_type not in _FLOAT_TYPES):
        return None
    return op[0], _mask(desc.axes), op[1]


reduce_ = register(OperatorType.REDUCE, "compiled")(_on_engine(_reduce_args, _reference.reduce))
hardmax1 = register(OperatorType.ACTIVATION_HARDMAX1, "compiled")(
    _on_engine(lambda desc: (OP_HARDMAX, _mask(desc.axes), 0))
)
log_softmax1 = register(OperatorType.ACTIVATION_LOG_SOFTMAX1, "compiled")(
    _on_engine(lambda desc: (OP_LOG_SOFTMAX, _mask(desc.axes), 0))
)
softmax1 = register(OperatorType.ACTIVATION_SOFTMAX1, "compiled")(
    _on_engine(lambda desc: (OP_SOFTMAX, _mask(desc.axes), 0))
)
# The v0 softmax family is its *1 operator over the last axis: the same engine, the same bits.
hardmax = register(OperatorType.ACTIVATION_HARDMAX, "compiled")(_on_engine(lambda desc: (OP_HARDMAX, _last(desc), 0)))
log_softmax = register(OperatorType.ACTIVATION_LOG_SOFTMAX, "compiled")(
    _on_engine(lambda desc: (OP_LOG_SOFTMAX, _last(desc), 0))
)
softmax = register(OperatorType.ACTIVATION_SOFTMAX, "compiled")(_on_engine(lambda desc: (OP_SOFTMAX, _last(desc), 0)))
