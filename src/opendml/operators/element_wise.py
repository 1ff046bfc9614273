"""The ELEMENT_WISE_* family: DML_ELEMENT_WISE_*_OPERATOR_DESC, each declared once."""

from __future__ import annotations

from typing import Any

from ..constraints import Below, Same, TypeOfField
from ..enums import FeatureLevel as FL
from ..enums import OperatorType, RoundingMode
from ..enums import TensorDataType as T
from ..schema import (
    OperatorDesc,
    OutputRule,
    declare,
    enum_field,
    float_field,
    fused_activation,
    input_tensor,
    operator,
    output_tensor,
    row,
    scalar_union,
    struct_field,
    supports,
)
from ..structs import ScaleBias
from ..tensor import BufferTensorDesc
from ._common import FLOATS, same_type_and_shape, uniform_rows

__all__ = ["ElementWiseIfOperatorDesc"]

_IF_TYPES_3_0 = (T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)
_IF_TYPES_5_0 = (T.FLOAT64, T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32,
                 T.UINT16, T.UINT8)  # fmt: skip


def _if_row(feature_level: FL, min_dims: int, max_dims: int, data_types: tuple[T, ...]):
    values = supports(min_dims, max_dims, *data_types)
    return row(
        feature_level,
        ConditionTensor=supports(min_dims, max_dims, T.UINT8),
        ATensor=values,
        BTensor=values,
        OutputTensor=values,
    )


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_if_operator_desc
@operator(
    OperatorType.ELEMENT_WISE_IF,
    introduced=FL.FL_2_0,
    support=[
        _if_row(FL.FL_5_0, 1, 8, _IF_TYPES_5_0),
        _if_row(FL.FL_3_0, 1, 8, _IF_TYPES_3_0),
        _if_row(FL.FL_2_0, 4, 4, (T.FLOAT16,)),  # as printed; FL history says integers came in 2_1
    ],
    constraints=[
        Same("DimensionCount", "ATensor", "BTensor", "ConditionTensor", "OutputTensor"),
        Same("Sizes", "ATensor", "BTensor", "ConditionTensor", "OutputTensor"),
        Same("DataType", "ATensor", "BTensor", "OutputTensor"),
    ],
    output_rule=OutputRule(like="ATensor"),
)
class ElementWiseIfOperatorDesc(OperatorDesc):
    """DML_ELEMENT_WISE_IF_OPERATOR_DESC: ``a if condition != 0 else b``, element by element."""

    condition_tensor: BufferTensorDesc = input_tensor()
    a_tensor: BufferTensorDesc = input_tensor()
    b_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_add1_operator_desc


__all__ += ["ElementWiseAdd1OperatorDesc"]
_ADD1 = ("ATensor", "BTensor", "OutputTensor")


@operator(
    OperatorType.ELEMENT_WISE_ADD1,
    introduced=FL.FL_2_0,
    support=uniform_rows(_ADD1, ((FL.FL_3_0, 1, 8, FLOATS), (FL.FL_2_0, 4, 5, FLOATS))),
    constraints=same_type_and_shape(*_ADD1),
    in_place=True,
    output_rule=OutputRule(like="ATensor"),
)
class ElementWiseAdd1OperatorDesc(OperatorDesc):
    """DML_ELEMENT_WISE_ADD1_OPERATOR_DESC: ``FusedActivation(a + b)``, element by element."""

    a_tensor: BufferTensorDesc = input_tensor()
    b_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    fused_activation: Any = fused_activation()


# ----------------------------------------------------------------------------------------------------------------
# Arithmetic and transcendental members: DML_ELEMENT_WISE_<OP>_OPERATOR_DESC, declared compactly.
# A support row is written (level, min_dims, max_dims, types), as printed on the page; every tensor of the
# operator shares it (the pages list the same cell for each tensor).
# ----------------------------------------------------------------------------------------------------------------


_ALL = (T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8)
_ALL_F64 = (T.FLOAT64, *_ALL)
_32 = (T.FLOAT32, T.FLOAT16, T.INT32, T.UINT32)  # floats and 32-bit integers
_8 = (T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)  # no 64-bit types
_SIGNED = (T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8)
#: The rows of most float-only unary members: 1 to 8 dimensions from 3_0, exactly 4 at the level of introduction.
_FLOAT_ROWS_1_0 = ((FL.FL_3_0, 1, 8, FLOATS), (FL.FL_1_0, 4, 4, FLOATS))
_FLOAT_ROWS_2_0 = ((FL.FL_3_0, 1, 8, FLOATS), (FL.FL_2_0, 4, 4, FLOATS))
_UNARY_TENSORS = ("InputTensor", "OutputTensor")
_BINARY_TENSORS = ("ATensor", "BTensor", "OutputTensor")


def _unary(op: OperatorType, doc: str, introduced: FL, rows, *, scale_bias: bool = True, **fields):
    """``InputTensor, OutputTensor[, ScaleBias], <fields>``: same type and sizes in and out, runs in place."""
    members = {"input_tensor": input_tensor(), "output_tensor": output_tensor()}
    if scale_bias:
        members["scale_bias"] = struct_field(ScaleBias, optional=True)
    members.update(fields)
    constraints = same_type_and_shape(*_UNARY_TENSORS)
    if "min_max_data_type" in fields:  # the scalar unions' data type must be the output's
        constraints.append(TypeOfField("MinMaxDataType", "OutputTensor"))
    return declare(op, doc, fields=members, introduced=introduced, support=uniform_rows(_UNARY_TENSORS, rows),
                   constraints=constraints, in_place=True)  # fmt: skip


def _binary(op: OperatorType, doc: str, introduced: FL, rows):
    """``ATensor, BTensor, OutputTensor``: one type and one size for all three; the output may alias A or B."""
    members = {"a_tensor": input_tensor(), "b_tensor": input_tensor(), "output_tensor": output_tensor()}
    return declare(op, doc, fields=members, introduced=introduced, support=uniform_rows(_BINARY_TENSORS, rows),
                   constraints=same_type_and_shape(*_BINARY_TENSORS), in_place=True,
                   output_rule=OutputRule(like="ATensor"))  # fmt: skip


def _clip_grad(op: OperatorType, doc: str, introduced: FL, rows, **fields):
    """``InputTensor, InputGradientTensor, OutputGradientTensor, <bounds>``; the output may alias InputTensor."""
    tensors = ("InputTensor", "InputGradientTensor", "OutputGradientTensor")
    members = {"input_tensor": input_tensor(), "input_gradient_tensor": input_tensor(),
               "output_gradient_tensor": output_tensor(), **fields}  # fmt: skip
    constraints = same_type_and_shape("InputGradientTensor", "InputTensor", "OutputGradientTensor")
    if "min_max_data_type" in fields:
        constraints.append(TypeOfField("MinMaxDataType", "OutputGradientTensor"))
    return declare(op, doc, fields=members, introduced=introduced, support=uniform_rows(tensors, rows),
                   constraints=constraints, in_place=("InputTensor",))  # fmt: skip


OT = OperatorType
# Unary arithmetic, with the optional DML_SCALE_BIAS applied to the input first: f(x * Scale + Bias).
ElementWiseIdentityOperatorDesc = _unary(OT.ELEMENT_WISE_IDENTITY, "f(x) = x", FL.FL_1_0, (
    (FL.FL_4_1, 1, 8, _ALL_F64), (FL.FL_3_0, 1, 8, _8), (FL.FL_2_1, 4, 5, _8), (FL.FL_1_0, 4, 5, FLOATS)))  # fmt: skip
ElementWiseAbsOperatorDesc = _unary(OT.ELEMENT_WISE_ABS, "f(x) = abs(x)", FL.FL_1_0, (
    (FL.FL_4_1, 1, 8, _SIGNED), (FL.FL_3_0, 1, 8, _SIGNED[:2] + _SIGNED[3:]),
    (FL.FL_2_1, 4, 4, _SIGNED[:2] + _SIGNED[3:]), (FL.FL_1_0, 4, 4, FLOATS)))  # fmt: skip
ElementWiseNegateOperatorDesc = _unary(OT.ELEMENT_WISE_NEGATE, "f(x) = -x", FL.FL_5_0, (
    (FL.FL_5_0, 1, 8, _SIGNED),), scale_bias=False)  # fmt: skip
ElementWiseRecipOperatorDesc = _unary(OT.ELEMENT_WISE_RECIP, "f(x) = 1 / x", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseSqrtOperatorDesc = _unary(OT.ELEMENT_WISE_SQRT, "f(x) = sqrt(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseCeilOperatorDesc = _unary(OT.ELEMENT_WISE_CEIL, "f(x) = ceil(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseFloorOperatorDesc = _unary(OT.ELEMENT_WISE_FLOOR, "f(x) = floor(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseSignOperatorDesc = _unary(OT.ELEMENT_WISE_SIGN, "f(x) = -1 if x < 0, 1 if x > 0, else 0", FL.FL_2_0, (
    (FL.FL_4_1, 1, 8, _ALL), (FL.FL_3_0, 1, 8, _8), (FL.FL_2_1, 4, 4, _8), (FL.FL_2_0, 4, 4, FLOATS)),
    scale_bias=False)  # fmt: skip
ElementWiseRoundOperatorDesc = _unary(OT.ELEMENT_WISE_ROUND, "f(x) = x rounded to an integer by RoundingMode",
    FL.FL_2_1, ((FL.FL_3_0, 1, 8, FLOATS), (FL.FL_2_1, 4, 4, FLOATS)), scale_bias=False,
    rounding_mode=enum_field(RoundingMode, dmlx_default=RoundingMode.HALVES_TO_NEAREST_EVEN))  # fmt: skip
ElementWiseConstantPowOperatorDesc = _unary(OT.ELEMENT_WISE_CONSTANT_POW, "f(x) = pow(x, Exponent)", FL.FL_1_0,
    _FLOAT_ROWS_1_0, exponent=float_field())  # fmt: skip
ElementWiseThresholdOperatorDesc = _unary(OT.ELEMENT_WISE_THRESHOLD, "f(x) = max(x, Min)", FL.FL_1_0, (
    (FL.FL_3_0, 1, 8, _8), (FL.FL_2_1, 4, 4, _8), (FL.FL_1_0, 4, 4, FLOATS)), min=float_field())  # fmt: skip
ElementWiseClipOperatorDesc = _unary(OT.ELEMENT_WISE_CLIP, "f(x) = min(Max, max(Min, x))", FL.FL_1_0, (
    (FL.FL_5_0, 1, 8, _ALL), (FL.FL_3_0, 1, 8, _8), (FL.FL_2_1, 4, 4, _8), (FL.FL_1_0, 4, 4, FLOATS)),
    min=float_field(), max=float_field())  # fmt: skip
ElementWiseClip1OperatorDesc = _unary(OT.ELEMENT_WISE_CLIP1, "f(x) = max(Min, min(x, Max))", FL.FL_5_0, (
    (FL.FL_5_0, 1, 8, _ALL),), min_max_data_type=enum_field(T), min=scalar_union("MinMaxDataType"),
    max=scalar_union("MinMaxDataType"))  # fmt: skip

# Unary transcendental members (FLOAT32 and FLOAT16), with ScaleBias.
ElementWiseExpOperatorDesc = _unary(OT.ELEMENT_WISE_EXP, "f(x) = exp(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseLogOperatorDesc = _unary(OT.ELEMENT_WISE_LOG, "f(x) = ln(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseSinOperatorDesc = _unary(OT.ELEMENT_WISE_SIN, "f(x) = sin(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseCosOperatorDesc = _unary(OT.ELEMENT_WISE_COS, "f(x) = cos(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseTanOperatorDesc = _unary(OT.ELEMENT_WISE_TAN, "f(x) = tan(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseAsinOperatorDesc = _unary(OT.ELEMENT_WISE_ASIN, "f(x) = asin(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseAcosOperatorDesc = _unary(OT.ELEMENT_WISE_ACOS, "f(x) = acos(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseAtanOperatorDesc = _unary(OT.ELEMENT_WISE_ATAN, "f(x) = atan(x)", FL.FL_1_0, _FLOAT_ROWS_1_0)
ElementWiseSinhOperatorDesc = _unary(OT.ELEMENT_WISE_SINH, "f(x) = sinh(x)", FL.FL_2_0, _FLOAT_ROWS_2_0)
ElementWiseCoshOperatorDesc = _unary(OT.ELEMENT_WISE_COSH, "f(x) = cosh(x)", FL.FL_2_0, _FLOAT_ROWS_2_0)
ElementWiseTanhOperatorDesc = _unary(OT.ELEMENT_WISE_TANH, "f(x) = tanh(x)", FL.FL_2_0, _FLOAT_ROWS_2_0)
ElementWiseAsinhOperatorDesc = _unary(OT.ELEMENT_WISE_ASINH, "f(x) = asinh(x)", FL.FL_2_0, _FLOAT_ROWS_2_0)
ElementWiseAcoshOperatorDesc = _unary(OT.ELEMENT_WISE_ACOSH, "f(x) = acosh(x)", FL.FL_2_0, _FLOAT_ROWS_2_0)
ElementWiseAtanhOperatorDesc = _unary(OT.ELEMENT_WISE_ATANH, "f(x) = atanh(x)", FL.FL_2_0, _FLOAT_ROWS_2_0)
ElementWiseErfOperatorDesc = _unary(OT.ELEMENT_WISE_ERF, "f(x) = erf(x)", FL.FL_2_0, _FLOAT_ROWS_2_0)

# Binary members: A, B and the output share one data type and one size (broadcasting is zero strides).
_ADD_ROWS = ((FL.FL_5_1, 1, 8, _ALL), (FL.FL_4_1, 1, 8, (*FLOATS, T.INT64, T.INT32, T.UINT64, T.UINT32)),
             (FL.FL_3_0, 1, 8, _32), (FL.FL_2_1, 4, 5, _32), (FL.FL_1_0, 4, 5, FLOATS))  # fmt: skip
_SUBTRACT_ROWS = _ADD_ROWS[:3] + ((FL.FL_2_1, 4, 4, _32), (FL.FL_1_0, 4, 4, FLOATS))
_MAX_ROWS = ((FL.FL_5_0, 1, 8, _ALL), (FL.FL_3_0, 1, 8, _8), (FL.FL_2_1, 4, 4, _8), (FL.FL_1_0, 4, 4, FLOATS))
_MODULUS_ROWS = ((FL.FL_6_0, 1, 8, _ALL), (FL.FL_3_0, 1, 8, _8), (FL.FL_2_1, 4, 4, _8))
ElementWiseAddOperatorDesc = _binary(OT.ELEMENT_WISE_ADD, "f(a, b) = a + b", FL.FL_1_0, _ADD_ROWS)
ElementWiseSubtractOperatorDesc = _binary(OT.ELEMENT_WISE_SUBTRACT, "f(a, b) = a - b", FL.FL_1_0, _SUBTRACT_ROWS)
ElementWiseMultiplyOperatorDesc = _binary(OT.ELEMENT_WISE_MULTIPLY, "f(a, b) = a * b", FL.FL_1_0, _ADD_ROWS)
ElementWiseDivideOperatorDesc = _binary(OT.ELEMENT_WISE_DIVIDE, "f(a, b) = a / b", FL.FL_1_0, (
    (FL.FL_6_0, 1, 8, _ALL), (FL.FL_5_1, 1, 8, _8), (FL.FL_3_0, 1, 8, _32), (FL.FL_2_1, 4, 4, _32),
    (FL.FL_1_0, 4, 4, FLOATS)))  # fmt: skip
ElementWiseMaxOperatorDesc = _binary(OT.ELEMENT_WISE_MAX, "f(a, b) = max(a, b)", FL.FL_1_0, _MAX_ROWS)
ElementWiseMinOperatorDesc = _binary(OT.ELEMENT_WISE_MIN, "f(a, b) = min(a, b)", FL.FL_1_0, _MAX_ROWS)
ElementWiseMeanOperatorDesc = _binary(OT.ELEMENT_WISE_MEAN, "f(a, b) = (a + b) / 2", FL.FL_1_0, (
    (FL.FL_3_0, 1, 8, _32), (FL.FL_2_1, 4, 4, _32), (FL.FL_1_0, 4, 4, FLOATS)))  # fmt: skip
ElementWiseDifferenceSquareOperatorDesc = _binary(OT.ELEMENT_WISE_DIFFERENCE_SQUARE, "f(a, b) = (a - b) * (a - b)",
    FL.FL_3_1, ((FL.FL_3_1, 1, 8, _32),))  # fmt: skip
ElementWiseModulusTruncateOperatorDesc = _binary(OT.ELEMENT_WISE_MODULUS_TRUNCATE, "f(a, b) = a - b * trunc(a / b)",
    FL.FL_2_1, _MODULUS_ROWS)  # fmt: skip
ElementWiseModulusFloorOperatorDesc = _binary(OT.ELEMENT_WISE_MODULUS_FLOOR, "f(a, b) = a - b * floor(a / b)",
    FL.FL_2_1, _MODULUS_ROWS)  # fmt: skip
ElementWiseAtanYxOperatorDesc = _binary(OT.ELEMENT_WISE_ATAN_YX, "f(y, x) = atan2(y, x), y = A, x = B", FL.FL_3_1,
    ((FL.FL_3_1, 1, 8, FLOATS),))  # fmt: skip

# POW: an exponent tensor of its own data type; the output may alias InputTensor only (as the page says).
_POW_TENSORS = ("InputTensor", "ExponentTensor", "OutputTensor")
ElementWisePowOperatorDesc = declare(
    OT.ELEMENT_WISE_POW,
    "f(input, exponent) = pow(input, exponent)",
    fields={
        "input_tensor": input_tensor(),
        "exponent_tensor": input_tensor(),
        "output_tensor": output_tensor(),
        "scale_bias": struct_field(ScaleBias, optional=True),
    },  # fmt: skip
    introduced=FL.FL_1_0,
    support=uniform_rows(_POW_TENSORS, ((FL.FL_3_0, 1, 8, _8), (FL.FL_1_0, 4, 4, FLOATS))),
    constraints=[
        Same("DimensionCount", *_POW_TENSORS),
        Same("Sizes", *_POW_TENSORS),
        Same("DataType", "InputTensor", "OutputTensor"),
        Below(FL.FL_3_0, Same("DataType", "InputTensor", "ExponentTensor")),  # the page's remark
    ],  # fmt: skip
    in_place=("InputTensor",),
)

# Clip gradients: 0 where x <= Min or x >= Max, else the incoming gradient.
ElementWiseClipGradOperatorDesc = _clip_grad(OT.ELEMENT_WISE_CLIP_GRAD, "f(x, g) = 0 if x <= Min or x >= Max else g",
    FL.FL_3_1, ((FL.FL_5_0, 1, 8, _ALL), (FL.FL_3_1, 1, 8, _8)), min=float_field(), max=float_field())  # fmt: skip
ElementWiseClipGrad1OperatorDesc = _clip_grad(OT.ELEMENT_WISE_CLIP_GRAD1,
    "f(x, g) = 0 if x <= Min or x >= Max else g", FL.FL_5_0, ((FL.FL_5_0, 1, 8, _ALL),),
    min_max_data_type=enum_field(T), min=scalar_union("MinMaxDataType"),
    max=scalar_union("MinMaxDataType"))  # fmt: skip

__all__ += [name for name in list(globals()) if name.startswith("ElementWise") and name not in __all__]
