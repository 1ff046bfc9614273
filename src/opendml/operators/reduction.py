"""Reductions: ARGMAX (REDUCE, ARGMIN and the softmax family will join), each declared once."""

from __future__ import annotations

from ..constraints import IndexFitsOutput, ReducedOutputSizes, Same, ValidAxes
from ..enums import AxisDirection, OperatorType
from ..enums import FeatureLevel as FL
from ..enums import TensorDataType as T
from ..schema import (
    OperatorDesc,
    OutputRule,
    enum_field,
    input_tensor,
    operator,
    output_tensor,
    row,
    supports,
    uint_array,
)
from ..tensor import BufferTensorDesc

__all__ = ["ArgmaxOperatorDesc"]

_INDEX_TYPES = (T.INT64, T.INT32, T.UINT64, T.UINT32)


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_argmax_operator_desc
@operator(
    OperatorType.ARGMAX,
    introduced=FL.FL_3_0,
    support=[
        row(
            FL.FL_4_1,
            InputTensor=supports(
                1, 8, T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8
            ),
            OutputTensor=supports(1, 8, *_INDEX_TYPES),
        ),
        row(
            FL.FL_3_0,
            InputTensor=supports(1, 8, T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8),
            OutputTensor=supports(1, 8, *_INDEX_TYPES),
        ),
    ],
    constraints=[
        Same("DimensionCount", "InputTensor", "OutputTensor"),
        ValidAxes("Axes", "InputTensor"),
        ReducedOutputSizes("InputTensor", "OutputTensor", "Axes"),
        IndexFitsOutput("InputTensor", "OutputTensor", "Axes"),
    ],
    output_rule=OutputRule(reduced_by="Axes", data_type=T.UINT32, data_type_parameter=True),
)
class ArgmaxOperatorDesc(OperatorDesc):
    """DML_ARGMAX_OPERATOR_DESC: index of the maximum over ``axes``, flattened row-major over those axes."""

    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    axes: tuple[int, ...] = uint_array(count="AxisCount")
    axis_direction: AxisDirection = enum_field(AxisDirection, dmlx_default=AxisDirection.INCREASING)
