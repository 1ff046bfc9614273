"""ELEMENT_WISE_* kernels of the tests, logical, bit and quantization operators.

Inputs may be broadcast views (zero strides); the in-place operators' output may be one of the inputs, so every
kernel reads what it needs before it writes (NumPy's ufuncs buffer overlapping operands themselves).
"""

from __future__ import annotations

import numpy as np

from ...enums import IsInfinityMode
from ...enums import OperatorType as OT
from .. import register


def _ones_where(out: np.ndarray, truth: np.ndarray) -> None:
    np.copyto(out, truth, casting="unsafe")  # True -> 1, False -> 0 in any integer type


def _raw(x: np.ndarray) -> np.ndarray:
    """The same memory as unsigned integers of the element's width: the native encoding."""
    return x.view(np.dtype(f"u{x.itemsize}"))


# ---- tests and comparisons: IEEE, so NaN compares false (and unequal), -0.0 == 0.0 -------------------------------

register(OT.ELEMENT_WISE_IS_NAN)(lambda desc, inputs, outputs: _ones_where(outputs[0], np.isnan(inputs[0])))


@register(OT.ELEMENT_WISE_IS_INFINITY)
def is_infinity(desc, inputs, outputs) -> None:
    (x,), (out,) = inputs, outputs
    mode = desc.infinity_mode
    if mode == IsInfinityMode.EITHER:
        _ones_where(out, np.isinf(x))
    else:
        _ones_where(out, x == (np.inf if mode == IsInfinityMode.POSITIVE else -np.inf))


def _binary(op: OT, ufunc) -> None:
    register(op)(lambda desc, inputs, outputs: _ones_where(outputs[0], ufunc(inputs[0], inputs[1])))


# Mixed signed/unsigned never meet (A and B share a DataType), so NumPy compares exactly, 64-bit included.
_binary(OT.ELEMENT_WISE_LOGICAL_EQUALS, np.equal)
_binary(OT.ELEMENT_WISE_LOGICAL_GREATER_THAN, np.greater)
_binary(OT.ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL, np.greater_equal)
_binary(OT.ELEMENT_WISE_LOGICAL_LESS_THAN, np.less)
_binary(OT.ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL, np.less_equal)
# Logical operators: every nonzero value is true (C's && || !); the result is 1 or 0.
_binary(OT.ELEMENT_WISE_LOGICAL_AND, np.logical_and)
_binary(OT.ELEMENT_WISE_LOGICAL_OR, np.logical_or)
_binary(OT.ELEMENT_WISE_LOGICAL_XOR, np.logical_xor)
register(OT.ELEMENT_WISE_LOGICAL_NOT)(lambda desc, inputs, outputs: _ones_where(outputs[0], inputs[0] == 0))

# ---- bits: on the raw encoding, whatever the data type ----------------------------------------------------------


def _bitwise(op: OT, ufunc) -> None:
    register(op)(lambda desc, inputs, outputs: ufunc(*(_raw(x) for x in inputs), out=_raw(outputs[0])))


_bitwise(OT.ELEMENT_WISE_BIT_AND, np.bitwise_and)
_bitwise(OT.ELEMENT_WISE_BIT_OR, np.bitwise_or)
_bitwise(OT.ELEMENT_WISE_BIT_XOR, np.bitwise_xor)
_bitwise(OT.ELEMENT_WISE_BIT_NOT, np.invert)
register(OT.ELEMENT_WISE_BIT_COUNT)(
    lambda desc, inputs, outputs: np.copyto(outputs[0], np.bitwise_count(_raw(inputs[0])), casting="unsafe")
)


def _shift(op: OT, ufunc) -> None:
    @register(op)
    def shift(desc, inputs, outputs) -> None:
        """A logical shift; a count at or past the width shifts every bit out (0), where C leaves it undefined."""
        (a, b), (out,) = inputs, outputs
        past = b >= 8 * out.itemsize  # read before ``out`` (which may be ``b``) is written
        ufunc(a, np.minimum(b, 8 * out.itemsize - 1), out=out)
        np.copyto(out, 0, where=past)


_shift(OT.ELEMENT_WISE_BIT_SHIFT_LEFT, np.left_shift)
_shift(OT.ELEMENT_WISE_BIT_SHIFT_RIGHT, np.right_shift)

# ---- quantization ---------------------------------------------------------------------------------------------


def _saturate(rounded: np.ndarray, zero_point: np.ndarray | None, out: np.ndarray) -> None:
    """``clamp(rounded + zero_point, Min, Max)`` into the 8-bit ``out``; NaN gives Min, as onnxruntime does."""
    info = np.iinfo(out.dtype)
    total = rounded.astype(np.float64)  # integers below 2^53 stay exact; larger ones saturate anyway
    if zero_point is not None:
        total += zero_point
    np.nan_to_num(total, copy=False, nan=info.min)
    np.clip(total, info.min, info.max, out=total)
    np.copyto(out, total, casting="unsafe")


def _f32(x: np.ndarray) -> np.ndarray:
    """Exact float32 arithmetic by way of float64: one float64 operation on float32 operands, rounded to float32,
    is the correctly rounded float32 result (53 >= 2 * 24 + 2)."""
    return x.astype(np.float32)


@register(OT.ELEMENT_WISE_QUANTIZE_LINEAR)
def quantize_linear(desc, inputs, outputs) -> None:
    """``input / scale`` as a float32 division (INT32 and FLOAT16 inputs converted to float32 first), rounded half
    to even, plus the zero point, saturated; NaN gives the type's Min, a zero scale divides as IEEE does."""
    (x, scale, zero_point), (out,) = inputs, outputs
    with np.errstate(all="ignore"):
        quotient = np.divide(x.astype(np.float32), scale.astype(np.float32), dtype=np.float32)
        _saturate(np.rint(quotient), zero_point, out)


@register(OT.ELEMENT_WISE_DEQUANTIZE_LINEAR)
def dequantize_linear(desc, inputs, outputs) -> None:
    """``(input - zero_point) * scale`` computed exactly and rounded once to the output type."""
    (x, scale, zero_point), (out,) = inputs, outputs
    difference = x.astype(np.int64)
    if zero_point is not None:
        difference -= zero_point  # |difference| < 2^33: exact
    with np.errstate(all="ignore"):
        np.copyto(out, _product_rounded_once(difference, scale.astype(np.float64)), casting="same_kind")


def _product_rounded_once(d: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``d * scale`` in float64 rounded to odd, so that rounding it to float32 or float16 rounds the exact
    product once. ``d`` (up to 34 bits) is split in halves whose products with a 24-bit scale are exact."""
    high = (d >> 16) << 16
    p_high, p_low = high * scale, (d - high) * scale
    total = p_high + p_low
    virtual = total - p_high
    error = (p_high - (total - virtual)) + (p_low - virtual)  # TwoSum: total + error is the exact product
    inexact = np.isfinite(total) & (error != 0) & ((total.view(np.int64) & 1) == 0)
    total[inexact] = np.nextafter(total[inexact], np.where(error[inexact] > 0, np.inf, -np.inf))
    special = ~np.isfinite(scale) | ~np.isfinite(total)  # 0 * inf and overflow: the plain product says it
    np.copyto(total, d * scale, where=np.broadcast_to(special, total.shape))
    return total


@register(OT.ELEMENT_WISE_QUANTIZED_LINEAR_ADD)
def quantized_linear_add(desc, inputs, outputs) -> None:
    """The page's formula step by step in float32 (each step rounded to nearest), then quantized as
    QUANTIZE_LINEAR does: ties to even, saturated, NaN to Min."""
    a, a_scale, a_zero, b, b_scale, b_zero, out_scale, out_zero = inputs
    (out,) = outputs
    with np.errstate(all="ignore"):

        def value(q, scale, zero):
            centred = q.astype(np.float64) - (0 if zero is None else zero.astype(np.float64))
            return _f32(centred * scale)

        total = _f32(value(a, a_scale, a_zero).astype(np.float64) + value(b, b_scale, b_zero))
        quotient = _f32(total.astype(np.float64) / out_scale)
        _saturate(np.rint(quotient), out_zero, out)
