"""The activation family and fused activations (issue 10): what the pages list (fusable, in place, DirectMLX's
defaults), the decisions where the pages are silent, fusion into ELEMENT_WISE_ADD1 end to end (Python, functional
layer and JSON runner), layouts, and the float64 erf the GELU kernel uses."""

from __future__ import annotations

import inspect
import json
import math

import activation_reference as act
import numpy as np
import pytest
from cases import CASES, execute, make_desc, rng_for, types_for
from cases.activation import activation_values
from dxdispatch_support import buffer, dispatch, model, prints, run_model, tensor
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import functional as F
from opendml.dxdispatch import jsonc
from opendml.dxdispatch.descs import read_operator_desc
from opendml.dxdispatch.jsonc import Node
from opendml.kernels.reference._special import erf, erfc
from opendml.schema import SupportBy, desc_json

T, OT, FL = dml.TensorDataType, dml.OperatorType, dml.FeatureLevel
F32, F16 = T.FLOAT32, T.FLOAT16

# The fused-activations concept page, "Activations that are supported for fusion" (ELEMENT_WISE_CLIP: for
# CONVOLUTION and GEMM only, so not into ADD1).
FUSABLE_PAGE = {
    "ACTIVATION_LINEAR", "ACTIVATION_SIGMOID", "ACTIVATION_HARD_SIGMOID", "ACTIVATION_TANH", "ACTIVATION_SCALED_TANH",
    "ACTIVATION_RELU", "ACTIVATION_LEAKY_RELU", "ACTIVATION_THRESHOLDED_RELU", "ACTIVATION_ELU", "ACTIVATION_CELU",
    "ACTIVATION_SCALED_ELU", "ACTIVATION_SOFTPLUS", "ACTIVATION_PARAMETRIC_SOFTPLUS", "ACTIVATION_SOFTSIGN",
    "ACTIVATION_IDENTITY", "ACTIVATION_SHRINK", "ACTIVATION_GELU",
}  # fmt: skip
# The family's pages that say the output may alias the input (GELU's and RELU_GRAD's do not).
IN_PLACE_PAGE = {
    "ACTIVATION_ELU", "ACTIVATION_IDENTITY", "ACTIVATION_LEAKY_RELU", "ACTIVATION_LINEAR",
    "ACTIVATION_PARAMETERIZED_RELU", "ACTIVATION_PARAMETRIC_SOFTPLUS", "ACTIVATION_RELU", "ACTIVATION_SCALED_ELU",
    "ACTIVATION_SCALED_TANH", "ACTIVATION_SIGMOID", "ACTIVATION_SOFTPLUS", "ACTIVATION_SOFTSIGN", "ACTIVATION_TANH",
    "ACTIVATION_THRESHOLDED_RELU", "ACTIVATION_SHRINK", "ACTIVATION_CELU", "ACTIVATION_SWISH", "ACTIVATION_HARD_SWISH",
    "ACTIVATION_HARD_SIGMOID", "ELEMENT_WISE_ADD1",
}  # fmt: skip
FAMILY = [
    OT[name]
    for name in (
        "ACTIVATION_ELU", "ACTIVATION_IDENTITY", "ACTIVATION_LEAKY_RELU", "ACTIVATION_LINEAR",
        "ACTIVATION_PARAMETERIZED_RELU", "ACTIVATION_PARAMETRIC_SOFTPLUS", "ACTIVATION_RELU", "ACTIVATION_SCALED_ELU",
        "ACTIVATION_SCALED_TANH", "ACTIVATION_SIGMOID", "ACTIVATION_SOFTPLUS", "ACTIVATION_SOFTSIGN",
        "ACTIVATION_TANH", "ACTIVATION_THRESHOLDED_RELU", "ACTIVATION_SHRINK", "ACTIVATION_CELU",
        "ACTIVATION_RELU_GRAD", "ACTIVATION_GELU", "ACTIVATION_SWISH", "ACTIVATION_HARD_SWISH", "ELEMENT_WISE_ADD1",
    )
]  # fmt: skip
FUSABLE = [t for t, s in dml.REGISTRY.items() if s.fusable]
UNARY_FAMILY = [
    t for t in FAMILY if [f.c_name for f in dml.REGISTRY[t].tensor_fields] == ["InputTensor", "OutputTensor"]
]


def tensor_desc(data_type=F32, sizes=(2, 3), strides=None):
    return dml.BufferTensorDesc(data_type, sizes, strides)


def activation(op, data_type=F32, sizes=(2, 3), **fields):
    t = tensor_desc(data_type, sizes)
    return dml.REGISTRY[op].desc_class(input_tensor=t, output_tensor=t, **fields)


def add1(fused=None, data_type=F32, sizes=(2, 3)):
    t = tensor_desc(data_type, sizes)
    return dml.ElementWiseAdd1OperatorDesc(a_tensor=t, b_tensor=t, output_tensor=t, fused_activation=fused)


def validate(desc, level=None):
    return (dml.Device(feature_level=level) if level else dml.Device()).validate(desc)


def bits(array):
    array = np.ascontiguousarray(array)
    return array.view(f"u{array.itemsize}")


# ----------------------------------------------------------------------------------------------------------------
# What the pages list
# ----------------------------------------------------------------------------------------------------------------


def test_fusable_exactly_the_activations_the_fused_activations_page_lists():
    declared = {t.name for t in FUSABLE}
    assert declared == FUSABLE_PAGE & {t.name for t in dml.REGISTRY}
    assert FUSABLE_PAGE - {"ACTIVATION_HARD_SIGMOID"} <= {t.name for t in FAMILY}  # every one is implemented


def test_in_place_exactly_where_the_pages_say_so():
    family = [*FAMILY, OT.ACTIVATION_HARD_SIGMOID]
    assert {t.name for t in family if dml.REGISTRY[t].in_place} == IN_PLACE_PAGE


# DirectMLX.h's defaults (ActivationElu(input, alpha = 1.0f), ...); Linear, ParametricSoftplus, Swish and
# HardSwish have none there.
DMLX_DEFAULTS = {
    "activation_elu": {"alpha": 1.0},
    "activation_leaky_relu": {"alpha": 0.01},
    "activation_scaled_elu": {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875},
    "activation_scaled_tanh": {"alpha": 1.0, "beta": 0.5},
    "activation_softplus": {"steepness": 1.0},
    "activation_thresholded_relu": {"alpha": 1.0},
    "activation_shrink": {"bias": 0.0, "threshold": 0.5},
    "activation_celu": {"alpha": 1.0},
    "activation_linear": {"alpha": None, "beta": None},
    "activation_parametric_softplus": {"alpha": None, "beta": None},
    "activation_swish": {"sigmoid_input_scale": None},
    "activation_hard_swish": {"alpha": None, "beta": None},
    "element_wise_add1": {"fused_activation": None},
}


@pytest.mark.parametrize("name", sorted(DMLX_DEFAULTS))
def test_functional_defaults_are_directmlx_defaults(name):
    parameters = inspect.signature(getattr(F, name)).parameters
    for field, default in DMLX_DEFAULTS[name].items():
        expected = inspect.Parameter.empty if default is None and field != "fused_activation" else default
        assert parameters[field].default == expected, field
    assert parameters["x" if "x" in parameters else "a"].default is inspect.Parameter.empty  # tensors are required


def test_functional_calls():
    x = np.array([-2.0, 0.5], np.float32)
    assert F.activation_elu(x).tolist() == [np.float32(math.expm1(-2)), 0.5]
    assert F.activation_relu_grad(x, np.array([3.0, 4.0], np.float32)).tolist() == [0.0, 4.0]
    assert F.activation_parameterized_relu(x, np.array([0.5, 9.0], np.float32)).tolist() == [-1.0, 0.5]
    fused = F.element_wise_add1(x, x, fused_activation=dml.ActivationReluOperatorDesc())
    assert fused.tolist() == [0.0, 1.0]


# ----------------------------------------------------------------------------------------------------------------
# Decisions where the pages are silent (README, "Semantics and decisions")
# ----------------------------------------------------------------------------------------------------------------

NAN, INF = math.nan, math.inf
X = [NAN, INF, -INF, -0.0, 0.0, -2.0, 3.0]
DECISIONS = [  # (operator, fields, inputs X, expected outputs: exact float32 values, signs of zero included)
    (OT.ACTIVATION_RELU, {}, [NAN, INF, 0.0, 0.0, 0.0, 0.0, 3.0]),
    (OT.ACTIVATION_IDENTITY, {}, X),
    (OT.ACTIVATION_ELU, {"alpha": 2}, [NAN, INF, -2.0, -0.0, 0.0, 2 * math.expm1(-2), 3.0]),
    (OT.ACTIVATION_LEAKY_RELU, {"alpha": 0.0}, [NAN, INF, -0.0, -0.0, 0.0, -0.0, 3.0]),
    (OT.ACTIVATION_LINEAR, {"alpha": 0.0, "beta": 1.5}, [NAN, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5]),
    (OT.ACTIVATION_PARAMETRIC_SOFTPLUS, {"alpha": 0.0, "beta": 1}, [NAN, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    (OT.ACTIVATION_SCALED_ELU, {"alpha": 1, "gamma": 0.0}, [NAN, 0.0, -0.0, -0.0, 0.0, -0.0, 0.0]),
    (OT.ACTIVATION_SIGMOID, {}, [NAN, 1.0, 0.0, 0.5, 0.5, 1 / (1 + math.exp(2)), 1 / (1 + math.exp(-3))]),
    (OT.ACTIVATION_SOFTSIGN, {}, [NAN, 1.0, -1.0, -0.0, 0.0, -2 / 3, 0.75]),
    (OT.ACTIVATION_TANH, {}, [NAN, 1.0, -1.0, -0.0, 0.0, math.tanh(-2), math.tanh(3)]),
    (OT.ACTIVATION_THRESHOLDED_RELU, {"alpha": -5}, [NAN, INF, 0.0, -0.0, 0.0, -2.0, 3.0]),
    (OT.ACTIVATION_SHRINK, {"bias": 1, "threshold": 1.5}, [NAN, INF, -INF, 0.0, 0.0, -1.0, 2.0]),
    (OT.ACTIVATION_SHRINK, {"bias": 0, "threshold": -1}, [NAN, INF, -INF, -0.0, 0.0, -2.0, 3.0]),  # first line wins
    (OT.ACTIVATION_CELU, {"alpha": 1}, [NAN, INF, -1.0, 0.0, 0.0, math.expm1(-2), 3.0]),
    (OT.ACTIVATION_CELU, {"alpha": 0.0}, [NAN, INF, 0.0, 0.0, 0.0, 0.0, 3.0]),  # the limit: RELU
    (OT.ACTIVATION_GELU, {}, [NAN, INF, -0.0, -0.0, 0.0, -math.erfc(math.sqrt(2)), 1.5 * math.erfc(-3 / 2**0.5)]),
    (OT.ACTIVATION_SWISH, {"sigmoid_input_scale": 1}, [NAN, INF, -0.0, -0.0, 0.0, -2 / (1 + math.exp(2)),
                                                         3 / (1 + math.exp(-3))]),
    (OT.ACTIVATION_SWISH, {"sigmoid_input_scale": 0.0}, [NAN, INF, -INF, -0.0, 0.0, -1.0, 1.5]),
    (OT.ACTIVATION_HARD_SWISH, {"alpha": 1 / 6, "beta": 0.5}, [NAN, INF, -0.0, -0.0, 0.0,
                                                               -2 * (0.5 - 2 * np.float32(1 / 6).item()), 3.0]),
    (OT.ACTIVATION_SOFTPLUS, {"steepness": 1}, [NAN, INF, 0.0, math.log(2), math.log(2), math.log1p(math.exp(-2)),
                                                3 + math.log1p(math.exp(-3))]),
]  # fmt: skip


@pytest.mark.parametrize("op, fields, expected", DECISIONS, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("data_type", [F32, F16])
def test_decisions_where_the_pages_are_silent(op, fields, expected, data_type):
    dtype = np.float32 if data_type == F32 else np.float16
    x = np.array(X, dtype)
    desc = activation(op, data_type, x.shape, **fields)
    (got,) = execute(desc, [x])
    want = np.array(expected, np.float64).astype(dtype)
    assert got.tobytes() == want.tobytes(), (got, want)
    (reference,) = CASES[op].reference(desc, [x])  # the independent reference states the same decisions
    reference[np.isnan(reference)] = np.nan  # (its NaN signs travel as Python's do)
    assert reference.astype(dtype).tobytes() == want.tobytes()


def test_softplus_steepness_below_1_only_from_feature_level_6_4():
    desc = activation(OT.ACTIVATION_SOFTPLUS, steepness=0.5)
    assert validate(desc, FL.FL_6_3) == [
        "DML_OPERATOR_ACTIVATION_SOFTPLUS: Steepness is 0.5, but it must be at least 1; DML_FEATURE_LEVEL_6_4 and "
        "above allow it"
    ]
    assert validate(activation(OT.ACTIVATION_SOFTPLUS, steepness=float("nan")), FL.FL_6_3)  # NaN is not >= 1
    assert validate(desc, FL.FL_6_4) == []
    x = np.array([[-1.0, 0.0, 2.0], [INF, -INF, NAN]], np.float32)
    expected = [[2 * math.log1p(math.exp(-0.5)), 2 * math.log(2), 2 * (1 + math.log1p(math.exp(-1)))], [INF, 0, NAN]]
    np.testing.assert_array_equal(execute(desc, [x])[0], np.array(expected, np.float32))
    zero = execute(activation(OT.ACTIVATION_SOFTPLUS, steepness=0.0), [x])[0]  # ln 2 / 0
    assert zero[0].tolist() == [INF] * 3 and math.isnan(zero[1, 2])
    negative = execute(activation(OT.ACTIVATION_SOFTPLUS, steepness=-1.0), [x])[0]  # -ln(1 + e^-x)
    np.testing.assert_allclose(negative[0], [-math.log1p(math.e), -math.log(2), -math.log1p(math.exp(-2))], 1e-7)


def test_relu_grad_nan_rules():
    x = np.array([NAN, -1.0, 2.0, -0.0, 1.0], np.float32)
    dy = np.array([5.0, NAN, NAN, 7.0, -0.0], np.float32)
    (got,) = execute(dml.ActivationReluGradOperatorDesc(
        input_tensor=tensor_desc(F32, (5,)), input_gradient_tensor=tensor_desc(F32, (5,)),
        output_gradient_tensor=tensor_desc(F32, (5,))), [x, dy])  # fmt: skip
    assert bits(got).tolist() == bits(np.array([NAN, 0.0, NAN, 0.0, -0.0], np.float32)).tolist()


def test_integer_decisions():
    prelu = dml.ActivationParameterizedReluOperatorDesc(
        input_tensor=tensor_desc(T.INT8, (4,)), slope_tensor=tensor_desc(T.INT8, (4,)),
        output_tensor=tensor_desc(T.INT8, (4,)))  # fmt: skip
    x, slope = np.array([-128, -3, 5, -1], np.int8), np.array([-128, 100, -7, -128], np.int8)
    assert execute(prelu, [x, slope])[0].tolist() == [0, -44, 5, -128]  # 16384 and -300 and 128 wrap
    shrink = activation(OT.ACTIVATION_SHRINK, T.UINT8, (3,), bias=5, threshold=1)
    assert execute(shrink, [np.array([3, 200, 1], np.uint8)])[0].tolist() == [0, 195, 0]  # 3 - 5 saturates to 0
    shrink = activation(OT.ACTIVATION_SHRINK, T.INT32, (4,), bias=1e-30, threshold=1)
    got = execute(shrink, [np.array([5, -5, 2**31 - 1, -(2**31)], np.int32)])[0]
    assert got.tolist() == [4, -4, 2**31 - 2, -(2**31) + 1]  # the exact result, truncated toward zero
    shrink = activation(OT.ACTIVATION_SHRINK, T.INT8, (2,), bias=-20.5, threshold=0)
    assert execute(shrink, [np.array([120, -120], np.int8)])[0].tolist() == [127, -128]  # saturated
    relu = activation(OT.ACTIVATION_RELU, T.INT16, (3,))
    assert execute(relu, [np.array([-32768, 0, 7], np.int16)])[0].tolist() == [0, 0, 7]


def test_fusable_activation_needs_its_tensors_when_not_fused():
    assert validate(dml.ActivationReluOperatorDesc()) == [
        "DML_OPERATOR_ACTIVATION_RELU: InputTensor is NULL; only a fused activation has no tensors",
        "DML_OPERATOR_ACTIVATION_RELU: OutputTensor is NULL; only a fused activation has no tensors",
    ]


# ----------------------------------------------------------------------------------------------------------------
# Layouts: in place, strided, broadcast slope
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", [t for t in UNARY_FAMILY if dml.REGISTRY[t].in_place], ids=lambda t: t.name)
@pytest.mark.parametrize("data_type", [F32, F16])
def test_in_place_equals_out_of_place(op, data_type):
    rng = rng_for(op.name, data_type, "in place")
    desc = make_desc(CASES[op], (3, 5), {"InputTensor": data_type, "OutputTensor": data_type}, rng)
    x = activation_values("InputTensor", np.dtype(np.float32 if data_type == F32 else np.float16), (3, 5), rng)
    (expected,) = execute(desc, [x.copy()], dml.Device().kernels)  # the default backend: compiled ones round their way
    device = dml.Device()
    (got,) = device.compile_operator(device.create_operator(desc)).execute([x], [x])
    assert np.shares_memory(got, x) and x.tobytes() == expected.tobytes()


def test_parameterized_relu_slope_broadcast_through_strides():
    x = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    slope = np.array([0.5, -1.0, 2.0, 0.0], np.float32)  # one slope per column, repeated down the rows
    desc = dml.ActivationParameterizedReluOperatorDesc(
        input_tensor=tensor_desc(F32, (3, 4)), slope_tensor=tensor_desc(F32, (3, 4), (0, 1)),
        output_tensor=tensor_desc(F32, (3, 4)))  # fmt: skip
    device = dml.Device()
    (got,) = device.compile_operator(device.create_operator(desc)).execute([x, dml.BufferBinding(slope)])
    np.testing.assert_array_equal(got, np.where(x >= 0, x, x * slope))


@settings(max_examples=40, deadline=None)
@given(
    op=st.sampled_from(UNARY_FAMILY),
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    pads=st.lists(st.integers(0, 2), min_size=4, max_size=4),
    reverse=st.booleans(),
    half=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_strided_layouts_give_the_packed_result(op, sizes, pads, reverse, half, seed):
    """Any layout of input and output (padded rows, reversed dimension order) gives the packed result's bits."""
    data_type, dtype = (F16, np.float16) if half else (F32, np.float32)
    rng = np.random.default_rng(seed)
    case = CASES[op]
    params = case.params(len(sizes), rng)
    packed = make_desc(case, sizes, {"InputTensor": data_type, "OutputTensor": data_type}, rng, params=params)
    x = activation_values("InputTensor", np.dtype(dtype), tuple(sizes), rng)
    (expected,) = execute(packed, [x], dml.Device().kernels)  # the default backend, packed
    order = list(range(len(sizes)))[::-1] if reverse else list(range(len(sizes)))
    strides, step = [0] * len(sizes), 1
    for d, pad in zip(reversed(order), pads):  # the last listed dimension varies fastest
        strides[d], step = step, step * (sizes[d] + pad)
    strided = dml.BufferTensorDesc(data_type, tuple(sizes), tuple(strides))
    desc = make_desc(case, sizes, {"InputTensor": data_type, "OutputTensor": data_type}, rng, params=params,
                     strides={"InputTensor": strided.strides, "OutputTensor": strided.strides})  # fmt: skip
    raw_in = np.zeros(strided.total_tensor_size_in_bytes, np.uint8)
    view = np.lib.stride_tricks.as_strided(
        raw_in.view(dtype), tuple(sizes), tuple(s * np.dtype(dtype).itemsize for s in strides)
    )
    view[...] = x
    raw_out = np.zeros_like(raw_in)
    device = dml.Device()
    (got,) = device.compile_operator(device.create_operator(desc)).execute(
        [dml.BufferBinding(raw_in)], [dml.BufferBinding(raw_out)]
    )
    assert np.ascontiguousarray(got).tobytes() == expected.tobytes()


# ----------------------------------------------------------------------------------------------------------------
# Fused activations
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", FUSABLE, ids=lambda t: t.name)
@pytest.mark.parametrize("data_type", [F32, F16])
def test_fused_equals_add1_then_the_activation_bit_for_bit(op, data_type):
    rng = rng_for(op.name, data_type, "fused")
    dtype = np.dtype(np.float32 if data_type == F32 else np.float16)
    sizes = (4, 3, 5)
    a, b = (activation_values(name, dtype, sizes, rng) for name in ("ATensor", "BTensor"))
    for _ in range(3):  # three draws of the activation's parameters
        fields = CASES[op].params(len(sizes), rng)
        fused = dml.REGISTRY[op].desc_class(**fields)
        (together,) = execute(add1(fused, data_type, sizes), [a, b])
        (total,) = execute(add1(None, data_type, sizes), [a, b])
        (apart,) = execute(activation(op, data_type, sizes, **fields), [total])
        assert bits(together).tolist() == bits(apart).tolist(), fields
        # In place too: the output bound to ATensor.
        device = dml.Device()
        host = device.compile_operator(device.create_operator(add1(fused, data_type, sizes)))
        a_copy = a.copy()
        host.execute([a_copy, b], [a_copy])
        assert a_copy.tobytes() == apart.tobytes()


NON_FUSABLE = [t for t in dml.REGISTRY if t not in FUSABLE]


@pytest.mark.parametrize("op", NON_FUSABLE, ids=lambda t: t.name)
def test_non_fusable_operators_are_refused_by_name(op):
    case, s = CASES[op], dml.REGISTRY[op]
    rng = rng_for(op.name, "refused")
    rows, fixed = s.support, {}
    if isinstance(s.support, SupportBy):  # rows chosen by a field (REDUCE's Function): take the first group
        values, rows = next(iter(s.support.groups.items()))
        fixed = {s.field(s.support.field).name: values[0]}
    rank = max(cell.min_dims for cell in rows[0].tensors.values())
    nested = make_desc(case, (2,) * rank, types_for(rows[0], 0), rng, params={**case.params(rank, rng), **fixed})
    problems = validate(add1(nested))
    fusable = ", ".join(t.name for t in FUSABLE)
    assert problems == [
        f"DML_OPERATOR_ELEMENT_WISE_ADD1: FusedActivation is {op.c_name}, which cannot be fused (fusable: {fusable})"
    ]
    with pytest.raises(dml.InvalidArgumentError, match="FusedActivation is .* which cannot be fused"):
        dml.Device().create_operator(add1(nested))


def test_fused_activation_rules_name_the_host_the_field_and_the_rule():
    relu_with_tensors = activation(OT.ACTIVATION_RELU)
    assert validate(add1(relu_with_tensors)) == [
        f"DML_OPERATOR_ELEMENT_WISE_ADD1: FusedActivation: DML_OPERATOR_ACTIVATION_RELU.{name} must be NULL (None) "
        "in a fused activation; the host operator's tensors are used"
        for name in ("InputTensor", "OutputTensor")
    ]
    softplus = dml.ActivationSoftplusOperatorDesc(steepness=0.5)
    assert validate(add1(softplus), FL.FL_6_3) == [
        "DML_OPERATOR_ELEMENT_WISE_ADD1: FusedActivation: DML_OPERATOR_ACTIVATION_SOFTPLUS: Steepness is 0.5, but "
        "it must be at least 1; DML_FEATURE_LEVEL_6_4 and above allow it"
    ]
    assert validate(add1(softplus), FL.FL_6_4) == []
    gelu = dml.ActivationGeluOperatorDesc()
    assert validate(add1(gelu), FL.FL_5_0) == [
        "DML_OPERATOR_ELEMENT_WISE_ADD1: FusedActivation: DML_OPERATOR_ACTIVATION_GELU: the operator was introduced "
        "in DML_FEATURE_LEVEL_5_1, but the device's feature level is DML_FEATURE_LEVEL_5_0"
    ]
    int_output = add1(dml.ActivationEluOperatorDesc(alpha=1.0), T.INT32)
    assert (
        "DML_OPERATOR_ELEMENT_WISE_ADD1: FusedActivation is set, but OutputTensor.DataType is INT32; a fused "
        "activation needs a FLOAT32 or FLOAT16 output"
    ) in validate(int_output)
    with pytest.raises(dml.InvalidArgumentError, match="FusedActivation must be an activation operator descriptor"):
        add1("RELU")


# The JSON runner: DxDispatch's two spellings of a nested descriptor.
@pytest.fixture
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def output_of(capsys, tmp_path, content):
    status, out, err = run_model(capsys, tmp_path, content)
    assert (status, err) == (0, "")
    return out


def add1_model(fused):
    desc = {name: tensor("FLOAT32", [3]) for name in ("ATensor", "BTensor", "OutputTensor")}
    return model(
        {"A": buffer("FLOAT32", [1, 2, 3]), "B": buffer("FLOAT32", [5, 8, -5]),
         "Out": buffer("FLOAT32", {"valueCount": 3, "value": 0})},
        {"add": {"type": "ELEMENT_WISE_ADD1", "desc": desc | ({"FusedActivation": fused} if fused else {})}},
        [dispatch("add", ATensor="A", BTensor="B", OutputTensor="Out"), *prints("Out")],
    )  # fmt: skip


@pytest.mark.parametrize(
    "fused, printed",
    [
        ({"Type": "ACTIVATION_ELU", "Alpha": 0.5}, "6, 10, -0.432332"),  # collapsed, as dml_element_wise_add1.json
        ({"Type": "ACTIVATION_ELU", "Desc": {"Alpha": 0.5}}, "6, 10, -0.432332"),
        ({"type": "DML_OPERATOR_ACTIVATION_ELU", "desc": {"Alpha": 0.5}}, "6, 10, -0.432332"),
        ({"Type": "ACTIVATION_RELU"}, "6, 10, 0"),
        ({"Type": "ACTIVATION_RELU", "Desc": {}}, "6, 10, 0"),
        ({"Type": "ACTIVATION_LINEAR", "Alpha": 2, "Beta": "-inf"}, "-inf, -inf, -inf"),
        (None, "6, 10, -2"),
    ],
)
def test_json_runner_reads_fused_activations(fused, printed, capsys, tmp_path, in_tmp_path):
    assert output_of(capsys, tmp_path, add1_model(fused)) == f"Resource 'Out': {printed}\n"


def test_json_runner_fused_activation_errors(capsys, tmp_path, in_tmp_path):
    status, out, err = run_model(capsys, tmp_path, add1_model({"Type": "ACTIVATION_SWISH", "SigmoidInputScale": 1}))
    assert status != 0 and "DML_OPERATOR_ACTIVATION_SWISH cannot be fused (fusable: ACTIVATION_ELU" in err
    status, out, err = run_model(capsys, tmp_path, add1_model({"Type": "ACTIVATION_ELU"}))
    assert status != 0 and "Alpha" in err
    tensors = {"InputTensor": tensor("FLOAT32", [3]), "Alpha": 0.5}  # DxDispatch never reads a fused one's tensors
    status, out, err = run_model(capsys, tmp_path, add1_model({"Type": "ACTIVATION_ELU", "Desc": tensors}))
    assert status == 0 and out == "Resource 'Out': 6, 10, -0.432332\n"
    assert "has no field 'InputTensor'; it is ignored" in err


# ----------------------------------------------------------------------------------------------------------------
# The float64 erf behind GELU
# ----------------------------------------------------------------------------------------------------------------


def test_erf_and_erfc_against_the_math_module():
    x = np.concatenate([np.linspace(-27, 27, 20001), np.geomspace(1e-300, 5, 2001), -np.geomspace(1e-300, 5, 2001)])
    for ours, theirs, floor in ((erfc, math.erfc, 1e-300), (erf, math.erf, 0.0)):
        got, want = ours(x), np.array([theirs(v) for v in x.tolist()])
        check = np.abs(want) > floor
        assert np.all(np.abs(got[check] - want[check]) <= 1e-13 * np.abs(want[check])), ours.__name__
    assert erfc(np.array([INF, -INF, 40.0])).tolist() == [0.0, 2.0, 0.0]
    assert np.isnan(erfc(np.array([NAN]))[0]) and np.isnan(erf(np.array([NAN]))[0])
    assert bits(erf(np.array([-0.0]))).tolist() == bits(np.array([-0.0])).tolist()


def test_gelu_float32_is_within_2_ulp_on_a_dense_grid():
    """Every float32 in steps over [-12, 6] (where GELU's tail is subnormal or rounding is hardest) within 2 ulp
    (the compiled float32 kernel; measured: about 0.01% at 2 ulp), and mostly correctly rounded."""
    x = np.linspace(-12, 6, 40001).astype(np.float32)
    (got,) = execute(activation(OT.ACTIVATION_GELU, F32, x.shape), [x])
    want = np.array([act.gelu(v) for v in x.astype(np.float64).tolist()])
    act.assert_within_ulps(got, want, 2)
    assert np.count_nonzero(got != want.astype(np.float32)) <= len(x) // 4


@pytest.mark.parametrize("op", FUSABLE, ids=lambda t: t.name)
def test_fused_activations_round_trip_through_the_json_runner(op):
    """desc_json writes a fused activation as a nested {"type", "desc"} without tensors; it reads back equal."""
    rng = rng_for(op.name, "json")
    host = add1(dml.REGISTRY[op].desc_class(**CASES[op].params(2, rng)))
    written = desc_json(host)
    assert "InputTensor" not in written["desc"]["FusedActivation"]["desc"]
    text = json.dumps({"dispatchables": {"d": written}})
    node = Node(jsonc.parse(text, "model.json"), ("dispatchables", "d"), json.loads(text)["dispatchables"]["d"])
    assert read_operator_desc(node) == host
