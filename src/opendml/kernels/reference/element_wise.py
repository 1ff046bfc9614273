"""ELEMENT_WISE_* kernels."""

from __future__ import annotations

import numpy as np

from ...enums import OperatorType, RoundingMode
from ...tensor import scalar_union_value
from .. import apply_fused_activation, register
from ._special import erf  # (shared with ACTIVATION_GELU)


@register(OperatorType.ELEMENT_WISE_IF)
def element_wise_if(desc, inputs, outputs) -> None:
    """``a if condition != 0 else b``, selected as raw bits (NaN payloads and -0.0 survive).

    A bitwise select, ``b ^ ((a ^ b) & mask)``, runs several times faster in NumPy than a masked copy.
    The output never aliases ``a`` or ``b`` (IF does not run in place; binding refuses it).
    """
    (condition, a, b), (out,) = inputs, outputs
    bits = np.dtype(f"u{out.itemsize}")
    mask = (condition != 0).astype(bits)
    np.negative(mask, out=mask)  # 1 -> all bits set
    raw, b_raw = out.view(bits), b.view(bits)
    np.bitwise_xor(a.view(bits), b_raw, out=raw)
    np.bitwise_and(raw, mask, out=raw)
    np.bitwise_xor(raw, b_raw, out=raw)


@register(OperatorType.ELEMENT_WISE_ADD1)
def element_wise_add1(desc, inputs, outputs) -> None:
    """``FusedActivation(a + b)``: the IEEE sum in the tensors' type, correctly rounded (NumPy adds FLOAT16 in
    float32, whose 24 bits make that double rounding innocuous), then the fused activation, on the output in
    place."""
    (a, b), (out,) = inputs, outputs
    with np.errstate(all="ignore"):  # inf + -inf is NaN and an overflow is inf: results, not warnings
        np.add(a, b, out=out)
    apply_fused_activation(desc, outputs)


# ----------------------------------------------------------------------------------------------------------------
# Arithmetic and transcendental members. Float results are computed in float64 and rounded once to the output
# type (correct rounding for + - * / sqrt; within 1 ulp for the transcendental functions), or in the type itself
# where NumPy's operation is already correctly rounded. Integer arithmetic wraps in the tensor's width.
# ----------------------------------------------------------------------------------------------------------------


def to_integer(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Floats as an integer type: toward zero, saturating at the type's limits, NaN as 0 (opendml's one rule for
    every float-to-integer conversion: FLOAT bounds of integer tensors, ScaleBias on integers, POW)."""
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        t = np.nan_to_num(np.trunc(np.asarray(values, np.float64)), nan=0.0, posinf=np.inf, neginf=-np.inf)
        high = float(info.max)
        if high >= 2.0**63:  # the 64-bit maxima round up to 2^63, 2^64 in float64: clip below, then set
            high = float(np.nextafter(high, 0.0))
        result = np.clip(t, float(info.min), high).astype(dtype)
        result[t >= float(info.max) + 1.0] = info.max  # 2^63 and 2^64 are not below the limit in float64
    return result


def _float32(value: float) -> np.float32:
    """A FLOAT member as the C struct holds it."""
    with np.errstate(over="ignore"):
        return np.float32(value)


def _bound(value: float, dtype: np.dtype) -> np.generic:
    """A FLOAT bound (CLIP's Min, Max, THRESHOLD's Min) for a tensor of ``dtype``: float32 for float tensors,
    converted by :func:`to_integer` for integer tensors."""
    value = _float32(value)
    return value if dtype.kind == "f" else to_integer(np.array([value]), dtype)[0]


def _input(desc, x: np.ndarray) -> np.ndarray:
    """The operator's input after the optional DML_SCALE_BIAS: ``x * Scale + Bias`` in float32, each operation
    rounded (as HARD_SIGMOID's ``alpha * x + beta``), converted back by :func:`to_integer` for integer tensors."""
    scale_bias = getattr(desc, "scale_bias", None)
    if scale_bias is None:
        return x
    with np.errstate(all="ignore"):
        g = x.astype(np.float32)
        g *= _float32(scale_bias.scale)
        g += _float32(scale_bias.bias)
    return g if x.dtype.kind == "f" else to_integer(g, x.dtype)


def _store(out: np.ndarray, values: np.ndarray) -> None:
    """Round (floats) or wrap (integers) ``values`` once into ``out``."""
    with np.errstate(all="ignore"):
        np.copyto(out, values, casting="unsafe")


def _raw(array: np.ndarray) -> np.ndarray:
    return array.view(np.dtype(f"u{array.itemsize}"))


def _float_unary(operator_type: OperatorType, function) -> None:
    """A member computed in float64 on the (scaled) input and rounded once to the output type."""

    def kernel(desc, inputs, outputs) -> None:
        (x,), (out,) = inputs, outputs
        with np.errstate(all="ignore"):
            _store(out, function(_input(desc, x).astype(np.float64)))

    kernel.__name__ = operator_type.name.lower()
    register(operator_type)(kernel)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.copysign(np.floor(np.abs(x) + 0.5), x)  # exact in float64 for every float32 and float16 value


_ROUNDING = {
    RoundingMode.HALVES_TO_NEAREST_EVEN: np.rint,
    RoundingMode.TOWARD_ZERO: np.trunc,
    RoundingMode.TOWARD_INFINITY: _round_half_away,
}

for _type, _function in {
    OperatorType.ELEMENT_WISE_RECIP: lambda x: 1.0 / x,
    OperatorType.ELEMENT_WISE_SQRT: np.sqrt,
    OperatorType.ELEMENT_WISE_CEIL: np.ceil,
    OperatorType.ELEMENT_WISE_FLOOR: np.floor,
    OperatorType.ELEMENT_WISE_EXP: np.exp,
    OperatorType.ELEMENT_WISE_LOG: np.log,
    OperatorType.ELEMENT_WISE_SIN: np.sin,
    OperatorType.ELEMENT_WISE_COS: np.cos,
    OperatorType.ELEMENT_WISE_TAN: np.tan,
    OperatorType.ELEMENT_WISE_ASIN: np.arcsin,
    OperatorType.ELEMENT_WISE_ACOS: np.arccos,
    OperatorType.ELEMENT_WISE_ATAN: np.arctan,
    OperatorType.ELEMENT_WISE_SINH: np.sinh,
    OperatorType.ELEMENT_WISE_COSH: np.cosh,
    OperatorType.ELEMENT_WISE_TANH: np.tanh,
    OperatorType.ELEMENT_WISE_ASINH: np.arcsinh,
    OperatorType.ELEMENT_WISE_ACOSH: np.arccosh,
    OperatorType.ELEMENT_WISE_ATANH: np.arctanh,
    OperatorType.ELEMENT_WISE_ERF: erf,
}.items():
    _float_unary(_type, _function)


@register(OperatorType.ELEMENT_WISE_CONSTANT_POW)
def constant_pow(desc, inputs, outputs) -> None:
    (x,), (out,) = inputs, outputs
    base = _input(desc, x).astype(np.float64)
    with np.errstate(all="ignore"):  # an array exponent: NumPy's scalar fast paths (0.5 -> sqrt) break C99 pow
        _store(out, np.power(base, np.full(base.shape, _float32(desc.exponent), np.float64)))


@register(OperatorType.ELEMENT_WISE_ROUND)
def round_(desc, inputs, outputs) -> None:
    (x,), (out,) = inputs, outputs
    _store(out, _ROUNDING[desc.rounding_mode](x.astype(np.float64)))


@register(OperatorType.ELEMENT_WISE_IDENTITY)
def identity(desc, inputs, outputs) -> None:
    """A copy of the raw bits (NaN payloads survive), or ``x * Scale + Bias``."""
    (x,), (out,) = inputs, outputs
    if desc.scale_bias is None:
        np.copyto(_raw(out), _raw(x))
    else:
        _store(out, _input(desc, x))


@register(OperatorType.ELEMENT_WISE_ABS)
def abs_(desc, inputs, outputs) -> None:
    """Floats: the sign bit cleared (NaN too); integers: |x|, with abs(INT_MIN) wrapping to INT_MIN."""
    (x,), (out,) = inputs, outputs
    x = _input(desc, x)
    if x.dtype != out.dtype:  # a scaled FLOAT16 input is float32
        _store(out, np.abs(x))
    elif out.dtype.kind == "f":
        np.bitwise_and(_raw(x), np.array(~(1 << (8 * out.itemsize - 1)) & ((1 << 8 * out.itemsize) - 1),
                                         _raw(out).dtype), out=_raw(out))  # fmt: skip
    else:
        with np.errstate(over="ignore"):
            np.abs(x, out=out)


@register(OperatorType.ELEMENT_WISE_NEGATE)
def negate(desc, inputs, outputs) -> None:
    """Floats: the sign bit flipped (0 -> -0, NaN too); integers: -x, wrapping (-INT_MIN is INT_MIN)."""
    (x,), (out,) = inputs, outputs
    if out.dtype.kind == "f":
        np.bitwise_xor(_raw(x), np.array(1 << (8 * out.itemsize - 1), _raw(out).dtype), out=_raw(out))
    else:
        np.negative(x, out=out)


@register(OperatorType.ELEMENT_WISE_SIGN)
def sign(desc, inputs, outputs) -> None:
    """-1, 1, or 0 otherwise: 0 for -0.0 and for NaN (the page's "0, otherwise")."""
    (x,), (out,) = inputs, outputs
    with np.errstate(invalid="ignore"):
        _store(out, (x > 0).astype(np.int8) - (x < 0).astype(np.int8))


def _ieee(extreme, zero_bits):
    """IEEE 754-2019 maximum or minimum: NaN propagates (a's NaN first); between +0 and -0 (equal values whose
    bits differ) ``zero_bits`` picks: AND of the bits gives +0 (maximum), OR gives -0 (minimum)."""

    def pick(a, b) -> np.ndarray:
        dtype = np.result_type(a, b)
        a, b = np.asarray(a, dtype), np.asarray(b, dtype)  # float16 data meets float32 bounds in float32, exactly
        result = extreme(a, b)
        if dtype.kind == "f":
            with np.errstate(invalid="ignore"):
                tie = np.broadcast_to(a == b, result.shape)
            np.copyto(_raw(result), zero_bits(_raw(a), _raw(b)), where=tie)
        return result

    return pick


_maximum = _ieee(np.maximum, np.bitwise_and)
_minimum = _ieee(np.minimum, np.bitwise_or)


@register(OperatorType.ELEMENT_WISE_THRESHOLD)
def threshold(desc, inputs, outputs) -> None:
    (x,), (out,) = inputs, outputs
    x = _input(desc, x)
    _store(out, _maximum(x, _bound(desc.min, out.dtype)))


@register(OperatorType.ELEMENT_WISE_CLIP)
def clip(desc, inputs, outputs) -> None:
    """``min(Max, max(Min, x))``: Max wins when Min > Max; NaN propagates."""
    (x,), (out,) = inputs, outputs
    x = _input(desc, x)
    low, high = (_bound(v, out.dtype) for v in (desc.min, desc.max))
    _store(out, _minimum(high, _maximum(low, x)))


@register(OperatorType.ELEMENT_WISE_CLIP1)
def clip1(desc, inputs, outputs) -> None:
    """``max(Min, min(x, Max))``: Min wins when Min > Max; NaN propagates."""
    (x,), (out,) = inputs, outputs
    x = _input(desc, x)
    low, high = (scalar_union_value(v, desc.min_max_data_type) for v in (desc.min, desc.max))
    _store(out, _maximum(low, _minimum(x, high)))


def _clip_grad(x: np.ndarray, gradient: np.ndarray, out: np.ndarray, low, high) -> None:
    """0 where ``x <= low`` or ``x >= high``, else the gradient (a NaN x passes the gradient through)."""
    with np.errstate(invalid="ignore"):
        cut = (x <= low) | (x >= high)
    np.copyto(out, np.where(cut, np.zeros((), out.dtype), gradient))


@register(OperatorType.ELEMENT_WISE_CLIP_GRAD)
def clip_grad(desc, inputs, outputs) -> None:
    (x, gradient), (out,) = inputs, outputs
    _clip_grad(x, gradient, out, _bound(desc.min, x.dtype), _bound(desc.max, x.dtype))


@register(OperatorType.ELEMENT_WISE_CLIP_GRAD1)
def clip_grad1(desc, inputs, outputs) -> None:
    (x, gradient), (out,) = inputs, outputs
    low, high = (scalar_union_value(v, desc.min_max_data_type) for v in (desc.min, desc.max))
    _clip_grad(x, gradient, out, low, high)


def _native(function):
    """A binary member NumPy computes correctly rounded in the type itself (float16 through float32 is exact for
    + - * /: 24 >= 2 * 11 + 2 bits) and wrapping for integers."""

    def kernel(desc, inputs, outputs) -> None:
        (a, b), (out,) = inputs, outputs
        with np.errstate(all="ignore"):
            _store(out, function(a, b))

    return kernel


register(OperatorType.ELEMENT_WISE_ADD)(_native(np.add))
register(OperatorType.ELEMENT_WISE_SUBTRACT)(_native(np.subtract))
register(OperatorType.ELEMENT_WISE_MULTIPLY)(_native(np.multiply))
register(OperatorType.ELEMENT_WISE_MAX)(_native(_maximum))
register(OperatorType.ELEMENT_WISE_MIN)(_native(_minimum))
register(OperatorType.ELEMENT_WISE_DIFFERENCE_SQUARE)(_native(lambda a, b: np.square(np.subtract(a, b))))
register(OperatorType.ELEMENT_WISE_ATAN_YX)(_native(lambda y, x: np.arctan2(y.astype(np.float64), x)))


@register(OperatorType.ELEMENT_WISE_MEAN)
def mean(desc, inputs, outputs) -> None:
    """Floats: ``(a + b) / 2`` rounded once (float64 holds the sum); integers: the exact sum halved toward zero."""
    (a, b), (out,) = inputs, outputs
    if out.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # inf + -inf is NaN
            _store(out, (a.astype(np.float64) + b) / 2)
    else:  # INT32 and UINT32 only: int64 holds the sum exactly
        total = a.astype(np.int64) + b
        _store(out, np.where(total < 0, -(-total // 2), total // 2))


def _integer_divisor(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``b`` with 0 and -1 replaced by 1 (the quotients that need no division or would overflow), and masks."""
    zero = b == 0
    minus_one = (b == -1) if b.dtype.kind == "i" else np.zeros(b.shape, bool)
    return np.where(zero | minus_one, np.ones((), b.dtype), b), zero, minus_one


@register(OperatorType.ELEMENT_WISE_DIVIDE)
def divide(desc, inputs, outputs) -> None:
    """Floats: IEEE division. Integers: toward zero; by 0 all bits set (-1, or the unsigned maximum), as Direct3D's
    integer division by zero; INT_MIN / -1 wraps to INT_MIN."""
    (a, b), (out,) = inputs, outputs
    if out.dtype.kind == "f":
        with np.errstate(all="ignore"):
            _store(out, np.divide(a, b))
        return
    safe, zero, minus_one = _integer_divisor(a, b)
    quotient = np.floor_divide(a, safe)
    quotient += ((a - quotient * safe) != 0) & ((a < 0) != (safe < 0))  # floor -> toward zero
    with np.errstate(over="ignore"):
        quotient = np.where(minus_one, np.negative(a), quotient)
    quotient[zero] = np.iinfo(out.dtype).max if out.dtype.kind == "u" else -1
    _store(out, quotient)


def _modulus(c_style: bool):
    def kernel(desc, inputs, outputs) -> None:
        (a, b), (out,) = inputs, outputs
        function = np.fmod if c_style else np.remainder
        if out.dtype.kind == "f":
            with np.errstate(all="ignore"):  # float16 in float64: the floor correction adds exactly
                wide = np.float64 if out.dtype == np.float16 else out.dtype
                _store(out, function(a.astype(wide), b))
            return
        safe, zero, _ = _integer_divisor(a, b)  # x mod 1 is 0, as x mod -1 is
        _store(out, np.where(zero, a, function(a, safe)))  # by 0: a - 0 * q = a

    return kernel


register(OperatorType.ELEMENT_WISE_MODULUS_TRUNCATE)(_modulus(c_style=True))
register(OperatorType.ELEMENT_WISE_MODULUS_FLOOR)(_modulus(c_style=False))


def _integer_power(base: np.ndarray, exponent: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Exact integer powers wrapped in ``dtype``; a negative exponent gives 1 / base^-e toward zero (0 unless
    |base| is 1), and 0 to a negative power all bits set, as an integer division by zero."""
    bits = np.dtype(f"u{dtype.itemsize}")
    result = np.ones(np.broadcast(base, exponent).shape, bits)
    square = np.broadcast_to(base, result.shape).astype(dtype).view(bits).copy()
    e = np.broadcast_to(exponent, result.shape).astype(np.int64)
    remaining = np.abs(e)
    while np.any(remaining):
        np.multiply(result, square, out=result, where=(remaining & 1) == 1)
        np.multiply(square, square, out=square)
        remaining >>= 1
    result = result.view(dtype)
    negative = e < 0
    if np.any(negative):
        b = np.broadcast_to(base, result.shape)
        odd = (e & 1) == 1
        inverse = np.where(b == 1, 1, np.where(b == 0, -1 if dtype.kind == "i" else np.iinfo(dtype).max, 0))
        if dtype.kind == "i":
            inverse = np.where(b == -1, np.where(odd, -1, 1), inverse)
        result = np.where(negative, inverse.astype(dtype), result)
    return result


@register(OperatorType.ELEMENT_WISE_POW)
def pow_(desc, inputs, outputs) -> None:
    """C99 ``pow`` in float64 (negative bases with integral exponents, NaN otherwise), rounded once; integer
    bases with integer exponents exact and wrapped; integer bases with float exponents through :func:`to_integer`."""
    (x, exponent), (out,) = inputs, outputs
    base = _input(desc, x)
    if out.dtype.kind in "iu" and exponent.dtype.kind in "iu":
        _store(out, _integer_power(base, exponent, out.dtype))
        return
    with np.errstate(all="ignore"):
        value = np.power(base.astype(np.float64), exponent.astype(np.float64))
    _store(out, value if out.dtype.kind == "f" else to_integer(value, out.dtype))
