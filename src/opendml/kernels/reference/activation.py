"""ACTIVATION_* kernels."""

from __future__ import annotations

import numpy as np

from ...enums import OperatorType
from .. import register
from ._axes import first_argmax_last_axis, group_reduced_last, ungroup


@register(OperatorType.ACTIVATION_HARDMAX1)
def hardmax1(desc, inputs, outputs) -> None:
    """1 at the first maximum of each group over ``desc.axes``, 0 elsewhere."""
    (x,), (out,) = inputs, outputs
    grouped, permutation = group_reduced_last(x, desc.axes)
    winner = first_argmax_last_axis(grouped, last=False)
    one_hot = np.arange(grouped.shape[-1]) == winner[..., None]
    np.copyto(out, ungroup(one_hot, x.shape, permutation))


@register(OperatorType.ACTIVATION_LOG_SOFTMAX1)
def log_softmax1(desc, inputs, outputs) -> None:
    """``x - max - log(sum(exp(x - max)))`` over ``desc.axes``, in float64, rounded once to the output type.

    The maxima of a group contribute exactly 1 each to the sum, so ``log(sum)`` is taken as
    ``log(count) + log1p(rest / count)``: a plain ``log(1 + tiny)`` would lose ``tiny`` and leave the maxima at 0.
    A group without a finite maximum (a NaN, a +inf, all -inf) has no exact 0 after the shift and gets NaN.
    """
    (x,), (out,) = inputs, outputs
    axes = tuple(desc.axes)
    with np.errstate(all="ignore"):  # inf - inf and NaN groups are defined results (NaN), not warnings
        shifted = x.astype(np.float64)  # a fresh copy: the working buffer
        shifted -= shifted.max(axis=axes, keepdims=True)
        is_max = shifted == 0
        terms = np.exp(shifted)
        np.copyto(terms, 0.0, where=is_max)
        rest = terms.sum(axis=axes, keepdims=True)
        count = is_max.sum(axis=axes, keepdims=True)
        log_sum = np.where(count > 0, np.log(count) + np.log1p(rest / count), np.nan)
        shifted -= log_sum
        np.copyto(out, shifted, casting="same_kind")  # beyond the output type's range rounds to -inf


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
