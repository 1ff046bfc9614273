"""Hypothesis properties of the ELEMENT_WISE arithmetic and transcendental members, for a representative set:
NumPy broadcasting through the functional layer (zero strides) against the reference on expanded arrays; the
result independent of the memory layout (permuted, padded and broadcast strides); in place equal to out of place.

Deterministic: ``derandomize=True`` and no example database.
"""

from __future__ import annotations

import numpy as np
import pytest
from cases import CASES, execute, make_desc, rng_for, schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import functional as F

OT, T = dml.OperatorType, dml.TensorDataType
SETTINGS = settings(
    deadline=None, max_examples=20, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
BINARY = [
    OT.ELEMENT_WISE_ADD,
    OT.ELEMENT_WISE_SUBTRACT,
    OT.ELEMENT_WISE_MULTIPLY,
    OT.ELEMENT_WISE_DIVIDE,
    OT.ELEMENT_WISE_MAX,
    OT.ELEMENT_WISE_MEAN,
    OT.ELEMENT_WISE_MODULUS_FLOOR,
    OT.ELEMENT_WISE_ATAN_YX,
    OT.ELEMENT_WISE_POW,
]
UNARY = [
    OT.ELEMENT_WISE_IDENTITY,
    OT.ELEMENT_WISE_ABS,
    OT.ELEMENT_WISE_EXP,
    OT.ELEMENT_WISE_CLIP,
    OT.ELEMENT_WISE_ROUND,
    OT.ELEMENT_WISE_ERF,
]


def top_types(op) -> tuple:
    return schema(CASES[op]).support_rows()[0].tensors[schema(CASES[op]).input_fields[0].c_name].data_types


def values(op, data_type, shape, seed: int) -> np.ndarray:
    case = CASES[op]
    from cases import random_values

    return (case.values or random_values)("ATensor", np.dtype(dml.tensor.numpy_dtype(data_type)), shape, rng_for(seed))


@st.composite
def broadcast_shapes(draw):
    """Two shapes NumPy broadcasts: b drops leading dimensions of a and has some of the rest as 1 (or a does)."""
    rank = draw(st.integers(1, 4))
    full = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    dropped = draw(st.integers(0, rank - 1))
    ones = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
    a = tuple(1 if one and draw(st.booleans()) else size for size, one in zip(full, ones))
    b = tuple(1 if one else size for size, one in zip(full, ones))[dropped:]
    return (a, b) if draw(st.booleans()) else (b, a)


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.name)
@SETTINGS
@given(data=st.data())
def test_functional_layer_broadcasts_as_numpy(op, data):
    shape_a, shape_b = data.draw(broadcast_shapes())
    data_type = data.draw(st.sampled_from(top_types(op)))
    seed = data.draw(st.integers(0, 2**16))
    a, b = values(op, data_type, shape_a, seed), values(op, data_type, shape_b, seed + 1)
    got = getattr(F, op.name.lower())(a, b)
    wide_a, wide_b = (np.ascontiguousarray(x) for x in np.broadcast_arrays(a, b))
    if not wide_a.ndim:
        return
    desc = make_desc(
        CASES[op],
        wide_a.shape,
        dict.fromkeys(("ATensor", "BTensor", "InputTensor", "ExponentTensor", "OutputTensor"), data_type),
        rng_for(),
        params={},
    )
    (expected,) = CASES[op].reference(desc, [wide_a, wide_b])
    assert got.shape == wide_a.shape
    CASES[op].check(got, expected, desc, [wide_a, wide_b])


@st.composite
def layout(draw, sizes: tuple[int, ...], *, output: bool):
    """Strides for ``sizes``: dimensions in a random order, padded; inputs may broadcast a size-1 dimension."""
    order = draw(st.permutations(range(len(sizes))))
    strides, step = [0] * len(sizes), 1
    for d in reversed(order):
        strides[d] = step
        step *= sizes[d] + draw(st.integers(0, 2))
    if not output:
        strides = [0 if size == 1 and draw(st.booleans()) else s for size, s in zip(sizes, strides)]
    return tuple(strides)


def _placed(array: np.ndarray, strides: tuple[int, ...]) -> tuple[dml.BufferBinding, np.ndarray]:
    """A buffer holding ``array`` at ``strides`` (in elements), and the strided view of it."""
    extent = sum((n - 1) * s for n, s in zip(array.shape, strides)) + 1
    buffer = np.zeros(-(-extent * array.itemsize // 16) * 16 // array.itemsize + 16, array.dtype)
    view = np.lib.stride_tricks.as_strided(buffer, array.shape, [s * array.itemsize for s in strides])
    view[...] = array
    return dml.BufferBinding(buffer), view


@pytest.mark.parametrize("op", UNARY + BINARY[:3], ids=lambda op: op.name)
@SETTINGS
@given(data=st.data())
def test_results_do_not_depend_on_the_layout(op, data):
    case, s = CASES[op], schema(CASES[op])
    rank = data.draw(st.integers(1, 4))
    sizes = tuple(data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    data_type = data.draw(st.sampled_from(top_types(op)))
    rng = rng_for(op.name, sizes, data_type.name, data.draw(st.integers(0, 1000)))
    types = {spec.c_name: data_type for spec in s.tensor_fields}
    params = case.params(rank, rng)
    packed = make_desc(case, sizes, types, rng, params=params)
    inputs = [values(op, data_type, sizes, int(rng.integers(1 << 30))) for _ in s.input_fields]
    (expected,) = execute(packed, inputs, dml.Device().kernels)  # the default backend, packed
    strides = {spec.c_name: data.draw(layout(sizes, output=spec.is_output)) for spec in s.tensor_fields}
    # a broadcast input repeats one element along its zero-stride dimensions
    for spec, array in zip(s.input_fields, inputs):
        for d, stride in enumerate(strides[spec.c_name]):
            if stride == 0:
                array[...] = np.take(array, [0], axis=d)
    (expected,) = execute(packed, inputs, dml.Device().kernels)  # the default backend, packed
    strided = make_desc(case, sizes, types, rng, params=params, strides=strides)
    bindings = [_placed(array, strides[spec.c_name])[0] for spec, array in zip(s.input_fields, inputs)]
    out_binding, out_view = _placed(np.zeros(sizes, expected.dtype), strides[s.output_fields[0].c_name])
    device = dml.Device()
    device.compile_operator(device.create_operator(strided)).execute(bindings, [out_binding])
    assert out_view.tobytes() == np.ascontiguousarray(expected).tobytes()


@pytest.mark.parametrize("op", UNARY + BINARY, ids=lambda op: op.name)
def test_in_place_equals_out_of_place(op):
    case, s = CASES[op], schema(CASES[op])
    for i, data_type in enumerate(top_types(op)):
        rng = rng_for("in place", op.name, i)
        types = {spec.c_name: data_type for spec in s.tensor_fields}
        desc = make_desc(case, (4, 5), types, rng, params=case.params(2, rng))  # whole DWORDs for every type
        inputs = [values(op, data_type, (4, 5), int(rng.integers(1 << 30))) for _ in s.input_fields]
        (expected,) = execute(desc, inputs, dml.Device().kernels)  # the default backend's own rounding
        aliased = inputs[0].copy()
        device = dml.Device()
        compiled = device.compile_operator(device.create_operator(desc))
        compiled.execute([dml.BufferBinding(aliased), *inputs[1:]], [dml.BufferBinding(aliased)])
        assert aliased.tobytes() == expected.tobytes(), data_type
