"""The ELEMENT_WISE tests, logical, bit and quantization operators beyond their cases: layouts (broadcast through
zero strides, padded strides) under hypothesis, in-place execution, the optional zero point, the rules their
pages add, rounding once, and the outputs the functional layer derives."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from cases import CASES, random_values
from cases.element_wise_logical import round_binary
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import numpy_dtype

import opendml as dml
from opendml import functional as F
from opendml.operators import element_wise_logical

OT, T, FL = dml.OperatorType, dml.TensorDataType, dml.FeatureLevel
SETTINGS = settings(
    deadline=None, max_examples=40, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
DEVICE = dml.Device()

# A representative set: comparisons (float and integer), a logical and a bit operator, a shift, quantization.
REPRESENTATIVE = [
    (OT.ELEMENT_WISE_LOGICAL_LESS_THAN, (T.FLOAT32, T.FLOAT32, T.UINT8)),
    (OT.ELEMENT_WISE_LOGICAL_EQUALS, (T.INT64, T.INT64, T.UINT32)),
    (OT.ELEMENT_WISE_LOGICAL_OR, (T.UINT8, T.UINT8, T.UINT8)),
    (OT.ELEMENT_WISE_BIT_XOR, (T.FLOAT16, T.FLOAT16, T.FLOAT16)),
    (OT.ELEMENT_WISE_BIT_SHIFT_RIGHT, (T.UINT16, T.UINT16, T.UINT16)),
    (OT.ELEMENT_WISE_QUANTIZE_LINEAR, (T.FLOAT32, T.FLOAT32, T.INT8, T.INT8)),
    (OT.ELEMENT_WISE_DEQUANTIZE_LINEAR, (T.UINT32, T.FLOAT32, T.UINT32, T.FLOAT32)),
    (OT.ELEMENT_WISE_IS_NAN, (T.FLOAT16, T.UINT8)),
]


def _bound(array: np.ndarray, layout: str, sizes: tuple[int, ...], rng):
    """(tensor strides, what to bind, the logical values) for ``array`` of ``sizes`` in ``layout``."""
    rank = len(sizes)
    if layout == "packed":
        return None, array, array
    if layout == "broadcast":  # some dimensions read one element again and again (stride 0)
        kept = [bool(rng.random() < 0.5) or size == 1 for size in sizes]
        small = np.ascontiguousarray(array[tuple(slice(None) if k else slice(0, 1) for k in kept)])
        packed = [small.strides[d] // small.itemsize for d in range(rank)]
        strides = tuple(s if k else 0 for s, k in zip(packed, kept))
        return strides, _dword_buffer(small), np.broadcast_to(small, sizes)
    padded = np.zeros(sizes[:-1] + (sizes[-1] + 3,), array.dtype)  # rows padded by 3 elements
    padded[..., : sizes[-1]] = array
    return tuple(s // padded.itemsize for s in padded.strides), dml.BufferBinding(padded), array


def _dword_buffer(small: np.ndarray) -> dml.BufferBinding:
    raw = np.zeros(-(-small.nbytes // 4) * 4 + 16, np.uint8)  # whole DWORDs, and some to spare
    raw[: small.nbytes] = small.view(np.uint8).reshape(-1)
    return dml.BufferBinding(raw)


@st.composite
def layouts(draw):
    op, types = draw(st.sampled_from(REPRESENTATIVE))
    rank = draw(st.integers(1, 5))
    sizes = tuple(draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    chosen = draw(st.lists(st.sampled_from(["packed", "broadcast", "padded"]), min_size=4, max_size=4))
    return op, types, sizes, chosen, draw(st.integers(0, 2**32 - 1))


@SETTINGS
@given(layouts())
def test_any_layout_of_the_operands_computes_what_packed_operands_do(drawn):
    op, types, sizes, chosen, seed = drawn
    case, schema = CASES[op], dml.REGISTRY[op]
    rng = np.random.default_rng(seed)
    values = case.values or random_values
    tensors, bindings, logical = {}, [], []
    for spec, data_type, layout in zip(schema.input_fields, types, chosen):
        array = values(spec.c_name, numpy_dtype(data_type), sizes, rng)
        strides, binding, seen = _bound(array, layout, sizes, rng)
        tensors[spec.name] = dml.BufferTensorDesc(data_type, sizes, strides)
        bindings.append(binding)
        logical.append(np.ascontiguousarray(seen))
    out = schema.output_fields[0]
    tensors[out.name] = dml.BufferTensorDesc(types[-1], sizes)
    desc = schema.desc_class(**tensors)
    (got,) = DEVICE.compile_operator(DEVICE.create_operator(desc)).execute(bindings)
    (expected,) = case.reference(desc, logical)
    case.check(np.asarray(got), expected, desc, logical)


SCHEMAS = [getattr(element_wise_logical, name).schema for name in element_wise_logical.__all__]  # this module's
IN_PLACE = [s.operator_type for s in SCHEMAS if s.in_place]


@pytest.mark.parametrize("op", IN_PLACE, ids=lambda t: t.name)
def test_in_place_operators_write_over_their_first_input(op):
    case, schema = CASES[op], dml.REGISTRY[op]
    data_type = schema.support[0].tensors["OutputTensor"].data_types[-1]
    rng = np.random.default_rng(7)
    sizes = (3, 5)
    arrays = [(case.values or random_values)(s.c_name, numpy_dtype(data_type), sizes, rng) for s in schema.input_fields]
    desc = schema.desc_class(**{s.name: dml.BufferTensorDesc(data_type, sizes) for s in schema.tensor_fields})
    (expected,) = case.reference(desc, [a.copy() for a in arrays])
    buffer = arrays[0]
    DEVICE.compile_operator(DEVICE.create_operator(desc)).execute(arrays, [buffer])
    case.check(buffer, expected, desc, arrays)


def _quantize_desc(zero_point: bool, input_type=T.FLOAT32, scale_type=T.FLOAT32, sizes=(2, 3)):
    return dml.ElementWiseQuantizeLinearOperatorDesc(
        input_tensor=dml.BufferTensorDesc(input_type, sizes),
        scale_tensor=dml.BufferTensorDesc(scale_type, sizes),
        zero_point_tensor=dml.BufferTensorDesc(T.INT8, sizes) if zero_point else None,
        output_tensor=dml.BufferTensorDesc(T.INT8 if zero_point else T.UINT8, sizes),
    )


def test_the_zero_point_may_be_left_out_from_6_2_and_is_then_0():
    x, scale = np.array([[-3.5, 0.4, 2.5], [300, 127.5, -1]], np.float32), np.full((2, 3), 0.5, np.float32)
    desc = _quantize_desc(zero_point=False)
    device = dml.Device(feature_level=FL.FL_6_2)
    (got,) = device.compile_operator(device.create_operator(desc)).execute([x, scale, None])
    assert got.tolist() == [[0, 1, 5], [255, 255, 0]]
    assert dml.Device(feature_level=FL.FL_6_1).validate(desc) == [
        "DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR: ZeroPointTensor is NULL, but it is required at "
        "DML_FEATURE_LEVEL_6_1; DML_FEATURE_LEVEL_6_2 and above support it"
    ]
    assert F.element_wise_quantize_linear(x, scale).tolist() == [[0, 1, 5], [255, 255, 0]]
    assert F.element_wise_dequantize_linear(np.array([3], np.int16), np.array([0.25], np.float16)).tolist() == [0.75]


def test_the_scale_follows_the_input_type_but_int32_takes_float32():
    assert DEVICE.validate(_quantize_desc(True, T.INT32, T.FLOAT32)) == []
    assert DEVICE.validate(_quantize_desc(True, T.FLOAT16, T.FLOAT16)) == []
    assert DEVICE.validate(_quantize_desc(True, T.INT32, T.FLOAT16)) == [
        "DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR: ScaleTensor.DataType must be FLOAT32 since InputTensor.DataType "
        "is INT32, but FLOAT16 was provided"
    ]
    with pytest.raises(dml.InvalidArgumentError, match="ScaleTensor.DataType must be FLOAT16 since"):
        DEVICE.create_operator(_quantize_desc(True, T.FLOAT16, T.FLOAT32))


def test_dequantize_rounds_the_exact_product_once():
    """d * S (S odd, 24 bits) = (2q + 1) * 2^30 + 1 with q even: float64 keeps (2q + 1) * 2^30, a float32 tie that
    ties-to-even breaks downwards, while the exact product is just above it. Found by d = S^-1 mod 2^30."""
    pairs = [(1639997033, 15929817), (1826556837, 16573485), (1937880475, 16099475)]
    x = np.array([d for d, _ in pairs] + [-d for d, _ in pairs], np.int32)
    scale = np.array([S * 2.0**-24 for _, S in pairs] * 2, np.float32)
    naive = (x.astype(np.float64) * scale.astype(np.float64)).astype(np.float32)
    got = F.element_wise_dequantize_linear(x, scale, np.zeros_like(x))
    exact = [round_binary(int(d) * Fraction(float(s)), T.FLOAT32) for d, s in zip(x, scale)]
    assert got.tolist() == exact
    assert (naive != got).all()  # double rounding would be wrong on every one of them


def test_quantized_linear_add_rules():
    one, full = (1, 1), (2, 2)
    q8 = lambda sizes: dml.BufferTensorDesc(T.UINT8, sizes)  # noqa: E731
    f = lambda sizes: dml.BufferTensorDesc(T.FLOAT32, sizes)  # noqa: E731
    desc = dml.ElementWiseQuantizedLinearAddOperatorDesc(
        a_tensor=q8(full), a_scale_tensor=f(full), b_tensor=q8(full), b_scale_tensor=f(one),
        output_scale_tensor=f(one), output_tensor=q8((2, 1)),
    )  # fmt: skip
    assert DEVICE.validate(desc) == [
        "DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD: ATensor and OutputTensor must have the same Sizes, but "
        "ATensor has {2, 2} and OutputTensor has {2, 1}",
        "DML_OPERATOR_ELEMENT_WISE_QUANTIZED_LINEAR_ADD: AScaleTensor must hold one element (every size 1), but its "
        "Sizes are {2, 2}",
    ]
    a, b = np.array([[10, 20], [250, 0]], np.uint8), np.array([[5, 5], [255, 0]], np.uint8)
    s = lambda v: np.array([[v]], np.float32)  # noqa: E731
    z = lambda v: np.array([[v]], np.uint8)  # noqa: E731
    # (10-2)*.5 + (5-1)*.25 = 5 -> 5 + 3 = 8; 9 + 1 -> 13; 124 + 63.5 = 187.5 -> 188 (tie to even) + 3; -1.25 -> 2
    got = F.element_wise_quantized_linear_add(a, s(0.5), z(2), z(1), z(3), b=b, b_scale=s(0.25), output_scale=s(1.0))
    assert got.tolist() == [[8, 13], [191, 2]]


def test_functional_outputs_follow_the_output_rules():
    a, b = np.array([1.0, math.nan], np.float32), np.array([2.0, math.nan], np.float32)
    assert F.element_wise_logical_less_than(a, b).dtype == np.uint8
    assert F.element_wise_logical_less_than(a, b).tolist() == [1, 0]
    assert F.element_wise_logical_equals(a, b, output_data_type=T.UINT32).dtype == np.uint32
    assert F.element_wise_is_nan(a).tolist() == [0, 1]
    assert F.element_wise_is_infinity(
        np.array([-math.inf], np.float16), infinity_mode=dml.IsInfinityMode.POSITIVE
    ).tolist() == [0]
    assert F.element_wise_bit_count(np.array([255], np.uint16)).dtype == np.uint8
    assert F.element_wise_logical_and(np.array([7], np.uint32), np.array([9], np.uint32)).dtype == np.uint32
    zp = np.array([0], np.int8)
    assert F.element_wise_quantize_linear(np.array([200.0], np.float32), np.array([1.0], np.float32), zp).tolist() == [
        127
    ]


def test_in_place_exactly_where_the_pages_say_so():
    """LOGICAL_AND/OR/XOR/NOT and the BIT operators but BIT_COUNT say "supports in-place execution"; the tests,
    comparisons and quantization operators do not."""
    said = {f"LOGICAL_{op}" for op in ("AND", "OR", "XOR", "NOT")}
    said |= {f"BIT_{op}" for op in ("AND", "OR", "XOR", "NOT", "SHIFT_LEFT", "SHIFT_RIGHT")}
    assert {s.operator_type.name.removeprefix("ELEMENT_WISE_") for s in SCHEMAS if s.in_place} == said
    assert len(SCHEMAS) == 21
