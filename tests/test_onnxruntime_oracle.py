"""onnxruntime (CPU) as an oracle nobody on the team wrote, where its semantics coincide with DirectML's.

ONNX op        <-> DirectML operator
ArgMax-13      <-> ARGMAX, one axis, keepdims=1, select_last_index 0/1 = INCREASING/DECREASING, INT64 output
Hardmax-13     <-> ACTIVATION_HARDMAX1, one axis
LogSoftmax-13  <-> ACTIVATION_LOG_SOFTMAX1, one axis
Where-16       <-> ELEMENT_WISE_IF, bool(condition != 0), same shapes (no broadcasting)
HardSigmoid-6  <-> ACTIVATION_HARD_SIGMOID

Several DirectML axes are checked with the reshape trick: move the reduced axes (ascending) to the end, flatten
them into one, run the single-axis ONNX op on a 2-D tensor, then undo the reshape and the move. NaN is kept out
of every comparison here: onnxruntime's ArgMax/Hardmax skip NaN, DirectML's contract makes NaN the maximum
(see /work/shared/reference/test-oracles.md section 3). onnxruntime is a hard dependency of the test extra:
these tests are never skipped.
"""

from __future__ import annotations

import functools
import math
import zlib

import numpy as np
import onnx.defs
import onnxruntime
import pytest
from onnx import TensorProto, helper

import opendml as dml
from opendml import AxisDirection, TensorDataType

T = TensorDataType
DEVICE = dml.Device()

# ----------------------------------------------------------------------------------------------------------------
# onnxruntime sessions, one per (op, attributes, dtype)
# ----------------------------------------------------------------------------------------------------------------

# The opset imported by each model. HardSigmoid is imported at 13, where the operator in force is still
# HardSigmoid-6 (its next version is 22); importing opset 6 itself makes onnxruntime's optimizer log warnings.
_OPSETS = {"ArgMax": 13, "Hardmax": 13, "LogSoftmax": 13, "Where": 16, "HardSigmoid": 13}


@functools.cache
def _session(op: str, attrs: tuple, dtype: str) -> onnxruntime.InferenceSession:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    if op == "Where":
        inputs = [
            helper.make_tensor_value_info("condition", TensorProto.BOOL, None),
            helper.make_tensor_value_info("a", elem, None),
            helper.make_tensor_value_info("b", elem, None),
        ]
    else:
        inputs = [helper.make_tensor_value_info("x", elem, None)]
    out_elem = TensorProto.INT64 if op == "ArgMax" else elem
    node = helper.make_node(op, [i.name for i in inputs], ["y"], **dict(attrs))
    graph = helper.make_graph(
        [node], f"{op.lower()}_oracle", inputs, [helper.make_tensor_value_info("y", out_elem, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSETS[op])])
    model.ir_version = 8  # opset 16 needs IR 8; keeps the model loadable by older onnxruntime too
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def ort(op: str, inputs: dict, dtype: np.dtype, **attrs) -> np.ndarray:
    session = _session(op, tuple(sorted(attrs.items())), np.dtype(dtype).str)
    (result,) = session.run(["y"], inputs)
    return result


def ort_argmax(x, axis: int, last: bool) -> np.ndarray:
    return ort("ArgMax", {"x": x}, x.dtype, axis=axis, keepdims=1, select_last_index=int(last))


def ort_hardmax(x, axis: int) -> np.ndarray:
    return ort("Hardmax", {"x": x}, x.dtype, axis=axis)


def ort_log_softmax(x, axis: int) -> np.ndarray:
    return ort("LogSoftmax", {"x": x}, x.dtype, axis=axis)


def ort_where(cond, a, b) -> np.ndarray:
    return ort("Where", {"condition": cond != 0, "a": a, "b": b}, a.dtype)


def ort_hard_sigmoid(x, alpha: float, beta: float) -> np.ndarray:
    return ort("HardSigmoid", {"x": x}, x.dtype, alpha=float(alpha), beta=float(beta))


# The multi-axis trick: reduced axes (ascending) to the end, flattened, one ONNX axis, undone.


def _to_2d(x: np.ndarray, axes):
    reduced = sorted(axes)
    kept = [d for d in range(x.ndim) if d not in reduced]
    moved = np.ascontiguousarray(x.transpose(kept + reduced))
    flat = moved.reshape(math.prod(x.shape[d] for d in kept), math.prod(x.shape[d] for d in reduced))
    return flat, kept + reduced, moved.shape


def _from_2d(y2: np.ndarray, permutation, moved_shape) -> np.ndarray:
    return y2.reshape(moved_shape).transpose(np.argsort(permutation))


def ort_multi_axis(fn, x: np.ndarray, axes) -> np.ndarray:
    flat, permutation, moved_shape = _to_2d(x, axes)
    return _from_2d(fn(flat, 1), permutation, moved_shape)


def ort_argmax_multi_axis(x: np.ndarray, axes, last: bool) -> np.ndarray:
    flat, _, _ = _to_2d(x, axes)
    index = ort_argmax(flat, 1, last)  # (kept elements, 1)
    return index.reshape(tuple(1 if d in set(axes) else s for d, s in enumerate(x.shape)))


# ----------------------------------------------------------------------------------------------------------------
# opendml through the device API
# ----------------------------------------------------------------------------------------------------------------


def _execute(desc, inputs):
    (result,) = DEVICE.compile_operator(DEVICE.create_operator(desc)).execute(list(inputs))
    return np.asarray(result)


def dml_argmax(x, axes, last: bool) -> np.ndarray:
    sizes = tuple(1 if d in set(axes) else s for d, s in enumerate(x.shape))
    direction = AxisDirection.DECREASING if last else AxisDirection.INCREASING
    desc = dml.ArgmaxOperatorDesc(
        input_tensor=dml.BufferTensorDesc.like(x),
        output_tensor=dml.BufferTensorDesc(T.INT64, sizes),
        axes=axes,
        axis_direction=direction,
    )
    return _execute(desc, [x])


def dml_hardmax(x, axes) -> np.ndarray:
    t = dml.BufferTensorDesc.like(x)
    return _execute(dml.ActivationHardmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=axes), [x])


def dml_log_softmax(x, axes) -> np.ndarray:
    t = dml.BufferTensorDesc.like(x)
    return _execute(dml.ActivationLogSoftmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=axes), [x])


def dml_if(cond, a, b) -> np.ndarray:
    t = dml.BufferTensorDesc.like(a)
    desc = dml.ElementWiseIfOperatorDesc(
        condition_tensor=dml.BufferTensorDesc.like(cond), a_tensor=t, b_tensor=t, output_tensor=t
    )
    return _execute(desc, [cond, a, b])


def dml_hard_sigmoid(x, alpha, beta) -> np.ndarray:
    t = dml.BufferTensorDesc.like(x)
    desc = dml.ActivationHardSigmoidOperatorDesc(input_tensor=t, output_tensor=t, alpha=alpha, beta=beta)
    return _execute(desc, [x])


# ----------------------------------------------------------------------------------------------------------------
# Data (seeded; no NaN)
# ----------------------------------------------------------------------------------------------------------------


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _shape(rng, ndim: int, limit: int = 240) -> tuple[int, ...]:
    sizes = [int(s) for s in rng.integers(1, 5, size=ndim)]
    while math.prod(sizes) > limit:
        sizes[sizes.index(max(sizes))] -= 1
    return tuple(sizes)


def _ties(rng, dtype, shape) -> np.ndarray:
    """Few distinct values (so equal maxima are common); for floats also -0.0 next to 0.0."""
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, 5, size=shape).astype(dtype)
    values = rng.integers(-2, 3, size=shape).astype(dtype)
    if dtype.kind == "f":
        values[rng.random(shape) < 0.1] = -0.0
    return values


def _spread(rng, dtype, shape) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        extremes = np.array([info.min, info.max, 0], dtype=dtype)
        pick = rng.random(shape) < 0.3
        values[pick] = rng.choice(extremes, size=int(pick.sum()))
        return values
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _log_softmax_close(got: np.ndarray, oracle: np.ndarray, context: str) -> None:
    assert got.dtype == oracle.dtype == np.float32, context
    assert got.shape == oracle.shape, context
    infinite = np.isinf(oracle)
    assert np.array_equal(got[infinite], oracle[infinite]), context
    finite = ~infinite
    np.testing.assert_allclose(got[finite], oracle[finite], rtol=1e-6, atol=1e-6, err_msg=context)


def _hard_sigmoid_close(got, oracle, x, alpha, beta, context: str) -> None:
    a, b = float(np.float32(alpha)), float(np.float32(beta))
    # Each side is within 2**-22 * (|a x| + |b|) + 2**-24 of the exact value, so they are within twice that.
    allowed = 2 * (2.0**-22 * (np.abs(a * x.astype(np.float64)) + abs(b)) + 2.0**-24)
    error = np.abs(got.astype(np.float64) - oracle.astype(np.float64))
    assert got.dtype == oracle.dtype and got.shape == oracle.shape, context
    assert (error <= allowed).all(), (
        f"{context}: x={x[error > allowed]} got={got[error > allowed]} ort={oracle[error > allowed]}"
    )


# ----------------------------------------------------------------------------------------------------------------
# The oracle agrees with the documented examples (guards against a mis-built graph)
# ----------------------------------------------------------------------------------------------------------------


def test_oracle_sessions_reproduce_documented_examples():
    for op, opset in _OPSETS.items():  # the operator versions these sessions run
        expected = {"ArgMax": 13, "Hardmax": 13, "LogSoftmax": 13, "Where": 16, "HardSigmoid": 6}[op]
        assert onnx.defs.get_schema(op, opset).since_version == expected
    m = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)
    assert ort_argmax(m, 0, last=False).tolist() == [[1, 2, 1]]
    assert ort_argmax(m, 1, last=False).tolist() == [[2], [2], [1]]
    assert ort_argmax_multi_axis(m, [0, 1], last=False).tolist() == [[7]]
    assert ort_argmax(np.array([3, 2, 1, 2, 3], np.float32), 0, last=True).tolist() == [4]
    x = np.array([[[12, 0], [-101, 11]], [[3, 234], [0, -101]]], dtype=np.float32)
    assert ort_hardmax(x, 1).tolist() == [[[1, 0], [0, 1]], [[1, 1], [0, 0]]]
    assert ort_multi_axis(ort_hardmax, x, [0, 2]).tolist() == [[[0, 0], [0, 1]], [[0, 1], [0, 0]]]
    np.testing.assert_allclose(
        ort_multi_axis(ort_log_softmax, x, [0, 2]),
        [[[-222, -234], [-112, -1.670156e-05]], [[-231, 0], [-11.00002, -112]]],
        rtol=1e-6,
        atol=1e-6,  # onnxruntime gives -1.66892e-05 for the -1.670156e-05 entry (a float32 log of 1 + 1.67e-05)
    )
    cond = np.array([[1, 0], [1, 1]], np.uint8)
    a, b = np.array([[1, 2], [3, 4]], np.float32), np.array([[9, 8], [7, 6]], np.float32)
    assert ort_where(cond, a, b).tolist() == [[1, 8], [3, 4]]
    np.testing.assert_allclose(ort_hard_sigmoid(np.array([-1, 0, 1], np.float32), 0.5, 0.6), [0.1, 0.6, 1.0], rtol=1e-6)


# ----------------------------------------------------------------------------------------------------------------
# Single-axis comparisons
# ----------------------------------------------------------------------------------------------------------------

ARGMAX_DTYPES = [np.float32, np.int32, np.int64, np.uint8, np.int8]


@pytest.mark.parametrize("dtype", ARGMAX_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndim", range(1, 9))
def test_argmax_single_axis_matches_onnxruntime(dtype, ndim):
    rng = _rng("argmax", np.dtype(dtype).name, ndim)
    for make in (_ties, _spread):
        x = make(rng, dtype, _shape(rng, ndim))
        for axis in range(ndim):
            for last in (False, True):
                expected = ort_argmax(x, axis, last)
                got = dml_argmax(x, [axis], last)
                assert got.dtype == np.int64 and expected.dtype == np.int64
                assert got.shape == expected.shape
                assert np.array_equal(got, expected), (make.__name__, axis, last, x)


@pytest.mark.parametrize("ndim", range(1, 9))
def test_hardmax_single_axis_matches_onnxruntime(ndim):
    rng = _rng("hardmax", ndim)
    for make in (_ties, _spread):
        x = make(rng, np.float32, _shape(rng, ndim))
        for axis in range(ndim):
            expected = ort_hardmax(x, axis)
            got = dml_hardmax(x, [axis])
            assert got.dtype == expected.dtype == np.float32
            assert np.array_equal(got.view(np.uint32), expected.view(np.uint32)), (make.__name__, axis, x)


@pytest.mark.parametrize("ndim", range(1, 9))
def test_log_softmax_single_axis_matches_onnxruntime(ndim):
    rng = _rng("log_softmax", ndim)
    for make in (_ties, _spread):
        x = make(rng, np.float32, _shape(rng, ndim))
        for axis in range(ndim):
            _log_softmax_close(dml_log_softmax(x, [axis]), ort_log_softmax(x, axis), f"{make.__name__} axis {axis}")


def test_log_softmax_minus_infinity_entries_match_onnxruntime():
    x = np.array([[-np.inf, 2, -np.inf, 0], [1, -np.inf, 1, 1], [5, 4, 3, -np.inf]], dtype=np.float32)
    for axis in (0, 1):
        expected = ort_log_softmax(x, axis)
        assert np.isinf(expected).any() and not np.isnan(expected).any()
        _log_softmax_close(dml_log_softmax(x, [axis]), expected, f"axis {axis}")


def test_log_softmax_large_values_match_onnxruntime():
    """Values whose exp overflows float32 (the ONNX logsoftmax_large_number case is near 1e4)."""
    x = np.array([[10000, 10001, 10002, 9999], [-500, 100, 95, 99], [3.0e38, 1.0e38, 3.0e38, 2.0e38]], np.float32)
    for axis in (0, 1):
        expected = ort_log_softmax(x, axis)
        assert np.isfinite(expected).all()
        _log_softmax_close(dml_log_softmax(x, [axis]), expected, f"axis {axis}")


WHERE_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8]


@pytest.mark.parametrize("dtype", WHERE_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndim", range(1, 9))
def test_where_matches_onnxruntime(dtype, ndim):
    rng = _rng("where", np.dtype(dtype).name, ndim)
    uint = np.dtype(f"u{np.dtype(dtype).itemsize}")
    for _ in range(2):
        shape = _shape(rng, ndim)
        a, b = _spread(rng, dtype, shape), _spread(rng, dtype, shape)
        if np.dtype(dtype).kind == "f":  # infinities; not -0.0, which onnxruntime's Where returns as +0.0
            a.ravel()[::3] = -np.inf
            b.ravel()[1::4] = np.inf
        cond = (rng.integers(1, 256, size=shape) * (rng.random(shape) < 0.5)).astype(np.uint8)
        expected = ort_where(cond, a, b)
        got = dml_if(cond, a, b)
        assert got.dtype == expected.dtype == np.dtype(dtype)
        assert np.array_equal(got.view(uint), expected.view(uint)), (cond, a, b)


HARD_SIGMOID_PARAMETERS = [(0.5, 0.6), (1 / 6, 0.5), (-0.3, 0.4), (2.0, -0.25), (0.01, 0.995), (0.7, 0.0)]


@pytest.mark.parametrize("alpha, beta", HARD_SIGMOID_PARAMETERS)
@pytest.mark.parametrize("ndim", [1, 3, 5, 8])
def test_hard_sigmoid_matches_onnxruntime(alpha, beta, ndim):
    rng = _rng("hard_sigmoid", alpha, beta, ndim)
    shape = _shape(rng, ndim)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    x.ravel()[:3] = [np.inf, -np.inf, -0.0][: x.size]
    _hard_sigmoid_close(dml_hard_sigmoid(x, alpha, beta), ort_hard_sigmoid(x, alpha, beta), x, alpha, beta, "")


# ----------------------------------------------------------------------------------------------------------------
# Several axes: the transpose + reshape trick
# ----------------------------------------------------------------------------------------------------------------


def _multi_axis_cases():
    cases = []
    for ndim in range(3, 9):
        rng = _rng("axes", ndim)
        for count in (2, 3):
            for _ in range(2):
                cases.append((ndim, tuple(int(a) for a in rng.permutation(ndim)[:count])))
    return [pytest.param(n, axes, id=f"{n}d-axes{'_'.join(map(str, axes))}") for n, axes in cases]


@pytest.mark.parametrize("ndim, axes", _multi_axis_cases())
def test_argmax_multi_axis_matches_onnxruntime(ndim, axes):
    rng = _rng("argmax-multi", ndim, axes)
    for dtype in (np.float32, np.int32, np.uint8):
        for make in (_ties, _spread):
            x = make(rng, dtype, _shape(rng, ndim))
            for last in (False, True):
                expected = ort_argmax_multi_axis(x, axes, last)
                got = dml_argmax(x, list(axes), last)
                assert got.shape == expected.shape
                assert np.array_equal(got, expected), (dtype, make.__name__, axes, last, x)


@pytest.mark.parametrize("ndim, axes", _multi_axis_cases())
def test_hardmax_multi_axis_matches_onnxruntime(ndim, axes):
    rng = _rng("hardmax-multi", ndim, axes)
    for make in (_ties, _spread):
        x = make(rng, np.float32, _shape(rng, ndim))
        expected = ort_multi_axis(ort_hardmax, x, axes)
        got = dml_hardmax(x, list(axes))
        assert np.array_equal(got.view(np.uint32), np.ascontiguousarray(expected).view(np.uint32)), (axes, x)


@pytest.mark.parametrize("ndim, axes", _multi_axis_cases())
def test_log_softmax_multi_axis_matches_onnxruntime(ndim, axes):
    rng = _rng("log_softmax-multi", ndim, axes)
    for make in (_ties, _spread):
        x = make(rng, np.float32, _shape(rng, ndim))
        expected = np.ascontiguousarray(ort_multi_axis(ort_log_softmax, x, axes))
        _log_softmax_close(dml_log_softmax(x, list(axes)), expected, f"{make.__name__} axes {axes}")
