"""The ELEMENT_WISE_* family's tests, logical, bit and quantization operators, each declared once.

Support rows are the pages' "DML_FEATURE_LEVEL_x and above" tables as printed, highest first; each operator is
one ``declare(...)`` built by the small row helpers below.
"""

from __future__ import annotations

from ..constraints import DataTypeLike, Same, SingleElement
from ..enums import FeatureLevel as FL
from ..enums import IsInfinityMode, OperatorType
from ..enums import TensorDataType as T
from ..schema import OutputRule, declare, enum_field, input_tensor, output_tensor, row, supports
from ._common import FLOATS

OT = OperatorType
ND, D4 = (1, 8), (4, 4)  # the dimension counts of a row: 1 to 8, or 4 only
BOOLS = (T.UINT32, T.UINT8)  # the outputs of the tests and logical operators
NUMBERS_3_0 = (*FLOATS, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)
NUMBERS_4_1 = (*FLOATS, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8)
BITS_4_1 = (T.FLOAT64, *NUMBERS_4_1)
UNSIGNED_3_0 = (T.UINT32, T.UINT16, T.UINT8)
UNSIGNED_4_1 = (T.UINT64, *UNSIGNED_3_0)
UNARY = ("InputTensor", "OutputTensor")
BINARY = ("ATensor", "BTensor", "OutputTensor")
BOOL_OUTPUT = OutputRule(data_type=T.UINT8, data_type_parameter=True)  # UINT8 unless output_data_type= says


def _fields(names: tuple[str, ...]) -> dict:
    """Fresh tensor fields for ``names`` (C names; the last one is the output)."""
    python = {"InputTensor": "input_tensor", "ATensor": "a_tensor", "BTensor": "b_tensor"}
    return {**{python[n]: input_tensor() for n in names[:-1]}, "output_tensor": output_tensor()}


def _rows(names: tuple[str, ...], *table: tuple) -> list:
    """Rows from ``(level, dims, input types, output types)``: every input shares one cell, the output another."""
    return [
        row(level, **{n: supports(*dims, *inputs) for n in names[:-1]}, **{names[-1]: supports(*dims, *output)})
        for level, dims, inputs, output in table
    ]


def _same(names: tuple[str, ...], *attributes: str) -> list:
    return [Same(attribute, *names) for attribute in attributes]


def _declare(op: OT, doc: str, names: tuple[str, ...], rows: list, *, same_type: tuple[str, ...], **schema):
    """An element-wise operator of ``names``: same DimensionCount and Sizes, same DataType among ``same_type``."""
    constraints = _same(names, "DimensionCount", "Sizes") + ([Same("DataType", *same_type)] if same_type else [])
    extra = schema.pop("fields", {})
    return declare(
        op,
        doc,
        fields={**_fields(names), **extra},
        introduced=rows[-1].feature_level,
        support=rows,
        constraints=constraints,
        **schema,
    )


def _unary_to_bool(op: OT, doc: str, *table: tuple) -> type:
    """A unary operator whose output is UINT32 or UINT8 whatever the input (UINT8 in the functional layer)."""
    return _declare(op, doc, UNARY, _rows(UNARY, *table), same_type=(), output_rule=BOOL_OUTPUT)


# ---- tests: IS_NAN, IS_INFINITY --------------------------------------------------------------------------------

# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_is_nan_operator_desc
ElementWiseIsNanOperatorDesc = _unary_to_bool(
    OT.ELEMENT_WISE_IS_NAN,
    "1 where the input is NaN, else 0.",
    (FL.FL_3_0, ND, FLOATS, BOOLS),
    (FL.FL_2_0, D4, FLOATS, BOOLS),
)

# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_is_infinity_operator_desc
ElementWiseIsInfinityOperatorDesc = _declare(
    OT.ELEMENT_WISE_IS_INFINITY,
    "1 where the input is an infinity of the sign InfinityMode selects, else 0.",
    UNARY,
    _rows(UNARY, (FL.FL_3_0, ND, FLOATS, (T.UINT8,)), (FL.FL_2_1, D4, FLOATS, (T.UINT8,))),
    same_type=(),
    output_rule=OutputRule(data_type=T.UINT8),
    fields={"infinity_mode": enum_field(IsInfinityMode, dmlx_default=IsInfinityMode.EITHER)},
)

# ---- comparisons: the output is UINT32 or UINT8 whatever the inputs ---------------------------------------------

_COMPARISON_3_0 = ((FL.FL_4_1, ND, NUMBERS_4_1, BOOLS), (FL.FL_3_0, ND, NUMBERS_3_0, BOOLS))
_COMPARISON_1_0 = (
    *_COMPARISON_3_0,
    (FL.FL_2_1, D4, NUMBERS_3_0, BOOLS),
    (FL.FL_2_0, D4, FLOATS, BOOLS),
    (FL.FL_1_0, D4, FLOATS, (T.UINT32,)),
)


def _comparison(op: OT, formula: str, table: tuple) -> type:
    doc = f"1 where {formula}, else 0 (IEEE: any comparison with NaN is false)."
    return _declare(op, doc, BINARY, _rows(BINARY, *table), same_type=BINARY[:2], output_rule=BOOL_OUTPUT)


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_logical_equals_operator_desc
ElementWiseLogicalEqualsOperatorDesc = _comparison(OT.ELEMENT_WISE_LOGICAL_EQUALS, "a == b", _COMPARISON_1_0)
ElementWiseLogicalGreaterThanOperatorDesc = _comparison(OT.ELEMENT_WISE_LOGICAL_GREATER_THAN, "a > b", _COMPARISON_1_0)
ElementWiseLogicalLessThanOperatorDesc = _comparison(OT.ELEMENT_WISE_LOGICAL_LESS_THAN, "a < b", _COMPARISON_1_0)
ElementWiseLogicalGreaterThanOrEqualOperatorDesc = _comparison(
    OT.ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL, "a >= b", _COMPARISON_3_0
)
# The page prints two "Availability" sections (1_0 and 3_0); its rows, the enum value and the feature-level
# history say 3_0.
ElementWiseLogicalLessThanOrEqualOperatorDesc = _comparison(
    OT.ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL, "a <= b", _COMPARISON_3_0
)

# ---- logical AND, OR, XOR, NOT: UINT32/UINT8 in and out, nonzero is true ----------------------------------------


def _logical(op: OT, formula: str, names: tuple[str, ...]) -> type:
    table = ((FL.FL_3_0, ND, BOOLS, BOOLS), (FL.FL_2_0, D4, BOOLS, BOOLS), (FL.FL_1_0, D4, (T.UINT32,), (T.UINT32,)))
    doc = f"{formula} with every nonzero input true: 1 or 0."
    return _declare(op, doc, names, _rows(names, *table), same_type=names, in_place=True)


ElementWiseLogicalAndOperatorDesc = _logical(OT.ELEMENT_WISE_LOGICAL_AND, "a && b", BINARY)
ElementWiseLogicalOrOperatorDesc = _logical(OT.ELEMENT_WISE_LOGICAL_OR, "a || b", BINARY)
ElementWiseLogicalXorOperatorDesc = _logical(OT.ELEMENT_WISE_LOGICAL_XOR, "!!a != !!b", BINARY)
ElementWiseLogicalNotOperatorDesc = _logical(OT.ELEMENT_WISE_LOGICAL_NOT, "!x", UNARY)

# ---- bits: the native encoding, the data type giving only the width ---------------------------------------------

_BITS = ((FL.FL_4_1, ND, BITS_4_1, BITS_4_1), (FL.FL_3_0, ND, UNSIGNED_3_0, UNSIGNED_3_0))
_SHIFTS = (
    (FL.FL_4_1, ND, UNSIGNED_4_1, UNSIGNED_4_1),
    (FL.FL_3_0, ND, UNSIGNED_3_0, UNSIGNED_3_0),
    (FL.FL_2_1, D4, UNSIGNED_3_0, UNSIGNED_3_0),
)


def _bits(op: OT, doc: str, names: tuple[str, ...], table: tuple = _BITS) -> type:
    return _declare(op, doc, names, _rows(names, *table), same_type=names, in_place=True)


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_bit_and_operator_desc
ElementWiseBitAndOperatorDesc = _bits(OT.ELEMENT_WISE_BIT_AND, "a & b on the raw bits.", BINARY)
ElementWiseBitOrOperatorDesc = _bits(OT.ELEMENT_WISE_BIT_OR, "a | b on the raw bits.", BINARY)
ElementWiseBitXorOperatorDesc = _bits(OT.ELEMENT_WISE_BIT_XOR, "a ^ b on the raw bits.", BINARY)
ElementWiseBitNotOperatorDesc = _bits(OT.ELEMENT_WISE_BIT_NOT, "~x on the raw bits.", UNARY)
ElementWiseBitShiftLeftOperatorDesc = _bits(
    OT.ELEMENT_WISE_BIT_SHIFT_LEFT, "a << b (logical; 0 when b >= the width).", BINARY, _SHIFTS
)
ElementWiseBitShiftRightOperatorDesc = _bits(
    OT.ELEMENT_WISE_BIT_SHIFT_RIGHT, "a >> b (logical; 0 when b >= the width).", BINARY, _SHIFTS
)
# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_bit_count_operator_desc
ElementWiseBitCountOperatorDesc = _unary_to_bool(
    OT.ELEMENT_WISE_BIT_COUNT,
    "The number of bits set in the raw encoding.",
    (FL.FL_4_1, ND, BITS_4_1, BOOLS),
    (FL.FL_3_0, ND, UNSIGNED_3_0, BOOLS),
)

# ---- quantization ---------------------------------------------------------------------------------------------

QUANTIZED = ("InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor")
_QUANTIZED_FIELDS = lambda: {  # noqa: E731 (fresh fields per class, in header order)
    "input_tensor": input_tensor(),
    "scale_tensor": input_tensor(),
    "zero_point_tensor": input_tensor(optional=True),  # _Maybenull_ since 6_2
    "output_tensor": output_tensor(),
}


def _quantized_rows(*table: tuple) -> list:
    """Rows from ``(level, dims, input, scale, zero point, output types)``; below 6_2 the zero point is required."""
    return [
        row(
            level,
            InputTensor=supports(*dims, *i),
            ScaleTensor=supports(*dims, *s),
            ZeroPointTensor=supports(*dims, *z, required=level < FL.FL_6_2),
            OutputTensor=supports(*dims, *o),
        )
        for level, dims, i, s, z, o in table
    ]


def _quantization(op: OT, doc: str, table: tuple, *rules, output_rule: OutputRule) -> type:
    """QUANTIZE_LINEAR or DEQUANTIZE_LINEAR: four tensors of one shape, introduced at 1_0."""
    constraints = _same(("InputTensor", "OutputTensor", "ScaleTensor", "ZeroPointTensor"), "DimensionCount", "Sizes")
    return declare(op, doc, fields=_QUANTIZED_FIELDS(), introduced=FL.FL_1_0, support=_quantized_rows(*table),
                   constraints=[*constraints, *rules], output_rule=output_rule)  # fmt: skip


_Q8 = (T.INT8, T.UINT8)
_QUANTIZE_FROM = (*FLOATS, T.INT32)
_INTEGERS = (T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)
# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_quantize_linear_operator_desc
ElementWiseQuantizeLinearOperatorDesc = _quantization(
    OT.ELEMENT_WISE_QUANTIZE_LINEAR,
    "clamp(round(input / scale) + zero_point, Min, Max): float32 quotient, ties to even, saturated.",
    (
        (FL.FL_6_2, ND, _QUANTIZE_FROM, FLOATS, _Q8, _Q8),
        (FL.FL_6_0, ND, _QUANTIZE_FROM, FLOATS, _Q8, _Q8),
        (FL.FL_3_0, ND, (T.FLOAT32, T.INT32), (T.FLOAT32,), _Q8, _Q8),
        (FL.FL_2_1, D4, (T.FLOAT32, T.INT32), (T.FLOAT32,), _Q8, _Q8),
        (FL.FL_1_0, D4, (T.FLOAT32,), (T.FLOAT32,), (T.UINT8,), (T.UINT8,)),
    ),
    Same("DataType", "OutputTensor", "ZeroPointTensor"),
    DataTypeLike("ScaleTensor", "InputTensor", {T.INT32: T.FLOAT32}),
    output_rule=OutputRule(data_type=T.UINT8, type_like="ZeroPointTensor"),  # UINT8 without a zero point, as ONNX
)
# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_dequantize_linear_operator_desc
ElementWiseDequantizeLinearOperatorDesc = _quantization(
    OT.ELEMENT_WISE_DEQUANTIZE_LINEAR,
    "(input - zero_point) * scale, rounded once to the output type.",
    (
        (FL.FL_6_2, ND, _INTEGERS, FLOATS, _INTEGERS, FLOATS),
        (FL.FL_6_0, ND, _INTEGERS, FLOATS, _INTEGERS, FLOATS),
        (FL.FL_3_0, ND, _INTEGERS, (T.FLOAT32,), _INTEGERS, (T.FLOAT32,)),
        (FL.FL_2_1, D4, _INTEGERS, (T.FLOAT32,), _INTEGERS, (T.FLOAT32,)),
        (FL.FL_1_0, D4, (T.UINT8,), (T.FLOAT32,), (T.UINT8,), (T.FLOAT32,)),
    ),
    Same("DataType", "InputTensor", "ZeroPointTensor"),
    Same("DataType", "OutputTensor", "ScaleTensor"),
    output_rule=OutputRule(type_like="ScaleTensor"),
)

# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_quantized_linear_add_operator_desc
_ADD_SCALARS = (
    "AScaleTensor",
    "AZeroPointTensor",
    "BScaleTensor",
    "BZeroPointTensor",
    "OutputScaleTensor",
    "OutputZeroPointTensor",
)
_F32, _Q8_CELL = supports(1, 8, T.FLOAT32), supports(1, 8, *_Q8)
ElementWiseQuantizedLinearAddOperatorDesc = declare(
    OT.ELEMENT_WISE_QUANTIZED_LINEAR_ADD,
    "Dequantize a and b, add, requantize to the output's scale and zero point (float32 steps, ties to even).",
    fields={
        "a_tensor": input_tensor(),
        "a_scale_tensor": input_tensor(),
        "a_zero_point_tensor": input_tensor(optional=True),
        "b_tensor": input_tensor(),
        "b_scale_tensor": input_tensor(),
        "b_zero_point_tensor": input_tensor(optional=True),
        "output_scale_tensor": input_tensor(),
        "output_zero_point_tensor": input_tensor(optional=True),
        "output_tensor": output_tensor(),
    },
    introduced=FL.FL_4_0,
    support=[
        row(
            FL.FL_4_0,
            ATensor=_Q8_CELL,
            AScaleTensor=_F32,
            AZeroPointTensor=_Q8_CELL,
            BTensor=_Q8_CELL,
            BScaleTensor=_F32,
            BZeroPointTensor=_Q8_CELL,
            OutputScaleTensor=_F32,
            OutputZeroPointTensor=_Q8_CELL,
            OutputTensor=_Q8_CELL,
        ),
    ],
    constraints=[
        Same("DimensionCount", "ATensor", *_ADD_SCALARS, "BTensor", "OutputTensor"),
        Same("DataType", "BTensor", "BZeroPointTensor"),
        Same("DataType", "OutputTensor", "OutputZeroPointTensor"),
        Same("DataType", "ATensor", "AZeroPointTensor"),
        # Not printed on the page (opendml's reading): element-wise Sizes, and "the expected number of elements
        # ... is 1" of each scale and zero point as every size 1.
        Same("Sizes", "ATensor", "BTensor", "OutputTensor"),
        SingleElement(*_ADD_SCALARS),
    ],
    output_rule=OutputRule(type_like="OutputZeroPointTensor"),
)

__all__ = sorted(name for name in globals() if name.endswith("OperatorDesc"))
