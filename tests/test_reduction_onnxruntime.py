"""onnxruntime (CPU) as an independent oracle for REDUCE, ARGMIN and SOFTMAX1/SOFTMAX, where ONNX coincides.

ONNX op (opset 18, keepdims=1)  <-> DirectML
ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
ReduceSumSquare                 <-> REDUCE with SUM, AVERAGE, MAX, MIN, MULTIPLY, L1, L2, LOG_SUM, LOG_SUM_EXP,
                                    SUM_SQUARE over the same axes (any number, listed in any order)
ArgMin (one axis, select_last_index 0/1) <-> ARGMIN INCREASING/DECREASING
Softmax (one axis)              <-> ACTIVATION_SOFTMAX1 on that axis; ACTIVATION_SOFTMAX on the last

Table-driven: each row names the ONNX op, the DirectML call and the data types compared. onnxruntime computes
float32 in float32, so floats are compared within a tolerance scaled to the sum of magnitudes; integer results
and indices must match exactly (values are small, so no sum wraps). NaN is kept out (the oracles disagree on it).
"""

from __future__ import annotations

import functools

import numpy as np
import onnxruntime
import pytest
from cases import rng_for
from onnx import TensorProto, helper

import opendml as dml
from opendml import functional as F

RF = dml.ReduceFunction


@functools.cache
def _session(op: str, attrs: tuple, dtype: str, with_axes: bool) -> onnxruntime.InferenceSession:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    inputs = [helper.make_tensor_value_info("x", elem, None)]
    if with_axes:
        inputs.append(helper.make_tensor_value_info("axes", TensorProto.INT64, [None]))
    out_elem = TensorProto.INT64 if op == "ArgMin" else elem
    node = helper.make_node(op, [i.name for i in inputs], ["y"], **dict(attrs))
    graph = helper.make_graph([node], "oracle", inputs, [helper.make_tensor_value_info("y", out_elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def ort(op: str, x: np.ndarray, axes=None, **attrs) -> np.ndarray:
    feeds = {"x": x} if axes is None else {"x": x, "axes": np.array(axes, np.int64)}
    (result,) = _session(op, tuple(sorted(attrs.items())), x.dtype.str, axes is not None).run(["y"], feeds)
    return result


FLOATS, INTS = (np.float32,), (np.int32, np.int64)
# function -> (ONNX op, data types compared, values: "any" or "positive")
REDUCERS = {
    RF.SUM: ("ReduceSum", FLOATS + INTS, "any"),
    RF.AVERAGE: ("ReduceMean", FLOATS, "any"),
    RF.MAX: ("ReduceMax", FLOATS + INTS, "any"),
    RF.MIN: ("ReduceMin", FLOATS + INTS, "any"),
    RF.MULTIPLY: ("ReduceProd", FLOATS + INTS, "positive"),
    RF.L1: ("ReduceL1", FLOATS + INTS, "any"),
    RF.L2: ("ReduceL2", FLOATS, "any"),
    RF.LOG_SUM: ("ReduceLogSum", FLOATS, "positive"),
    RF.LOG_SUM_EXP: ("ReduceLogSumExp", FLOATS, "any"),
    RF.SUM_SQUARE: ("ReduceSumSquare", FLOATS + INTS, "any"),
}


def _data(rng, shape, dtype, values):
    if np.issubdtype(dtype, np.integer):
        low = 1 if values == "positive" else -3
        return rng.integers(low, 4, shape).astype(dtype)  # small: no sum leaves the type
    if values == "positive":
        return rng.uniform(0.5, 2.0, shape).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _random_problems(key, count=12):
    rng = rng_for(*key)
    for _ in range(count):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(s) for s in rng.integers(1, 4, rank))
        axes = tuple(int(a) for a in rng.permutation(rank)[: int(rng.integers(1, rank + 1))])
        yield rng, shape, axes


def _close(got: np.ndarray, want: np.ndarray, x: np.ndarray, axes) -> None:
    """float32 against onnxruntime's float32 accumulation: relative 1e-5, or 1e-6 of the sum of magnitudes."""
    scale = np.abs(x.astype(np.float64)).sum(axis=tuple(axes), keepdims=True) + 1
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.all(np.abs(got.astype(np.float64) - want) <= 1e-5 * np.abs(want) + 1e-6 * scale), (got, want)


@pytest.mark.parametrize("function", list(REDUCERS), ids=lambda f: f.name)
def test_reduce_agrees_with_onnxruntime(function):
    op, dtypes, values = REDUCERS[function]
    for dtype in dtypes:
        for rng, shape, axes in _random_problems((function.name, dtype.__name__)):
            x = _data(rng, shape, dtype, values)
            if function == RF.MULTIPLY and np.issubdtype(dtype, np.integer):
                x = np.minimum(x, 2)  # 2**64 would wrap differently in onnxruntime's int32
            got = F.reduce(x, function, axes)
            want = ort(op, x, sorted(axes), keepdims=1)
            if np.issubdtype(dtype, np.integer) or function in (RF.MAX, RF.MIN):
                np.testing.assert_array_equal(got, want)
                assert got.dtype == want.dtype
            else:
                _close(got, want, x, axes)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("last", [False, True])
def test_argmin_agrees_with_onnxruntime(dtype, last):
    for rng, shape, _ in _random_problems(("ArgMin", dtype.__name__, last)):
        x = rng.integers(0, 3, shape).astype(dtype)  # many ties, so the direction matters
        for axis in range(len(shape)):
            direction = dml.AxisDirection.DECREASING if last else dml.AxisDirection.INCREASING
            got = F.argmin(x, (axis,), axis_direction=direction, output_data_type=dml.TensorDataType.INT64)
            np.testing.assert_array_equal(got, ort("ArgMin", x, axis=axis, keepdims=1, select_last_index=int(last)))


def test_softmax_agrees_with_onnxruntime():
    for rng, shape, _ in _random_problems(("Softmax",)):
        x = (rng.standard_normal(shape) * 5).astype(np.float32)
        for axis in range(len(shape)):
            want = ort("Softmax", x, axis=axis)
            np.testing.assert_allclose(F.activation_softmax1(x, (axis,)), want, rtol=2e-6, atol=1e-7)
        if len(shape) <= 2:
            np.testing.assert_allclose(
                F.activation_softmax(x), ort("Softmax", x, axis=len(shape) - 1), rtol=2e-6, atol=1e-7
            )
