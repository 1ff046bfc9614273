"""The ELEMENT_WISE_* family: DML_ELEMENT_WISE_*_OPERATOR_DESC, each declared once."""

from __future__ import annotations

from ..constraints import Same
from ..enums import FeatureLevel as FL
from ..enums import OperatorType
from ..enums import TensorDataType as T
from ..schema import (
    OperatorDesc,
    OutputRule,
    input_tensor,
    operator,
    output_tensor,
    row,
    supports,
)
from ..tensor import BufferTensorDesc

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
from typing import Any  # noqa: E402

from ..schema import fused_activation  # noqa: E402
from ._common import FLOATS, same_type_and_shape  # noqa: E402

__all__ += ["ElementWiseAdd1OperatorDesc"]
_ADD1 = ("ATensor", "BTensor", "OutputTensor")


@operator(
    OperatorType.ELEMENT_WISE_ADD1,
    introduced=FL.FL_2_0,
    support=[
        row(FL.FL_3_0, **{name: supports(1, 8, *FLOATS) for name in _ADD1}),
        row(FL.FL_2_0, **{name: supports(4, 5, *FLOATS) for name in _ADD1}),
    ],
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
