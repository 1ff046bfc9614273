"""ACTIVATION_* kernels."""

from __future__ import annotations

import math

import numpy as np

from ...enums import OperatorType
from .. import register
from ._axes import arg_index, distinct
from ._special import erfc


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
    first = tuple(slice(0, 1) if d.shape[i] != x.shape[i] and i in axes else slice(None) for i in range(x.ndim))
    if first != (slice(None),) * x.ndim:
        np.copyto(out, 0)  # a broadcast reduced axis: only its first copy can win, the others are all 0
    np.copyto(out[first], position == winner)


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


# ----------------------------------------------------------------------------------------------------------------
# The element-wise activations (issue 10). Floats are computed in float64 from the FLOAT parameters as the C
# struct holds them (float32 values) and rounded once to the output type. Every kernel reads its whole input into
# a float64 working array before it writes, so any of them may run in place (and as a fused activation, on its
# host's output). Shared rules (README, "Semantics and decisions"): NaN propagates (as the default quiet NaN but
# in the selects done in the tensor's own type: IDENTITY, RELU, RELU_GRAD); a zero coefficient times an
# infinite input is the formula's limit, a signed zero, not NaN (:func:`_times`); constant-0 branches give +0.0.
# ----------------------------------------------------------------------------------------------------------------


def _unary_float(formula):
    """A kernel of InputTensor -> OutputTensor: ``formula(desc, x64) -> y64`` on float64, rounded once."""

    def kernel(desc, inputs, outputs) -> None:
        (x,), (out,) = inputs, outputs
        with np.errstate(all="ignore"):  # overflow to inf, inf - inf and 0 / 0 are results here, not warnings
            y = formula(desc, x.astype(np.float64))
            _store(out, y)

    kernel.__doc__ = formula.__doc__
    return kernel


def _store(out, y) -> None:
    """``y`` (float64) rounded once into ``out`` (beyond the type's range: inf); every NaN becomes the default
    quiet NaN, so that the result's bits never depend on how NaN signs and payloads travel through the formula."""
    y[np.isnan(y)] = np.nan
    np.copyto(out, y, casting="unsafe")


def _times(a, b):
    """``a * b``, but an exact zero ``a`` times an infinite ``b`` is the limit of the formula, ``a * sign(b)``."""
    product = np.multiply(a, b)
    zero_times_inf = (np.asarray(a) == 0) & np.isinf(b)
    if zero_times_inf.any():
        product = np.where(zero_times_inf, np.multiply(a, np.sign(b)), product)
    return product


def _softplus(t):
    """``ln(1 + exp(t))`` without overflow or cancellation."""
    return np.maximum(t, 0.0) + np.log1p(np.exp(-np.abs(t)))


def _nan_kept(y, x):
    """``y`` with the NaN of ``x`` kept where a comparison would have dropped it."""
    return np.where(np.isnan(x), x, y)


def _register_unary(operator_type, formula) -> None:
    register(operator_type)(_unary_float(formula))


def _f(value) -> float:
    """A FLOAT field as C holds it (float32), as a Python float (float64) for the float64 formulas."""
    return float(np.float32(value))


_register_unary(OperatorType.ACTIVATION_ELU, lambda d, x: np.where(x >= 0, x, _f(d.alpha) * np.expm1(x)))
_register_unary(OperatorType.ACTIVATION_LEAKY_RELU, lambda d, x: np.where(x >= 0, x, _times(_f(d.alpha), x)))
_register_unary(OperatorType.ACTIVATION_LINEAR, lambda d, x: _times(_f(d.alpha), x) + _f(d.beta))
_register_unary(
    OperatorType.ACTIVATION_PARAMETRIC_SOFTPLUS,
    lambda d, x: _times(_f(d.alpha), _softplus(_times(_f(d.beta), x))),
)
_register_unary(
    OperatorType.ACTIVATION_SCALED_ELU,
    lambda d, x: np.where(x > 0, _times(_f(d.gamma), x), _f(d.gamma) * _f(d.alpha) * np.expm1(x)),
)
_register_unary(OperatorType.ACTIVATION_SCALED_TANH, lambda d, x: _f(d.alpha) * np.tanh(_times(_f(d.beta), x)))
_register_unary(OperatorType.ACTIVATION_SIGMOID, lambda d, x: 1.0 / (1.0 + np.exp(-x)))
_register_unary(OperatorType.ACTIVATION_SOFTPLUS, lambda d, x: _softplus(_times(_f(d.steepness), x)) / _f(d.steepness))
_register_unary(OperatorType.ACTIVATION_SOFTSIGN, lambda d, x: np.where(np.isinf(x), np.sign(x), x / (1 + np.abs(x))))
_register_unary(OperatorType.ACTIVATION_TANH, lambda d, x: np.tanh(x))
_register_unary(OperatorType.ACTIVATION_THRESHOLDED_RELU, lambda d, x: _nan_kept(np.where(x > _f(d.alpha), x, 0.0), x))
_register_unary(
    OperatorType.ACTIVATION_GELU, lambda d, x: _times(0.5 * erfc(x * -math.sqrt(0.5)), x)
)  # 1 + erf(z) = erfc(-z): no cancellation for negative x
_register_unary(
    OperatorType.ACTIVATION_SWISH,
    lambda d, x: _times(1.0 / (1.0 + np.exp(-_times(_f(d.sigmoid_input_scale), x))), x),
)
_register_unary(
    OperatorType.ACTIVATION_HARD_SWISH,
    lambda d, x: _times(np.clip(_times(_f(d.alpha), x) + _f(d.beta), 0.0, 1.0), x),
)


def _celu(desc, x):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``; Alpha 0 is the limit, RELU."""
    alpha = _f(desc.alpha)
    positive = np.where(x > 0, x, 0.0)
    if alpha == 0:
        return _nan_kept(positive, x)
    return positive + np.minimum(0.0, alpha * np.expm1(x / alpha))


_register_unary(OperatorType.ACTIVATION_CELU, _celu)


@register(OperatorType.ACTIVATION_IDENTITY)
def identity(desc, inputs, outputs) -> None:
    """A copy, bit for bit (NaN payloads and -0.0 survive); nothing to do in place."""
    np.copyto(outputs[0], inputs[0])


@register(OperatorType.ACTIVATION_RELU)
def relu(desc, inputs, outputs) -> None:
    """``max(0, x)``, exact in the tensor's own type; NaN propagates; -0.0 gives +0.0 (the constant 0)."""
    (x,), (out,) = inputs, outputs
    np.maximum(x, out.dtype.type(0), out=out)
    if out.dtype.kind == "f":
        out += out.dtype.type(0)  # -0.0 + 0.0 is +0.0; every other value is unchanged


@register(OperatorType.ACTIVATION_RELU_GRAD)
def relu_grad(desc, inputs, outputs) -> None:
    """``dY if X > 0 else 0``, a select in the tensors' own type (exact); a NaN in X gives NaN."""
    (x, gradient), (out,) = inputs, outputs
    selected = np.where(x > 0, gradient, out.dtype.type(0))
    if out.dtype.kind == "f":
        selected = _nan_kept(selected, x)
    np.copyto(out, selected)


@register(OperatorType.ACTIVATION_PARAMETERIZED_RELU)
def parameterized_relu(desc, inputs, outputs) -> None:
    """``x if x >= 0 else slope * x``: floats rounded once from float64 (the product is exact there); integers
    multiply exactly and wrap to the type's width (two's complement), as C integer arithmetic stores them."""
    (x, slope), (out,) = inputs, outputs
    if out.dtype.kind != "f":
        product = x.astype(np.int64) * slope.astype(np.int64)
        np.copyto(out, np.where(x >= 0, x, product).astype(out.dtype))  # astype wraps
        return
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        _store(out, np.where(x64 >= 0, x64, _times(slope.astype(np.float64), x64)))


@register(OperatorType.ACTIVATION_SHRINK)
def shrink(desc, inputs, outputs) -> None:
    """``x - bias if x > threshold, x + bias if x < -threshold, else 0`` (the first line that holds wins).

    Floats: rounded once from float64 (NaN propagates). Integers: the exact real result rounded toward zero, as
    C converts a float to an integer, then saturated to the type's range.
    """
    (x,), (out,) = inputs, outputs
    bias, threshold = _f(desc.bias), _f(desc.threshold)
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)  # exact for every supported integer type (32 bits at most)
        above, below = x64 > threshold, x64 < -threshold
        if out.dtype.kind == "f":
            y = np.where(above, x64 - bias, np.where(below, x64 + bias, 0.0))
            _store(out, _nan_kept(y, x64))
            return
        y = np.where(above, _minus_toward_zero(x64, bias), np.where(below, _minus_toward_zero(x64, -bias), 0.0))
        info = np.iinfo(out.dtype)
        np.copyto(out, np.clip(y, info.min, info.max), casting="unsafe")


def _minus_toward_zero(x: np.ndarray, b: float) -> np.ndarray:
    """``trunc(x - b)`` exactly, for integer-valued float64 ``x`` (|x| < 2**33) and a float ``b``.

    float64 rounds ``x - b`` (5 - 1e-30 becomes 5.0, whose truncation is 5, not 4); the truncation of the rounded
    difference is off by at most one, and ``x - t`` is exact for an integer ``t``, so comparing it with ``b``
    tells exactly which side of ``t`` the true difference lies on.
    """
    t = np.trunc(np.clip(x - b, -(2.0**40), 2.0**40))  # beyond 2**40 every type saturates anyway
    positive = x > b
    t = np.where(positive & (x - t < b), t - 1, t)  # true difference below t: floor is t - 1
    t = np.where(positive & (x - (t + 1) >= b), t + 1, t)
    t = np.where(~positive & (x - t > b), t + 1, t)  # negative: ceil
    t = np.where(~positive & (x - (t - 1) <= b), t - 1, t)
    return t
