"""THE operator table: every operator opendml implements, declared once.

Each class mirrors a ``DML_*_OPERATOR_DESC`` of directml.h field for field (snake_case names; a C count plus
pointer pair such as AxisCount + Axes is one tuple). The decorator carries what the DirectML doc page says:
the feature level the operator arrived in ("Availability"), its "Tensor support" tables, one row per
"DML_FEATURE_LEVEL_x and above" (transcribed as printed), its "Tensor constraints", and whether it may run in
place. Validation, execution, the JSON runner, the tests and the README read these declarations.
"""

from __future__ import annotations

from .constraints import IndexFitsOutput, ReducedOutputSizes, Same, ValidAxes
from .enums import AxisDirection, OperatorType
from .enums import FeatureLevel as FL
from .enums import TensorDataType as T
from .schema import (
    OperatorDesc,
    enum_field,
    float_field,
    input_tensor,
    operator,
    output_tensor,
    row,
    supports,
    uint_array,
)
from .tensor import BufferTensorDesc

__all__ = [
    "ActivationHardmax1OperatorDesc",
    "ActivationLogSoftmax1OperatorDesc",
    "ElementWiseIfOperatorDesc",
    "ArgmaxOperatorDesc",
    "ActivationHardSigmoidOperatorDesc",
]

_FLOATS = (T.FLOAT32, T.FLOAT16)
_SAME_AS_INPUT = (
    Same("DataType", "InputTensor", "OutputTensor"),
    Same("DimensionCount", "InputTensor", "OutputTensor"),
    Same("Sizes", "InputTensor", "OutputTensor"),
)


# https://learn.microsoft.com/windows/ai/directml/api/ns-directml-dml_activation_hardmax1_operator_desc
@operator(
    OperatorType.ACTIVATION_HARDMAX1,
    introduced=FL.FL_5_1,
    support=[row(FL.FL_5_1, InputTensor=supports(1, 8, *_FLOATS), OutputTensor=supports(1, 8, *_FLOATS))],
    constraints=[*_SAME_AS_INPUT, ValidAxes("Axes", "InputTensor")],
)
class ActivationHardmax1OperatorDesc(OperatorDesc):
    """DML_ACTIVATION_HARDMAX1_OPERATOR_DESC: 1 at the first maximum over ``axes``, 0 elsewhere."""

    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    axes: tuple[int, ...] = uint_array(count="AxisCount")


# https://learn.microsoft.com/windows/ai/directml/api/ns-directml-dml_activation_log_softmax1_operator_desc
@operator(
    OperatorType.ACTIVATION_LOG_SOFTMAX1,
    introduced=FL.FL_5_1,
    support=[row(FL.FL_5_1, InputTensor=supports(1, 8, *_FLOATS), OutputTensor=supports(1, 8, *_FLOATS))],
    constraints=[*_SAME_AS_INPUT, ValidAxes("Axes", "InputTensor")],
)
class ActivationLogSoftmax1OperatorDesc(OperatorDesc):
    """DML_ACTIVATION_LOG_SOFTMAX1_OPERATOR_DESC: ``ln(softmax(x))`` over ``axes``."""

    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    axes: tuple[int, ...] = uint_array(count="AxisCount")


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
)
class ElementWiseIfOperatorDesc(OperatorDesc):
    """DML_ELEMENT_WISE_IF_OPERATOR_DESC: ``a if condition != 0 else b``, element by element."""

    condition_tensor: BufferTensorDesc = input_tensor()
    a_tensor: BufferTensorDesc = input_tensor()
    b_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()


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
)
class ArgmaxOperatorDesc(OperatorDesc):
    """DML_ARGMAX_OPERATOR_DESC: index of the maximum over ``axes``, flattened row-major over those axes."""

    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    axes: tuple[int, ...] = uint_array(count="AxisCount")
    axis_direction: AxisDirection = enum_field(AxisDirection)


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_activation_hard_sigmoid_operator_desc
@operator(
    OperatorType.ACTIVATION_HARD_SIGMOID,
    introduced=FL.FL_1_0,
    support=[
        row(FL.FL_3_0, InputTensor=supports(1, 8, *_FLOATS), OutputTensor=supports(1, 8, *_FLOATS)),
        row(FL.FL_2_0, InputTensor=supports(4, 5, *_FLOATS), OutputTensor=supports(4, 5, *_FLOATS)),
        row(FL.FL_1_0, InputTensor=supports(4, 4, *_FLOATS), OutputTensor=supports(4, 4, *_FLOATS)),
    ],
    constraints=_SAME_AS_INPUT,
    in_place=True,
)
class ActivationHardSigmoidOperatorDesc(OperatorDesc):
    """DML_ACTIVATION_HARD_SIGMOID_OPERATOR_DESC: ``max(0, min(alpha * x + beta, 1))``."""

    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    alpha: float = float_field()
    beta: float = float_field()
