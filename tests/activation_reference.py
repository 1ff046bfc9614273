"""An independent reference for the element-wise activations: one Python ``float`` (IEEE double) per element,
computed with the ``math`` module in plain loops, nothing from ``opendml.kernels``. Parameters are taken as the
C struct holds them (float32 values).

The contract these functions state (README, "Semantics and decisions"):

* NaN in gives NaN out, also where the formula's comparison would drop it (THRESHOLDED_RELU, SHRINK, RELU_GRAD's
  InputTensor, CELU).
* An exact zero coefficient times an infinite input is the limit of the formula, a signed zero (:func:`mul`).
* Branches that return the constant 0 return +0.0; branches that return ``x`` return it as it is (-0.0 too).
* SOFTSIGN(+-inf) = +-1 (the limit); CELU with Alpha 0 is RELU (the limit); SOFTPLUS with Steepness 0 is
  ``ln 2 / 0``, an infinity of the sign of Steepness.
* Integers: PARAMETERIZED_RELU wraps (two's complement); SHRINK truncates the exact result toward zero and
  saturates to the type's range.

Also the ulp comparison the cases use.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import numpy as np
from reference import _check_specials, assert_bits_equal, float32_value

NAN, INF = math.nan, math.inf


def elementwise(function, *arrays: np.ndarray, dtype=np.float64) -> np.ndarray:
    """``function`` applied to the elements of ``arrays`` (same shape), one Python number at a time."""
    out = np.zeros(arrays[0].shape, dtype=dtype)
    for index in product(*(range(s) for s in arrays[0].shape)):
        out[index] = function(*(a[index].item() for a in arrays))
    return out


def mul(a: float, b: float) -> float:
    """``a * b``, with 0 times an infinite ``b`` the limit: a zero signed by both factors."""
    if a == 0 and math.isinf(b):
        return math.copysign(0.0, a) * math.copysign(1.0, b)
    return a * b


def expm1(v: float) -> float:
    try:
        return math.expm1(v)
    except OverflowError:
        return INF


def sigmoid(v: float) -> float:
    if math.isnan(v):
        return NAN
    if v >= 0:
        return 1 / (1 + math.exp(-v))
    e = math.exp(v)
    return e / (1 + e)


def softplus(t: float) -> float:
    """ln(1 + e^t), split at 0 so that neither exp overflows."""
    if math.isnan(t):
        return NAN
    if t <= 0:
        return math.log1p(math.exp(t))
    return t + math.log1p(math.exp(-t))


def relu(v):
    return NAN if v != v else (v if v > 0 else 0.0)


def elu(v, alpha):
    return v if v >= 0 else alpha * expm1(v)


def leaky_relu(v, alpha):
    return v if v >= 0 else mul(alpha, v)


def linear(v, alpha, beta):
    return mul(alpha, v) + beta


def parameterized_relu(v, slope, bits=None):
    """Floats: the select; integers (``bits`` wide): the exact product wrapped to the type."""
    if bits is None:
        return v if v >= 0 else mul(slope, v)
    if v >= 0:
        return v
    half = 1 << (bits - 1)
    return (v * slope + half) % (1 << bits) - half


def parametric_softplus(v, alpha, beta):
    return mul(alpha, softplus(mul(beta, v)))


def scaled_elu(v, alpha, gamma):
    return mul(gamma, v) if v > 0 else gamma * (alpha * expm1(v))


def scaled_tanh(v, alpha, beta):
    return alpha * math.tanh(mul(beta, v))


def softplus_steepness(v, steepness):
    numerator = softplus(mul(steepness, v))
    if steepness == 0:
        return NAN if math.isnan(numerator) else math.copysign(INF, steepness)
    return numerator / steepness


def softsign(v):
    return math.copysign(1.0, v) if math.isinf(v) else v / (1 + abs(v))


def thresholded_relu(v, alpha):
    return NAN if math.isnan(v) else (v if v > alpha else 0.0)


def shrink(v, bias, threshold, low=None, high=None):
    """Floats: in double; integers (range ``low..high``): exact, truncated toward zero, saturated."""
    if isinstance(v, float) and math.isnan(v):
        return NAN
    if low is None:
        return v - bias if v > threshold else v + bias if v < -threshold else 0.0
    if v > threshold:
        exact = Fraction(v) - Fraction(bias)
    elif v < -threshold:
        exact = Fraction(v) + Fraction(bias)
    else:
        return 0
    return min(max(int(exact), low), high)  # int() of a Fraction truncates toward zero


def celu(v, alpha):
    if math.isnan(v):
        return NAN
    positive = v if v > 0 else 0.0
    if alpha == 0:
        return positive
    return positive + min(0.0, alpha * expm1(v / alpha))


def relu_grad(x, dy):
    if isinstance(x, float) and math.isnan(x):
        return NAN
    return dy if x > 0 else 0.0


def gelu(v):
    return mul(0.5 * math.erfc(-v / math.sqrt(2)), v)


def swish(v, scale):
    return mul(sigmoid(mul(scale, v)), v)


def hard_swish(v, alpha, beta):
    if math.isnan(v):
        return NAN
    return mul(min(max(mul(alpha, v) + beta, 0.0), 1.0), v)


def params32(desc, *names: str) -> list[float]:
    """The named FLOAT fields of ``desc`` as the C struct holds them."""
    return [float32_value(getattr(desc, name)) for name in names]


# --------------------------------------------------------------------------------------------------------------
# Comparison in ulps
# --------------------------------------------------------------------------------------------------------------


def _ordered(values: np.ndarray) -> np.ndarray:
    """Float bits as integers ordered like the floats (+0 and -0 both 0), so a difference counts ulps."""
    bits = np.ascontiguousarray(values).view(np.dtype(f"i{values.dtype.itemsize}")).astype(np.int64)
    sign = np.int64(1) << (8 * values.dtype.itemsize - 1)
    return np.where(bits < 0, -(bits + sign), bits)


def assert_within_ulps(got: np.ndarray, ref: np.ndarray, ulps: int, context: str = "") -> None:
    """``got`` (FLOAT32 or FLOAT16) within ``ulps`` of ``ref`` (float64) rounded to ``got``'s type; NaN and
    infinities exactly where the reference has them."""
    assert got.shape == ref.shape, f"{context}: shape {got.shape} != {ref.shape}"
    with np.errstate(over="ignore"):
        rounded = ref.astype(got.dtype)
    check = _check_specials(got, rounded.astype(np.float64), context)
    distance = np.abs(_ordered(got) - _ordered(rounded))
    bad = check & (distance > ulps)
    if bad.any():
        where = np.argwhere(bad)[:5].tolist()
        raise AssertionError(
            f"{context}: {int(bad.sum())} element(s) beyond {ulps} ulp, e.g. at {where}: "
            f"got {[got[tuple(w)].item() for w in where]}, exact {[ref[tuple(w)].item() for w in where]}"
        )


def check_ulps(float32_ulps: int, float16_ulps: int = 1):
    """A case's ``check``: the stated bound in ulps per output type (integers: bit for bit)."""

    def check(got, expected, desc, inputs) -> None:
        if got.dtype.kind != "f":
            assert_bits_equal(got, expected.astype(got.dtype))
            return
        assert_within_ulps(got, expected, float32_ulps if got.dtype == np.float32 else float16_ulps)

    return check
