"""The ONNX backend node test cases of our five operators, run on opendml.

Since onnx 1.23 the node cases are no longer stored files: ``onnx.backend.test.case.node.collect_testcases``
generates them in memory from the NumPy code of ``onnx/backend/test/case/node/<op>.py``
(see the team notes on test oracles, section 1). Each case is one ONNX node with its inputs and expected
outputs, and is mapped onto the DirectML operator with the same meaning (section 3):

ONNX op          <-> DirectML operator
Hardmax-13       <-> ACTIVATION_HARDMAX1, Axes = {axis}
LogSoftmax-13    <-> ACTIVATION_LOG_SOFTMAX1, Axes = {axis}
Where-16         <-> ELEMENT_WISE_IF, UINT8 condition (bool cast), NumPy broadcasting through zero strides
ArgMax-13        <-> ARGMAX, Axes = {axis}, select_last_index 0/1 = INCREASING/DECREASING, INT64 output with the
                     reduced dimension kept as 1 (dropped afterwards when keepdims=0)
HardSigmoid-22   <-> ACTIVATION_HARD_SIGMOID, Alpha/Beta
ArgMin-13        <-> ARGMIN, as ArgMax
Softmax-13       <-> ACTIVATION_SOFTMAX1, Axes = {axis}
ReduceSum-13, ReduceMean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare-18
                 <-> REDUCE with SUM, AVERAGE, MAX, MIN, MULTIPLY, L1, L2, LOG_SUM, LOG_SUM_EXP, SUM_SQUARE over
                     the axes input (all axes when absent), reduced dimensions kept as 1 (dropped when keepdims=0);
                     empty tensors, bool and FLOAT64 inputs, noop_with_empty_axes: no DirectML counterpart, left out

``_expanded`` variants run the op's function body as a multi-node graph (they test the expansion, not the op)
and are left out. Hardmax, ArgMax, ArgMin, Where and ReduceMax/Min must match exactly; the others within the
case's own rtol/atol (the suite default, 1e-3 / 1e-7).
"""

from __future__ import annotations

import functools
import math
import os
import warnings

import numpy as np
import onnx
import pytest
from onnx import helper

import opendml as dml
from opendml import AxisDirection, TensorDataType
from opendml.tensor import data_type_of

T = TensorDataType
DEVICE = dml.Device()

_PREFIXES = ("test_hardmax", "test_logsoftmax", "test_where", "test_argmax", "test_hardsigmoid", "test_argmin")
_PREFIXES += ("test_softmax_", "test_reduce_")
# No DirectML counterpart: empty tensors, bool inputs, noop_with_empty_axes, and ReduceLogSumExp's cases, whose
# inputs are FLOAT64 (REDUCE takes FLOAT32 and FLOAT16 only).
_LEFT_OUT = ("empty_set", "bool_inputs", "empty_axes_input_noop", "test_reduce_log_sum_exp")
_REDUCERS = {
    "ReduceSum": "SUM", "ReduceMean": "AVERAGE", "ReduceMax": "MAX", "ReduceMin": "MIN", "ReduceProd": "MULTIPLY",
    "ReduceL1": "L1", "ReduceL2": "L2", "ReduceLogSum": "LOG_SUM", "ReduceLogSumExp": "LOG_SUM_EXP",
    "ReduceSumSquare": "SUM_SQUARE",
}  # fmt: skip

# Every case of ours that onnx 1.23.2 generates (test-oracles.md section 1, `_expanded*` and ArgMin left out).
_EXPECTED_NAMES = frozenset(
    [
        *(
            f"test_hardmax_{s}"
            for s in ("example", "one_hot", "axis_0", "axis_1", "axis_2", "negative_axis", "default_axis")
        ),
        *(
            f"test_logsoftmax_{s}"
            for s in ("example_1", "large_number", "axis_0", "axis_1", "axis_2", "negative_axis", "default_axis")
        ),
        "test_where_example",
        "test_where_long_example",
        *(
            f"test_argmax_{mode}_{data}{last}"
            for mode in ("default_axis", "keepdims", "negative_axis_keepdims", "no_keepdims")
            for data in ("example", "random")
            for last in ("", "_select_last_index")
        ),
        "test_hardsigmoid_example",
        "test_hardsigmoid",
        "test_hardsigmoid_default",
        *(
            f"test_argmin_{mode}_{data}{last}"
            for mode in ("default_axis", "keepdims", "negative_axis_keepdims", "no_keepdims")
            for data in ("example", "random")
            for last in ("", "_select_last_index")
        ),
        *(f"test_softmax_{s}" for s in ("example", "large_number", "axis_0", "axis_1", "axis_2", "negative_axis")),
        *(
            f"test_reduce_{op}_{mode}_{data}"
            for op in ("sum", "mean", "max", "min", "prod", "l1", "l2", "sum_square")
            for mode in ("keepdims" if op not in ("l1", "l2") else "keep_dims", "do_not_keepdims")
            for data in ("example", "random")
        ),
        *(f"test_reduce_log_sum_{s}" for s in ("asc_axes", "desc_axes", "default", "negative_axes")),
    ]
)

# ONNX opset version each mapping below was written for: the operator version in force must be at least this
# (Hardmax/LogSoftmax before 13 flatten the trailing axes and default to axis 1, a different mapping).
_MIN_OPSET = {"Hardmax": 13, "LogSoftmax": 13, "Where": 16, "ArgMax": 12, "HardSigmoid": 6, "ArgMin": 12}
_MIN_OPSET |= {"Softmax": 13, **dict.fromkeys(_REDUCERS, 13)}

# ONNX attribute defaults at those versions.
_DEFAULTS = {
    "Hardmax": {"axis": -1},
    "LogSoftmax": {"axis": -1},
    "Where": {},
    "ArgMax": {"axis": 0, "keepdims": 1, "select_last_index": 0},
    "HardSigmoid": {"alpha": 0.2, "beta": 0.5},
    "ArgMin": {"axis": 0, "keepdims": 1, "select_last_index": 0},
    "Softmax": {"axis": -1},
    **{op: {"keepdims": 1, "noop_with_empty_axes": 0} for op in _REDUCERS},
}


# ----------------------------------------------------------------------------------------------------------------
# Collecting the cases (once per process)
# ----------------------------------------------------------------------------------------------------------------


@functools.cache
def _all_cases() -> tuple:
    """Every ONNX node case, generated once: a second ``collect_testcases`` call would add nothing.

    The "random" cases draw from the unseeded global ``np.random``, so it is seeded first (and its state is
    restored afterwards, not to disturb anything else in the process). The case generators themselves emit
    NumPy RuntimeWarnings (overflowing casts in cast.py and the like); those, and only those coming from onnx's
    own files, are dropped. Any other warning is re-issued, so pytest's ``filterwarnings = error`` still sees it.
    """
    state = np.random.get_state()
    np.random.seed(20260817)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import onnx.backend.test.case.node as node_cases

            cases = tuple(node_cases.collect_testcases(None))
    finally:
        np.random.set_state(state)
    onnx_dir = os.path.dirname(os.path.abspath(onnx.__file__)) + os.sep
    for w in caught:
        if not os.path.abspath(w.filename).startswith(onnx_dir):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return cases


@functools.cache
def _our_cases() -> dict:
    return {
        case.name: case
        for case in _all_cases()
        if case.name.startswith(_PREFIXES)
        and "_expanded" not in case.name
        and case.kind == "node"
        and not any(part in case.name for part in _LEFT_OUT)
    }


# ----------------------------------------------------------------------------------------------------------------
# Running one case on opendml
# ----------------------------------------------------------------------------------------------------------------


def _execute(desc, inputs) -> np.ndarray:
    (result,) = DEVICE.compile_operator(DEVICE.create_operator(desc)).execute(list(inputs))
    return np.asarray(result)


def _node_and_attributes(case):
    (node,) = case.model.graph.node
    opset = {o.domain: o.version for o in case.model.opset_import}[node.domain or ""]
    assert opset >= _MIN_OPSET[node.op_type], f"{case.name}: {node.op_type} at opset {opset} needs another mapping"
    attributes = dict(_DEFAULTS[node.op_type])
    for attribute in node.attribute:
        assert attribute.name in attributes, f"{case.name}: unexpected attribute {attribute.name}"
        attributes[attribute.name] = helper.get_attribute_value(attribute)
    return node, attributes


def _normalize_axis(axis: int, rank: int) -> int:
    assert -rank <= axis < rank, f"axis {axis} out of range for rank {rank}"
    return axis + rank if axis < 0 else axis


def _hardmax(x, attributes) -> np.ndarray:
    t = dml.BufferTensorDesc.like(x)
    axis = _normalize_axis(attributes["axis"], x.ndim)
    return _execute(dml.ActivationHardmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=(axis,)), [x])


def _log_softmax(x, attributes) -> np.ndarray:
    t = dml.BufferTensorDesc.like(x)
    axis = _normalize_axis(attributes["axis"], x.ndim)
    return _execute(dml.ActivationLogSoftmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=(axis,)), [x])


def _hard_sigmoid(x, attributes) -> np.ndarray:
    t = dml.BufferTensorDesc.like(x)
    desc = dml.ActivationHardSigmoidOperatorDesc(
        input_tensor=t, output_tensor=t, alpha=float(attributes["alpha"]), beta=float(attributes["beta"])
    )
    return _execute(desc, [x])


def _softmax(x, attributes) -> np.ndarray:
    t = dml.BufferTensorDesc.like(x)
    axis = _normalize_axis(attributes["axis"], x.ndim)
    return _execute(dml.ActivationSoftmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=(axis,)), [x])


def _reduce(op_type, x, axes_input, attributes) -> np.ndarray:
    """REDUCE over the axes input (or attribute); all axes when there are none."""
    given = axes_input if axes_input is not None else attributes.get("axes")
    axes = tuple(sorted({_normalize_axis(int(a), x.ndim) for a in given})) if given is not None and len(given) else ()
    axes = axes or tuple(range(x.ndim))
    desc = dml.ReduceOperatorDesc(
        function=dml.ReduceFunction[_REDUCERS[op_type]],
        input_tensor=dml.BufferTensorDesc.like(x),
        output_tensor=dml.BufferTensorDesc(
            data_type_of(x.dtype), tuple(1 if d in axes else s for d, s in enumerate(x.shape))
        ),
        axes=axes,
    )
    result = _execute(desc, [x])
    return (
        result if attributes["keepdims"] else result.reshape(tuple(s for d, s in enumerate(x.shape) if d not in axes))
    )


def _argmax(x, attributes, op_type="ArgMax") -> np.ndarray:
    axis = _normalize_axis(attributes["axis"], x.ndim)
    kept = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
    last = attributes["select_last_index"]
    assert last in (0, 1), f"select_last_index {last}"
    desc = (dml.ArgminOperatorDesc if op_type == "ArgMin" else dml.ArgmaxOperatorDesc)(
        input_tensor=dml.BufferTensorDesc.like(x),
        output_tensor=dml.BufferTensorDesc(T.INT64, kept),
        axes=(axis,),
        axis_direction=AxisDirection.DECREASING if last else AxisDirection.INCREASING,
    )
    result = _execute(desc, [x])
    return result if attributes["keepdims"] else result.reshape(tuple(s for d, s in enumerate(x.shape) if d != axis))


def _broadcast_binding(array: np.ndarray, shape: tuple[int, ...]):
    """``array`` read with NumPy broadcasting to ``shape``: a descriptor with zero strides on the broadcast
    dimensions, and a binding of its packed bytes (padded to whole DWORDs, as DirectML sizes buffers)."""
    array = np.ascontiguousarray(array)
    lead = len(shape) - array.ndim
    packed = [math.prod(array.shape[d + 1 :]) for d in range(array.ndim)]
    strides = []
    for d, size in enumerate(shape):
        # A dimension the array lacks, or has as 1 where the result is larger, is broadcast: stride 0.
        strides.append(packed[d - lead] if d >= lead and array.shape[d - lead] == size else 0)
    desc = dml.BufferTensorDesc(data_type_of(array.dtype), shape, strides=tuple(strides))
    buffer = bytearray(desc.total_tensor_size_in_bytes)
    buffer[: array.nbytes] = array.tobytes()
    return desc, dml.BufferBinding(buffer)


def _where(condition, a, b) -> np.ndarray:
    assert condition.dtype == np.bool_, condition.dtype
    shape = np.broadcast_shapes(condition.shape, a.shape, b.shape) or (1,)  # DirectML tensors have rank >= 1
    # One path for all cases: with equal shapes the strides come out packed, so the ONNX cases exercise it.
    cond_desc, cond_binding = _broadcast_binding(condition.astype(np.uint8), shape)
    a_desc, a_binding = _broadcast_binding(a, shape)
    b_desc, b_binding = _broadcast_binding(b, shape)
    desc = dml.ElementWiseIfOperatorDesc(
        condition_tensor=cond_desc,
        a_tensor=a_desc,
        b_tensor=b_desc,
        output_tensor=dml.BufferTensorDesc(a_desc.data_type, shape),
    )
    result = _execute(desc, [cond_binding, a_binding, b_binding])
    return result.reshape(np.broadcast_shapes(condition.shape, a.shape, b.shape))


def _run(case) -> tuple[np.ndarray, bool]:
    """opendml's output for ``case``'s one data set, and whether the comparison must be exact."""
    node, attributes = _node_and_attributes(case)
    ((inputs, _),) = case.data_sets
    if node.op_type == "Where":
        return _where(*inputs), True
    if node.op_type in _REDUCERS:
        x, axes = (inputs[0], inputs[1]) if len(inputs) > 1 else (inputs[0], None)
        return _reduce(node.op_type, x, axes, attributes), node.op_type in ("ReduceMax", "ReduceMin")
    if node.op_type == "ArgMin":
        return _argmax(inputs[0], attributes, "ArgMin"), True
    (x,) = inputs
    run, exact = {
        "Hardmax": (_hardmax, True),
        "LogSoftmax": (_log_softmax, False),
        "ArgMax": (_argmax, True),
        "HardSigmoid": (_hard_sigmoid, False),
        "Softmax": (_softmax, False),
    }[node.op_type]
    return run(x, attributes), exact


# ----------------------------------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------------------------------


def test_the_expected_cases_are_generated():
    names = set(_our_cases())
    assert names, "onnx generated none of our node cases"
    assert names >= _EXPECTED_NAMES, f"missing: {sorted(_EXPECTED_NAMES - names)}"


@pytest.mark.parametrize("name", sorted(_our_cases()))
def test_onnx_node_case(name):
    case = _our_cases()[name]
    ((_, (expected,)),) = case.data_sets
    actual, exact = _run(case)
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype}, expected {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape}, expected {expected.shape}"
    if exact:
        np.testing.assert_array_equal(actual, expected, strict=True)
    else:
        np.testing.assert_allclose(actual, expected, rtol=case.rtol, atol=case.atol, strict=True)
