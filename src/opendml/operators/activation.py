"""The ACTIVATION_* family: DML_ACTIVATION_*_OPERATOR_DESC, each declared once."""

from __future__ import annotations

from ..constraints import AtLeast, EffectiveRankAtMost, ValidAxes
from ..enums import FeatureLevel as FL
from ..enums import OperatorType
from ..enums import TensorDataType as T
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
from ._common import FLOATS, SAME_AS_INPUT, same_type_and_shape, uniform_rows

__all__ = ["ActivationHardmax1OperatorDesc", "ActivationLogSoftmax1OperatorDesc", "ActivationHardSigmoidOperatorDesc"]


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

__all__ += [
    "ActivationHardmaxOperatorDesc",
    "ActivationLogSoftmaxOperatorDesc",
    "ActivationSoftmaxOperatorDesc",
    "ActivationSoftmax1OperatorDesc",
]


def _float_rows(*levels: tuple[FL, int, int]) -> list:
    return uniform_rows(("InputTensor", "OutputTensor"), [(fl, low, high, FLOATS) for fl, low, high in levels])


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
    fusable=True,
)
class ActivationHardSigmoidOperatorDesc(OperatorDesc):
    """DML_ACTIVATION_HARD_SIGMOID_OPERATOR_DESC: ``max(0, min(alpha * x + beta, 1))``."""

    input_tensor: BufferTensorDesc = input_tensor()
    output_tensor: BufferTensorDesc = output_tensor()
    alpha: float = float_field(dmlx_default=0.2)
    beta: float = float_field(dmlx_default=0.5)


# ----------------------------------------------------------------------------------------------------------------
# The element-wise activations (issue 10): compact declarations, one per page. Each page's "Tensor support"
# tables are transcribed as printed, one (level, dimension counts, data types) entry per table. Only the
# activations the fused-activations page lists are ``fusable``. Pages: https://learn.microsoft.com/windows/win32/
# api/directml/ns-directml-dml_activation_<name>_operator_desc (GELU, SWISH, HARD_SWISH: windows/ai/directml/api).
# ----------------------------------------------------------------------------------------------------------------


__all__ += [
    f"Activation{name}OperatorDesc"
    for name in ("Elu", "Identity", "LeakyRelu", "Linear", "ParameterizedRelu", "ParametricSoftplus", "Relu",
                 "ScaledElu", "ScaledTanh", "Sigmoid", "Softplus", "Softsign", "Tanh", "ThresholdedRelu", "Shrink",
                 "Celu", "ReluGrad", "Gelu", "Swish", "HardSwish")
]  # fmt: skip

_SIGNED = (T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8)
_EVERY = (*_SIGNED, T.UINT32, T.UINT16, T.UINT8)
#: The tables most activation pages print: 4-D at 1_0, 4 to 5 at 2_0, 1 to 8 at 3_0, FLOAT32 and FLOAT16.
_SINCE_1_0 = ((FL.FL_3_0, 1, 8, FLOATS), (FL.FL_2_0, 4, 5, FLOATS), (FL.FL_1_0, 4, 4, FLOATS))
_SINCE_3_0 = ((FL.FL_3_0, 1, 8, FLOATS),)
_SINCE_5_1 = ((FL.FL_5_1, 1, 8, FLOATS),)
_SINCE_6_2 = ((FL.FL_6_2, 1, 8, FLOATS),)


#: "Activations that are supported for fusion", as the fused-activations page prints them (HARD_SIGMOID is
#: declared above; ELEMENT_WISE_CLIP, "for Convolution and GEMM only", is no activation of this family).
_FUSABLE = {
    getattr(OperatorType, f"ACTIVATION_{name}")
    for name in ("LINEAR", "SIGMOID", "TANH", "SCALED_TANH", "RELU", "LEAKY_RELU", "THRESHOLDED_RELU", "ELU", "CELU",
                 "SCALED_ELU", "SOFTPLUS", "PARAMETRIC_SOFTPLUS", "SOFTSIGN", "IDENTITY", "SHRINK", "GELU")
}  # fmt: skip


def _unary(op: OperatorType, doc: str, tables=_SINCE_1_0, *, in_place=True, constraints=(), **fields):
    """An activation of InputTensor into OutputTensor (same type and sizes) plus FLOAT ``fields``; fusable when
    the fused-activations page lists it."""
    return declare(
        op,
        f"DML_{op.name}_OPERATOR_DESC: {doc}",
        fields={"input_tensor": input_tensor(), "output_tensor": output_tensor(), **fields},
        introduced=tables[-1][0],
        support=uniform_rows(("InputTensor", "OutputTensor"), tables),
        constraints=[*SAME_AS_INPUT, *constraints],
        in_place=in_place,
        fusable=op in _FUSABLE,
    )


def _floats(*names: str, **defaults: float) -> dict:
    """FLOAT fields: ``names`` without a DirectMLX default, ``defaults`` with one."""
    return {**{n: float_field() for n in names}, **{n: float_field(dmlx_default=v) for n, v in defaults.items()}}


OT = OperatorType
ActivationEluOperatorDesc = _unary(OT.ACTIVATION_ELU, "``x if x >= 0 else alpha * expm1(x)``.", **_floats(alpha=1.0))
ActivationIdentityOperatorDesc = _unary(OT.ACTIVATION_IDENTITY, "``x``, bit for bit.")
ActivationLeakyReluOperatorDesc = _unary(
    OT.ACTIVATION_LEAKY_RELU, "``x if x >= 0 else alpha * x``.", **_floats(alpha=0.01)
)
ActivationLinearOperatorDesc = _unary(OT.ACTIVATION_LINEAR, "``alpha * x + beta``.", **_floats("alpha", "beta"))
_PRELU = ("InputTensor", "SlopeTensor", "OutputTensor")
ActivationParameterizedReluOperatorDesc = declare(
    OT.ACTIVATION_PARAMETERIZED_RELU,
    "DML_ACTIVATION_PARAMETERIZED_RELU_OPERATOR_DESC: ``x if x >= 0 else slope * x`` (a slope per element; "
    "broadcast it through its strides).",
    fields={"input_tensor": input_tensor(), "slope_tensor": input_tensor(), "output_tensor": output_tensor()},
    introduced=FL.FL_1_0,
    support=uniform_rows(_PRELU, ((FL.FL_5_1, 1, 8, _SIGNED), *_SINCE_1_0)),
    constraints=same_type_and_shape(*_PRELU),
    in_place=True,
)
ActivationParametricSoftplusOperatorDesc = _unary(
    OT.ACTIVATION_PARAMETRIC_SOFTPLUS, "``alpha * ln(1 + exp(beta * x))``.", **_floats("alpha", "beta")
)
ActivationReluOperatorDesc = _unary(OT.ACTIVATION_RELU, "``max(0, x)``.", ((FL.FL_5_1, 1, 8, _SIGNED), *_SINCE_1_0))
ActivationScaledEluOperatorDesc = _unary(
    OT.ACTIVATION_SCALED_ELU,
    "``gamma * x if x > 0 else gamma * (alpha * exp(x) - alpha)``.",
    **_floats(alpha=1.67326319217681884765625, gamma=1.05070102214813232421875),
)
ActivationScaledTanhOperatorDesc = _unary(
    OT.ACTIVATION_SCALED_TANH, "``alpha * tanh(beta * x)``.", **_floats(alpha=1.0, beta=0.5)
)
ActivationSigmoidOperatorDesc = _unary(OT.ACTIVATION_SIGMOID, "``1 / (1 + exp(-x))``.")
ActivationSoftplusOperatorDesc = _unary(
    OT.ACTIVATION_SOFTPLUS,
    "``ln(1 + exp(steepness * x)) / steepness``; Steepness below 1 only from DML_FEATURE_LEVEL_6_4.",
    constraints=[AtLeast("Steepness", 1.0, lifted_in=FL.FL_6_4)],
    **_floats(steepness=1.0),
)
ActivationSoftsignOperatorDesc = _unary(OT.ACTIVATION_SOFTSIGN, "``x / (1 + |x|)``.")
ActivationTanhOperatorDesc = _unary(OT.ACTIVATION_TANH, "``tanh(x)``.")
ActivationThresholdedReluOperatorDesc = _unary(
    OT.ACTIVATION_THRESHOLDED_RELU, "``x if x > alpha else 0``.", **_floats(alpha=1.0)
)
ActivationShrinkOperatorDesc = _unary(
    OT.ACTIVATION_SHRINK,
    "``x - bias if x > threshold, x + bias if x < -threshold, else 0``.",
    ((FL.FL_5_1, 1, 8, _EVERY), (FL.FL_3_0, 1, 8, FLOATS), (FL.FL_2_0, 4, 5, FLOATS)),
    **_floats(bias=0.0, threshold=0.5),
)
ActivationCeluOperatorDesc = _unary(
    OT.ACTIVATION_CELU, "``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.", _SINCE_3_0, **_floats(alpha=1.0)
)
_RELU_GRAD = ("InputTensor", "InputGradientTensor", "OutputGradientTensor")
ActivationReluGradOperatorDesc = declare(
    OT.ACTIVATION_RELU_GRAD,
    "DML_ACTIVATION_RELU_GRAD_OPERATOR_DESC: ``input_gradient if x > 0 else 0``: the gradient of RELU.",
    fields={
        "input_tensor": input_tensor(),
        "input_gradient_tensor": input_tensor(),
        "output_gradient_tensor": output_tensor(),
    },
    introduced=FL.FL_3_0,
    support=uniform_rows(_RELU_GRAD, ((FL.FL_5_1, 1, 8, _SIGNED), (FL.FL_4_0, 1, 8, FLOATS), *_SINCE_3_0)),
    constraints=same_type_and_shape(*_RELU_GRAD),
)
ActivationGeluOperatorDesc = _unary(
    OT.ACTIVATION_GELU, "``0.5 * x * (1 + erf(x / sqrt(2)))``.", _SINCE_5_1, in_place=False
)
ActivationSwishOperatorDesc = _unary(
    OT.ACTIVATION_SWISH, "``x * sigmoid(sigmoid_input_scale * x)``.", _SINCE_6_2, **_floats("sigmoid_input_scale")
)
ActivationHardSwishOperatorDesc = _unary(
    OT.ACTIVATION_HARD_SWISH, "``x * max(0, min(alpha * x + beta, 1))``.", _SINCE_6_2, **_floats("alpha", "beta")
)
del OT
