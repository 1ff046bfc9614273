"""Cases of the ELEMENT_WISE_* tests, logical, bit and quantization operators.

The references here are plain Python loops over output coordinates: Python ``float`` comparisons (IEEE: NaN is
unordered, -0.0 == 0.0), Python ``int`` bit arithmetic on the raw encoding (``tobytes``), and ``Fraction`` for the
quantization arithmetic, rounded by :func:`round_binary` (written here, not NumPy's casts).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import numpy as np
from reference import numpy_dtype

import opendml as dml

from . import Case, Example, random_values, register
from .activation import bits_equal

OT = dml.OperatorType
T = dml.TensorDataType
MODE = dml.IsInfinityMode
UNARY = ("InputTensor", "OutputTensor")
BINARY = ("ATensor", "BTensor", "OutputTensor")
QUANTIZED = ("InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor")
# (significand bits, lowest normal exponent, highest exponent) of the float types.
FORMATS = {T.FLOAT32: (24, -126, 127), T.FLOAT16: (11, -14, 15)}


# ---- element access ---------------------------------------------------------------------------------------------


def _at(x: np.ndarray, where: tuple[int, ...]):
    """The element of ``x`` at the output coordinate ``where`` (a size-1 dimension is read at 0: a broadcast scale)."""
    return x[tuple(0 if size == 1 else i for i, size in zip(where, x.shape))]


def _raw(value) -> int:
    """The native encoding of one element as an unsigned Python int."""
    return int.from_bytes(value.tobytes(), "little")


def _elementwise(desc, inputs, f, raw=False):
    """``f(*elements)`` at every coordinate, as the output tensor's dtype (``raw``: f gives the encoding)."""
    out = desc.output_tensor
    dtype = numpy_dtype(out.data_type)
    values = [
        f(*(_at(x, where) if x is not None else None for x in inputs)) for where in product(*map(range, out.sizes))
    ]
    if raw:
        return [np.array(values, dtype=object).astype(f"u{dtype.itemsize}").view(dtype).reshape(out.sizes)]
    if dtype.kind == "f":
        return [np.array(values, np.float64).astype(dtype).reshape(out.sizes)]
    return [np.array(values, dtype=object).astype(dtype).reshape(out.sizes)]


# ---- rounding, independently of NumPy -----------------------------------------------------------------------------


def round_binary(q: Fraction, data_type) -> float:
    """The exact rational ``q`` rounded to nearest (ties to even) in FLOAT32 or FLOAT16, overflowing to infinity."""
    bits, emin, emax = FORMATS[data_type]
    if q == 0:
        return 0.0
    sign, q = (-1.0 if q < 0 else 1.0), abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - bits + 1)
    value = round(q / ulp) * ulp  # Fraction's round() ties to even
    return sign * math.inf if value >= Fraction(2) ** (emax + 1) else sign * float(value)


def quantize(q: float, zero_point: int, dtype: np.dtype) -> int:
    """round(q) ties to even, plus the zero point, saturated; NaN gives Min."""
    info = np.iinfo(dtype)
    if math.isnan(q):
        return int(info.min)
    whole = q if math.isinf(q) else round(q) + zero_point
    return int(min(max(whole, info.min), info.max))


def _divide(x: float, s: float, data_type=T.FLOAT32) -> float:
    """x / s rounded once to FLOAT32; IEEE for zero scales and non-finite values."""
    if not (math.isfinite(x) and math.isfinite(s)) or s == 0:
        with np.errstate(all="ignore"):
            return float(np.float64(x) / np.float64(s))
    return round_binary(Fraction(x) / Fraction(s), data_type)


def quantize_linear(desc, inputs):
    dtype = numpy_dtype(desc.output_tensor.data_type)

    def one(x, s, z):
        x32 = round_binary(Fraction(int(x)), T.FLOAT32) if isinstance(x, np.integer) else float(x)
        return quantize(_divide(x32, float(s)), 0 if z is None else int(z), dtype)

    return _elementwise(desc, inputs, one)


def dequantize_linear(desc, inputs):
    out_type = desc.output_tensor.data_type

    def one(x, s, z):
        d = int(x) - (0 if z is None else int(z))
        return 0.0 * float(s) if d == 0 else round_binary(d * Fraction(float(s)), out_type)  # IEEE's signed zero

    return _elementwise(desc, inputs, one)


def quantized_linear_add(desc, inputs):
    dtype = numpy_dtype(desc.output_tensor.data_type)
    f32 = lambda q: round_binary(q, T.FLOAT32)  # noqa: E731

    def one(a, a_scale, a_zero, b, b_scale, b_zero, out_scale, out_zero):
        a_value = f32((int(a) - int(a_zero or 0)) * Fraction(float(a_scale)))
        b_value = f32((int(b) - int(b_zero or 0)) * Fraction(float(b_scale)))
        finite = math.isfinite(a_value) and math.isfinite(b_value)  # else IEEE: inf + -inf is NaN
        total = f32(Fraction(a_value) + Fraction(b_value)) if finite else a_value + b_value
        return quantize(_divide(total, float(out_scale)), int(out_zero or 0), dtype)

    return _elementwise(desc, inputs, one)


# ---- values that find bugs ----------------------------------------------------------------------------------------

SPECIALS = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.5, 2.5, 65504.0, 1e-7]


def float_specials(c_name, dtype, shape, rng):
    """Numbers with NaN, infinities, signed zeros and ties mixed in (floats only)."""
    values = random_values(c_name, dtype, shape, rng)
    if dtype.kind == "f":
        mask = rng.random(shape) < 0.4
        values = np.where(mask, rng.choice(np.array(SPECIALS, dtype), size=shape), values).astype(dtype)
    return values


def raw_bits(c_name, dtype, shape, rng):
    """Any bit pattern half the time (NaN payloads, subnormals), else the usual numbers."""
    if rng.random() < 0.5:
        unsigned = np.dtype(f"u{dtype.itemsize}")
        info = np.iinfo(unsigned)
        return rng.integers(0, info.max, size=shape, dtype=unsigned, endpoint=True).view(dtype)
    return random_values(c_name, dtype, shape, rng)


def shift_values(c_name, dtype, shape, rng):
    """Shift counts around the width (0 to twice it, so past-the-width counts are common)."""
    if c_name == "BTensor":
        return rng.integers(0, 16 * dtype.itemsize + 1, size=shape).astype(dtype)
    return random_values(c_name, dtype, shape, rng)


SCALES = np.array([0.5, 2.0, 1.0, 0.1, -4.0, 3e-3, 1 / 3], np.float64)


def quantized_values(c_name, dtype, shape, rng):
    """Scales from a set that makes ties and saturation common (never 0: the page leaves it undefined)."""
    if "Scale" in c_name:
        return rng.choice(SCALES, size=shape).astype(dtype)
    return float_specials(c_name, dtype, shape, rng)  # NaN and infinities among float inputs


def int32_takes_float32_scale(types):
    if types["InputTensor"] == T.INT32:
        types = {**types, "ScaleTensor": T.FLOAT32}
    return types


# ---- examples -----------------------------------------------------------------------------------------------------

u8 = lambda values: np.array(values, np.uint8)  # noqa: E731
f32 = lambda values: np.array(values, np.float32)  # noqa: E731
NAN, INF = math.nan, math.inf
BOOL_OUT = {"OutputTensor": T.UINT8}
PAGE_BITS = u8([[0, 128], [42, 255]])
PAGE_NOT = u8([[255, 127], [213, 0]])


def _decision(name, inputs, expected, **kwargs) -> Example:
    """Not printed on the page: a decision of opendml's (README "Semantics and decisions"), pinned."""
    return Example(f"decision: {name}", tuple(inputs), (expected,), **kwargs)


SIGNED = (f32([NAN, 1, -0.0, 0.0, -INF, 3]), f32([1, NAN, 0.0, -0.0, -INF, 2]))  # a, b


def _comparison(op, expected):
    return Case(
        op,
        BINARY,
        reference=lambda desc, inputs: _elementwise(desc, inputs, lambda a, b: int(_COMPARE[op](a.item(), b.item()))),
        check=bits_equal,
        values=float_specials,
        examples=(_decision("NaN compares false, -0.0 == 0.0", SIGNED, u8(expected), output_types=BOOL_OUT),),
    )


_COMPARE = {
    OT.ELEMENT_WISE_LOGICAL_EQUALS: lambda a, b: a == b,
    OT.ELEMENT_WISE_LOGICAL_GREATER_THAN: lambda a, b: a > b,
    OT.ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL: lambda a, b: a >= b,
    OT.ELEMENT_WISE_LOGICAL_LESS_THAN: lambda a, b: a < b,
    OT.ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL: lambda a, b: a <= b,
}
_LOGICAL = {
    OT.ELEMENT_WISE_LOGICAL_AND: (lambda a, b: bool(a) and bool(b), [0, 0, 0, 1]),
    OT.ELEMENT_WISE_LOGICAL_OR: (lambda a, b: bool(a) or bool(b), [0, 1, 1, 1]),
    OT.ELEMENT_WISE_LOGICAL_XOR: (lambda a, b: bool(a) != bool(b), [0, 1, 1, 0]),
}
_BITWISE = {
    OT.ELEMENT_WISE_BIT_AND: lambda a, b: a & b,
    OT.ELEMENT_WISE_BIT_OR: lambda a, b: a | b,
    OT.ELEMENT_WISE_BIT_XOR: lambda a, b: a ^ b,
}


def _logical(op, f, expected):
    return Case(
        op,
        BINARY,
        reference=lambda desc, inputs: _elementwise(desc, inputs, lambda a, b: int(f(int(a), int(b)))),
        check=bits_equal,
        examples=(_decision("any nonzero value is true", (u8([0, 0, 7, 255]), u8([0, 200, 0, 2])), u8(expected)),),
    )


def _bit_reference(f):
    def reference(desc, inputs):
        dtype = numpy_dtype(desc.output_tensor.data_type)
        mask = (1 << (8 * dtype.itemsize)) - 1
        return _elementwise(desc, inputs, lambda *xs: f(*map(_raw, xs)) & mask, raw=True)

    return reference


def _quantized(op, reference, *examples, **options):
    """QUANTIZE_LINEAR or DEQUANTIZE_LINEAR, always with a zero point (below 6_2 it is required; its absence is
    tested in tests/test_element_wise_logical.py)."""
    return Case(op, QUANTIZED, reference=reference, check=bits_equal, values=quantized_values, examples=examples,
                params=lambda rank, rng: {"zero_point_tensor": True}, **options)  # fmt: skip


def _bitwise(op, *examples):
    return Case(
        op, BINARY, check=bits_equal, values=raw_bits, reference=_bit_reference(_BITWISE[op]), examples=examples
    )


def _shift(a, b, width, left):
    if b >= width:
        return 0
    return (a << b) & ((1 << width) - 1) if left else a >> b


def _shift_case(op, left, expected):
    return Case(
        op,
        BINARY,
        values=shift_values,
        check=bits_equal,
        reference=lambda desc, inputs: _elementwise(
            desc, inputs, lambda a, b: _shift(int(a), int(b), 8 * a.itemsize, left)
        ),
        examples=(
            _decision(
                "counts at or past the width give 0", (u8([129, 129, 129, 129]), u8([1, 7, 8, 200])), u8(expected)
            ),
        ),
    )


register(
    Case(
        OT.ELEMENT_WISE_IS_NAN,
        UNARY,
        check=bits_equal,
        values=float_specials,
        reference=lambda desc, inputs: _elementwise(desc, inputs, lambda x: int(math.isnan(x.item()))),
        examples=(
            _decision("IEEE NaN, either sign", (f32([NAN, -NAN, INF, 0]),), u8([1, 1, 0, 0]), output_types=BOOL_OUT),
        ),
    ),
    Case(
        OT.ELEMENT_WISE_IS_INFINITY,
        (*UNARY, "InfinityMode"),
        check=bits_equal,
        values=float_specials,
        params=lambda rank, rng: {"infinity_mode": MODE(int(rng.integers(3)))},
        reference=lambda desc, inputs: _elementwise(
            desc,
            inputs,
            lambda x: int(
                math.isinf(x.item())
                and (desc.infinity_mode == MODE.EITHER or (x > 0) == (desc.infinity_mode == MODE.POSITIVE))
            ),
        ),
        examples=tuple(
            _decision(
                f"{mode.name}",
                (f32([INF, -INF, NAN, 65504]),),
                u8(want),
                params={"infinity_mode": mode},
                output_types=BOOL_OUT,
            )
            for mode, want in (
                (MODE.EITHER, [1, 1, 0, 0]),
                (MODE.POSITIVE, [1, 0, 0, 0]),
                (MODE.NEGATIVE, [0, 1, 0, 0]),
            )
        ),
    ),
    _comparison(OT.ELEMENT_WISE_LOGICAL_EQUALS, [0, 0, 1, 1, 1, 0]),
    _comparison(OT.ELEMENT_WISE_LOGICAL_GREATER_THAN, [0, 0, 0, 0, 0, 1]),
    _comparison(OT.ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL, [0, 0, 1, 1, 1, 1]),
    _comparison(OT.ELEMENT_WISE_LOGICAL_LESS_THAN, [0, 0, 0, 0, 0, 0]),
    _comparison(OT.ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL, [0, 0, 1, 1, 1, 0]),
    *(_logical(op, f, expected) for op, (f, expected) in _LOGICAL.items()),
    Case(
        OT.ELEMENT_WISE_LOGICAL_NOT,
        UNARY,
        check=bits_equal,
        reference=lambda desc, inputs: _elementwise(desc, inputs, lambda x: int(int(x) == 0)),
        examples=(_decision("any nonzero value is true", (u8([0, 1, 7, 255]),), u8([1, 0, 0, 0])),),
    ),
    _bitwise(OT.ELEMENT_WISE_BIT_AND),
    _bitwise(OT.ELEMENT_WISE_BIT_OR),
    # Erratum: the page prints BIT_NOT's one-input example; it holds as XOR with all ones.
    _bitwise(
        OT.ELEMENT_WISE_BIT_XOR,
        Example("page example read as XOR with 0xFF", (PAGE_BITS, u8([[255] * 2] * 2)), (PAGE_NOT,)),
    ),
    Case(
        OT.ELEMENT_WISE_BIT_NOT,
        UNARY,
        check=bits_equal,
        values=raw_bits,
        reference=_bit_reference(lambda x: ~x),
        examples=(Example("page example", (PAGE_BITS,), (PAGE_NOT,)),),
    ),
    Case(
        OT.ELEMENT_WISE_BIT_COUNT,
        UNARY,
        check=bits_equal,
        values=raw_bits,
        reference=lambda desc, inputs: _elementwise(desc, inputs, lambda x: bin(_raw(x)).count("1")),
        examples=(
            Example(
                "page example",
                (np.array([[0, 123], [456, 789]], np.uint32),),
                (np.array([[0, 6], [4, 5]], np.uint32),),
                output_types={"OutputTensor": T.UINT32},
            ),
            _decision(
                "signed values count their two's complement bits",
                (np.array([-1, -128, 5], np.int8),),
                u8([8, 1, 2]),
                output_types=BOOL_OUT,
            ),
        ),
    ),
    _shift_case(OT.ELEMENT_WISE_BIT_SHIFT_LEFT, True, [2, 128, 0, 0]),
    _shift_case(OT.ELEMENT_WISE_BIT_SHIFT_RIGHT, False, [64, 1, 0, 0]),
    _quantized(
        OT.ELEMENT_WISE_QUANTIZE_LINEAR,
        quantize_linear,
        _decision(
            "ties to even, saturation, NaN to Min",
            (f32([0.5, 1.5, 2.5, -2.5, 1e9, -1e9, NAN, INF]), f32([1] * 8), u8([10] * 8)),
            u8([10, 12, 12, 8, 255, 0, 0, 255]),
            params={"zero_point_tensor": True},
        ),
        _decision(
            "NaN to Min of INT8",
            (f32([NAN, -NAN, 0.5, -INF]), f32([0.25] * 4), np.array([3] * 4, np.int8)),
            np.array([-128, -128, 5, -128], np.int8),
            params={"zero_point_tensor": True},
        ),
        types=int32_takes_float32_scale,
    ),
    _quantized(
        OT.ELEMENT_WISE_DEQUANTIZE_LINEAR,
        dequantize_linear,
        _decision(
            "(x - zero point) * scale",
            (u8([0, 10, 255]), f32([0.5] * 3), u8([10] * 3)),
            f32([-5, 0, 122.5]),
            params={"zero_point_tensor": True},
            output_types={"OutputTensor": T.FLOAT32},
        ),
    ),
    Case(
        OT.ELEMENT_WISE_QUANTIZED_LINEAR_ADD,
        (
            "ATensor",
            "AScaleTensor",
            "AZeroPointTensor",
            "BTensor",
            "BScaleTensor",
            "BZeroPointTensor",
            "OutputScaleTensor",
            "OutputZeroPointTensor",
            "OutputTensor",
        ),
        reference=quantized_linear_add,
        check=bits_equal,
        values=quantized_values,
        input_sizes=lambda c_name, sizes: (1,) * len(sizes) if "Scale" in c_name or "Zero" in c_name else sizes,
        params=lambda rank, rng: {
            name: True
            for name in ("a_zero_point_tensor", "b_zero_point_tensor", "output_zero_point_tensor")
            if rng.random() < 0.7
        },
        examples=(
            _decision(
                "float32 steps, ties to even",  # (250 - 2) * .5 + (255 - 1) * .25 = 187.5 -> 188, + 3
                (
                    u8([10, 20, 250, 0]),
                    f32([0.5]),
                    u8([2]),
                    u8([5, 5, 255, 0]),
                    f32([0.25]),
                    u8([1]),
                    f32([1]),
                    u8([3]),
                ),
                u8([8, 13, 191, 2]),
                params={"a_zero_point_tensor": True, "b_zero_point_tensor": True, "output_zero_point_tensor": True},
            ),
        ),
    ),
)
