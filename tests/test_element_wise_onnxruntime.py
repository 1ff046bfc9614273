"""onnxruntime (CPU) against the ELEMENT_WISE arithmetic and transcendental members, where ONNX has the operator.

One table row per pairing: the DirectML operator, the ONNX operator and opset, its attributes, the data types
both accept, and how far apart the two may be, in units in the last place of the output type. opendml is within
1 ulp of the correctly rounded value for every computed member (held against Python's ``math`` in
test_cases.py); onnxruntime's float32 transcendental kernels (MLAS and Eigen approximations) are not, and the
"ulps" column records how far they stray on these inputs. Exact members must agree bit for bit.

Documented exceptions, each pinned in a test below:
- SIGN of NaN: DirectML's page says 0 ("otherwise"); onnxruntime returns NaN.
- Integer DIVIDE and MODULUS by 0 (onnxruntime raises SIGFPE) and INT_MIN / -1 are kept out of the comparison;
  opendml's results for them are pinned in the cases' examples.
- MODULUS_FLOOR on floats: ONNX Mod takes fmod=0 for integers only.
- ELEMENT_WISE_CLIP's FLOAT bounds on an integer tensor: ONNX Clip bounds have the tensor's type; rows use
  integral bounds there.
- Integer POW is not compared: opendml's is exact and wraps; onnxruntime's goes through double.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import onnxruntime
import pytest
from cases import CASES, execute, make_desc, make_inputs, rng_for
from onnx import helper

import opendml as dml

OT, T = dml.OperatorType, dml.TensorDataType
FLOATS = (T.FLOAT32, T.FLOAT16)
INTS = (T.INT32, T.INT64)


@dataclass(frozen=True)
class Pairing:
    onnx: str
    types: tuple = FLOATS
    opset: int = 17
    attrs: tuple = ()
    params: dict = field(default_factory=dict)
    #: extra ONNX inputs after the operator's tensors: (name, value) read as the tensor's type (Clip's min, max)
    constants: tuple = ()
    ulps: int = 0  # float32 distance allowed; float16 results agree within 1 ulp for every computed member


_TRANSCENDENTAL_ULPS = {
    "Exp": 1,
    "Log": 2,
    "Sin": 1,
    "Cos": 1,
    "Tan": 1,
    "Asin": 4,
    "Acos": 4,
    "Atan": 3,
    "Sinh": 2,
    "Cosh": 1,
    "Tanh": 4,
    "Asinh": 1,
    "Acosh": 2,
    "Atanh": 1,
    "Erf": 1,
}
TABLE = {
    OT.ELEMENT_WISE_ADD: Pairing("Add", FLOATS + INTS),
    OT.ELEMENT_WISE_SUBTRACT: Pairing("Sub", FLOATS + INTS),
    OT.ELEMENT_WISE_MULTIPLY: Pairing("Mul", FLOATS + INTS),
    OT.ELEMENT_WISE_DIVIDE: Pairing("Div", FLOATS + INTS),
    OT.ELEMENT_WISE_ABS: Pairing("Abs", FLOATS + INTS),
    OT.ELEMENT_WISE_NEGATE: Pairing("Neg", FLOATS + INTS),
    OT.ELEMENT_WISE_RECIP: Pairing("Reciprocal"),
    OT.ELEMENT_WISE_SQRT: Pairing("Sqrt"),
    OT.ELEMENT_WISE_POW: Pairing("Pow", FLOATS, opset=15, ulps=1),
    OT.ELEMENT_WISE_MAX: Pairing("Max", FLOATS + INTS),
    OT.ELEMENT_WISE_MIN: Pairing("Min", FLOATS + INTS),
    OT.ELEMENT_WISE_MEAN: Pairing("Mean"),
    OT.ELEMENT_WISE_CLIP: Pairing(
        "Clip", FLOATS + INTS, params={"min": -1.0, "max": 2.0}, constants=(("min", -1), ("max", 2))
    ),
    OT.ELEMENT_WISE_THRESHOLD: Pairing("Clip", FLOATS, params={"min": 0.5}, constants=(("min", 0.5),)),
    OT.ELEMENT_WISE_SIGN: Pairing("Sign", FLOATS + INTS),
    OT.ELEMENT_WISE_CEIL: Pairing("Ceil"),
    OT.ELEMENT_WISE_FLOOR: Pairing("Floor"),
    OT.ELEMENT_WISE_ROUND: Pairing("Round", params={"rounding_mode": dml.RoundingMode.HALVES_TO_NEAREST_EVEN}),
    OT.ELEMENT_WISE_MODULUS_TRUNCATE: Pairing("Mod", FLOATS + INTS, attrs=(("fmod", 1),)),
    OT.ELEMENT_WISE_MODULUS_FLOOR: Pairing("Mod", INTS, attrs=(("fmod", 0),)),
    **{
        getattr(OT, f"ELEMENT_WISE_{name.upper()}"): Pairing(name, ulps=ulps)
        for name, ulps in _TRANSCENDENTAL_ULPS.items()
    },
}


@functools.cache
def _session(onnx: str, opset: int, attrs: tuple, dtype: str, inputs: int) -> onnxruntime.InferenceSession:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    names = [f"i{k}" for k in range(inputs)]
    node = helper.make_node(onnx, names, ["y"], **dict(attrs))
    graph = helper.make_graph(
        [node],
        onnx.lower(),
        [helper.make_tensor_value_info(n, elem, None) for n in names],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def run_onnxruntime(pairing: Pairing, arrays: list[np.ndarray]) -> np.ndarray:
    dtype = arrays[0].dtype
    constants = [np.array(value, dtype) for _, value in pairing.constants]
    feeds = [*arrays, *constants]
    session = _session(pairing.onnx, pairing.opset, pairing.attrs, dtype.str, len(feeds))
    return session.run(["y"], {f"i{k}": a for k, a in enumerate(feeds)})[0]


def _ordered(array: np.ndarray) -> np.ndarray:
    bits = array.view(np.dtype(f"u{array.itemsize}")).astype(np.int64)
    sign = 1 << (8 * array.itemsize - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


def _comparable(op, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Inputs with the documented exceptions removed: no integer division by 0 or by -1 (INT_MIN / -1)."""
    if op in (OT.ELEMENT_WISE_DIVIDE, OT.ELEMENT_WISE_MODULUS_TRUNCATE, OT.ELEMENT_WISE_MODULUS_FLOOR):
        b = arrays[1]
        if b.dtype.kind in "iu":
            arrays = [arrays[0], np.where((b == 0) | (b == -1), np.ones((), b.dtype), b)]
    if op == OT.ELEMENT_WISE_SIGN and arrays[0].dtype.kind == "f":
        arrays = [np.nan_to_num(arrays[0], nan=1.0)]
    return arrays


PARAMS = [
    pytest.param(op, data_type, id=f"{op.name}-{data_type.name}")
    for op, pairing in TABLE.items()
    for data_type in pairing.types
]


@pytest.mark.parametrize("op, data_type", PARAMS)
def test_onnxruntime_agrees(op, data_type):
    pairing, case = TABLE[op], CASES[op]
    rng = rng_for("onnxruntime", op.name, data_type.name)
    tensors = {spec.c_name: data_type for spec in dml.REGISTRY[op].tensor_fields}
    desc = make_desc(case, (4, 50), tensors, rng, params=dict(pairing.params))
    arrays = _comparable(op, make_inputs(case, desc, rng))
    (ours,) = execute(desc, arrays)
    theirs = run_onnxruntime(pairing, arrays)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ours.dtype.kind != "f":
        np.testing.assert_array_equal(ours, theirs)
        return
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    allowed = pairing.ulps if data_type == T.FLOAT32 else min(pairing.ulps, 1)
    distance = np.abs(_ordered(ours) - _ordered(theirs))[~np.isnan(ours)]
    assert distance.max(initial=0) <= allowed, f"{int(distance.max())} ulps apart (allowed {allowed})"


def test_exception_sign_of_nan_is_zero_where_onnxruntime_says_nan():
    x = np.array([np.nan, -np.nan, -0.0], np.float32)
    (ours,) = execute(
        make_desc(
            CASES[OT.ELEMENT_WISE_SIGN], x.shape, dict.fromkeys(("InputTensor", "OutputTensor"), T.FLOAT32), rng_for()
        ),
        [x],
    )
    assert ours.tolist() == [0.0, 0.0, 0.0]
    assert np.isnan(run_onnxruntime(TABLE[OT.ELEMENT_WISE_SIGN], [x])[:2]).all()
