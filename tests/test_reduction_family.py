"""REDUCE, ARGMIN and the softmax family beyond their cases: the functional layer, the equivalences the doc pages
state, the NaN rules, and hypothesis properties over shapes, axes in any order, data types and strided or
broadcast layouts, against the independent reference of tests/reference.py within each case's bound."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import reference as ref
from cases import CASES, execute, make_desc, rng_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import opendml as dml
from opendml import functional as F
from opendml.kernels.reference import _axes
from opendml.schema import SupportBy

T, OT, RF = dml.TensorDataType, dml.OperatorType, dml.ReduceFunction
INCREASING, DECREASING = dml.AxisDirection.INCREASING, dml.AxisDirection.DECREASING
SETTINGS = settings(
    deadline=None, max_examples=200, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)


# ----------------------------------------------------------------------------------------------------------------
# The functional layer, derived from the declarations
# ----------------------------------------------------------------------------------------------------------------


def test_functional_reduce_keeps_the_input_type_and_gives_uint32_indices():
    x = np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], np.float32)
    assert F.reduce(x, RF.SUM, (0,)).tolist() == [[6, 6, 9]]
    assert F.reduce(x, RF.SUM, axes=(1,)).tolist() == [[6], [7], [8]]
    assert F.reduce(x, RF.SUM, (1, 0)).tolist() == [[21]]  # any listed order
    with pytest.raises(dml.InvalidArgumentError, match="Function must be a ReduceFunction, not str 'SUM'"):
        F.reduce(x, "SUM", (0,))
    assert F.reduce(x, RF.SUM, (0,)).dtype == np.float32
    index = F.reduce(x, RF.ARGMAX, (0, 1))
    assert (index.dtype, index.tolist()) == (np.uint32, [[5]])  # the first 4 (row 1, column 2), as ARGMAX
    wide = F.reduce(x, RF.ARGMIN, (1,), output_data_type=T.INT64)
    assert (wide.dtype, wide.ravel().tolist()) == (np.int64, [0, 1, 0])
    assert F.reduce(np.array([7, -3], np.int32), RF.MULTIPLY, (0,)).tolist() == [-21]


def test_functional_signatures_come_from_the_declarations():
    import inspect

    assert str(inspect.signature(F.reduce)) == "(x, function, axes, output_data_type=None, *, device=None)"
    assert str(inspect.signature(F.argmin)) == (
        "(x, axes, axis_direction=<AxisDirection.INCREASING: 0>, output_data_type=<TensorDataType.UINT32: 3>, *, "
        "device=None)"
    )
    assert str(inspect.signature(F.activation_softmax1)) == "(x, axes, *, device=None)"
    assert str(inspect.signature(F.activation_hardmax)) == "(x, *, device=None)"


def test_functional_argmin_and_the_softmax_family():
    x = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)
    assert F.argmin(x, (0, 1)).tolist() == [[4]]
    last = F.argmin(np.array([1, 2, 3, 2, 1], np.int8), (0,), axis_direction=DECREASING, output_data_type=T.UINT64)
    assert (last.dtype, last.tolist()) == (np.uint64, [4])
    assert F.activation_hardmax(x).tolist() == [[0, 0, 1], [0, 0, 1], [0, 1, 0]]
    np.testing.assert_allclose(F.activation_softmax1(x, (0, 1)).sum(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(F.activation_softmax(x).sum(axis=1), [1, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(np.exp(F.activation_log_softmax(x)), F.activation_softmax(x), rtol=1e-6)


def test_v0_operators_refuse_an_effective_rank_above_2():
    x = np.zeros((1, 2, 3, 4), np.float32)
    with pytest.raises(dml.InvalidArgumentError) as raised:
        F.activation_softmax(x)
    assert raised.value.problems == (
        "DML_OPERATOR_ACTIVATION_SOFTMAX: InputTensor has an effective rank of 3 (Sizes {1, 2, 3, 4} without its "
        "leftmost dimensions of size 1), but at most 2 is allowed",
    )
    assert F.activation_hardmax(np.zeros((1, 1, 3, 4), np.float32)).shape == (1, 1, 3, 4)


def test_reduce_rules_depend_on_the_function():
    x = dml.BufferTensorDesc(T.FLOAT32, (2, 3))
    wrong = dml.ReduceOperatorDesc(
        function=RF.SUM, input_tensor=x, output_tensor=dml.BufferTensorDesc(T.UINT32, (2, 1)), axes=(1,)
    )
    problems = dml.Device().validate(wrong)
    assert (
        "DML_OPERATOR_REDUCE: InputTensor and OutputTensor must have the same DataType, but InputTensor has FLOAT32 "
        "and OutputTensor has UINT32"
    ) in problems
    index = dml.ReduceOperatorDesc(
        function=RF.ARGMAX, input_tensor=x, output_tensor=dml.BufferTensorDesc(T.FLOAT32, (2, 1)), axes=(1,)
    )
    assert dml.Device().validate(index) == [
        "DML_OPERATOR_REDUCE: OutputTensor.DataType FLOAT32 is not supported at DML_FEATURE_LEVEL_6_4 (supported: "
        "INT64, INT32, UINT64, UINT32)"
    ]
    # The L1 row adds integers at 5_0; AVERAGE never takes them.
    ints = dml.BufferTensorDesc(T.INT32, (1, 1, 2, 3))
    l1 = dml.ReduceOperatorDesc(
        function=RF.L1, input_tensor=ints, output_tensor=dml.BufferTensorDesc(T.INT32, (1, 1, 2, 1)), axes=(3,)
    )
    assert dml.Device(feature_level=dml.FeatureLevel.FL_5_0).validate(l1) == []
    assert dml.Device(feature_level=dml.FeatureLevel.FL_4_1).validate(l1) == [
        f"DML_OPERATOR_REDUCE: {name}.DataType INT32 is not supported at DML_FEATURE_LEVEL_4_1 (supported: FLOAT32, "
        "FLOAT16); DML_FEATURE_LEVEL_5_0 and above support it"
        for name in ("InputTensor", "OutputTensor")
    ]


# REDUCE's "Tensor support according to function", transcribed a second time: (levels, input types at the top).
_ALL = "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8"
REDUCE_PAGE_TABLES = {
    ("ARGMIN", "ARGMAX"): (["4_1", "3_0", "2_1", "1_0"], _ALL),
    ("AVERAGE", "L2", "LOG_SUM", "LOG_SUM_EXP"): (["3_0", "1_0"], "FLOAT32 FLOAT16"),
    ("L1", "SUM_SQUARE"): (["5_0", "3_0", "1_0"], "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
    ("MIN", "MAX"): (["5_0", "3_0", "2_1", "1_0"], _ALL),
    ("MULTIPLY", "SUM"): (["5_0", "3_0", "2_1", "1_0"], "FLOAT32 FLOAT16 INT64 INT32 UINT64 UINT32"),
}


def test_reduce_support_rows_by_function_as_the_page_prints_them():
    support = dml.REGISTRY[OT.REDUCE].support
    got = {
        tuple(v.name for v in values): (
            [r.feature_level.version for r in rows],
            " ".join(t.name for t in rows[0].tensors["InputTensor"].data_types),
        )
        for values, rows in support.groups.items()
    }
    assert got == REDUCE_PAGE_TABLES
    argmax_rows = support.rows_for(dml.ReduceOperatorDesc(
        function=RF.ARGMAX, input_tensor=_like(np.zeros(1, np.float32)), output_tensor=_like(np.zeros(1, np.uint32)),
        axes=(0,)))  # fmt: skip
    assert [r.tensors["OutputTensor"].types_text for r in argmax_rows] == [
        "INT64, INT32, UINT64, UINT32", "INT64, INT32, UINT64, UINT32", "UINT32", "UINT32"
    ]  # fmt: skip


# ----------------------------------------------------------------------------------------------------------------
# Documented equivalences, over random inputs
# ----------------------------------------------------------------------------------------------------------------


def _run(desc, x):
    return execute(desc, [x])[0]


def _like(x, data_type=None, sizes=None):
    return dml.BufferTensorDesc(data_type or dml.BufferTensorDesc.like(x).data_type, sizes or x.shape)


PAIRS = [
    (OT.ACTIVATION_HARDMAX1, OT.ACTIVATION_HARDMAX),
    (OT.ACTIVATION_LOG_SOFTMAX1, OT.ACTIVATION_LOG_SOFTMAX),
    (OT.ACTIVATION_SOFTMAX1, OT.ACTIVATION_SOFTMAX),
]


@pytest.mark.parametrize("one, v0", PAIRS, ids=lambda t: t.name)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (1, 1, 2, 7), (1, 6, 1), (1, 1, 1, 1, 1, 1, 2, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_last_axis_of_the_1_operators_is_the_v0_operator(one, v0, shape, dtype):
    rng = rng_for(one.name, shape, dtype)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    x.flat[0] = x.flat[-1]  # a tie
    t = _like(x)
    got_one = _run(dml.REGISTRY[one].desc_class(input_tensor=t, output_tensor=t, axes=(len(shape) - 1,)), x)
    got_v0 = _run(dml.REGISTRY[v0].desc_class(input_tensor=t, output_tensor=t), x)
    ref.assert_bits_equal(got_v0, got_one)


@pytest.mark.parametrize("op, function", [(OT.ARGMAX, RF.ARGMAX), (OT.ARGMIN, RF.ARGMIN)], ids=["ARGMAX", "ARGMIN"])
@pytest.mark.parametrize("out_type", [T.UINT32, T.INT32, T.UINT64, T.INT64])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint16, np.int64])
def test_increasing_arg_operators_are_reduce_argmax_argmin(op, function, out_type, dtype):
    rng = rng_for(op.name, out_type, dtype)
    for rank in (1, 2, 3, 4):
        shape = tuple(int(s) for s in rng.integers(1, 4, rank))
        x = rng.integers(-2, 3, shape).astype(dtype)  # many ties
        axes = tuple(int(a) for a in rng.permutation(rank)[: int(rng.integers(1, rank + 1))])
        out = _like(x, out_type, tuple(1 if d in axes else s for d, s in enumerate(shape)))
        arg = dml.REGISTRY[op].desc_class(
            input_tensor=_like(x), output_tensor=out, axes=axes, axis_direction=INCREASING
        )
        reduce = dml.ReduceOperatorDesc(function=function, input_tensor=_like(x), output_tensor=out, axes=axes)
        ref.assert_bits_equal(_run(reduce, x), _run(arg, x), f"{shape} {axes}")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8])
def test_argmin_mirrors_argmax(dtype):
    """ARGMIN(x) == ARGMAX(-x) (for floats and small integers, where negation is exact), both directions."""
    rng = rng_for("mirror", dtype)
    x = rng.integers(0, 4, (3, 4, 2)).astype(dtype)
    negated = (-x.astype(np.int64)).astype(np.int64) if dtype in (np.uint8,) else -x
    for direction in (INCREASING, DECREASING):
        for axes in ((0,), (2, 1), (0, 1, 2)):
            out = F.argmin(x, axes, axis_direction=direction)
            ref.assert_bits_equal(out, F.argmax(negated, axes, axis_direction=direction))


# ----------------------------------------------------------------------------------------------------------------
# NaN and the other rules the pages leave open
# ----------------------------------------------------------------------------------------------------------------

NAN = np.float32("nan")


def test_nan_wins_every_comparison():
    """ARGMAX picks the first NaN (NaN greater than every number); ARGMIN mirrors it (NaN smaller than every
    number), so both point at the first NaN (the last with DECREASING); MAX and MIN return that NaN."""
    x = np.array([[1, NAN, 5, NAN, -3]], np.float32)
    assert F.argmax(x, (1,)).tolist() == [[1]] and F.argmin(x, (1,)).tolist() == [[1]]
    assert F.argmin(x, (1,), axis_direction=DECREASING).tolist() == [[3]]
    for function in (RF.MAX, RF.MIN, RF.SUM, RF.AVERAGE, RF.L2, RF.LOG_SUM_EXP, RF.MULTIPLY):
        assert np.isnan(F.reduce(x, function, (1,))).all(), function
    assert F.reduce(x, RF.ARGMIN, (1,)).tolist() == [[1]]


def test_max_and_min_return_the_selected_element_bits_and_all():
    payload = np.array([0x7FC00001, 0x7FC00002], np.uint32).view(np.float32)
    assert F.reduce(payload, RF.MAX, (0,)).view(np.uint32).tolist() == [0x7FC00001]
    zeros = np.array([-0.0, 0.0], np.float32)
    assert np.signbit(F.reduce(zeros, RF.MAX, (0,))).tolist() == [True]  # equal: the first wins
    assert np.signbit(F.reduce(zeros[::-1].copy(), RF.MIN, (0,))).tolist() == [False]
    negative_zeros = np.array([-0.0, -0.0], np.float32)
    assert np.signbit(F.reduce(negative_zeros, RF.SUM, (0,))).tolist() == [False]  # the accumulator starts at +0


def test_infinities_and_empty_logs():
    inf = np.float32("inf")
    x = np.array([[inf, 1], [-inf, -inf], [0, 0], [-1, 0.5]], np.float32)
    assert F.reduce(x, RF.LOG_SUM_EXP, (1,)).ravel().tolist() == [
        inf,
        -inf,
        pytest.approx(math.log(2)),
        pytest.approx(0.70141327),
    ]
    log_sum = F.reduce(x, RF.LOG_SUM, (1,)).ravel()
    assert log_sum[[0, 2]].tolist() == [inf, -inf] and np.isnan(log_sum[[1, 3]]).all()  # log(0) = -inf, log(-x) NaN
    soft = F.activation_softmax1(x, (1,))
    assert np.isnan(soft[:2]).all() and soft[2:].tolist() == [[0.5, 0.5], pytest.approx([0.18242553, 0.8175745])]


def test_integer_sums_and_products_wrap_in_the_tensors_width():
    big = np.array([2**31 - 1, 1, 2**31 - 1], np.int32)
    assert F.reduce(big, RF.SUM, (0,)).tolist() == [(2**31 - 1) * 2 + 1 - 2**32]  # -2**31 + ... two's complement
    assert F.reduce(np.array([2**32 - 1, 2], np.uint32), RF.SUM, (0,)).tolist() == [1]
    assert F.reduce(np.array([2**16, 2**16, 3], np.uint32), RF.MULTIPLY, (0,)).tolist() == [0]
    assert F.reduce(np.array([-(2**31)], np.int32), RF.L1, (0,)).tolist() == [-(2**31)]  # |INT32_MIN| wraps
    assert F.reduce(np.array([2**32, 2**32], np.int64), RF.SUM_SQUARE, (0,)).tolist() == [0]  # 2 * 2**64 wraps


def test_float_sums_are_accumulated_in_float64():
    """A float32 accumulator would lose the ones next to 2**24; float64 keeps them, and rounds once."""
    x = np.array([2.0**24] + [1.0] * 64, np.float32)
    assert F.reduce(x, RF.SUM, (0,)).tolist() == [2.0**24 + 64]
    half = np.full(4096, 1.0, np.float16)
    assert F.reduce(half, RF.SUM, (0,)).tolist() == [4096.0]  # float16 alone would stop at 2048


# ----------------------------------------------------------------------------------------------------------------
# Hypothesis: every new operator over shapes, axes, data types and strided or broadcast layouts
# ----------------------------------------------------------------------------------------------------------------

# The new operators, and the older ones whose kernels now share their broadcast-aware machinery.
NEW = [OT.REDUCE, OT.ARGMIN, OT.ACTIVATION_SOFTMAX1, OT.ACTIVATION_HARDMAX, OT.ACTIVATION_LOG_SOFTMAX]
NEW += [OT.ACTIVATION_SOFTMAX, OT.ARGMAX, OT.ACTIVATION_HARDMAX1, OT.ACTIVATION_LOG_SOFTMAX1]


@functools.cache
def _device():
    return dml.Device()


def _top_row(op, function):
    support = dml.REGISTRY[op].support
    if isinstance(support, SupportBy):
        return next(rows for values, rows in support.groups.items() if function in values)[0]
    return support[0]


def _elements(dtype, function):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.one_of(st.integers(max(int(info.min), -2), 3), st.integers(int(info.min), int(info.max)))
    width = dtype.itemsize * 8
    if function == RF.LOG_SUM:  # a sum that cancels to nothing has an unbounded log: positive values
        return st.floats(0, 12, width=width)
    if function == RF.MULTIPLY:  # products of up to 64 values stay inside float64's range
        return st.one_of(st.integers(-2, 3).map(float), st.floats(-12, 12, width=width))
    specials = st.sampled_from([math.nan, math.inf, -math.inf, -0.0])
    return st.one_of(st.integers(-2, 3).map(float), st.floats(-12, 12, width=width), st.floats(width=width), specials)


@st.composite
def problems(draw, op, function):
    """Fields for ``op`` (REDUCE: with ``function``), a data type of its top support row, a strided or broadcast
    input layout and the buffer behind it."""
    case = CASES[op]
    row = _top_row(op, function)
    data_type = draw(st.sampled_from(row.tensors["InputTensor"].data_types))
    out_type = (
        draw(st.sampled_from(row.tensors["OutputTensor"].data_types))
        if op in (OT.ARGMIN, OT.ARGMAX, OT.REDUCE)
        else None
    )
    if out_type is not None and function not in (None, RF.ARGMAX, RF.ARGMIN):
        out_type = data_type
    rank = draw(st.integers(1, 4))
    shape = case.shape(tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))))
    order = draw(st.permutations(list(range(rank))))
    axes = tuple(order[: draw(st.integers(1, rank))])
    # Layout: dimensions in a random memory order, some padded, some broadcast (stride 0).
    memory_order = draw(st.permutations(list(range(rank))))
    broadcast = [draw(st.booleans()) for _ in range(rank)]
    strides, step = [0] * rank, 1
    for d in reversed(memory_order):
        if not broadcast[d]:
            strides[d] = step
            step *= shape[d] + draw(st.integers(0, 1))
    dtype = ref.numpy_dtype(data_type)
    span = 1 + sum((s - 1) * st_ for s, st_ in zip(shape, strides))
    buffer = draw(hnp.arrays(dtype, span + 8, elements=_elements(dtype, function)))
    params = {"axes": axes} if any(spec.c_name == "Axes" for spec in dml.REGISTRY[op].fields) else {}
    if op in (OT.ARGMIN, OT.ARGMAX):
        params["axis_direction"] = draw(st.sampled_from([INCREASING, DECREASING]))
    if op == OT.REDUCE:
        params["function"] = function
    types = {"InputTensor": data_type, "OutputTensor": out_type or data_type}
    desc = make_desc(case, shape, types, rng_for(), params=params, strides={"InputTensor": tuple(strides)})
    return case, desc, buffer, tuple(strides)


OPERATORS = [(OT.REDUCE, f) for f in RF] + [(op, None) for op in NEW if op != OT.REDUCE]


@pytest.fixture(params=[None, 5], ids=["blocks", "tiny-blocks"])
def block_elements(request, monkeypatch):
    """The kernels' block size: the default, and 5 elements so that every streamed path combines blocks."""
    if request.param:
        monkeypatch.setattr(_axes, "BLOCK_ELEMENTS", request.param)


@pytest.mark.parametrize("op, function", OPERATORS, ids=lambda v: v.name if v is not None else "")
@settings(SETTINGS, max_examples=25)
@given(data=st.data())
def test_new_operators_match_the_reference_on_strided_and_broadcast_layouts(op, function, block_elements, data):
    case, desc, buffer, strides = data.draw(problems(op, function))
    assert _device().validate(desc) == []
    x = desc.input_tensor
    logical = np.lib.stride_tricks.as_strided(buffer, x.sizes, [s * buffer.itemsize for s in strides]).copy()
    (got,) = _device().compile_operator(_device().create_operator(desc)).execute([dml.BufferBinding(buffer)])
    (expected,) = case.reference(desc, [logical])
    case.check(np.asarray(got), expected, desc, [logical])
    # The broadcast-aware kernels give what the materialised (packed) input gives, within the same bound.
    (packed,) = execute(dataclass_replace(desc, input_tensor=dml.BufferTensorDesc(x.data_type, x.sizes)), [logical])
    case.check(packed, expected, desc, [logical])


def dataclass_replace(desc, **changes):
    import dataclasses

    return dataclasses.replace(desc, **changes)
