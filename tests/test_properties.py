"""Hypothesis property tests: random ranks (1..8), small shapes, axis subsets in random order, directions and the
data types of every support row (run on a Device at that row's feature level), compared with tests/reference.py,
plus invariants that hold whatever the reference says.

Deterministic in CI: ``derandomize=True`` and no example database.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import reference as ref
from cases.activation import float32_ulps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import opendml as dml
from opendml import AxisDirection, OperatorType, TensorDataType

T = TensorDataType
MAX_ELEMENTS = 120

SETTINGS = settings(
    deadline=None,
    max_examples=100,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_np = ref.numpy_dtype


@functools.cache
def _device(feature_level) -> dml.Device:
    return dml.Device(feature_level=feature_level)


# ----------------------------------------------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------------------------------------------


@st.composite
def supported(draw, op: OperatorType, tensor: str = "InputTensor"):
    """(device at the row's feature level, the row, a data type and a dimension count the row supports)."""
    row = draw(st.sampled_from(dml.REGISTRY[op].support))
    cell = row.tensors[tensor]
    data_type = draw(st.sampled_from(cell.data_types))
    ndim = draw(st.integers(cell.min_dims, cell.max_dims))
    return _device(row.feature_level), row, data_type, ndim


@st.composite
def shapes(draw, ndim: int):
    sizes = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    while math.prod(sizes) > MAX_ELEMENTS:
        sizes[sizes.index(max(sizes))] -= 1
    return tuple(sizes)


@st.composite
def axes_of(draw, ndim: int):
    """A non-empty subset of range(ndim), listed in a random order."""
    order = draw(st.permutations(list(range(ndim))))
    count = draw(st.integers(1, ndim))
    return tuple(order[:count])


SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 0.0]


def elements(dtype: np.dtype, *, specials: bool = True, extremes: bool = True):
    """Few distinct values (ties are common), values over the type's range, and optionally NaN/+-inf/-0.0."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = st.integers(max(int(info.min), -2), min(int(info.max), 3))
        edges = st.sampled_from([int(info.min), int(info.max), int(info.max) - 1, int(info.min) + 1])
        return st.one_of(small, small, st.integers(int(info.min), int(info.max)), edges)
    width = dtype.itemsize * 8
    small = st.integers(-2, 3).map(float)
    spread = st.floats(-12, 12, width=width)
    choices = [small, small, spread]
    if extremes:  # up to the type's largest magnitudes
        choices.append(st.floats(width=width, allow_nan=False, allow_infinity=False))
    if specials:
        choices.append(st.sampled_from(SPECIAL_FLOATS))
    return st.one_of(*choices)


def arrays(dtype: np.dtype, shape, *, specials: bool = True, extremes: bool = True):
    return hnp.arrays(dtype, shape, elements=elements(dtype, specials=specials, extremes=extremes))


# ----------------------------------------------------------------------------------------------------------------
# opendml through the device API
# ----------------------------------------------------------------------------------------------------------------


def _execute(device, desc, inputs):
    (result,) = device.compile_operator(device.create_operator(desc)).execute(list(inputs))
    return np.asarray(result)


def run_hardmax(device, x, axes):
    t = dml.BufferTensorDesc.like(x)
    return _execute(device, dml.ActivationHardmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=axes), [x])


def run_log_softmax(device, x, axes):
    t = dml.BufferTensorDesc.like(x)
    return _execute(device, dml.ActivationLogSoftmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=axes), [x])


def run_argmax(device, x, axes, direction, out_type):
    sizes = tuple(1 if d in set(axes) else s for d, s in enumerate(x.shape))
    desc = dml.ArgmaxOperatorDesc(
        input_tensor=dml.BufferTensorDesc.like(x),
        output_tensor=dml.BufferTensorDesc(out_type, sizes),
        axes=axes,
        axis_direction=direction,
    )
    return _execute(device, desc, [x])


def run_if(device, cond, a, b):
    t = dml.BufferTensorDesc.like(a)
    desc = dml.ElementWiseIfOperatorDesc(
        condition_tensor=dml.BufferTensorDesc.like(cond), a_tensor=t, b_tensor=t, output_tensor=t
    )
    return _execute(device, desc, [cond, a, b])


def run_hard_sigmoid(device, x, alpha, beta):
    t = dml.BufferTensorDesc.like(x)
    desc = dml.ActivationHardSigmoidOperatorDesc(input_tensor=t, output_tensor=t, alpha=alpha, beta=beta)
    return _execute(device, desc, [x])


def _is_max_of(value, values) -> bool:
    """``value`` is a maximum of ``values`` with NaN greater than every number."""
    if any(v != v for v in values):
        return value != value
    return value == max(values)


# ----------------------------------------------------------------------------------------------------------------
# Against the reference
# ----------------------------------------------------------------------------------------------------------------


def draw_argmax(data, case):
    """Draw an ARGMAX case (input, axes, direction, output type) and run it: (x, axes, direction, type, result)."""
    device, row, data_type, ndim = case
    x = data.draw(arrays(_np(data_type), data.draw(shapes(ndim))), label="x")
    axes = data.draw(axes_of(ndim), label="axes")
    direction = data.draw(st.sampled_from(list(AxisDirection)), label="direction")
    out_type = data.draw(st.sampled_from(row.tensors["OutputTensor"].data_types), label="output type")
    return x, axes, direction, out_type, run_argmax(device, x, axes, direction, out_type)


@SETTINGS
@given(data=st.data(), case=supported(OperatorType.ACTIVATION_HARDMAX1))
def test_hardmax1_matches_reference(data, case):
    device, _, data_type, ndim = case
    x = data.draw(arrays(_np(data_type), data.draw(shapes(ndim))), label="x")
    axes = data.draw(axes_of(ndim), label="axes")
    ref.assert_bits_equal(run_hardmax(device, x, axes), ref.hardmax1(x, axes), f"axes={axes}")


@SETTINGS
@given(data=st.data(), case=supported(OperatorType.ACTIVATION_LOG_SOFTMAX1))
def test_log_softmax1_matches_reference(data, case):
    device, _, data_type, ndim = case
    x = data.draw(arrays(_np(data_type), data.draw(shapes(ndim))), label="x")
    axes = data.draw(axes_of(ndim), label="axes")
    got = run_log_softmax(device, x, axes)
    assert got.dtype == x.dtype
    bound = float32_ulps("log_softmax", device)
    ref.assert_log_softmax_close(got, ref.log_softmax1(x, axes), f"axes={axes}", float32_ulps=bound)


@SETTINGS
@given(data=st.data(), case=supported(OperatorType.ARGMAX))
def test_argmax_matches_reference(data, case):
    x, axes, direction, out_type, got = draw_argmax(data, case)
    expected = ref.argmax(x, axes, int(direction))
    assert got.dtype == _np(out_type)
    assert got.shape == expected.shape
    assert got.astype(np.int64).tolist() == expected.tolist()


@SETTINGS
@given(data=st.data(), case=supported(OperatorType.ELEMENT_WISE_IF, "ATensor"))
def test_element_wise_if_matches_reference(data, case):
    device, _, data_type, ndim = case
    dtype = _np(data_type)
    shape = data.draw(shapes(ndim))
    raw = hnp.arrays(np.uint8, shape + (dtype.itemsize,))  # any bit pattern: NaN payloads, -0.0, subnormals
    a = data.draw(raw, label="a bytes").view(dtype).reshape(shape)
    b = data.draw(raw, label="b bytes").view(dtype).reshape(shape)
    cond = data.draw(hnp.arrays(np.uint8, shape, elements=st.one_of(st.just(0), st.integers(0, 255))), label="cond")
    got = run_if(device, cond, a, b)
    ref.assert_bits_equal(got, ref.element_wise_if(cond, a, b))
    # invariant: every element's bits come from a where cond != 0, from b elsewhere
    uint = np.dtype(f"u{dtype.itemsize}")
    assert np.array_equal(got.view(uint), np.where(cond != 0, a.view(uint), b.view(uint)))


FLOAT_PARAMETER = st.floats(-4, 4, allow_nan=False, allow_infinity=False, width=32)


@SETTINGS
@given(
    data=st.data(), case=supported(OperatorType.ACTIVATION_HARD_SIGMOID), alpha=FLOAT_PARAMETER, beta=FLOAT_PARAMETER
)
def test_hard_sigmoid_matches_reference(data, case, alpha, beta):
    device, _, data_type, ndim = case
    dtype = _np(data_type)
    x = data.draw(arrays(dtype, data.draw(shapes(ndim))), label="x")
    if alpha == 0:  # 0 * inf is not defined by the contract
        x = np.where(np.isinf(x), dtype.type(1), x).astype(dtype)
    got = run_hard_sigmoid(device, x, alpha, beta)
    assert got.dtype == dtype
    ref.assert_hard_sigmoid_close(got, ref.hard_sigmoid(x, alpha, beta), x, alpha, beta)


# ----------------------------------------------------------------------------------------------------------------
# Invariants
# ----------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(data=st.data(), case=supported(OperatorType.ACTIVATION_HARDMAX1))
def test_hardmax1_one_hot_on_a_maximum(data, case):
    device, _, data_type, ndim = case
    x = data.draw(arrays(_np(data_type), data.draw(shapes(ndim))), label="x")
    axes = data.draw(axes_of(ndim), label="axes")
    got = run_hardmax(device, x, axes)
    assert set(np.unique(got.astype(np.float64)).tolist()) <= {0.0, 1.0}
    assert not np.signbit(got).any()  # zeros are +0.0
    for _, members in ref.groups(x.shape, axes):
        ones = [c for c in members if got[c] == 1]
        assert len(ones) == 1, (members, got)
        values = [x[c].item() for c in members]
        assert _is_max_of(x[ones[0]].item(), values)
        # and it is the first of the maxima in row-major order over the reduced axes
        first = next(c for c, v in zip(members, values) if _is_max_of(v, values))
        assert ones[0] == first


@SETTINGS
@given(data=st.data(), case=supported(OperatorType.ACTIVATION_LOG_SOFTMAX1))
def test_log_softmax1_exp_sums_to_one(data, case):
    device, _, data_type, ndim = case
    dtype = _np(data_type)
    x = data.draw(arrays(dtype, data.draw(shapes(ndim)), specials=False, extremes=False), label="x")
    axes = data.draw(axes_of(ndim), label="axes")
    got = run_log_softmax(device, x, axes).astype(np.float64)
    assert np.isfinite(got).all() and (got <= 0).all()
    tolerance = 1e-5 if dtype == np.float32 else 1e-2
    for _, members in ref.groups(x.shape, axes):
        total = math.fsum(math.exp(got[c]) for c in members)
        assert abs(total - 1) <= tolerance, (total, members)
        # log_softmax is x shifted by one constant per group, up to the rounding of each output element
        shifts = [float(x[c]) - got[c] for c in members]
        rounding = 2 * max(float(np.spacing(dtype.type(abs(got[c])))) for c in members)
        assert max(shifts) - min(shifts) <= 8 * tolerance * (1 + max(abs(s) for s in shifts)) + rounding


@SETTINGS
@given(data=st.data(), case=supported(OperatorType.ARGMAX))
def test_argmax_points_at_a_group_maximum(data, case):
    x, axes, direction, _, got = draw_argmax(data, case)
    for where, members in ref.groups(x.shape, axes):
        index = int(got[where])
        assert 0 <= index < len(members)
        values = [x[c].item() for c in members]
        assert _is_max_of(values[index], values)
        maxima = [i for i, v in enumerate(values) if _is_max_of(v, values)]
        assert index == (maxima[0] if direction == AxisDirection.INCREASING else maxima[-1])


@SETTINGS
@given(
    data=st.data(), case=supported(OperatorType.ACTIVATION_HARD_SIGMOID), alpha=FLOAT_PARAMETER, beta=FLOAT_PARAMETER
)
def test_hard_sigmoid_bounded_and_monotone(data, case, alpha, beta):
    device, _, data_type, ndim = case
    dtype = _np(data_type)
    x = data.draw(arrays(dtype, data.draw(shapes(ndim)), specials=False), label="x")
    got = run_hard_sigmoid(device, x, alpha, beta).astype(np.float64)
    assert ((got >= 0) & (got <= 1)).all()
    flat_x, flat_y = x.astype(np.float64).ravel(), got.ravel()
    order = np.argsort(flat_x, kind="stable")
    steps = np.diff(flat_y[order])
    if alpha > 0:
        assert (steps >= 0).all(), (flat_x[order], flat_y[order])
    elif alpha < 0:
        assert (steps <= 0).all(), (flat_x[order], flat_y[order])
    else:
        assert (steps == 0).all()


@SETTINGS
@given(data=st.data(), op=st.sampled_from(["hardmax", "log_softmax", "argmax"]))
def test_listed_axis_order_never_matters(data, op):
    schema_op = {
        "hardmax": OperatorType.ACTIVATION_HARDMAX1,
        "log_softmax": OperatorType.ACTIVATION_LOG_SOFTMAX1,
        "argmax": OperatorType.ARGMAX,
    }[op]
    device, row, data_type, ndim = data.draw(supported(schema_op), label="case")
    x = data.draw(arrays(_np(data_type), data.draw(shapes(ndim))), label="x")
    axes = data.draw(axes_of(ndim), label="axes")
    permuted = tuple(data.draw(st.permutations(list(axes)), label="permuted"))
    if op == "hardmax":
        results = [run_hardmax(device, x, a) for a in (axes, permuted, tuple(sorted(axes)))]
    elif op == "log_softmax":
        results = [run_log_softmax(device, x, a) for a in (axes, permuted, tuple(sorted(axes)))]
    else:
        direction = data.draw(st.sampled_from(list(AxisDirection)), label="direction")
        out_type = data.draw(st.sampled_from(row.tensors["OutputTensor"].data_types), label="output type")
        results = [run_argmax(device, x, a, direction, out_type) for a in (axes, permuted, tuple(sorted(axes)))]
    for other in results[1:]:
        ref.assert_bits_equal(other, results[0], f"{op} axes {axes} vs permuted")
