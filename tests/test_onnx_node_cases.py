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

``_expanded`` variants run the op's function body as a multi-node graph (they test the expansion, not the op)
and are left out, as is ArgMin (no DirectML counterpart in scope). Hardmax, ArgMax and Where must match exactly;
LogSoftmax and HardSigmoid within the case's own rtol/atol (the suite default, 1e-3 / 1e-7).
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

_PREFIXES = ("test_hardmax", "test_logsoftmax", "test_where", "test_argmax", "test_hardsigmoid")

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
    ]
)

# ONNX opset version each mapping below was written for: the operator version in force must be at least this
# (Hardmax/LogSoftmax before 13 flatten the trailing axes and default to axis 1, a different mapping).
_MIN_OPSET = {"Hardmax": 13, "LogSoftmax": 13, "Where": 16, "ArgMax": 12, "HardSigmoid": 6}

# ONNX attribute defaults at those versions.
_DEFAULTS = {
    "Hardmax": {"axis": -1},
    "LogSoftmax": {"axis": -1},
    "Where": {},
    "ArgMax": {"axis": 0, "keepdims": 1, "select_last_index": 0},
    "HardSigmoid": {"alpha": 0.2, "beta": 0.5},
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
        if case.name.startswith(_PREFIXES) and "_expanded" not in case.name and case.kind == "node"
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


def _argmax(x, attributes) -> np.ndarray:
    axis = _normalize_axis(attributes["axis"], x.ndim)
    kept = tuple(1 if d == axis else s for d, s in enumerate(x.shape))
    last = attributes["select_last_index"]
    assert last in (0, 1), f"select_last_index {last}"
    desc = dml.ArgmaxOperatorDesc(
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
    (x,) = inputs
    run, exact = {
        "Hardmax": (_hardmax, True),
        "LogSoftmax": (_log_softmax, False),
        "ArgMax": (_argmax, True),
        "HardSigmoid": (_hard_sigmoid, False),
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
