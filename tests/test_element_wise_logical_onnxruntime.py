"""onnxruntime (CPU) as an oracle for the ELEMENT_WISE tests, logical, bit and quantization operators, table-driven.

Each row of ORACLES names the ONNX operator that coincides with a DirectML one, its opset and attributes, and how
the DirectML inputs feed it. Data come from the operator's case (tests/cases), over every data type of its top
support row that ONNX defines; the result must be bit for bit the same. Documented exceptions (README, "Semantics
and decisions") are the rows' ``skip_types`` and the tests at the bottom. Quantization runs with a per-tensor
scale and zero point, which DirectML receives as tensors of the input's sizes with zero strides (broadcast).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import onnxruntime
import pytest
from cases import CASES, random_shape, rng_for, types_for
from cases.__init__ import random_values
from onnx import TensorProto, helper
from reference import numpy_dtype

import opendml as dml

OT, T = dml.OperatorType, dml.TensorDataType
DEVICE = dml.Device()


@dataclass(frozen=True)
class Oracle:
    onnx_op: str
    opset: int
    attrs: tuple = ()  # (name, value) pairs
    boolean_inputs: bool = False  # ONNX And/Or/Xor/Not take bool: feed ``x != 0``
    raw_bits: bool = False  # ONNX Bitwise* have no float types: feed the encoding as unsigned integers
    per_tensor: tuple[str, ...] = ()  # inputs given to ONNX as scalars, to DirectML with zero strides
    skip_types: tuple = ()  # input data types ONNX does not define here (see the module docstring)
    infinity_mode: dml.IsInfinityMode | None = None


MODE = dml.IsInfinityMode
_Q = ("ScaleTensor", "ZeroPointTensor")
ORACLES = {
    OT.ELEMENT_WISE_IS_NAN: [Oracle("IsNaN", 20)],
    OT.ELEMENT_WISE_IS_INFINITY: [
        Oracle("IsInf", 20, (("detect_positive", 1), ("detect_negative", 1)), infinity_mode=MODE.EITHER),
        Oracle("IsInf", 20, (("detect_positive", 1), ("detect_negative", 0)), infinity_mode=MODE.POSITIVE),
        Oracle("IsInf", 20, (("detect_positive", 0), ("detect_negative", 1)), infinity_mode=MODE.NEGATIVE),
    ],
    OT.ELEMENT_WISE_LOGICAL_EQUALS: [Oracle("Equal", 19)],
    OT.ELEMENT_WISE_LOGICAL_GREATER_THAN: [Oracle("Greater", 13)],
    OT.ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL: [Oracle("GreaterOrEqual", 16)],
    OT.ELEMENT_WISE_LOGICAL_LESS_THAN: [Oracle("Less", 13)],
    OT.ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL: [Oracle("LessOrEqual", 16)],
    OT.ELEMENT_WISE_LOGICAL_AND: [Oracle("And", 7, boolean_inputs=True)],
    OT.ELEMENT_WISE_LOGICAL_OR: [Oracle("Or", 7, boolean_inputs=True)],
    OT.ELEMENT_WISE_LOGICAL_XOR: [Oracle("Xor", 7, boolean_inputs=True)],
    OT.ELEMENT_WISE_LOGICAL_NOT: [Oracle("Not", 1, boolean_inputs=True)],
    OT.ELEMENT_WISE_BIT_AND: [Oracle("BitwiseAnd", 18, raw_bits=True)],
    OT.ELEMENT_WISE_BIT_OR: [Oracle("BitwiseOr", 18, raw_bits=True)],
    OT.ELEMENT_WISE_BIT_XOR: [Oracle("BitwiseXor", 18, raw_bits=True)],
    OT.ELEMENT_WISE_BIT_NOT: [Oracle("BitwiseNot", 18, raw_bits=True)],
    OT.ELEMENT_WISE_BIT_SHIFT_LEFT: [Oracle("BitShift", 11, (("direction", "LEFT"),))],
    OT.ELEMENT_WISE_BIT_SHIFT_RIGHT: [Oracle("BitShift", 11, (("direction", "RIGHT"),))],
    # ONNX's QuantizeLinear takes its scale in the input's type, so an INT32 input (FLOAT32 scale) has no match.
    OT.ELEMENT_WISE_QUANTIZE_LINEAR: [Oracle("QuantizeLinear", 21, per_tensor=_Q, skip_types=(T.INT32,))],
    # ONNX's DequantizeLinear has no UINT32 input, and an INT32 input only with a zero point of 0.
    OT.ELEMENT_WISE_DEQUANTIZE_LINEAR: [Oracle("DequantizeLinear", 21, per_tensor=_Q, skip_types=(T.UINT32, T.INT32))],
}


@functools.cache
def _session(oracle: Oracle, types: tuple, out_type: int) -> onnxruntime.InferenceSession:
    names = [f"x{i}" for i in range(len(types))]
    inputs = [helper.make_tensor_value_info(n, t, None) for n, t in zip(names, types)]
    node = helper.make_node(oracle.onnx_op, names, ["y"], **dict(oracle.attrs))
    graph = helper.make_graph([node], "oracle", inputs, [helper.make_tensor_value_info("y", out_type, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", oracle.opset)])
    model.ir_version = 10
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _onnx(oracle: Oracle, arrays: list[np.ndarray], out_dtype: np.dtype) -> np.ndarray:
    if oracle.boolean_inputs:
        arrays = [a != 0 for a in arrays]
    if oracle.raw_bits:
        arrays = [a.view(f"u{a.itemsize}") for a in arrays]
    elem = lambda a: helper.np_dtype_to_tensor_dtype(a.dtype)  # noqa: E731
    raw_out = np.dtype(f"u{out_dtype.itemsize}") if oracle.raw_bits else out_dtype
    bool_out = oracle.onnx_op in {
        "IsNaN",
        "IsInf",
        "Equal",
        "Greater",
        "GreaterOrEqual",
        "Less",
        "LessOrEqual",
        "And",
        "Or",
        "Xor",
        "Not",
    }
    out_type = TensorProto.BOOL if bool_out else helper.np_dtype_to_tensor_dtype(raw_out)
    session = _session(oracle, tuple(elem(a) for a in arrays), out_type)
    (result,) = session.run(["y"], {f"x{i}": a for i, a in enumerate(arrays)})
    return result.astype(out_dtype) if bool_out else result.view(out_dtype)


def _scalar_binding(value: np.ndarray) -> dml.BufferBinding:
    """One element in a buffer of whole DWORDs (DMLCalcBufferTensorSize rounds up to 4 bytes)."""
    return dml.BufferBinding(np.full(max(1, 4 // value.itemsize), value, value.dtype))


def _cases():
    for op, oracles in ORACLES.items():
        top = dml.REGISTRY[op].support[0]
        first = top.tensors[dml.REGISTRY[op].input_fields[0].c_name]
        for oracle in oracles:
            for i, data_type in enumerate(first.data_types):
                if data_type in oracle.skip_types:
                    continue
                label = oracle.infinity_mode.name if oracle.infinity_mode is not None else oracle.onnx_op
                yield pytest.param(op, oracle, i, id=f"{op.name}-{label}-{data_type.name}")


@pytest.mark.parametrize("op, oracle, i", list(_cases()))
def test_agrees_with_onnxruntime(op, oracle, i):
    case, schema = CASES[op], dml.REGISTRY[op]
    types = types_for(schema.support[0], i, case)
    values = case.values or random_values
    for rank in (1, 3, 5):
        rng = rng_for("ort", op.name, i, rank)
        sizes = random_shape(rng, rank, 240)
        tensors, arrays, bindings = {}, [], []
        for spec in schema.input_fields:
            dtype = numpy_dtype(types[spec.c_name])
            if spec.c_name in oracle.per_tensor:
                value = values(spec.c_name, dtype, (1,), rng)
                strides = (0,) * rank
                arrays.append(value.reshape(()))
                bindings.append(_scalar_binding(value))
            else:
                value = values(spec.c_name, dtype, sizes, rng)
                strides = None
                arrays.append(value)
                bindings.append(value)
            tensors[spec.name] = dml.BufferTensorDesc(types[spec.c_name], sizes, strides)
        out = schema.output_fields[0]
        tensors[out.name] = dml.BufferTensorDesc(types[out.c_name], sizes)
        extra = {"infinity_mode": oracle.infinity_mode} if oracle.infinity_mode is not None else {}
        desc = schema.desc_class(**tensors, **extra)
        (got,) = DEVICE.compile_operator(DEVICE.create_operator(desc)).execute(bindings)
        expected = _onnx(oracle, arrays, numpy_dtype(types[out.c_name]))
        assert got.dtype == expected.dtype
        assert np.asarray(got).tobytes() == expected.tobytes(), (op.name, rank, arrays, got, expected)


def test_the_table_covers_every_coinciding_operator():
    """BIT_COUNT and QUANTIZED_LINEAR_ADD have no standard ONNX twin (com.microsoft's QLinearAdd rounds its own
    way); every other operator of the module has a row."""
    from opendml.operators import element_wise_logical

    declared = {getattr(element_wise_logical, name).schema.operator_type for name in element_wise_logical.__all__}
    assert declared - set(ORACLES) == {OT.ELEMENT_WISE_BIT_COUNT, OT.ELEMENT_WISE_QUANTIZED_LINEAR_ADD}


def test_onnxruntime_shares_the_past_the_width_shift_and_nan_quantization_decisions():
    """The decisions where DirectML is silent, as onnxruntime computes them too."""
    shifts = (np.array([1, 1, 1, 255], np.uint8), np.array([7, 8, 9, 200], np.uint8))
    assert _onnx(ORACLES[OT.ELEMENT_WISE_BIT_SHIFT_LEFT][0], list(shifts), np.dtype(np.uint8)).tolist() == [
        128,
        0,
        0,
        0,
    ]
    quantize = ORACLES[OT.ELEMENT_WISE_QUANTIZE_LINEAR][0]
    nan = [np.array([np.nan, 2.5, -2.5], np.float32), np.array(1, np.float32), np.array(7, np.uint8)]
    assert _onnx(quantize, nan, np.dtype(np.uint8)).tolist() == [0, 9, 5]  # NaN -> Min; ties to even
