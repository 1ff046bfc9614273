"""ACTIVATION_* kernels."""

from __future__ import annotations

import numpy as np

from ...enums import OperatorType
from .. import register
from ._axes import arg_index, distinct


# The softmax family: each kernel works on the distinct elements of its input (a broadcast axis holds copies,
# see _axes.distinct), so its working memory is of the order of its output. The v0 operators are the *1
# operators over the last axis.
def _hardmax(x: np.ndarray, out: np.ndarray, axes: tuple[int, ...]) -> None:
    """1 at the first maximum of each group over ``axes``, 0 elsewhere."""
    d, _ = distinct(x, axes)
    winner = arg_index(x, axes, last=False)  # row-major index over the reduced axes of x
    reduced = sorted(axes)
    position = np.zeros(d.shape, np.int64)  # each element's row-major index over the reduced axes of x
    for a in reduced:
        position = position * x.shape[a] + np.arange(d.shape[a]).reshape([-1 if i == a else 1 for i in range(x.ndim)])
    np.copyto(out, 0)
    first = tuple(slice(0, 1) if d.shape[i] != x.shape[i] and i in axes else slice(None) for i in range(x.ndim))
    np.copyto(out[first], position == winner)  # a broadcast reduced axis: only its first copy can win


def _log_softmax_parts(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int]:
    """``x - max`` of the distinct elements (float64), ``log(sum(exp(x - max)))`` of each group, and the copies.

    The maxima of a group contribute exactly 1 each to the sum, so ``log(sum)`` is taken as
    ``log(count) + log1p(rest / count)``: a plain ``log(1 + tiny)`` would lose ``tiny`` and leave the maxima at 0.
    A group without a finite maximum (a NaN, a +inf, all -inf) has no exact 0 after the shift and gets NaN.
    """
    d, copies = distinct(x, axes)
    shifted = d.astype(np.float64)  # a fresh copy: the working buffer
    shifted -= shifted.max(axis=axes, keepdims=True)
    is_max = shifted == 0
    terms = np.exp(shifted)
    np.copyto(terms, 0.0, where=is_max)
    rest = terms.sum(axis=axes, keepdims=True)
    count = is_max.sum(axis=axes, keepdims=True)
    log_sum = np.where(count > 0, np.log(count * copies) + np.log1p(rest / count), np.nan)
    return shifted, log_sum, copies


def _log_softmax(x: np.ndarray, out: np.ndarray, axes: tuple[int, ...]) -> None:
    """``x - max - log(sum(exp(x - max)))`` over ``axes``, in float64, rounded once to the output type."""
    with np.errstate(all="ignore"):  # inf - inf and NaN groups are defined results (NaN), not warnings
        shifted, log_sum, _ = _log_softmax_parts(x, axes)
        shifted -= log_sum
        np.copyto(out, shifted, casting="same_kind")  # beyond the output type's range rounds to -inf


def _softmax(x: np.ndarray, out: np.ndarray, axes: tuple[int, ...]) -> None:
    """``exp(x - max) / sum(exp(x - max))`` over ``axes``, in float64, rounded once to the output type.

    NaN for a whole group holding a NaN, a +inf or only -inf values (as LOG_SOFTMAX); a -inf entry gives 0.
    """
    with np.errstate(all="ignore"):
        shifted, _, copies = _log_softmax_parts(x, axes)
        np.exp(shifted, out=shifted)
        shifted /= shifted.sum(axis=axes, keepdims=True) * copies
        np.copyto(out, shifted, casting="same_kind")


def _with_axes(compute, axes_of):
    def kernel(desc, inputs, outputs) -> None:
        (x,), (out,) = inputs, outputs
        compute(x, out, tuple(axes_of(desc, x)))

    return kernel


_DESC_AXES = lambda desc, x: desc.axes  # noqa: E731
_LAST = lambda desc, x: (x.ndim - 1,)  # noqa: E731
for _type, _compute, _axes_of in (
    (OperatorType.ACTIVATION_HARDMAX1, _hardmax, _DESC_AXES),
    (OperatorType.ACTIVATION_LOG_SOFTMAX1, _log_softmax, _DESC_AXES),
    (OperatorType.ACTIVATION_SOFTMAX1, _softmax, _DESC_AXES),
    (OperatorType.ACTIVATION_HARDMAX, _hardmax, _LAST),
    (OperatorType.ACTIVATION_LOG_SOFTMAX, _log_softmax, _LAST),
    (OperatorType.ACTIVATION_SOFTMAX, _softmax, _LAST),
):
    register(_type)(_with_axes(_compute, _axes_of))


@register(OperatorType.ACTIVATION_HARD_SIGMOID)
def hard_sigmoid(desc, inputs, outputs) -> None:
    """``max(0, min(alpha * x + beta, 1))`` with FLOAT (float32) alpha and beta; may run in place."""
    (x,), (out,) = inputs, outputs
    alpha, beta = np.float32(desc.alpha), np.float32(desc.beta)
    with np.errstate(all="ignore"):
        if out.dtype == np.float32:
            np.multiply(x, alpha, out=out)  # in place (out is x) is safe: NumPy handles overlapping operands
            np.add(out, beta, out=out)
            np.clip(out, np.float32(0), np.float32(1), out=out)
        else:
            y = x.astype(np.float32) * alpha + beta
            np.clip(y, np.float32(0), np.float32(1), out=y)
            np.copyto(out, y, casting="same_kind")
