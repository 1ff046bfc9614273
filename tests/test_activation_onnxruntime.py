"""onnxruntime (CPU) against the activation family, where its operator coincides (one-node models, table-driven).

onnxruntime computes FLOAT32 in float32 with its own approximations, so it is no correctly rounded oracle: where
a formula cancels (ELU, CELU, SELU near 0, GELU's 1 + erf in the negative tail, HARD_SWISH near -3) or underflows
(its Sigmoid gives 0 below about -17), its error is absolute, near 2**-20. The agreement bound is therefore
``rtol = 4 * 2**-23, atol = 2**-20`` for FLOAT32 and 2 ulps for FLOAT16 (measured: at most 2). Where onnxruntime's
results differ by rule rather than by rounding (NaN, infinities, signed zeros), the cases are listed in
``EXCEPTIONS`` and held exactly, so a change on either side shows.
"""

from __future__ import annotations

import functools
import math

import activation_reference as act
import numpy as np
import onnxruntime
import pytest
from cases import CASES, execute, make_desc, rng_for
from onnx import helper

import opendml as dml

OT, T = dml.OperatorType, dml.TensorDataType
BOTH, F32_ONLY = (T.FLOAT32, T.FLOAT16), (T.FLOAT32,)  # onnxruntime's CPU Softplus, Softsign, Celu lack FLOAT16

# DirectML operator -> (ONNX op, opset, attributes from the descriptor, fixed descriptor fields, data types).
ONNX = {
    OT.ACTIVATION_RELU: ("Relu", 14, lambda d: {}, None, BOTH),
    OT.ACTIVATION_LEAKY_RELU: ("LeakyRelu", 16, lambda d: {"alpha": d.alpha}, None, BOTH),
    OT.ACTIVATION_ELU: ("Elu", 6, lambda d: {"alpha": d.alpha}, None, BOTH),
    OT.ACTIVATION_SCALED_ELU: ("Selu", 6, lambda d: {"alpha": d.alpha, "gamma": d.gamma}, None, BOTH),
    OT.ACTIVATION_SIGMOID: ("Sigmoid", 13, lambda d: {}, None, BOTH),
    OT.ACTIVATION_TANH: ("Tanh", 13, lambda d: {}, None, BOTH),
    OT.ACTIVATION_SOFTPLUS: ("Softplus", 1, lambda d: {}, {"steepness": 1.0}, F32_ONLY),
    OT.ACTIVATION_SOFTSIGN: ("Softsign", 1, lambda d: {}, None, F32_ONLY),
    OT.ACTIVATION_THRESHOLDED_RELU: ("ThresholdedRelu", 10, lambda d: {"alpha": d.alpha}, None, BOTH),
    OT.ACTIVATION_SHRINK: ("Shrink", 9, lambda d: {"bias": d.bias, "lambd": d.threshold}, {"threshold": 0.75}, BOTH),
    OT.ACTIVATION_CELU: ("Celu", 12, lambda d: {"alpha": d.alpha}, {"alpha": 1.5}, F32_ONLY),
    OT.ACTIVATION_GELU: ("Gelu", 20, lambda d: {}, None, BOTH),
    OT.ACTIVATION_HARD_SWISH: ("HardSwish", 14, lambda d: {}, {"alpha": 1 / 6, "beta": 0.5}, BOTH),
    OT.ACTIVATION_IDENTITY: ("Identity", 16, lambda d: {}, None, BOTH),
    OT.ACTIVATION_PARAMETERIZED_RELU: ("PRelu", 16, lambda d: {}, None, BOTH),
}
NUMPY = {T.FLOAT32: np.float32, T.FLOAT16: np.float16}


@functools.cache
def _session(op: str, opset: int, attrs: tuple, dtype: str, inputs: int) -> onnxruntime.InferenceSession:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    names = ["x", "slope"][:inputs]
    node = helper.make_node(op, names, ["y"], **dict(attrs))
    graph = helper.make_graph(
        [node],
        "activation_oracle",
        [helper.make_tensor_value_info(n, elem, None) for n in names],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def ort(desc, inputs: list[np.ndarray]) -> np.ndarray:
    op, opset, attrs, _, _ = ONNX[desc.operator_type]
    # Attributes are ONNX floats (float32): the descriptor's FLOATs as C holds them.
    attributes = tuple(sorted((k, float(np.float32(v))) for k, v in attrs(desc).items()))
    session = _session(op, opset, attributes, inputs[0].dtype.str, len(inputs))
    return session.run(["y"], dict(zip(["x", "slope"], inputs)))[0]


def descriptor(op, data_type, sizes, rng):
    case = CASES[op]
    fixed = ONNX[op][3] or {}
    params = {**case.params(len(sizes), rng), **fixed}
    names = {spec.c_name for spec in dml.REGISTRY[op].tensor_fields}
    return make_desc(case, sizes, dict.fromkeys(names, data_type), rng, params=params)


AGREEMENT = [pytest.param(op, t, id=f"{op.name}-{t.name}") for op, entry in ONNX.items() for t in entry[4]]


@pytest.mark.parametrize("op, data_type", AGREEMENT)
def test_onnxruntime_agrees_on_finite_values(op, data_type):
    rng = rng_for(op.name, data_type, "onnxruntime")
    dtype = NUMPY[data_type]
    for _ in range(4):  # four draws of the parameters
        desc = descriptor(op, data_type, (6, 50), rng)
        inputs = [(rng.standard_normal((6, 50)) * 4).astype(dtype) for _ in dml.REGISTRY[op].input_fields]
        (ours,) = execute(desc, inputs)
        theirs = ort(desc, inputs)
        if data_type == T.FLOAT32:
            np.testing.assert_allclose(ours, theirs, rtol=4 * 2.0**-23, atol=2.0**-20)
        else:
            act.assert_within_ulps(ours, theirs.astype(np.float64), 2, f"{op.name} vs onnxruntime")


# Where onnxruntime differs by rule: (operator, fields, x, ours, onnxruntime's), FLOAT32, exact bits.
NAN, INF = math.nan, math.inf
EXCEPTIONS = [
    (OT.ACTIVATION_RELU, {}, -0.0, 0.0, -0.0),  # ours: the constant 0; onnxruntime's max keeps -0.0
    (OT.ACTIVATION_SCALED_ELU, {"alpha": 1.6732632, "gamma": 1.050701}, -0.0, -0.0, 0.0),
    (OT.ACTIVATION_SOFTSIGN, {}, INF, 1.0, NAN),  # ours: the limit; onnxruntime: inf / inf
    (OT.ACTIVATION_SOFTSIGN, {}, -INF, -1.0, NAN),
    (OT.ACTIVATION_THRESHOLDED_RELU, {"alpha": 0.5}, NAN, NAN, 0.0),  # ours: NaN propagates
    (OT.ACTIVATION_SHRINK, {"bias": 0.5, "threshold": 1.0}, NAN, NAN, 0.0),
    (OT.ACTIVATION_GELU, {}, -INF, -0.0, NAN),  # ours: the limit; onnxruntime: -inf * 0
    (OT.ACTIVATION_HARD_SWISH, {"alpha": 1 / 6, "beta": 0.5}, -INF, -0.0, NAN),
    (OT.ACTIVATION_SIGMOID, {}, -30.0, 1 / (1 + math.exp(30)), 0.0),  # onnxruntime's float32 sigmoid underflows
]


@pytest.mark.parametrize("op, fields, x, ours, theirs", EXCEPTIONS, ids=lambda v: getattr(v, "name", None))
def test_onnxruntime_exceptions(op, fields, x, ours, theirs):
    t = dml.BufferTensorDesc(T.FLOAT32, (1,))
    desc = dml.REGISTRY[op].desc_class(input_tensor=t, output_tensor=t, **fields)
    inputs = [np.array([x], np.float32)]
    (got,) = execute(desc, inputs)
    assert got.tobytes() == np.array([ours], np.float32).tobytes()
    assert ort(desc, inputs).astype(np.float64).tobytes() == np.array([theirs], np.float64).tobytes() or (
        math.isnan(theirs) and np.isnan(ort(desc, inputs)[0])
    )
