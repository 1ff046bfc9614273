"""opendml against tests/reference.py: every operator x every data type of its highest support row x rank 1..8.

HARDMAX1, ARGMAX and ELEMENT_WISE_IF must match the reference bit for bit; LOG_SOFTMAX1 and HARD_SIGMOID must be
within the error bounds of the contract (see reference.py). Tensors are tiny (at most ~200 elements) and every
random draw comes from a numpy Generator seeded by the test's parameters, so the file is deterministic.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
import reference as ref
from cases.activation import float32_ulps

import opendml as dml
from opendml import AxisDirection, OperatorType, TensorDataType
from opendml import functional as F

T = TensorDataType
DEVICE = dml.Device()
LOG_SOFTMAX_ULPS = float32_ulps("log_softmax", DEVICE)
MAX_ELEMENTS = 200


# ----------------------------------------------------------------------------------------------------------------
# The support table decides what is tested
# ----------------------------------------------------------------------------------------------------------------


def _top_row(op: OperatorType):
    return dml.REGISTRY[op].support[0]  # highest feature level first


def _cases(op: OperatorType, tensor: str):
    cell = _top_row(op).tensors[tensor]
    return [
        pytest.param(t, n, id=f"{t.name}-{n}d")
        for t in cell.data_types
        for n in range(cell.min_dims, cell.max_dims + 1)
    ]


_np = ref.numpy_dtype


ARGMAX_OUTPUT_TYPES = _top_row(OperatorType.ARGMAX).tensors["OutputTensor"].data_types


def test_support_rows_are_what_the_contract_lists():
    """The parametrisation below is driven by the table; make sure the table covers the contract's types."""
    assert set(_top_row(OperatorType.ELEMENT_WISE_IF).tensors["ATensor"].data_types) == {
        T.FLOAT64, T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8
    }  # fmt: skip
    assert _top_row(OperatorType.ELEMENT_WISE_IF).tensors["ConditionTensor"].data_types == (T.UINT8,)
    assert set(_top_row(OperatorType.ARGMAX).tensors["InputTensor"].data_types) == {
        T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8
    }  # fmt: skip
    assert set(ARGMAX_OUTPUT_TYPES) == {T.INT32, T.INT64, T.UINT32, T.UINT64}
    for op in (OperatorType.ACTIVATION_HARDMAX1, OperatorType.ACTIVATION_LOG_SOFTMAX1,
               OperatorType.ACTIVATION_HARD_SIGMOID):  # fmt: skip
        cell = _top_row(op).tensors["InputTensor"]
        assert set(cell.data_types) == {T.FLOAT32, T.FLOAT16}
        assert (cell.min_dims, cell.max_dims) == (1, 8)


# ----------------------------------------------------------------------------------------------------------------
# Running opendml through the device API
# ----------------------------------------------------------------------------------------------------------------


def _execute(desc, inputs):
    compiled = DEVICE.compile_operator(DEVICE.create_operator(desc))
    (result,) = compiled.execute(list(inputs))
    return np.asarray(result)


def run_hardmax(x, axes):
    t = dml.BufferTensorDesc.like(x)
    return _execute(dml.ActivationHardmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=axes), [x])


def run_log_softmax(x, axes):
    t = dml.BufferTensorDesc.like(x)
    return _execute(dml.ActivationLogSoftmax1OperatorDesc(input_tensor=t, output_tensor=t, axes=axes), [x])


def run_if(cond, a, b):
    ta = dml.BufferTensorDesc.like(a)
    desc = dml.ElementWiseIfOperatorDesc(
        condition_tensor=dml.BufferTensorDesc.like(cond), a_tensor=ta, b_tensor=ta, output_tensor=ta
    )
    return _execute(desc, [cond, a, b])


def run_argmax(x, axes, direction, out_type):
    reduced = set(axes)
    sizes = tuple(1 if d in reduced else s for d, s in enumerate(x.shape))
    desc = dml.ArgmaxOperatorDesc(
        input_tensor=dml.BufferTensorDesc.like(x),
        output_tensor=dml.BufferTensorDesc(out_type, sizes),
        axes=axes,
        axis_direction=direction,
    )
    return _execute(desc, [x])


def run_hard_sigmoid(x, alpha, beta):
    t = dml.BufferTensorDesc.like(x)
    desc = dml.ActivationHardSigmoidOperatorDesc(input_tensor=t, output_tensor=t, alpha=alpha, beta=beta)
    return _execute(desc, [x])


# ----------------------------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------------------------


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _shape(rng: np.random.Generator, ndim: int) -> tuple[int, ...]:
    sizes = [int(s) for s in rng.integers(1, 4, size=ndim)]
    while math.prod(sizes) > MAX_ELEMENTS:
        sizes[sizes.index(max(sizes))] -= 1
    if math.prod(sizes) == 1 and ndim:  # make sure something is reduced in most cases
        sizes[int(rng.integers(ndim))] = 3
    return tuple(sizes)


def _values(rng: np.random.Generator, dtype: np.dtype, shape, kind: str) -> np.ndarray:
    """``ties``: a handful of distinct values so equal maxima are common; ``wide``: spread over the type."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if kind == "ties":
            low = -3 if info.min < 0 else 0
            return rng.integers(low, low + 7, size=shape).astype(dtype)
        extremes = np.array([info.min, info.min + 1, 0, info.max - 1, info.max], dtype=dtype)
        values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        pick = rng.random(shape) < 0.4
        values[pick] = rng.choice(extremes, size=int(pick.sum()))
        return values
    if kind == "ties":
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return (rng.standard_normal(shape) * 2).astype(dtype)


def _axis_subsets(rng: np.random.Generator, ndim: int) -> list[tuple[int, ...]]:
    """Every single axis, all axes (ascending and descending), and three random subsets in random order."""
    subsets = [(d,) for d in range(ndim)]
    subsets.append(tuple(range(ndim)))
    if ndim > 1:
        subsets.append(tuple(reversed(range(ndim))))
        for _ in range(3):
            count = int(rng.integers(2, ndim + 1))
            subsets.append(tuple(int(a) for a in rng.permutation(ndim)[:count]))
    return subsets


# ----------------------------------------------------------------------------------------------------------------
# The reference itself, on the documented examples (a wrong reference would make every comparison meaningless)
# ----------------------------------------------------------------------------------------------------------------


def test_reference_matches_documented_examples():
    x = np.array([[[12, 0], [-101, 11]], [[3, 234], [0, -101]]], dtype=np.float32)
    np.testing.assert_array_equal(ref.hardmax1(x, [1]), [[[1, 0], [0, 1]], [[1, 1], [0, 0]]])
    np.testing.assert_array_equal(ref.hardmax1(x, [0]), [[[1, 0], [0, 1]], [[0, 1], [1, 0]]])
    np.testing.assert_array_equal(ref.hardmax1(x, [0, 2]), [[[0, 0], [0, 1]], [[0, 1], [0, 0]]])
    m = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)
    np.testing.assert_array_equal(ref.argmax(m, [0]), [[1, 2, 1]])
    np.testing.assert_array_equal(ref.argmax(m, [1]), [[2], [2], [1]])
    np.testing.assert_array_equal(ref.argmax(m, [0, 1]), [[7]])
    np.testing.assert_array_equal(ref.argmax(m, [1, 0]), [[7]])
    v = np.array([3, 2, 1, 2, 3], dtype=np.float32)
    assert ref.argmax(v, [0], ref.INCREASING).tolist() == [0]
    assert ref.argmax(v, [0], ref.DECREASING).tolist() == [4]
    c = ref.element_wise_if(
        np.array([[1, 0], [1, 1]], np.uint8), np.array([[1, 2], [3, 4]], np.int32), np.array([[9, 8], [7, 6]], np.int32)
    )
    np.testing.assert_array_equal(c, [[1, 8], [3, 4]])
    lsm = ref.log_softmax1(x, [1])
    np.testing.assert_allclose(
        lsm.astype(np.float32),
        [[[0, -11.00002], [-113, -1.670156e-05]], [[-0.04858735, 0], [-3.048587, -335]]],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        ref.log_softmax1(x, [0, 2]).astype(np.float32),
        [[[-222, -234], [-112, -1.670156e-05]], [[-231, 0], [-11.00002, -112]]],
        rtol=1e-6,
    )
    alpha32 = float(np.float32(0.2))  # 0.20000000298...: alpha is a C FLOAT
    np.testing.assert_array_equal(
        ref.hard_sigmoid(np.array([-5.0, -2.5, 0.0, 1.0, 2.5, 9.0], np.float32), 0.2, 0.5),
        [0, 0, 0.5, alpha32 + 0.5, 1, 1],
    )
    # The multi-axis index counts over the reduced axes in ascending order, whatever order they are listed in.
    t = np.zeros((2, 3, 4), np.float32)
    t[1, 2, 3] = 1
    assert ref.argmax(t, [0, 2]).tolist() == [[[0], [0], [7]]]
    assert ref.argmax(t, [2, 0]).tolist() == [[[0], [0], [7]]]


# ----------------------------------------------------------------------------------------------------------------
# Every operator x every type x every rank
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("data_type, ndim", _cases(OperatorType.ACTIVATION_HARDMAX1, "InputTensor"))
def test_hardmax1_matches_reference(data_type, ndim):
    rng = _rng("hardmax", data_type.name, ndim)
    dtype = _np(data_type)
    for kind in ("ties", "wide"):
        x = _values(rng, dtype, _shape(rng, ndim), kind)
        for axes in _axis_subsets(rng, ndim):
            got = run_hardmax(x, axes)
            ref.assert_bits_equal(got, ref.hardmax1(x, axes), f"hardmax1 {kind} axes={axes} x={x!r}")


@pytest.mark.parametrize("data_type, ndim", _cases(OperatorType.ACTIVATION_LOG_SOFTMAX1, "InputTensor"))
def test_log_softmax1_matches_reference(data_type, ndim):
    rng = _rng("log_softmax", data_type.name, ndim)
    dtype = _np(data_type)
    for kind in ("ties", "wide"):
        x = _values(rng, dtype, _shape(rng, ndim), kind)
        for axes in _axis_subsets(rng, ndim):
            got = run_log_softmax(x, axes)
            assert got.dtype == dtype
            ref.assert_log_softmax_close(
                got,
                ref.log_softmax1(x, axes),
                f"log_softmax1 {kind} axes={axes} x={x!r}",
                float32_ulps=LOG_SOFTMAX_ULPS,
            )


@pytest.mark.parametrize("data_type, ndim", _cases(OperatorType.ELEMENT_WISE_IF, "ATensor"))
def test_element_wise_if_matches_reference(data_type, ndim):
    rng = _rng("if", data_type.name, ndim)
    dtype = _np(data_type)
    for _ in range(3):
        shape = _shape(rng, ndim)
        count = math.prod(shape)
        # Random bytes: for float types this includes NaNs with payloads, infinities, -0.0 and subnormals.
        a = rng.integers(0, 256, size=count * dtype.itemsize, dtype=np.uint8).view(dtype).reshape(shape)
        b = rng.integers(0, 256, size=count * dtype.itemsize, dtype=np.uint8).view(dtype).reshape(shape)
        cond = (rng.integers(1, 256, size=shape) * (rng.random(shape) < 0.5)).astype(np.uint8)
        got = run_if(cond, a, b)
        expected = ref.element_wise_if(cond, a, b)
        ref.assert_bits_equal(got, expected, f"if cond={cond!r}")


@pytest.mark.parametrize("data_type, ndim", _cases(OperatorType.ARGMAX, "InputTensor"))
def test_argmax_matches_reference(data_type, ndim):
    rng = _rng("argmax", data_type.name, ndim)
    dtype = _np(data_type)
    for kind in ("ties", "wide"):
        x = _values(rng, dtype, _shape(rng, ndim), kind)
        for axes in _axis_subsets(rng, ndim):
            for direction in (AxisDirection.INCREASING, AxisDirection.DECREASING):
                expected = ref.argmax(x, axes, int(direction))
                for out_type in ARGMAX_OUTPUT_TYPES:
                    got = run_argmax(x, axes, direction, out_type)
                    context = f"argmax {kind} axes={axes} {direction.name} {out_type.name} x={x!r}"
                    assert got.dtype == _np(out_type), context
                    assert got.shape == expected.shape, context
                    assert got.astype(np.int64).tolist() == expected.tolist(), context


HARD_SIGMOID_PARAMETERS = [(0.2, 0.5), (1 / 6, 0.5), (-0.7, 0.3), (2.5, -1.1), (0.0, 0.25), (1e-3, 0.999), (3.0, 0.1)]


@pytest.mark.parametrize("data_type, ndim", _cases(OperatorType.ACTIVATION_HARD_SIGMOID, "InputTensor"))
def test_hard_sigmoid_matches_reference(data_type, ndim):
    rng = _rng("hard_sigmoid", data_type.name, ndim)
    dtype = _np(data_type)
    for alpha, beta in HARD_SIGMOID_PARAMETERS:
        for kind in ("ties", "wide"):
            x = _values(rng, dtype, _shape(rng, ndim), kind)
            got = run_hard_sigmoid(x, alpha, beta)
            assert got.dtype == dtype
            expected = ref.hard_sigmoid(x, alpha, beta)
            ref.assert_hard_sigmoid_close(got, expected, x, alpha, beta, f"hard_sigmoid {alpha},{beta} x={x!r}")


# ----------------------------------------------------------------------------------------------------------------
# Special values
# ----------------------------------------------------------------------------------------------------------------

NAN, INF = math.nan, math.inf
FLOATS = [np.float32, np.float16]


@pytest.mark.parametrize("dtype", FLOATS)
def test_hardmax1_nan_and_special_ties(dtype):
    rows = [
        [1, NAN, 3, NAN],  # first NaN wins over larger numbers
        [NAN, NAN, NAN, NAN],  # all NaN: the first
        [-INF, -INF, -INF, -INF],  # all -inf: a tie, the first
        [-0.0, 0.0, -0.0, 0.0],  # signed zeros are equal: the first
        [2, INF, -1, INF],  # +inf ties
        [-INF, -3, -INF, -3],
    ]
    x = np.array(rows, dtype=dtype)
    expected = np.array(
        [[0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0]], dtype=dtype
    )
    ref.assert_bits_equal(ref.hardmax1(x, [1]), expected, "reference")
    ref.assert_bits_equal(run_hardmax(x, [1]), expected, "hardmax1 axis 1")
    # Over both axes the first NaN in row-major order (row 0, column 1) wins.
    both = np.zeros_like(x)
    both[0, 1] = 1
    ref.assert_bits_equal(run_hardmax(x, [0, 1]), both, "hardmax1 axes 0,1")
    ref.assert_bits_equal(run_hardmax(x, [1, 0]), both, "hardmax1 axes 1,0")
    # Down the columns (column 1 has NaNs in rows 0 and 1: row 0 wins).
    ref.assert_bits_equal(run_hardmax(x, [0]), ref.hardmax1(x, [0]), "hardmax1 axis 0")


@pytest.mark.parametrize("dtype", FLOATS)
def test_hardmax1_nan_in_multi_axis_group(dtype):
    x = np.zeros((2, 3, 2), dtype=dtype)
    x[0, 2, 1] = 5
    x[1, 0, 1] = NAN  # group j=0 over axes (0, 2): NaN at (1,0,1) beats nothing else; group j=2: 5 at (0,2,1)
    x[1, 2, 0] = NAN
    expected = np.zeros_like(x)
    expected[1, 0, 1] = 1  # j=0: values (0,0,0)=0,(0,0,1)=0,(1,0,0)=0,(1,0,1)=NaN
    expected[0, 1, 0] = 1  # j=1: all zero, first
    expected[1, 2, 0] = 1  # j=2: (0,2,0)=0, (0,2,1)=5, (1,2,0)=NaN -> NaN
    for axes in ([0, 2], [2, 0]):
        ref.assert_bits_equal(run_hardmax(x, axes), expected, f"hardmax1 axes {axes}")
    ref.assert_bits_equal(ref.hardmax1(x, [0, 2]), expected, "reference")


@pytest.mark.parametrize("data_type", [T.FLOAT32, T.FLOAT16])
@pytest.mark.parametrize("direction", [AxisDirection.INCREASING, AxisDirection.DECREASING])
def test_argmax_nan_and_special_ties(data_type, direction):
    dtype = _np(data_type)
    rows = [
        [1, NAN, 3, NAN, 2],
        [NAN, NAN, NAN, NAN, NAN],
        [-INF, -INF, -INF, -INF, -INF],
        [-0.0, 0.0, -0.0, 0.0, -1],
        [2, INF, -1, INF, 7],
        [-INF, -3, -INF, -3, -4],
        [0.0, -0.0, -5, 0.0, -0.0],
    ]
    x = np.array(rows, dtype=dtype)
    first = [1, 0, 0, 0, 1, 1, 0]
    last = [3, 4, 4, 3, 3, 3, 4]
    expected = first if direction == AxisDirection.INCREASING else last
    assert ref.argmax(x, [1], int(direction)).ravel().tolist() == expected
    for out_type in ARGMAX_OUTPUT_TYPES:
        got = run_argmax(x, [1], direction, out_type)
        assert got.shape == (7, 1)
        assert got.ravel().tolist() == expected, (direction, out_type)
    # Over both axes: the first NaN (row 0, col 1 -> 1) or the last (row 1, col 4 -> 9).
    want = 1 if direction == AxisDirection.INCREASING else 9
    for axes in ([0, 1], [1, 0]):
        assert run_argmax(x, axes, direction, T.UINT32).tolist() == [[want]]


@pytest.mark.parametrize("data_type", [T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8])
def test_argmax_integer_extremes(data_type):
    dtype = _np(data_type)
    info = np.iinfo(dtype)
    x = np.array(
        [
            [info.min, info.max, info.max - 1, info.max],
            [info.min, info.min, info.min, info.min],
            [info.max - 1, info.min + 1, info.max - 1, 0],
        ],
        dtype=dtype,
    )
    for direction, expected in ((AxisDirection.INCREASING, [1, 0, 0]), (AxisDirection.DECREASING, [3, 3, 2])):
        assert ref.argmax(x, [1], int(direction)).ravel().tolist() == expected
        for out_type in ARGMAX_OUTPUT_TYPES:
            assert run_argmax(x, [1], direction, out_type).ravel().tolist() == expected, (direction, out_type)
    # all axes: max at (0,1) first, (0,3) last
    assert run_argmax(x, [0, 1], AxisDirection.INCREASING, T.INT64).tolist() == [[1]]
    assert run_argmax(x, [1, 0], AxisDirection.DECREASING, T.INT64).tolist() == [[3]]


def test_argmax_documented_examples_every_output_type():
    m = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)
    for out_type in ARGMAX_OUTPUT_TYPES:
        assert run_argmax(m, [0], AxisDirection.INCREASING, out_type).tolist() == [[1, 2, 1]]
        assert run_argmax(m, [1], AxisDirection.INCREASING, out_type).tolist() == [[2], [2], [1]]
        assert run_argmax(m, [0, 1], AxisDirection.INCREASING, out_type).tolist() == [[7]]
        assert run_argmax(m, [1, 0], AxisDirection.INCREASING, out_type).tolist() == [[7]]
    v = np.array([3, 2, 1, 2, 3], dtype=np.float32)
    assert run_argmax(v, [0], AxisDirection.INCREASING, T.UINT32).tolist() == [0]
    assert run_argmax(v, [0], AxisDirection.DECREASING, T.UINT32).tolist() == [4]


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_softmax1_special_values(dtype):
    x = np.array(
        [
            [1, NAN, 3, 0],  # NaN: whole group NaN
            [1, INF, 3, 0],  # +inf: whole group NaN
            [-INF, -INF, -INF, -INF],  # all -inf: NaN
            [-INF, 2, -INF, 0],  # -inf entries: -inf there, the rest finite
            [-0.0, 0.0, -0.0, 0.0],  # equal values: -log(4)
            [INF, INF, -INF, 1],
        ],
        dtype=dtype,
    )
    got = run_log_softmax(x, [1])
    expected = ref.log_softmax1(x, [1])
    assert np.isnan(expected[:3]).all() and np.isnan(expected[5]).all()
    assert expected[3, 0] == -INF and expected[3, 2] == -INF and np.isfinite(expected[3, [1, 3]]).all()
    assert np.allclose(expected[4], -math.log(4))
    ref.assert_log_softmax_close(got, expected, "log_softmax1 specials", float32_ulps=LOG_SOFTMAX_ULPS)
    assert np.isnan(got[:3]).all() and np.isnan(got[5]).all()
    assert got[3, 0] == -INF and got[3, 2] == -INF
    # Over the columns every group meets a NaN or +inf except column 3 ([0, 0, -inf, 0, 0, 1]).
    got0 = run_log_softmax(x, [0])
    expected0 = ref.log_softmax1(x, [0])
    assert np.isfinite(expected0[[0, 1, 3, 4, 5], 3]).all() and expected0[2, 3] == -INF
    ref.assert_log_softmax_close(got0, expected0, "log_softmax1 specials axis 0", float32_ulps=LOG_SOFTMAX_ULPS)
    # A NaN in one group leaves its neighbours alone (all axes: everything NaN).
    assert np.isnan(run_log_softmax(x, [0, 1])).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_softmax1_large_values_do_not_overflow(dtype):
    big = 60000.0 if dtype == np.float16 else 3.0e38
    x = np.array([[big, big * 0.5, big], [-big, -big, -big]], dtype=dtype)
    got = run_log_softmax(x, [1])
    ref.assert_log_softmax_close(got, ref.log_softmax1(x, [1]), "log_softmax1 large", float32_ulps=LOG_SOFTMAX_ULPS)
    assert np.isfinite(got.astype(np.float64)[1]).all()


@pytest.mark.parametrize("spread", [25.0, 40.0, 100.0])
def test_log_softmax1_float32_dominant_maximum_is_accurate(spread):
    """The maximum's own result is -log1p(sum(exp(x - max))), tiny but non-zero and representable in float32.

    [0, -40]: exact first entry -4.248354e-18 (a normal float32). A float64 sum 1 + 4.2e-18 rounds to 1 and
    log gives 0, which is ~10**7 float32 ulps away.
    """
    x = np.array([[0.0, -spread], [-spread, 0.0]], dtype=np.float32)
    expected = ref.log_softmax1(x, [1])
    assert expected[0, 0] == pytest.approx(-math.log1p(math.exp(-spread)), rel=1e-15)
    assert expected[0, 0] != 0 and np.float32(expected[0, 0]) != 0
    ref.assert_log_softmax_close(
        run_log_softmax(x, [1]), expected, f"log_softmax1 spread {spread}", float32_ulps=LOG_SOFTMAX_ULPS
    )


def test_log_softmax1_float32_small_result_within_bound():
    """A group whose maximum dominates at a moderate spread: the maximum's result is about -1.49e-05.

    Exact (float64, log1p): -1.4884064...e-05. Rounding x - max to float32 and taking exp in float32 moves the
    result by about 8 float32 ulps (opendml gave -1.48840718e-05).
    """
    x = np.array([-4.9151273, 6.2000847], dtype=np.float32)
    expected = ref.log_softmax1(x, [0])
    assert expected[1] == pytest.approx(-math.log1p(math.exp(float(x[0]) - float(x[1]))), rel=1e-14)
    ref.assert_log_softmax_close(
        run_log_softmax(x, [0]), expected, "log_softmax1 small result", float32_ulps=LOG_SOFTMAX_ULPS
    )


@pytest.mark.parametrize(
    "data_type", _top_row(OperatorType.ELEMENT_WISE_IF).tensors["ATensor"].data_types, ids=lambda t: t.name
)
def test_element_wise_if_nan_payloads_and_signed_zero(data_type):
    dtype = _np(data_type)
    uint = np.dtype(f"<u{dtype.itemsize}")
    if dtype.kind == "f":
        bits = 8 * dtype.itemsize
        mantissa = {16: 10, 32: 23, 64: 52}[bits]
        exponent_all_ones = ((1 << (bits - 1 - mantissa)) - 1) << mantissa
        sign = 1 << (bits - 1)
        special = [
            exponent_all_ones | 1,  # signalling NaN, payload 1
            exponent_all_ones | (1 << (mantissa - 1)) | 0x5,  # quiet NaN with a payload
            sign | exponent_all_ones | 0x3,  # negative NaN with a payload
            sign,  # -0.0
            0,  # +0.0
            exponent_all_ones,  # +inf
            sign | exponent_all_ones,  # -inf
            1,  # smallest subnormal
        ]
    else:
        info = np.iinfo(dtype)
        special = [int(np.array(v, dtype=dtype).view(uint)) for v in (info.min, info.max, 0, -1 if info.min else 1)]
        special += [0x5A % (1 << (8 * dtype.itemsize)), 1, 2, 3]
    a_bits = np.array(special, dtype=uint).reshape(2, 4)
    b_bits = a_bits[::-1, ::-1].copy()
    a, b = a_bits.view(dtype), b_bits.view(dtype)
    cond = np.array([[1, 0, 255, 0], [0, 7, 0, 128]], dtype=np.uint8)
    got = run_if(cond, a, b)
    expected_bits = np.where(cond != 0, a_bits, b_bits)
    ref.assert_bits_equal(got.view(uint), expected_bits, "if specials")
    ref.assert_bits_equal(ref.element_wise_if(cond, a, b).view(uint), expected_bits, "reference if specials")


@pytest.mark.parametrize("dtype", FLOATS)
def test_hard_sigmoid_special_values(dtype):
    x = np.array([NAN, INF, -INF, -0.0, 0.0, -2.5, 2.5, 1.0], dtype=dtype)
    got = run_hard_sigmoid(x, 0.2, 0.5)
    expected = ref.hard_sigmoid(x, 0.2, 0.5)
    assert np.isnan(expected[0]) and expected[1:5].tolist() == [1, 0, 0.5, 0.5] and expected[5:7].tolist() == [0, 1]
    ref.assert_hard_sigmoid_close(got, expected, x, 0.2, 0.5, "hard_sigmoid specials")
    assert np.isnan(got[0]) and got[1:7].astype(np.float64).tolist() == [1, 0, 0.5, 0.5, 0, 1]
    # A negative alpha turns the line around: +inf -> 0, -inf -> 1.
    got = run_hard_sigmoid(x, -0.25, 0.5)
    assert np.isnan(got[0]) and got[1:5].astype(np.float64).tolist() == [0, 1, 0.5, 0.5]
    ref.assert_hard_sigmoid_close(got, ref.hard_sigmoid(x, -0.25, 0.5), x, -0.25, 0.5, "negative alpha")


def test_log_softmax1_rounds_results_beyond_the_output_range_to_minus_infinity():
    """x - max below the type's range is -inf in that type (and never a warning: the suite turns those into errors)."""
    for dtype, big in ((np.float16, 65504), (np.float32, 3.4e38)):
        x = np.array([big, -big], dtype)
        out = F.activation_log_softmax1(x, axes=(0,))
        assert out.dtype == dtype
        assert out.tolist() == [0.0, -np.inf]
