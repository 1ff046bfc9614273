"""Reductions: ARGMAX, ARGMIN and REDUCE, each declared once (the softmax family is in activation.py)."""

from __future__ import annotations

from ..constraints import IndexFitsOutput, ReducedOutputSizes, Same, ValidAxes, When
from ..enums import AxisDirection, OperatorType, ReduceFunction
from ..enums import FeatureLevel as FL
from ..enums import TensorDataType as T
from ..schema import (
    OperatorDesc,
    OutputRule,
    SupportBy,
    declare,
    enum_field,
    input_tensor,
    operator,
    output_tensor,
    row,
    supports,
    uint_array,
)
from ..tensor import BufferTensorDesc

__all__ = ["ArgmaxOperatorDesc", "ArgminOperatorDesc", "ReduceOperatorDesc"]

_INDEX_TYPES = (T.INT64, T.INT32, T.UINT64, T.UINT32)


_ALL_TYPES_4_1 = (T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8)
_ALL_TYPES_3_0 = (T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8)
# ARGMAX and ARGMIN print the same two tables (and so does REDUCE for its ARGMAX and ARGMIN functions, from 3_0).
_ARG_ROWS = [
    row(FL.FL_4_1, InputTensor=supports(1, 8, *_ALL_TYPES_4_1), OutputTensor=supports(1, 8, *_INDEX_TYPES)),
    row(FL.FL_3_0, InputTensor=supports(1, 8, *_ALL_TYPES_3_0), OutputTensor=supports(1, 8, *_INDEX_TYPES)),
]
_REDUCED = [
    Same("DimensionCount", "InputTensor", "OutputTensor"),
    ValidAxes("Axes", "InputTensor"),
    ReducedOutputSizes("InputTensor", "OutputTensor", "Axes"),
]
_INDEX_FITS = IndexFitsOutput("InputTensor", "OutputTensor", "Axes")
_INDICES = OutputRule(reduced_by="Axes", data_type=T.UINT32, data_type_parameter=True)


def _arg_operator(operator_type: OperatorType, doc: str) -> type:
    """ARGMAX and ARGMIN: the same fields, tables and rules (their pages are mirrors)."""
    fields = {
        "input_tensor": input_tensor(),
        "output_tensor": output_tensor(),
        "axes": uint_array(count="AxisCount"),
        "axis_direction": enum_field(AxisDirection, dmlx_default=AxisDirection.INCREASING),
    }
    return declare(operator_type, doc, fields=fields, introduced=FL.FL_3_0, support=_ARG_ROWS,
                   constraints=[*_REDUCED, _INDEX_FITS], output_rule=_INDICES)  # fmt: skip


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_argmax_operator_desc
ArgmaxOperatorDesc = _arg_operator(
    OperatorType.ARGMAX,
    "DML_ARGMAX_OPERATOR_DESC: index of the maximum over ``axes``, flattened row-major over those axes.",
)
# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_argmin_operator_desc
ArgminOperatorDesc = _arg_operator(
    OperatorType.ARGMIN,
    "DML_ARGMIN_OPERATOR_DESC: index of the minimum over ``axes``, flattened row-major over those axes.",
)


RF = ReduceFunction
_ARG_FUNCTIONS = (RF.ARGMIN, RF.ARGMAX)
_VALUE_FUNCTIONS = tuple(f for f in RF if f not in _ARG_FUNCTIONS)


def _same_rows(*levels: tuple[FL, int, int, tuple[T, ...]]) -> list:
    """Rows whose input and output share one cell: the output has the input's type."""
    return [row(fl, InputTensor=supports(low, high, *types), OutputTensor=supports(low, high, *types))
            for fl, low, high, types in levels]  # fmt: skip


_F16_32 = (T.FLOAT32, T.FLOAT16)
_SUMS_5_0 = (T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.UINT64, T.UINT32)
_SUMS_3_0 = (T.FLOAT32, T.FLOAT16, T.INT32, T.UINT32)
_INDEX_U32 = supports(4, 4, T.UINT32)


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_reduce_operator_desc
# "Tensor support according to function", one group per heading of the page, rows as printed.
@operator(
    OperatorType.REDUCE,
    introduced=FL.FL_1_0,
    support=SupportBy(
        "Function",
        {
            _ARG_FUNCTIONS: [
                *_ARG_ROWS,
                row(FL.FL_2_1, InputTensor=supports(4, 4, *_ALL_TYPES_3_0), OutputTensor=_INDEX_U32),
                row(FL.FL_1_0, InputTensor=supports(4, 4, *_F16_32), OutputTensor=_INDEX_U32),
            ],
            (RF.AVERAGE, RF.L2, RF.LOG_SUM, RF.LOG_SUM_EXP): _same_rows(
                (FL.FL_3_0, 1, 8, _F16_32), (FL.FL_1_0, 4, 4, _F16_32)
            ),
            (RF.L1, RF.SUM_SQUARE): _same_rows(
                (FL.FL_5_0, 1, 8, _SUMS_5_0), (FL.FL_3_0, 1, 8, _F16_32), (FL.FL_1_0, 4, 4, _F16_32)
            ),
            (RF.MIN, RF.MAX): _same_rows(
                (FL.FL_5_0, 1, 8, _ALL_TYPES_4_1),
                (FL.FL_3_0, 1, 8, _ALL_TYPES_3_0),
                (FL.FL_2_1, 4, 4, (T.FLOAT32, T.FLOAT16, T.INT32, T.UINT32)),
                (FL.FL_1_0, 4, 4, _F16_32),
            ),
            (RF.MULTIPLY, RF.SUM): _same_rows(
                (FL.FL_5_0, 1, 8, _SUMS_5_0),
                (FL.FL_3_0, 1, 8, _SUMS_3_0),
                (FL.FL_2_1, 4, 4, _SUMS_3_0),
                (FL.FL_1_0, 4, 4, _F16_32),
            ),
        },
    ),
    constraints=[
        *_REDUCED,
        When("Function", _VALUE_FUNCTIONS, Same("DataType", "InputTensor", "OutputTensor")),
        When("Function", _ARG_FUNCTIONS, _INDEX_FITS),
    ],
    output_rule=OutputRule(
        reduced_by="Axes", data_type_parameter=True, data_type_when=("Function", _ARG_FUNCTIONS, T.UINT32)
    ),
)
class ReduceOperatorDesc(OperatorDesc):
    """DML_REDUCE_OPERATOR_DESC: ``function`` (sum, product, min, ...) of the elements over ``axes``."""

    function: ReduceFunction = enum_field(ReduceFunction)
    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    axes: tuple[int, ...] = uint_array(count="AxisCount")
