"""An independent, deliberately naive reference for the arithmetic and transcendental ELEMENT_WISE members.

Every element is taken out of its array as a Python ``float`` (IEEE double) or exact ``int`` and computed with
Python's operators and the ``math`` module, one element at a time (``np.ndindex``); nothing comes from
``opendml.kernels``. Float results are returned in float64 (the check rounds them to the output type: one
rounding of a double result, which is correct rounding for + - * / sqrt of float32 and float16 data); integer
results are exact Python integers wrapped to the output's width.

The semantics (the contract the tests hold opendml to) are written in the README's "Semantics and decisions".
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from reference import numpy_dtype

INF, NAN = math.inf, math.nan


def float_in(value: float, dtype: np.dtype) -> float:
    """``value`` rounded once to ``dtype`` (float32 or float16), back as a Python float."""
    with np.errstate(over="ignore"):
        return float(np.array(value, np.float64).astype(dtype))


def wrap(value: int, dtype: np.dtype) -> int:
    """An exact integer wrapped to the width of ``dtype`` (two's complement for signed types)."""
    info = np.iinfo(dtype)
    value %= 1 << (8 * dtype.itemsize)
    return value - (1 << (8 * dtype.itemsize)) if value > info.max else value


def to_integer(value: float, dtype: np.dtype) -> int:
    """opendml's float-to-integer rule: toward zero, saturating, NaN as 0."""
    if value != value:
        return 0
    info = np.iinfo(dtype)
    if value >= info.max:
        return int(info.max)
    if value <= info.min:
        return int(info.min)
    return math.trunc(value)


def scaled(x, desc, dtype: np.dtype):
    """``x * Scale + Bias`` in float32, each operation rounded; integers converted back by :func:`to_integer`."""
    scale_bias = getattr(desc, "scale_bias", None)
    if scale_bias is None:
        return x
    f32 = np.dtype(np.float32)
    g = float_in(
        float_in(float_in(x, f32) * float_in(scale_bias.scale, f32), f32) + float_in(scale_bias.bias, f32), f32
    )
    return g if dtype.kind == "f" else to_integer(g, dtype)


def elementwise(function: Callable, out_dtype: np.dtype, *arrays: np.ndarray) -> np.ndarray:
    """``function`` over every element (inputs of one shape), into float64 or the integer output type."""
    shape = arrays[0].shape
    floats = out_dtype.kind == "f"
    out = np.empty(shape, np.float64 if floats else out_dtype)
    for index in np.ndindex(*shape):
        value = function(*(a[index].item() for a in arrays))
        out[index] = value if floats else wrap(int(value), out_dtype)
    return out


# ---- IEEE helpers written out -----------------------------------------------------------------------------------


def is_nan(v) -> bool:
    return isinstance(v, float) and v != v


def _ieee(larger: bool):
    """IEEE 754-2019 maximum (``larger``) or minimum: NaN propagates (a's first), +0 above -0."""

    def pick(a, b):
        if is_nan(a):
            return a
        if is_nan(b):
            return b
        if a == b == 0 and isinstance(a, float):
            return a if (math.copysign(1, a) > 0) == larger else b
        return a if (a > b) == larger and a != b else b

    return pick


ieee_max, ieee_min = _ieee(True), _ieee(False)


def divide(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or a != a:
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)
    return a / b


def integer_divide(a: int, b: int, dtype: np.dtype) -> int:
    """Toward zero; by 0 all bits set."""
    if b == 0:
        return -1 if dtype.kind == "i" else int(np.iinfo(dtype).max)
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def fmod(a: float, b: float) -> float:
    try:
        return math.fmod(a, b)
    except ValueError:  # b = 0 or a infinite
        return NAN


def floor_mod(a: float, b: float) -> float:
    """Python's float %, the sign of the divisor."""
    try:
        return a % b
    except ZeroDivisionError:
        return NAN


def integer_modulus(a: int, b: int, floor: bool) -> int:
    if b == 0:
        return a  # a - 0 * q
    if floor:
        return a % b
    return a - b * integer_divide(a, b, np.dtype(np.int64))


def mean(a, b):
    if isinstance(a, float):
        return (a + b) / 2  # the double sum is exact enough: one rounding to the type, as the check does
    total = a + b
    return -((-total) // 2) if total < 0 else total // 2


def sign(x):
    return (x > 0) - (x < 0)  # 0 for -0.0 and NaN


def recip(x: float) -> float:
    return divide(1.0, x)


def _integral_float(function):
    """ceil / floor / trunc / round as floats: infinities and NaN pass, the sign of zero is kept."""

    def rounded(x: float) -> float:
        if not math.isfinite(x):
            return x
        return math.copysign(float(function(x)), x)

    return rounded


def round_half_away(x: float) -> float:
    return math.floor(abs(x) + 0.5)


ROUNDING = {0: _integral_float(round), 1: _integral_float(math.trunc), 2: _integral_float(round_half_away)}
ceil, floor = _integral_float(math.ceil), _integral_float(math.floor)


def safe(function: Callable[[float], float], domain_value: Callable[[float], float] = lambda x: NAN):
    """A math function with C's results where Python raises: a domain error gives ``domain_value(x)``
    (NaN by default), an overflow gives infinity of the sign the result would have had."""

    def computed(x: float) -> float:
        if x != x:
            return x
        try:
            return function(x)
        except ValueError:
            return domain_value(x)
        except OverflowError:
            return math.copysign(INF, function(math.copysign(1.0, x)))

    return computed


TRANSCENDENTAL = {
    "EXP": safe(math.exp),
    "LOG": safe(math.log, lambda x: -INF if x == 0 else NAN),
    "SQRT": safe(math.sqrt),
    "SIN": safe(math.sin),
    "COS": safe(math.cos),
    "TAN": safe(math.tan),
    "ASIN": safe(math.asin),
    "ACOS": safe(math.acos),
    "ATAN": safe(math.atan),
    "SINH": safe(math.sinh),
    "COSH": safe(math.cosh),
    "TANH": safe(math.tanh),
    "ASINH": safe(math.asinh),
    "ACOSH": safe(math.acosh),
    "ATANH": safe(math.atanh, lambda x: math.copysign(INF, x) if abs(x) == 1 else NAN),
    "ERF": safe(math.erf),
}


def power(x: float, y: float) -> float:
    """C99 pow, with the cases where Python raises written out."""
    if y == 0 or x == 1:
        return 1.0
    if x != x or y != y:
        return NAN
    odd_integer = math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2) != 0
    if x == 0:
        if y < 0:
            return math.copysign(INF, x) if odd_integer else INF
        return math.copysign(0.0, x) if odd_integer else 0.0
    try:
        return math.pow(x, y)
    except ValueError:  # a negative base with a non-integral exponent
        return NAN
    except OverflowError:
        return -INF if x < 0 and odd_integer else INF


def integer_power(x: int, e: int, dtype: np.dtype) -> int:
    """Exact powers wrapped; a negative exponent: 1 / x^-e toward zero, 0 to a negative power all bits set."""
    if e >= 0:
        return pow(x, e, 1 << (8 * dtype.itemsize))
    if x == 0:
        return -1 if dtype.kind == "i" else int(np.iinfo(dtype).max)
    if abs(x) == 1:
        return x if e % 2 else 1
    return 0


def clip_bound(value: float, dtype: np.dtype):
    """A FLOAT bound as the struct holds it (float32), converted for an integer tensor."""
    bound = float_in(value, np.dtype(np.float32))
    return bound if dtype.kind == "f" else to_integer(bound, dtype)


def union_value(value, data_type):
    """A DML_SCALAR_UNION's value in its data type (floats rounded to nearest)."""
    dtype = numpy_dtype(data_type)
    return float_in(float(value), dtype) if dtype.kind == "f" else int(value)


def clip_grad(x, gradient, low, high):
    """0 where x <= low or x >= high (a NaN x compares false and passes the gradient), else the gradient."""
    if x <= low or x >= high:
        return 0.0 if isinstance(gradient, float) else 0
    return gradient
