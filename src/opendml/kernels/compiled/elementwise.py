"""Element-wise operators on the C element-wise engine."""

from __future__ import annotations

from ..._core._native import OP_HARD_SIGMOID, OP_IF, elementwise
from ...enums import OperatorType
from .. import register


@register(OperatorType.ACTIVATION_HARD_SIGMOID, "compiled")
def hard_sigmoid(desc, inputs, outputs) -> None:
    elementwise(OP_HARD_SIGMOID, inputs, outputs[0], desc.alpha, desc.beta)


@register(OperatorType.ELEMENT_WISE_IF, "compiled")
def element_wise_if(desc, inputs, outputs) -> None:
    elementwise(OP_IF, inputs, outputs[0])
