"""Reduction kernels: ARGMAX, ARGMIN, REDUCE.

Every kernel works on the distinct elements of its input (a broadcast axis counts as copies, see
:func:`._axes.distinct`) and streams sums in blocks, so memory stays of the order of the output.
"""

from __future__ import annotations

import numpy as np

from ...enums import AxisDirection, OperatorType, ReduceFunction
from .. import register
from ._axes import arg_index, distinct, kept_shape, streamed, streamed_arg


@register(OperatorType.ARGMAX)
def argmax(desc, inputs, outputs) -> None:
    """Row-major index over ``desc.axes`` of the first (INCREASING) or last (DECREASING) maximum."""
    _arg(desc.axes, inputs, outputs, desc.axis_direction == AxisDirection.DECREASING, minimum=False)


@register(OperatorType.ARGMIN)
def argmin(desc, inputs, outputs) -> None:
    """Row-major index over ``desc.axes`` of the first (INCREASING) or last (DECREASING) minimum."""
    _arg(desc.axes, inputs, outputs, desc.axis_direction == AxisDirection.DECREASING, minimum=True)


def _arg(axes, inputs, outputs, last: bool, minimum: bool) -> None:
    (x,), (out,) = inputs, outputs
    np.copyto(out, arg_index(x, tuple(axes), last, minimum), casting="unsafe")  # validation proved it fits


RF = ReduceFunction


@register(OperatorType.REDUCE)
def reduce(desc, inputs, outputs) -> None:
    """One of the twelve DML_REDUCE_FUNCTIONs over ``desc.axes``.

    ARGMAX/ARGMIN are the standalone operators with INCREASING; MAX/MIN return the element that ARGMAX/ARGMIN
    select, bits and all. Floats are accumulated in float64 and rounded once; integers (SUM, MULTIPLY, L1,
    SUM_SQUARE) are accumulated in 64 bits and wrap to the output's width, as two's complement arithmetic does.
    """
    (x,), (out,) = inputs, outputs
    axes, function = tuple(desc.axes), desc.function
    if function in (RF.ARGMAX, RF.ARGMIN):
        return _arg(axes, inputs, outputs, last=False, minimum=function == RF.ARGMIN)
    if function in (RF.MAX, RF.MIN):
        return np.copyto(out, _extreme(x, axes, minimum=function == RF.MIN))
    d, copies = distinct(x, axes)
    with np.errstate(all="ignore"):  # overflow to inf, log(0), log of a negative sum: defined results
        if np.issubdtype(x.dtype, np.integer):
            result = _integer(function, d, axes, copies)
        else:  # a NaN result is the default quiet NaN: which NaN a sum carries would depend on its order
            result = _float(function, d, axes, copies)
            result = np.where(np.isnan(result), np.nan, result)
        np.copyto(out, result, casting="unsafe")  # float64 rounds once; 64-bit integers wrap to the width


def _extreme(x: np.ndarray, axes: tuple[int, ...], minimum: bool) -> np.ndarray:
    """The first maximum (minimum) of each group itself: NaN wins, the sign of a zero and NaN payloads are kept."""
    d, _ = distinct(x, axes)
    _, value = streamed_arg(d, axes, last=False, minimum=minimum)
    return value().reshape(kept_shape(d.shape, axes))


def _sum(d, axes, term=None):
    return streamed(d, axes, term and (lambda v, at: term(v)), np.add, np.float64)


def _float(function: RF, d: np.ndarray, axes: tuple[int, ...], copies: int) -> np.ndarray:
    """A float function of the distinct elements ``d``, each standing for ``copies`` elements of its group."""
    if function == RF.SUM:
        return _sum(d, axes) * copies
    if function == RF.AVERAGE:  # copies scale the sum and the count alike
        return _sum(d, axes) / (d.size // _kept_count(d, axes))
    if function == RF.L1:
        return _sum(d, axes, np.abs) * copies
    if function == RF.SUM_SQUARE:
        return _sum(d, axes, np.square) * copies
    if function == RF.L2:
        return np.sqrt(_sum(d, axes, np.square) * copies)
    if function == RF.LOG_SUM:
        return np.log(_sum(d, axes) * copies)
    if function == RF.LOG_SUM_EXP:
        return _log_sum_exp(d, axes, copies)
    if function == RF.MULTIPLY:
        return np.power(streamed(d, axes, None, np.multiply, np.float64), copies)
    raise AssertionError(function)


def _kept_count(d: np.ndarray, axes: tuple[int, ...]) -> int:
    return int(np.prod(kept_shape(d.shape, axes)))


def _log_sum_exp(d: np.ndarray, axes: tuple[int, ...], copies: int) -> np.ndarray:
    """``m + log(sum(exp(x - m)))`` with ``m`` the group's maximum: exact limits for infinities (a +inf gives
    +inf, only -inf gives -inf), NaN for a group holding a NaN."""
    top = np.max(d, axis=axes, keepdims=True).astype(np.float64)
    shift = np.where(np.isfinite(top), top, 0.0)
    sums = streamed(d, axes, lambda v, at: np.exp(v - shift[at]), np.add, np.float64)
    return np.where(np.isfinite(top), shift + np.log(sums * copies), top)


def _integer(function: RF, d: np.ndarray, axes: tuple[int, ...], copies: int) -> np.ndarray:
    """SUM, MULTIPLY, L1 or SUM_SQUARE in 64-bit integers: wrapping is exact modulo the output's width."""
    wide = np.dtype(np.int64 if np.issubdtype(d.dtype, np.signedinteger) else np.uint64)
    if function == RF.MULTIPLY:
        return _wrapping_power(streamed(d, axes, None, np.multiply, wide), copies)
    term = {RF.SUM: None, RF.L1: np.abs, RF.SUM_SQUARE: np.square}[function]
    return streamed(d, axes, term and (lambda v, at: term(v)), np.add, wide) * wide.type(copies)


def _wrapping_power(base: np.ndarray, exponent: int) -> np.ndarray:
    """``base ** exponent`` modulo 2**64 by squaring (NumPy's integer multiply wraps)."""
    result = np.ones_like(base)
    while exponent:
        if exponent & 1:
            result *= base
        base = base * base
        exponent >>= 1
    return result
