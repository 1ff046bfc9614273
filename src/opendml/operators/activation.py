"""The ACTIVATION_* family: DML_ACTIVATION_*_OPERATOR_DESC, each declared once."""

from __future__ import annotations

from ..constraints import EffectiveRankAtMost, ValidAxes
from ..enums import FeatureLevel as FL
from ..enums import OperatorType
from ..schema import (
    OperatorDesc,
    declare,
    float_field,
    input_tensor,
    operator,
    output_tensor,
    row,
    supports,
    uint_array,
)
from ..tensor import BufferTensorDesc
from ._common import FLOATS, SAME_AS_INPUT

__all__ = [
    "ActivationHardmax1OperatorDesc",
    "ActivationLogSoftmax1OperatorDesc",
    "ActivationHardSigmoidOperatorDesc",
    "ActivationHardmaxOperatorDesc",
    "ActivationLogSoftmaxOperatorDesc",
    "ActivationSoftmaxOperatorDesc",
    "ActivationSoftmax1OperatorDesc",
]


# https://learn.microsoft.com/windows/ai/directml/api/ns-directml-dml_activation_hardmax1_operator_desc
@operator(
    OperatorType.ACTIVATION_HARDMAX1,
    introduced=FL.FL_5_1,
    support=[row(FL.FL_5_1, InputTensor=supports(1, 8, *FLOATS), OutputTensor=supports(1, 8, *FLOATS))],
    constraints=[*SAME_AS_INPUT, ValidAxes("Axes", "InputTensor")],
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
    support=[row(FL.FL_5_1, InputTensor=supports(1, 8, *FLOATS), OutputTensor=supports(1, 8, *FLOATS))],
    constraints=[*SAME_AS_INPUT, ValidAxes("Axes", "InputTensor")],
)
class ActivationLogSoftmax1OperatorDesc(OperatorDesc):
    """DML_ACTIVATION_LOG_SOFTMAX1_OPERATOR_DESC: ``ln(softmax(x))`` over ``axes``."""

    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    axes: tuple[int, ...] = uint_array(count="AxisCount")


# The softmax family beside HARDMAX1 and LOG_SOFTMAX1: the v0 operators reduce the last axis of an input of
# effective rank at most 2 (pages ns-directml-dml_activation_{hardmax,log_softmax,softmax}_operator_desc);
# SOFTMAX1 reduces any axes (windows/ai/directml/api/ns-directml-dml_activation_softmax1_operator_desc).
def _float_rows(*levels: tuple[FL, int, int]) -> list:
    return [row(fl, InputTensor=supports(low, high, *FLOATS), OutputTensor=supports(low, high, *FLOATS))
            for fl, low, high in levels]  # fmt: skip


_V0_ROWS = _float_rows((FL.FL_3_0, 1, 8), (FL.FL_2_0, 4, 5), (FL.FL_1_0, 4, 4))


def _tensors() -> dict:
    return {"input_tensor": input_tensor(), "output_tensor": output_tensor()}


def _softmax_v0(operator_type: OperatorType, doc: str) -> type:
    constraints = [*SAME_AS_INPUT, EffectiveRankAtMost("InputTensor", 2)]
    return declare(operator_type, doc, fields=_tensors(), introduced=FL.FL_1_0, support=_V0_ROWS,
                   constraints=constraints)  # fmt: skip


ActivationHardmaxOperatorDesc = _softmax_v0(
    OperatorType.ACTIVATION_HARDMAX, "DML_ACTIVATION_HARDMAX_OPERATOR_DESC: 1 at the first maximum of each row."
)
ActivationLogSoftmaxOperatorDesc = _softmax_v0(
    OperatorType.ACTIVATION_LOG_SOFTMAX, "DML_ACTIVATION_LOG_SOFTMAX_OPERATOR_DESC: ``ln(softmax(x))`` of each row."
)
ActivationSoftmaxOperatorDesc = _softmax_v0(
    OperatorType.ACTIVATION_SOFTMAX, "DML_ACTIVATION_SOFTMAX_OPERATOR_DESC: ``exp(x) / sum(exp(x))`` of each row."
)
ActivationSoftmax1OperatorDesc = declare(
    OperatorType.ACTIVATION_SOFTMAX1,
    "DML_ACTIVATION_SOFTMAX1_OPERATOR_DESC: ``exp(x) / sum(exp(x))`` over ``axes``.",
    fields={**_tensors(), "axes": uint_array(count="AxisCount")},
    introduced=FL.FL_5_1,
    support=_float_rows((FL.FL_5_1, 1, 8)),
    constraints=[*SAME_AS_INPUT, ValidAxes("Axes", "InputTensor")],
)


# https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_activation_hard_sigmoid_operator_desc
@operator(
    OperatorType.ACTIVATION_HARD_SIGMOID,
    introduced=FL.FL_1_0,
    support=[
        row(FL.FL_3_0, InputTensor=supports(1, 8, *FLOATS), OutputTensor=supports(1, 8, *FLOATS)),
        row(FL.FL_2_0, InputTensor=supports(4, 5, *FLOATS), OutputTensor=supports(4, 5, *FLOATS)),
        row(FL.FL_1_0, InputTensor=supports(4, 4, *FLOATS), OutputTensor=supports(4, 4, *FLOATS)),
    ],
    constraints=SAME_AS_INPUT,
    in_place=True,
)
class ActivationHardSigmoidOperatorDesc(OperatorDesc):
    """DML_ACTIVATION_HARD_SIGMOID_OPERATOR_DESC: ``max(0, min(alpha * x + beta, 1))``."""

    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    alpha: float = float_field(dmlx_default=0.2)
    beta: float = float_field(dmlx_default=0.5)
