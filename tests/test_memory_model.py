"""DirectML's memory model in opendml: buffer bindings, strides, sizes, alignment and binding hazards.

The contract under test: a tensor is bound either as a NumPy array (packed descriptors only: exactly the
descriptor's dtype and sizes) or as ``dml.BufferBinding(buffer, offset, size_in_bytes)``. Element
``(i0, ..., in)`` lives at byte ``offset + dot(i, strides) * element_size``; zero strides broadcast, larger strides
pad or permute. Outputs are written through their strides and no other byte of the buffer changes; inputs are
never written. The rules of DML_BUFFER_TENSOR_DESC / DML_BUFFER_BINDING and the BindInputs hazard rules
(DirectML 1.7+) raise ``dml.InvalidArgumentError`` naming the operator and the field.

Every layout in this file is built and read back with explicit index arithmetic (``positions`` below), never
with opendml's own view code, and every execution checks that its input buffers are byte-for-byte unchanged.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import opendml as dml
from opendml import functional as F
from opendml.binding import Bound, check_hazards

T = dml.TensorDataType
DEVICE = dml.Device()
SENTINEL = 0xA5  # fill byte of every buffer: bytes that no element maps to must still hold it afterwards

HS = "DML_OPERATOR_ACTIVATION_HARD_SIGMOID"
IF = "DML_OPERATOR_ELEMENT_WISE_IF"


# ----------------------------------------------------------------------------------------------------------------
# Helpers: explicit index arithmetic, buffers, checked execution
# ----------------------------------------------------------------------------------------------------------------


def compile_op(desc: dml.OperatorDesc) -> dml.CompiledOperator:
    return DEVICE.compile_operator(DEVICE.create_operator(desc))


def row_major_strides(extents) -> tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(tuple(extents)):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def positions(sizes, strides) -> np.ndarray:
    """Element index dot(i, strides) of every element, in row-major order over ``sizes``."""
    sizes = tuple(sizes)
    coords = np.indices(sizes, dtype=np.int64).reshape(len(sizes), -1)
    return (coords * np.asarray(strides, dtype=np.int64)[:, None]).sum(axis=0)


def byte_index(sizes, strides, itemsize: int, offset: int) -> np.ndarray:
    """(elements, itemsize) array of the byte addresses each element occupies."""
    return (offset + positions(sizes, strides) * itemsize)[:, None] + np.arange(itemsize)


def scatter(buffer, values: np.ndarray, strides, offset: int) -> None:
    """Write ``values`` into ``buffer`` at byte ``offset + dot(i, strides) * itemsize``."""
    raw = np.frombuffer(buffer, dtype=np.uint8)
    index = byte_index(values.shape, strides, values.itemsize, offset)
    raw[index] = np.ascontiguousarray(values).view(np.uint8).reshape(index.shape)


def gather(buffer, dtype, sizes, strides, offset: int) -> np.ndarray:
    """Read the tensor (``sizes``, ``strides``, ``offset``) out of ``buffer`` as a packed array."""
    dtype = np.dtype(dtype)
    raw = np.frombuffer(buffer, dtype=np.uint8)
    index = byte_index(sizes, strides, dtype.itemsize, offset)
    return raw[index].copy().view(dtype).reshape(tuple(sizes))


def sentinel_buffer(nbytes: int) -> bytearray:
    return bytearray([SENTINEL]) * nbytes


def assert_only_elements_written(before: bytes, after, sizes, strides, itemsize: int, offset: int) -> None:
    """Every byte of the buffer that no element maps to is unchanged."""
    after = np.frombuffer(after, dtype=np.uint8)
    before = np.frombuffer(before, dtype=np.uint8)
    assert after.size == before.size
    mapped = np.zeros(after.size, dtype=bool)
    mapped[byte_index(sizes, strides, itemsize, offset).ravel()] = True
    changed = np.flatnonzero((after != before) & ~mapped)
    assert changed.size == 0, f"bytes outside the output's elements were written: {changed[:16].tolist()}"


def _buffer_of(value):
    return value.buffer if isinstance(value, dml.BufferBinding) else value


def _bytes_of(obj) -> bytes:
    return obj.tobytes() if isinstance(obj, np.ndarray) else memoryview(obj).tobytes()


def execute_checked(compiled: dml.CompiledOperator, inputs, outputs=None) -> list[np.ndarray]:
    """Execute, and assert that every input buffer not also bound as an output is byte-for-byte unchanged."""
    out_ids = {id(_buffer_of(v)) for v in (outputs or []) if v is not None}
    watched = [(_buffer_of(v), _bytes_of(_buffer_of(v))) for v in inputs if id(_buffer_of(v)) not in out_ids]
    results = compiled.execute(inputs, outputs)
    for buffer, before in watched:
        assert _bytes_of(buffer) == before, "an input buffer was written"
    return results


def f32(sizes, strides=None, **kw) -> dml.BufferTensorDesc:
    return dml.BufferTensorDesc(T.FLOAT32, tuple(sizes), None if strides is None else tuple(strides), **kw)


def hard_sigmoid_op(in_desc, out_desc, alpha=0.25, beta=0.5) -> dml.CompiledOperator:
    return compile_op(
        dml.ActivationHardSigmoidOperatorDesc(input_tensor=in_desc, output_tensor=out_desc, alpha=alpha, beta=beta)
    )


def if_op(cond, a, b, out) -> dml.CompiledOperator:
    return compile_op(dml.ElementWiseIfOperatorDesc(condition_tensor=cond, a_tensor=a, b_tensor=b, output_tensor=out))


def hard_sigmoid_numpy(x: np.ndarray, alpha=0.25, beta=0.5) -> np.ndarray:
    y = x.astype(np.float32) * np.float32(alpha) + np.float32(beta)
    return np.clip(y, np.float32(0), np.float32(1)).astype(x.dtype)


def read_through(desc: dml.BufferTensorDesc, binding: dml.BufferBinding) -> np.ndarray:
    """Read a (possibly strided) tensor out of a binding with ELEMENT_WISE_IF(all ones, A=B=binding)."""
    packed = dml.BufferTensorDesc(desc.data_type, desc.sizes)
    condition = np.ones(desc.sizes, dtype=np.uint8)
    (out,) = execute_checked(
        if_op(dml.BufferTensorDesc(T.UINT8, desc.sizes), desc, desc, packed), [condition, binding, binding]
    )
    return out


# ----------------------------------------------------------------------------------------------------------------
# The strides page ("Using strides to express padding and memory layout")
# ----------------------------------------------------------------------------------------------------------------


def test_element_101_with_strides_631_is_at_index_7():
    # A 2x1x2 tensor in the {6, 3, 1} layout: only dot(i, strides) decides where each element is.
    buffer = np.arange(8, dtype=np.float32)
    desc = f32((2, 1, 2), (6, 3, 1))
    assert desc.total_tensor_size_in_bytes == 32  # index of last element 7 -> 8 elements
    got = read_through(desc, dml.BufferBinding(buffer))
    assert got[1, 0, 1] == 7.0
    np.testing.assert_array_equal(got, np.array([[[0.0, 1.0]], [[6.0, 7.0]]], dtype=np.float32))


def test_packed_strides_631_read_the_buffer_in_order():
    buffer = np.arange(12, dtype=np.float32)
    got = read_through(f32((2, 2, 3), (6, 3, 1)), dml.BufferBinding(buffer))
    assert got[1, 0, 1] == 7.0
    np.testing.assert_array_equal(got, buffer.reshape(2, 2, 3))


def test_2x3_tensor_with_row_stride_5_in_a_10_element_buffer():
    buffer = np.arange(10, dtype=np.float32)
    desc = f32((2, 3), (5, 1))
    assert desc.total_tensor_size_in_bytes == 32  # last element at index 7
    np.testing.assert_array_equal(read_through(desc, dml.BufferBinding(buffer)), [[0, 1, 2], [5, 6, 7]])

    # Written as an output: elements 0-2 and 5-7 change, the padding (3, 4, 8, 9) keeps its bytes.
    out = np.full(10, -1.0, dtype=np.float32)
    x = np.array([[-4.0, 0.0, 1.0], [2.0, 3.0, 8.0]], dtype=np.float32)
    execute_checked(hard_sigmoid_op(f32((2, 3)), desc), [x], [dml.BufferBinding(out)])
    expected = np.array([0.0, 0.5, 0.75, -1, -1, 1.0, 1.0, 1.0, -1, -1], dtype=np.float32)
    np.testing.assert_array_equal(out, expected)


def test_nhwc_sizes_1135_strides_15151_read_as_nchw():
    # C == 1: the NHWC strides {15, 1, 5, 1} address exactly what packed NCHW {15, 15, 5, 1} does.
    nhwc = f32((1, 1, 3, 5), (15, 1, 5, 1))
    nchw = f32((1, 1, 3, 5), (15, 15, 5, 1))
    assert nhwc.total_tensor_size_in_bytes == nchw.total_tensor_size_in_bytes == 60
    assert dml.calc_buffer_tensor_size(T.FLOAT32, (1, 1, 3, 5)) == 60
    buffer = np.arange(15, dtype=np.float32)
    expected = buffer.reshape(1, 1, 3, 5)
    np.testing.assert_array_equal(read_through(nhwc, dml.BufferBinding(buffer)), expected)
    np.testing.assert_array_equal(read_through(nchw, dml.BufferBinding(buffer)), expected)
    np.testing.assert_array_equal(read_through(f32((1, 1, 3, 5)), dml.BufferBinding(buffer)), expected)


def test_nhwc_with_three_channels_reads_as_transposed_nchw():
    n, c, h, w = 2, 3, 4, 5
    stored = np.arange(n * h * w * c, dtype=np.float32).reshape(n, h, w, c)  # memory order N, H, W, C
    desc = f32((n, c, h, w), (h * w * c, 1, w * c, c))
    got = read_through(desc, dml.BufferBinding(stored))
    np.testing.assert_array_equal(got, stored.transpose(0, 3, 1, 2))
    assert got[1, 2, 3, 4] == stored[1, 3, 4, 2] == 1 * 60 + 3 * 15 + 4 * 3 + 2


def test_offset_moves_element_zero():
    buffer = np.arange(20, dtype=np.float32)  # binding offset 32 bytes = element 8
    got = read_through(f32((2, 3), (5, 1)), dml.BufferBinding(buffer, offset=32))
    np.testing.assert_array_equal(got, [[8, 9, 10], [13, 14, 15]])


# ----------------------------------------------------------------------------------------------------------------
# DMLCalcBufferTensorSize
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data_type, sizes, strides, expected",
    [
        (T.FLOAT32, (2, 3), None, 24),
        (T.FLOAT32, (2, 3), (3, 1), 24),  # packed strides given explicitly
        (T.FLOAT32, (1, 2, 3, 4), None, 96),
        (T.FLOAT64, (3,), None, 24),
        (T.INT64, (2, 2), None, 32),
        (T.FLOAT32, (2, 3), (5, 1), 32),  # padded rows: (1*5 + 2*1 + 1) * 4
        (T.FLOAT32, (2, 3), (1, 2), 24),  # column-major: last index 1 + 4 = 5
        (T.FLOAT32, (1, 3, 2, 5), (30, 1, 15, 3), 120),  # NHWC
        (T.FLOAT32, (4, 3), (0, 1), 12),  # broadcast rows: one row of storage
        (T.FLOAT32, (4, 3), (0, 0), 4),  # a scalar broadcast to 4x3
        (T.UINT8, (4, 3), (0, 0), 4),  # one byte, rounded up to 4
        (T.FLOAT16, (3,), None, 8),  # 6 -> 8
        (T.FLOAT16, (2,), None, 4),
        (T.FLOAT16, (2,), (2,), 8),  # (2 + 1) * 2 = 6 -> 8
        (T.UINT8, (5,), None, 8),
        (T.UINT8, (4,), None, 4),
        (T.INT8, (1,), None, 4),
        (T.UINT16, (3,), (1,), 8),
        (T.UINT8, (2, 3), (4, 1), 8),  # last index 6 -> 7 bytes -> 8
        (T.UINT4, (3,), None, 4),  # DirectMLX counts bits: 12 bits -> 2 bytes -> 4
        (T.INT4, (9,), None, 8),  # 36 bits -> 5 bytes -> 8
        (T.UNKNOWN, (2, 3), None, 0),
    ],
)
def test_calc_buffer_tensor_size(data_type, sizes, strides, expected):
    assert dml.calc_buffer_tensor_size(data_type, sizes, strides) == expected
    if data_type != T.UNKNOWN:
        assert dml.BufferTensorDesc(data_type, sizes, strides).total_tensor_size_in_bytes == expected


@pytest.mark.parametrize(
    "data_type, sizes, strides, expected",
    [
        # The strided branch accumulates dot(sizes - 1, strides) in a 32-bit UINT, as DirectMLX does.
        (T.FLOAT32, (3,), (2**31,), 4),  # 2 * 2^31 = 2^32 wraps to 0 -> one element
        (T.FLOAT32, (2, 2), (2**31, 2**31), 4),  # 2^31 + 2^31 wraps to 0
        (T.FLOAT32, (5,), (2**30,), 4),  # 4 * 2^30 wraps to 0
        (T.FLOAT32, (2, 3), (2**32 - 1, 2), 16),  # 2^32 - 1 + 4 wraps to 3 -> 4 elements
        (T.UINT32, (2,), (2**32 - 1,), 2**34),  # index 2^32 - 1 fits; (UINT64(idx) + 1) * 4 does not wrap
        (T.UINT8, (2,), (2**32 - 1,), 2**32),
    ],
)
def test_calc_buffer_tensor_size_wraps_like_the_32_bit_accumulator(data_type, sizes, strides, expected):
    assert dml.calc_buffer_tensor_size(data_type, sizes, strides) == expected


@pytest.mark.parametrize(
    "data_type, sizes, expected",
    [
        # DirectMLX's packed branch multiplies sizes and the element width in bits in a UINT64, so it wraps
        # modulo 2^64 too: 2^31 * 2^31 * 32 bits = 2^67 bits -> 0.
        (T.FLOAT32, (2**31, 2**31), 0),
        # (2^32 - 1)^2 * 8 bits mod 2^64 = 2^64 - 2^36 + 8 bits -> 2^61 - 2^33 + 1 bytes -> rounded up to 4.
        (T.UINT8, (2**32 - 1, 2**32 - 1), 2**61 - 2**33 + 4),
    ],
    ids=["float32-2^31x2^31", "uint8-(2^32-1)^2"],
)
def test_calc_buffer_tensor_size_packed_branch_wraps_like_its_uint64(data_type, sizes, expected):
    # Such tensors are invalid anyway (more than 2^32 - 1 elements), but the helper claims to compute exactly
    # what DirectMLX's CalculateBufferTensorSize does, and a UINT64 can never hold 2^64 or more.
    got = dml.calc_buffer_tensor_size(data_type, sizes)
    assert got <= 2**64 - 1
    assert got == expected


def test_validation_rejects_a_last_index_beyond_32_bits_even_when_the_size_wraps_small():
    wrapped = f32((3,), (2**31,))
    assert wrapped.total_tensor_size_in_bytes == 4  # the helper's (wrapped) answer
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: InputTensor\.Strides place the last element at index 4294967296"
    ):
        DEVICE.create_operator(
            dml.ActivationHardSigmoidOperatorDesc(input_tensor=wrapped, output_tensor=f32((3,)), alpha=0.2, beta=0.5)
        )
    # A generous TotalTensorSizeInBytes does not make it valid either.
    big = f32((3,), (2**31,), total_tensor_size_in_bytes=2**35)
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: InputTensor\.Strides place the last element"):
        DEVICE.create_operator(
            dml.ActivationHardSigmoidOperatorDesc(input_tensor=big, output_tensor=f32((3,)), alpha=0.2, beta=0.5)
        )


def test_last_index_exactly_2_pow_32_minus_1_is_valid_but_needs_the_whole_buffer():
    desc = dml.BufferTensorDesc(T.FLOAT16, (2,), (2**32 - 1,))
    assert desc.total_tensor_size_in_bytes == 2**33
    compiled = hard_sigmoid_op(desc, dml.BufferTensorDesc(T.FLOAT16, (2,)))
    with pytest.raises(
        dml.InvalidArgumentError,
        match=rf"^{HS}: InputTensor: the binding's SizeInBytes is too small: 64 was provided, but "
        r"TotalTensorSizeInBytes is 8589934592",
    ):
        compiled.execute([dml.BufferBinding(bytearray(64))])


def test_more_than_2_pow_32_minus_1_elements_is_invalid():
    desc = f32((2**16, 2**16), (0, 0))  # 2^32 elements in 4 bytes of storage
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: InputTensor has 4294967296 elements; a tensor may hold at most"
    ):
        DEVICE.create_operator(
            dml.ActivationHardSigmoidOperatorDesc(input_tensor=desc, output_tensor=f32((1,)), alpha=0.2, beta=0.5)
        )


# ----------------------------------------------------------------------------------------------------------------
# ONNX-style broadcasting of ELEMENT_WISE_IF with zero strides (onnxruntime's TensorDesc rule)
# ----------------------------------------------------------------------------------------------------------------


def onnx_broadcast_desc(data_type, physical_shape, output_shape) -> dml.BufferTensorDesc:
    """Right-align ``physical_shape`` to ``output_shape``; a missing or size-1 dimension gets stride 0."""
    physical = (1,) * (len(output_shape) - len(physical_shape)) + tuple(physical_shape)
    for p, o in zip(physical, output_shape):
        assert p in (1, o)
    strides = tuple(0 if p == 1 else s for p, s in zip(physical, row_major_strides(physical)))
    return dml.BufferTensorDesc(data_type, tuple(output_shape), strides)


def dword_buffer(array: np.ndarray) -> bytearray:
    """The array's bytes, padded with the sentinel to a multiple of 4 (DirectML buffer sizes are DWORD-aligned)."""
    data = np.ascontiguousarray(array).tobytes()
    return bytearray(data) + sentinel_buffer(-len(data) % 4)


def test_onnx_broadcast_strides_of_the_onnxruntime_comment():
    assert onnx_broadcast_desc(T.FLOAT32, (2, 1, 4), (2, 3, 4)).strides == (4, 0, 1)
    assert onnx_broadcast_desc(T.FLOAT32, (4,), (2, 3, 4)).strides == (0, 0, 1)
    assert onnx_broadcast_desc(T.FLOAT32, (), (2, 3)).strides == (0, 0)


BROADCAST_SHAPES = [
    ((2, 3, 4), (2, 1, 4), (4,)),
    ((1,), (3, 1), (1, 5)),
    ((2, 1, 1, 5), (3, 1, 1), (1, 4, 1)),
    ((), (2, 3), ()),
    ((4, 1), (1,), (2, 1, 3)),
    ((3, 4), (3, 4), (3, 4)),
    ((1, 1, 1, 1, 1, 6), (2, 1, 1, 1, 1, 1), (1, 1, 3, 1, 1, 1)),
]


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.float16], ids=lambda d: np.dtype(d).name)
def test_element_wise_if_broadcasts_like_np_where(shapes, dtype):
    rng = np.random.default_rng(7)
    cond_shape, a_shape, b_shape = shapes
    out_shape = np.broadcast_shapes(cond_shape, a_shape, b_shape)
    if len(out_shape) == 0:
        out_shape = (1,)
    cond = rng.integers(0, 3, cond_shape).astype(np.uint8)  # any non-zero byte selects A
    a = rng.integers(0, 100, a_shape).astype(dtype)
    b = (rng.integers(0, 100, b_shape) + 100).astype(dtype)
    data_type = dml.BufferTensorDesc.like(np.zeros(1, dtype)).data_type
    compiled = if_op(
        onnx_broadcast_desc(T.UINT8, cond_shape, out_shape),
        onnx_broadcast_desc(data_type, a_shape, out_shape),
        onnx_broadcast_desc(data_type, b_shape, out_shape),
        dml.BufferTensorDesc(data_type, out_shape),
    )
    bindings = [dml.BufferBinding(dword_buffer(v)) for v in (cond, a, b)]
    (out,) = execute_checked(compiled, bindings)
    expected = np.broadcast_to(np.where(cond != 0, a, b), out_shape)
    assert out.dtype == dtype and out.shape == out_shape
    assert out.tobytes() == np.ascontiguousarray(expected).tobytes()


def test_broadcast_buffer_must_still_be_dword_sized():
    cond = np.ones(3, dtype=np.uint8)  # 3 bytes; the descriptor's TotalTensorSizeInBytes is 4
    compiled = if_op(*(dml.BufferTensorDesc(t, (2, 3), s) for t, s in [(T.UINT8, (0, 1))] + [(T.FLOAT32, None)] * 3))
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(
        dml.InvalidArgumentError,
        match=(
            rf"^{IF}: ConditionTensor: the binding's SizeInBytes is too small: 3 was provided, "
            rf"but TotalTensorSizeInBytes is 4"
        ),
    ):
        compiled.execute([dml.BufferBinding(cond), x, x])


# ----------------------------------------------------------------------------------------------------------------
# Every operator through padded and permuted strides, for inputs and outputs
# ----------------------------------------------------------------------------------------------------------------

SHAPE = (2, 3, 4, 5)
RNG = np.random.default_rng(2024)


def _floats(dtype):
    return lambda shape: (RNG.standard_normal(shape) * 3).astype(dtype)


def _ints(dtype, high):
    return lambda shape: RNG.integers(0, high, shape).astype(dtype)


def _argmax_numpy(x, axes, decreasing=False):
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = x.transpose(kept + sorted(axes))
    grouped = moved.reshape(moved.shape[: len(kept)] + (-1,))
    index = grouped.shape[-1] - 1 - grouped[..., ::-1].argmax(axis=-1) if decreasing else grouped.argmax(axis=-1)
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
    return index.reshape(out_shape)


def _hardmax_numpy(x, axes):
    index = _argmax_numpy(x, axes)  # row-major index over the reduced axes, reduced dims kept as 1
    reduced_sizes = [x.shape[d] for d in sorted(axes)]
    coords = np.indices(x.shape)
    flat = np.zeros(x.shape, dtype=np.int64)
    for d, size in zip(sorted(axes), reduced_sizes):
        flat = flat * size + coords[d]
    return (flat == index).astype(x.dtype)


def _log_softmax_numpy(x, axes):
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(axis=axes, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axes, keepdims=True))


# name -> (descriptor factory, input (data type, sizes, generator) list, output (data type, sizes), numpy check)
CASES = {
    "hardmax1_f32_axes13": (
        lambda i, o: dml.ActivationHardmax1OperatorDesc(input_tensor=i[0], output_tensor=o, axes=(1, 3)),
        [(T.FLOAT32, SHAPE, _floats(np.float32))],
        (T.FLOAT32, SHAPE),
        lambda x: _hardmax_numpy(x[0], (1, 3)),
    ),
    "hardmax1_f16_axis2": (
        lambda i, o: dml.ActivationHardmax1OperatorDesc(input_tensor=i[0], output_tensor=o, axes=(2,)),
        [(T.FLOAT16, SHAPE, _ints(np.float16, 4))],  # ties: the first maximum wins
        (T.FLOAT16, SHAPE),
        lambda x: _hardmax_numpy(x[0], (2,)),
    ),
    "log_softmax1_f32_axis3": (
        lambda i, o: dml.ActivationLogSoftmax1OperatorDesc(input_tensor=i[0], output_tensor=o, axes=(3,)),
        [(T.FLOAT32, SHAPE, _floats(np.float32))],
        (T.FLOAT32, SHAPE),
        lambda x: _log_softmax_numpy(x[0], (3,)),
    ),
    "log_softmax1_f16_axes12": (
        lambda i, o: dml.ActivationLogSoftmax1OperatorDesc(input_tensor=i[0], output_tensor=o, axes=(1, 2)),
        [(T.FLOAT16, SHAPE, _floats(np.float16))],
        (T.FLOAT16, SHAPE),
        lambda x: _log_softmax_numpy(x[0], (1, 2)),
    ),
    "if_f32": (
        lambda i, o: dml.ElementWiseIfOperatorDesc(
            condition_tensor=i[0], a_tensor=i[1], b_tensor=i[2], output_tensor=o
        ),
        [
            (T.UINT8, SHAPE, _ints(np.uint8, 3)),
            (T.FLOAT32, SHAPE, _floats(np.float32)),
            (T.FLOAT32, SHAPE, _floats(np.float32)),
        ],
        (T.FLOAT32, SHAPE),
        lambda x: np.where(x[0] != 0, x[1], x[2]),
    ),
    "if_i16": (
        lambda i, o: dml.ElementWiseIfOperatorDesc(
            condition_tensor=i[0], a_tensor=i[1], b_tensor=i[2], output_tensor=o
        ),
        [
            (T.UINT8, SHAPE, _ints(np.uint8, 2)),
            (T.INT16, SHAPE, _ints(np.int16, 1000)),
            (T.INT16, SHAPE, _ints(np.int16, 1000)),
        ],
        (T.INT16, SHAPE),
        lambda x: np.where(x[0] != 0, x[1], x[2]),
    ),
    "argmax_f32_to_u32_axes13": (
        lambda i, o: dml.ArgmaxOperatorDesc(
            input_tensor=i[0], output_tensor=o, axes=(1, 3), axis_direction=dml.AxisDirection.INCREASING
        ),
        [(T.FLOAT32, SHAPE, _floats(np.float32))],
        (T.UINT32, (2, 1, 4, 1)),
        lambda x: _argmax_numpy(x[0], (1, 3)),
    ),
    "argmax_i8_to_i64_axis2_decreasing": (
        lambda i, o: dml.ArgmaxOperatorDesc(
            input_tensor=i[0], output_tensor=o, axes=(2,), axis_direction=dml.AxisDirection.DECREASING
        ),
        [(T.INT8, SHAPE, _ints(np.int8, 3))],  # ties: the last maximum wins
        (T.INT64, (2, 3, 1, 5)),
        lambda x: _argmax_numpy(x[0], (2,), decreasing=True),
    ),
    "hard_sigmoid_f32": (
        lambda i, o: dml.ActivationHardSigmoidOperatorDesc(input_tensor=i[0], output_tensor=o, alpha=0.25, beta=0.5),
        [(T.FLOAT32, SHAPE, _floats(np.float32))],
        (T.FLOAT32, SHAPE),
        lambda x: hard_sigmoid_numpy(x[0]),
    ),
    "hard_sigmoid_f16": (
        lambda i, o: dml.ActivationHardSigmoidOperatorDesc(input_tensor=i[0], output_tensor=o, alpha=0.25, beta=0.5),
        [(T.FLOAT16, SHAPE, _floats(np.float16))],
        (T.FLOAT16, SHAPE),
        lambda x: hard_sigmoid_numpy(x[0]),
    ),
}


def layout_strides(sizes, layout: str) -> tuple[int, ...] | None:
    """Strides of a named layout: packed (None), padded rows, NHWC, column-major, or padded NHWC."""
    rank = len(sizes)
    order = list(range(rank))  # dimensions from outermost to innermost in memory
    pad = [0] * rank
    if layout == "packed":
        return None
    if layout in ("padded", "padded_nhwc"):
        pad = [1 + d % 2 for d in range(rank)]  # 1 or 2 spare elements after each row of each dimension
    if layout in ("nhwc", "padded_nhwc"):
        order = [0, *range(2, rank), 1]
    elif layout == "column_major":
        order = order[::-1]
    strides, step = [0] * rank, 1
    for d in reversed(order):
        strides[d] = step
        step *= sizes[d] + pad[d]
    return tuple(strides)


LAYOUT_PAIRS = [
    ("padded", "packed"),
    ("packed", "padded"),
    ("padded", "padded"),
    ("nhwc", "nhwc"),
    ("nhwc", "packed"),
    ("packed", "nhwc"),
    ("column_major", "padded_nhwc"),
    ("padded_nhwc", "column_major"),
]


def _place(sizes, data_type, strides, offset, tail=12):
    desc = dml.BufferTensorDesc(data_type, tuple(sizes), strides)
    return desc, sentinel_buffer(offset + desc.total_tensor_size_in_bytes + tail)


@pytest.mark.parametrize("in_layout, out_layout", LAYOUT_PAIRS, ids=lambda v: v)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_operator_through_strided_inputs_and_outputs(case, in_layout, out_layout):
    make, input_specs, (out_type, out_sizes), numpy_check = CASES[case]
    arrays = [generate(sizes) for _, sizes, generate in input_specs]

    # The packed run is the reference; it must agree with NumPy.
    packed_descs = [dml.BufferTensorDesc(t, s) for t, s, _ in input_specs]
    (expected,) = execute_checked(compile_op(make(packed_descs, dml.BufferTensorDesc(out_type, out_sizes))), arrays)
    reference = numpy_check(arrays)
    if case.startswith("log_softmax"):
        np.testing.assert_allclose(expected.astype(np.float64), reference, rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_array_equal(expected, reference)

    # The same tensors through strides, at non-zero offsets of sentinel-filled buffers of several kinds.
    in_descs, bindings, placements = [], [], []
    for k, (data_type, sizes, _) in enumerate(input_specs):
        strides = layout_strides(sizes, in_layout)
        offset = 16 * (k + 1)
        desc, raw = _place(sizes, data_type, strides, offset)
        scatter(raw, arrays[k], desc.effective_strides, offset)
        buffer = [raw, np.frombuffer(raw, np.uint8), memoryview(raw)][k % 3]  # bytearray, ndarray, memoryview
        in_descs.append(desc)
        bindings.append(dml.BufferBinding(buffer, offset))
        placements.append((raw, bytes(raw)))
    out_offset = 32
    out_desc, out_raw = _place(out_sizes, out_type, layout_strides(out_sizes, out_layout), out_offset)
    out_buffer = np.frombuffer(out_raw, np.uint32) if len(out_raw) % 4 == 0 else out_raw
    before = bytes(out_raw)

    compiled = compile_op(make(in_descs, out_desc))
    if out_desc.is_packed:
        execute_checked(compiled, bindings, [dml.BufferBinding(out_buffer, out_offset)])
    else:
        # Strided outputs are bound by the caller; an array or nothing is refused.
        with pytest.raises(
            dml.InvalidArgumentError, match=r"OutputTensor has Strides .* bind the output buffer with a BufferBinding"
        ):
            compiled.execute(bindings)
        with pytest.raises(dml.InvalidArgumentError, match=r"OutputTensor has Strides .* bind the buffer that holds"):
            compiled.execute(bindings, [np.zeros(out_sizes, expected.dtype)])
        (view,) = execute_checked(compiled, bindings, [dml.BufferBinding(out_buffer, out_offset)])
        assert view.tobytes() == expected.tobytes()

    got = gather(out_raw, expected.dtype, out_sizes, out_desc.effective_strides, out_offset)
    assert got.tobytes() == expected.tobytes(), f"{case}: strided result differs from the packed one"
    assert_only_elements_written(before, out_raw, out_sizes, out_desc.effective_strides, expected.itemsize, out_offset)
    for raw, snapshot in placements:
        assert bytes(raw) == snapshot

    # A strided input bound as a plain array is refused: only a BufferBinding says where the strides lead.
    if not in_descs[0].is_packed:
        arrays_in = [arrays[0], *bindings[1:]]
        first = "ConditionTensor" if case.startswith("if") else "InputTensor"
        with pytest.raises(
            dml.InvalidArgumentError,
            match=rf"{first} has Strides .* bind the buffer that holds the tensor with BufferBinding",
        ):
            compiled.execute(arrays_in) if out_desc.is_packed else compiled.execute(
                arrays_in, [dml.BufferBinding(out_buffer, out_offset)]
            )


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_operator_reads_zero_stride_inputs_as_broadcast(case):
    make, input_specs, (out_type, out_sizes), _ = CASES[case]
    # Each input is stored once per value of dimensions 1 and 3 only: dimensions 0 and 2 broadcast (stride 0).
    stored = [generate((1, sizes[1], 1, sizes[3])) for _, sizes, generate in input_specs]
    broadcast = [np.ascontiguousarray(np.broadcast_to(s, sizes)) for s, (_, sizes, _) in zip(stored, input_specs)]
    (expected,) = execute_checked(
        compile_op(
            make([dml.BufferTensorDesc(t, s) for t, s, _ in input_specs], dml.BufferTensorDesc(out_type, out_sizes))
        ),
        broadcast,
    )
    descs = [dml.BufferTensorDesc(t, s, (0, s[3], 0, 1)) for t, s, _ in input_specs]
    (got,) = execute_checked(
        compile_op(make(descs, dml.BufferTensorDesc(out_type, out_sizes))),
        [dml.BufferBinding(dword_buffer(s)) for s in stored],
    )
    assert got.tobytes() == expected.tobytes()


def test_packed_output_left_unbound_is_allocated():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    compiled = hard_sigmoid_op(f32((3, 4)), f32((3, 4)))
    (first,) = execute_checked(compiled, [x])
    (second,) = execute_checked(compiled, [x], [None])
    assert first.tobytes() == second.tobytes() == hard_sigmoid_numpy(x).tobytes()
    assert not np.shares_memory(first, second) and not np.shares_memory(first, x)


def test_packed_descriptor_accepts_a_buffer_binding_too():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    out = np.zeros(16, np.float32)
    compiled = hard_sigmoid_op(f32((3, 4)), f32((3, 4)))
    execute_checked(compiled, [dml.BufferBinding(x)], [dml.BufferBinding(out, offset=16)])
    assert out[4:].tobytes() == hard_sigmoid_numpy(x).ravel().tobytes()
    assert not out[:4].any()


def test_array_binding_must_match_dtype_and_shape_exactly():
    compiled = hard_sigmoid_op(f32((3, 4)), f32((3, 4)))
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: InputTensor is FLOAT32, so it takes a <f4 array, not <f8"
    ):
        compiled.execute([np.zeros((3, 4))])
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: InputTensor has Sizes \(3, 4\), but the array's shape is \(4, 3\)"
    ):
        compiled.execute([np.zeros((4, 3), np.float32)])
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor has Sizes \(3, 4\), but the array's shape is \(12,\)"
    ):
        compiled.execute([np.zeros((3, 4), np.float32)], [np.zeros(12, np.float32)])
    with pytest.raises(
        dml.InvalidArgumentError,
        match=rf"^{HS}: InputTensor must be bound to a numpy.ndarray or a BufferBinding, not list",
    ):
        compiled.execute([[0.0] * 12])


# ----------------------------------------------------------------------------------------------------------------
# In-place execution (HARD_SIGMOID only)
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, data_type", [(np.float32, T.FLOAT32), (np.float16, T.FLOAT16)])
def test_hard_sigmoid_in_place_on_an_array(dtype, data_type):
    x = (RNG.standard_normal((2, 3, 4)) * 4).astype(dtype)
    expected = hard_sigmoid_numpy(x)
    desc = dml.BufferTensorDesc(data_type, x.shape)
    (result,) = hard_sigmoid_op(desc, desc).execute([x], [x])
    assert np.shares_memory(result, x)
    assert x.tobytes() == expected.tobytes()


def test_hard_sigmoid_in_place_through_a_padded_buffer_binding():
    sizes, strides, offset = (3, 4), (6, 1), 16
    values = (RNG.standard_normal(sizes) * 4).astype(np.float32)
    desc = f32(sizes, strides)
    raw = sentinel_buffer(offset + desc.total_tensor_size_in_bytes + 8)
    scatter(raw, values, strides, offset)
    before = bytes(raw)
    binding = dml.BufferBinding(raw, offset)
    hard_sigmoid_op(desc, desc).execute([binding], [binding])
    assert gather(raw, np.float32, sizes, strides, offset).tobytes() == hard_sigmoid_numpy(values).tobytes()
    assert_only_elements_written(before, raw, sizes, strides, 4, offset)

    # Two distinct BufferBinding objects with the identical range are the same in-place binding.
    scatter(raw, values, strides, offset)
    size = desc.total_tensor_size_in_bytes
    hard_sigmoid_op(desc, desc).execute([dml.BufferBinding(raw, offset, size)], [dml.BufferBinding(raw, offset, size)])
    assert gather(raw, np.float32, sizes, strides, offset).tobytes() == hard_sigmoid_numpy(values).tobytes()


def test_hard_sigmoid_in_place_with_different_layouts_in_the_identical_range():
    # Identical bound ranges are what the rule compares; the input is read packed, the output written transposed.
    sizes = (4, 5)
    values = (RNG.standard_normal(sizes) * 4).astype(np.float32)
    raw = bytearray(values.tobytes())
    out_desc = f32(sizes, (1, 4))  # column-major in the same 80 bytes
    binding = dml.BufferBinding(raw)
    hard_sigmoid_op(f32(sizes), out_desc).execute([binding], [binding])
    assert gather(raw, np.float32, sizes, (1, 4), 0).tobytes() == hard_sigmoid_numpy(values).tobytes()


# ----------------------------------------------------------------------------------------------------------------
# Binding hazards
# ----------------------------------------------------------------------------------------------------------------


def test_partial_overlap_of_input_and_output_is_rejected():
    raw = bytearray(128)
    compiled = hard_sigmoid_op(f32((12,)), f32((12,)))
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor partially overlaps InputTensor"):
        compiled.execute([dml.BufferBinding(raw, 0, 48)], [dml.BufferBinding(raw, 16, 48)])
    # Same start, different length: still not identical.
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor partially overlaps InputTensor"):
        compiled.execute([dml.BufferBinding(raw, 0, 64)], [dml.BufferBinding(raw, 0, 48)])
    # The default size is "the rest of the buffer": output at 64 overlaps an input bound from 0 to the end.
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor partially overlaps InputTensor"):
        compiled.execute([dml.BufferBinding(raw, 0)], [dml.BufferBinding(raw, 64)])
    # Arrays are bound by their memory: two views of one array, shifted by 2 elements.
    base = np.zeros(16, np.float32)
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor partially overlaps InputTensor"):
        compiled.execute([base[:12]], [base[2:14]])
    assert raw == bytearray(128) and not base.any()  # nothing was executed


def test_disjoint_ranges_of_one_buffer_are_fine():
    values = RNG.standard_normal(12).astype(np.float32)
    raw = bytearray(values.tobytes()) + bytearray(48)
    hard_sigmoid_op(f32((12,)), f32((12,))).execute([dml.BufferBinding(raw, 0, 48)], [dml.BufferBinding(raw, 48, 48)])
    assert bytes(raw[:48]) == values.tobytes()
    assert bytes(raw[48:]) == hard_sigmoid_numpy(values).tobytes()


def test_identical_overlap_is_rejected_for_operators_without_in_place_support():
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    raw = bytearray(x.tobytes())
    whole = dml.BufferBinding(raw, 0, 64)
    ops = [
        dml.ActivationHardmax1OperatorDesc(input_tensor=f32((2, 8)), output_tensor=f32((2, 8)), axes=(1,)),
        dml.ActivationLogSoftmax1OperatorDesc(input_tensor=f32((2, 8)), output_tensor=f32((2, 8)), axes=(1,)),
        dml.ArgmaxOperatorDesc(
            input_tensor=f32((2, 8)),
            output_tensor=dml.BufferTensorDesc(T.UINT32, (2, 1), total_tensor_size_in_bytes=64),
            axes=(1,),
            axis_direction=dml.AxisDirection.INCREASING,
        ),
    ]
    for desc in ops:
        name = desc.schema.c_name
        with pytest.raises(
            dml.InvalidArgumentError,
            match=(
                rf"^{name}: OutputTensor is bound to the same memory as InputTensor, but the "
                rf"operator does not support in-place"
            ),
        ):
            compile_op(desc).execute([whole], [whole])
        with pytest.raises(dml.InvalidArgumentError, match=rf"^{name}: OutputTensor"):
            compile_op(desc).execute([whole], [dml.BufferBinding(raw, 0, 48)])  # and partial overlap too
    cond = np.ones((2, 8), np.uint8)
    compiled = if_op(dml.BufferTensorDesc(T.UINT8, (2, 8)), f32((2, 8)), f32((2, 8)), f32((2, 8)))
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{IF}: OutputTensor is bound to the same memory as ATensor"):
        compiled.execute([cond, x, x.copy()], [x])
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{IF}: OutputTensor is bound to the same memory as BTensor"):
        compiled.execute([cond, x.copy(), whole], [whole])
    assert bytes(raw) == x.tobytes()


def test_inputs_may_overlap_each_other():
    # Condition, A and B all read the same 64 bytes (B identical to A, condition the first 16 bytes of it).
    values = np.array([0, 1, 2, 0, 5, 0, 7, 8, 0, 0, 3, 4, 1, 1, 0, 2], dtype=np.int32)
    raw = bytearray(values.tobytes())
    compiled = if_op(
        dml.BufferTensorDesc(T.UINT8, (16,)),
        dml.BufferTensorDesc(T.INT32, (16,)),
        dml.BufferTensorDesc(T.INT32, (16,), (1,)),
        dml.BufferTensorDesc(T.INT32, (16,)),
    )
    a = dml.BufferBinding(raw, 0, 64)
    (out,) = execute_checked(compiled, [dml.BufferBinding(raw, 0, 16), a, a])
    np.testing.assert_array_equal(out, values)  # A and B are the same tensor
    assert bytes(raw) == values.tobytes()

    # Different A and B that overlap: B starts 16 bytes (4 elements) into A's range.
    compiled = if_op(*[dml.BufferTensorDesc(t, (8,)) for t in (T.UINT8, T.INT32, T.INT32, T.INT32)])
    cond = np.array([1, 0, 1, 0, 1, 0, 1, 0], np.uint8)
    (out,) = execute_checked(compiled, [cond, dml.BufferBinding(raw, 0, 32), dml.BufferBinding(raw, 16, 32)])
    np.testing.assert_array_equal(out, np.where(cond != 0, values[:8], values[4:12]))


def test_buffer_bindings_of_arrays_follow_every_rule_on_the_quick_path():
    """Inputs bound as BufferBinding(ndarray) beside array outputs take execute's quick path: the same results,
    offsets, sizes and hazards as the full path, and a kept view never outlives its binding."""
    x = RNG.standard_normal(12).astype(np.float32)
    before = x.copy()
    broadcast = f32((3, 4), (0, 1), total_tensor_size_in_bytes=16)  # one row of 4, read 3 times
    compiled = hard_sigmoid_op(broadcast, f32((3, 4)))
    want = np.broadcast_to(hard_sigmoid_numpy(x[4:8]), (3, 4))
    for _ in range(2):  # (the second call reuses the kept view)
        np.testing.assert_array_equal(execute_checked(compiled, [dml.BufferBinding(x, 16)])[0], want)
    binding = dml.BufferBinding(x, 16)
    out = np.empty((3, 4), np.float32)
    assert compiled._direct_views([binding], [out]) is not None  # (the quick path is the one under test)
    for _ in range(2):
        compiled.execute([binding], [out])
        np.testing.assert_array_equal(out, want)
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: InputTensor: BufferBinding.Offset 4 is not a mult"):
        compiled.execute([dml.BufferBinding(x, 4)], [out])
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: InputTensor: the binding's SizeInBytes is too small"):
        compiled.execute([dml.BufferBinding(x, 48)], [out])  # 0 bytes left
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor partially overlaps InputTensor"):
        compiled.execute([dml.BufferBinding(x, 16)], [x[:12].reshape(3, 4)])
    np.testing.assert_array_equal(x, before)  # (the refusals wrote nothing)
    buffer = np.ones(4, np.float32)
    gone = weakref.ref(buffer)
    compiled.execute([dml.BufferBinding(buffer)], [out])
    del buffer
    gc.collect()
    assert gone() is None, "the compiled operator kept the buffer of a binding that no longer exists"


@pytest.mark.skipif(not dml.COMPILED_AVAILABLE, reason="the C binding test exists with the compiled extension only")
def test_the_c_binding_test_passes_exactly_the_quick_bindings():
    """execute's quickest path (one C call, _native.exact) takes exact arrays with outputs apart from every other
    binding; everything else is left to the Python paths, which bind or refuse it as before."""
    from opendml._core import _native

    desc = dml.ElementWiseAddOperatorDesc(a_tensor=f32((4, 8)), b_tensor=f32((4, 8)), output_tensor=f32((4, 8)))
    device = dml.Device(kernels="compiled")
    compiled = device.compile_operator(device.create_operator(desc))
    spec = compiled._spec
    a, b, out = (np.arange(32, dtype=np.float32).reshape(4, 8) + k for k in range(3))
    assert _native.exact(spec, [a, b], [out]) and _native.exact(spec, (a, b), (out,))
    wide = np.zeros((4, 16), np.float32)
    readonly = out.copy()
    readonly.flags.writeable = False
    refused = {
        "float64": ([a.astype(np.float64), b], [out]),
        "byte-swapped": ([a.astype(">f4"), b], [out]),
        "Fortran order": ([np.asfortranarray(a), b], [out]),
        "strided view": ([wide[:, ::2], b], [out]),
        "subclass": ([a.view(np.memmap), b], [out]),
        "read-only output": ([a, b], [readonly]),
        "output is an input": ([a, b], [a]),
        "output overlaps an input": ([wide[:, :8], b], [wide[:, 8:].reshape(4, 8)]),
        "unallocated output": ([a, b], [None]),
        "binding": ([dml.BufferBinding(a), b], [out]),
        "too few": ([a], [out]),
        "not a list": (iter([a, b]), [out]),
    }
    for why, (inputs, outputs) in refused.items():
        assert not _native.exact(spec, inputs, outputs), why
    np.testing.assert_array_equal(compiled.execute([a, b], [out])[0], a + b)
    np.testing.assert_array_equal(compiled.execute([a, b], [a])[0], np.arange(32).reshape(4, 8) * 2 + 1)  # in place


@pytest.mark.parametrize("kernels", ["compiled", "reference"])
def test_a_binding_ranges_to_the_end_of_its_buffer_on_every_path(kernels):
    """An input bound as BufferBinding(array, offset) holds [offset, end of the array): an output inside that range
    but past the tensor's own bytes is a hazard on the quick paths as on the full one."""
    device = dml.Device(kernels=kernels)
    add = dml.ElementWiseAddOperatorDesc(a_tensor=f32((8,)), b_tensor=f32((8,)), output_tensor=f32((8,)))
    broadcast = f32((8,), (0,), total_tensor_size_in_bytes=16)
    strided = dml.ElementWiseAddOperatorDesc(a_tensor=broadcast, b_tensor=f32((8,)), output_tensor=f32((8,)))
    for desc in (add, strided):
        compiled = device.compile_operator(device.create_operator(desc))
        buffer = np.arange(16, dtype=np.float32)
        with pytest.raises(dml.InvalidArgumentError, match=r"OutputTensor partially overlaps ATensor"):
            compiled.execute([dml.BufferBinding(buffer), np.ones(8, np.float32)], [buffer[8:]])
        np.testing.assert_array_equal(buffer, np.arange(16))


def test_misaligned_arrays_are_read_and_written_safely():
    """An array may start at any byte (np.frombuffer with an odd offset): the kernels read and write it through
    memcpy, never a misaligned float load (the sanitizer build checks that in CI)."""
    raw = bytearray(4 * 40 + 1)
    x = np.frombuffer(raw, np.float32, 37, offset=1)
    x[...] = np.linspace(-3, 3, 37, dtype=np.float32)
    out_raw = bytearray(4 * 40 + 3)
    out = np.frombuffer(out_raw, np.float32, 37, offset=3)
    for kernels in ("compiled", "reference"):
        device = dml.Device(kernels=kernels)
        clip = dml.ElementWiseClipOperatorDesc(input_tensor=f32((37,)), output_tensor=f32((37,)), min=-1.0, max=2.0)
        device.compile_operator(device.create_operator(clip)).execute([x], [out])
        np.testing.assert_array_equal(out, np.clip(x, -1, 2))
        hs = hard_sigmoid_op(f32((37,)), f32((37,)))
        hs.execute([x], [out])
        np.testing.assert_array_equal(out, hard_sigmoid_numpy(x))


def test_two_overlapping_outputs_are_rejected_by_the_hazard_check():
    # No implemented operator has two outputs, so the rule is exercised on check_hazards directly.
    view = np.zeros(4, np.float32)
    first, second = Bound(view, (1000, 1016), "OutputTensor"), Bound(view, (1008, 1024), "OutputIndicesTensor")
    with pytest.raises(
        dml.InvalidArgumentError, match=r"^DML_X: outputs OutputTensor and OutputIndicesTensor overlap in memory"
    ):
        check_hazards("DML_X", [], [first, second], in_place=True)
    check_hazards("DML_X", [], [first, Bound(view, (1016, 1032), "OutputIndicesTensor")], in_place=False)  # adjacent


# ----------------------------------------------------------------------------------------------------------------
# Alignment, offset and size rules
# ----------------------------------------------------------------------------------------------------------------


def test_offset_must_be_a_multiple_of_16_without_a_guaranteed_alignment():
    compiled = hard_sigmoid_op(f32((4,)), f32((4,)))
    raw = bytearray(64)
    for offset in (4, 8, 20):
        with pytest.raises(
            dml.InvalidArgumentError,
            match=(
                rf"^{HS}: InputTensor: BufferBinding.Offset {offset} is not a multiple of "
                rf"DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT \(16\)"
            ),
        ):
            compiled.execute([dml.BufferBinding(raw, offset, 16)])
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor: BufferBinding.Offset 8 is not a multiple of DML_MINIMUM"
    ):
        compiled.execute([np.zeros(4, np.float32)], [dml.BufferBinding(raw, 8, 16)])
    for offset in (0, 16, 32, 48):  # valid offsets
        (out,) = compiled.execute([dml.BufferBinding(raw, offset, 16)])
        np.testing.assert_array_equal(out, np.full(4, 0.5, np.float32))


def test_guaranteed_base_offset_alignment_governs_the_offset():
    raw = bytearray(np.arange(32, dtype=np.float32).tobytes())
    relaxed = hard_sigmoid_op(f32((4,), guaranteed_base_offset_alignment=4), f32((4,)), alpha=1.0, beta=0.0)
    # A promise of 4-byte alignment cannot lower DirectML's 16-byte minimum for buffer tensors.
    with pytest.raises(
        dml.InvalidArgumentError,
        match=rf"^{HS}: InputTensor: BufferBinding.Offset 4 is not a multiple of DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT",
    ):
        relaxed.execute([dml.BufferBinding(raw, 4, 16)])
    (out,) = execute_checked(relaxed, [dml.BufferBinding(raw, 16, 16)])
    np.testing.assert_array_equal(out, [1.0, 1.0, 1.0, 1.0])
    (out,) = execute_checked(relaxed, [dml.BufferBinding(np.array([0, 0.25, 0.5, 0.75, 2], np.float32), 0, 16)])
    np.testing.assert_array_equal(out, [0, 0.25, 0.5, 0.75])
    strict = hard_sigmoid_op(
        f32((4,), guaranteed_base_offset_alignment=32), f32((4,), guaranteed_base_offset_alignment=64)
    )
    with pytest.raises(
        dml.InvalidArgumentError,
        match=rf"^{HS}: InputTensor: BufferBinding.Offset 16 is not a multiple of GuaranteedBaseOffsetAlignment \(32\)",
    ):
        strict.execute([dml.BufferBinding(raw, 16, 16)])
    with pytest.raises(
        dml.InvalidArgumentError,
        match=(
            rf"^{HS}: OutputTensor: BufferBinding.Offset 32 is not a multiple of "
            rf"GuaranteedBaseOffsetAlignment \(64\)"
        ),
    ):
        strict.execute([dml.BufferBinding(raw, 32, 16)], [dml.BufferBinding(bytearray(128), 32, 16)])
    out_raw = bytearray(128)
    execute_checked(strict, [dml.BufferBinding(raw, 32, 16)], [dml.BufferBinding(out_raw, 64, 16)])
    np.testing.assert_array_equal(
        np.frombuffer(out_raw, np.float32)[16:20], hard_sigmoid_numpy(np.arange(8, 12, dtype=np.float32))
    )


@pytest.mark.parametrize(
    "data_type, alignment, problem",
    [
        (T.FLOAT32, 12, "is 12; it must be 0 or a power of two at least the element size \\(4 bytes\\)"),
        (T.FLOAT32, 2, "is 2; it must be 0 or a power of two at least the element size \\(4 bytes\\)"),
        (T.FLOAT16, 1, "is 1; it must be 0 or a power of two at least the element size \\(2 bytes\\)"),
        (T.FLOAT16, 48, "is 48; it must be 0 or a power of two"),
    ],
)
def test_invalid_guaranteed_base_offset_alignment(data_type, alignment, problem):
    bad = dml.BufferTensorDesc(data_type, (4,), guaranteed_base_offset_alignment=alignment)
    good = dml.BufferTensorDesc(data_type, (4,))
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor.GuaranteedBaseOffsetAlignment {problem}"):
        DEVICE.create_operator(
            dml.ActivationHardSigmoidOperatorDesc(input_tensor=good, output_tensor=bad, alpha=0.2, beta=0.5)
        )


@pytest.mark.parametrize("data_type, alignment", [(T.FLOAT16, 2), (T.FLOAT32, 4), (T.FLOAT32, 256), (T.FLOAT16, 2**31)])
def test_valid_guaranteed_base_offset_alignment(data_type, alignment):
    desc = dml.BufferTensorDesc(data_type, (4,), guaranteed_base_offset_alignment=alignment)
    DEVICE.create_operator(
        dml.ActivationHardSigmoidOperatorDesc(input_tensor=desc, output_tensor=desc, alpha=0.2, beta=0.5)
    )
    cond = dml.BufferTensorDesc(T.UINT8, (4,), guaranteed_base_offset_alignment=1)  # 1 byte >= UINT8's size
    if_op(cond, desc, desc, desc)


def test_total_tensor_size_rules():
    def create(out_desc):
        return DEVICE.create_operator(
            dml.ActivationHardSigmoidOperatorDesc(input_tensor=f32((2, 3)), output_tensor=out_desc, alpha=0.2, beta=0.5)
        )

    with pytest.raises(
        dml.InvalidArgumentError,
        match=(
            rf"^{HS}: OutputTensor.TotalTensorSizeInBytes is 20, below the 24 bytes that "
            rf"DMLCalcBufferTensorSize gives"
        ),
    ):
        create(f32((2, 3), total_tensor_size_in_bytes=20))
    with pytest.raises(
        dml.InvalidArgumentError,
        match=rf"^{HS}: OutputTensor.TotalTensorSizeInBytes is 30, below the 32 bytes",
    ):
        create(f32((2, 3), (5, 1), total_tensor_size_in_bytes=30))
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor.TotalTensorSizeInBytes is 26; it must be a multiple of 4"
    ):
        create(f32((2, 3), total_tensor_size_in_bytes=26))
    with pytest.raises(
        dml.InvalidArgumentError,
        match=rf"^{IF}: ConditionTensor.TotalTensorSizeInBytes is 6; it must be a multiple of 4",
    ):
        if_op(dml.BufferTensorDesc(T.UINT8, (3,), total_tensor_size_in_bytes=6), *[f32((3,))] * 3)

    # A larger TotalTensorSizeInBytes is valid, and then the bound range must be that large.
    compiled = compile_op(
        dml.ActivationHardSigmoidOperatorDesc(
            input_tensor=f32((2, 3), total_tensor_size_in_bytes=64), output_tensor=f32((2, 3)), alpha=0.2, beta=0.5
        )
    )
    raw = bytearray(128)
    with pytest.raises(
        dml.InvalidArgumentError,
        match=(
            rf"^{HS}: InputTensor: the binding's SizeInBytes is too small: 48 was provided, but "
            rf"TotalTensorSizeInBytes is 64"
        ),
    ):
        compiled.execute([dml.BufferBinding(raw, 0, 48)])
    (out,) = execute_checked(compiled, [dml.BufferBinding(raw, 64)])
    np.testing.assert_array_equal(out, np.full((2, 3), 0.5, np.float32))


def test_bound_range_rules():
    compiled = hard_sigmoid_op(f32((2, 3)), f32((2, 3)))
    raw = bytearray(40)
    (out,) = execute_checked(compiled, [dml.BufferBinding(raw, 16)])  # the rest of the buffer: exactly 24 bytes
    np.testing.assert_array_equal(out, np.full((2, 3), 0.5, np.float32))
    with pytest.raises(
        dml.InvalidArgumentError,
        match=(
            rf"^{HS}: InputTensor: the binding's SizeInBytes is too small: 8 was provided, but "
            rf"TotalTensorSizeInBytes is 24"
        ),
    ):
        compiled.execute([dml.BufferBinding(raw, 32)])
    with pytest.raises(
        dml.InvalidArgumentError,
        match=rf"^{HS}: InputTensor: the bound range \[16, 48\) runs past the end of the 40-byte buffer",
    ):
        compiled.execute([dml.BufferBinding(raw, 16, 32)])
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor: BufferBinding.Offset 48 lies beyond the 40-byte buffer"
    ):
        compiled.execute([dml.BufferBinding(raw, 16)], [dml.BufferBinding(bytearray(40), 48)])
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: InputTensor: the binding's SizeInBytes is too small: 0 was provided"
    ):
        compiled.execute([dml.BufferBinding(bytearray(0))])


@pytest.mark.parametrize(
    "offset, size, message",
    [
        (-16, None, r"InputTensor: BufferBinding.Offset is -16, but it is unsigned"),
        (16.0, None, r"InputTensor: BufferBinding.Offset must be an integer, not float 16.0"),
        (True, None, r"InputTensor: BufferBinding.Offset must be an integer, not the bool True"),
        (np.bool_(False), None, r"InputTensor: BufferBinding.Offset must be an integer, not the bool"),
        ("16", None, r"InputTensor: BufferBinding.Offset must be an integer, not str"),
        (0, -24, r"InputTensor: BufferBinding.SizeInBytes is -24, but it is unsigned"),
        (0, 24.0, r"InputTensor: BufferBinding.SizeInBytes must be an integer, not float"),
        (0, True, r"InputTensor: BufferBinding.SizeInBytes must be an integer, not the bool True"),
    ],
)
def test_binding_offset_and_size_must_be_unsigned_integers(offset, size, message):
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: {message}"):
        hard_sigmoid_op(f32((2, 3)), f32((2, 3))).execute([dml.BufferBinding(bytearray(64), offset, size)])


def test_numpy_integers_are_accepted_as_offset_and_size():
    (out,) = execute_checked(
        hard_sigmoid_op(f32((2, 3)), f32((2, 3))), [dml.BufferBinding(bytearray(64), np.int64(16), np.uint32(24))]
    )
    np.testing.assert_array_equal(out, np.full((2, 3), 0.5, np.float32))


@pytest.mark.parametrize(
    "sizes, strides, message",
    [
        ((2, -3), None, r"BufferTensorDesc.Sizes\[1\] is -3, but it is unsigned"),
        ((2, 3), (-3, 1), r"BufferTensorDesc.Strides\[0\] is -3, but it is unsigned"),
        ((2, 3), (1.5, 1), r"BufferTensorDesc.Strides\[0\] must be an integer, not float 1.5"),
        ((2.0, 3), None, r"BufferTensorDesc.Sizes\[0\] must be an integer, not float 2.0"),
        ((True, 3), None, r"BufferTensorDesc.Sizes\[0\] must be an integer, not the bool True"),
        ((2, 3), (3, np.bool_(True)), r"BufferTensorDesc.Strides\[1\] must be an integer, not the bool"),
        ((2, 3), (3,), r"BufferTensorDesc.Strides has 1 entries but Sizes has 2"),
        ((2, 2**32), None, r"BufferTensorDesc.Sizes\[1\] is 4294967296, more than its C type holds"),
        ((2, 3), (2**32, 1), r"BufferTensorDesc.Strides\[0\] is 4294967296, more than its C type holds"),
        (3, None, r"BufferTensorDesc.Sizes must be a sequence of integers, not int 3"),
    ],
)
def test_negative_non_integer_or_bool_sizes_and_strides_are_rejected(sizes, strides, message):
    with pytest.raises(dml.InvalidArgumentError, match=message):
        dml.BufferTensorDesc(T.FLOAT32, sizes, strides)


def test_numpy_integer_sizes_and_strides_are_accepted():
    desc = dml.BufferTensorDesc(T.FLOAT32, (np.int64(2), np.uint8(3)), (np.int32(5), np.uint64(1)))
    assert desc.sizes == (2, 3) and desc.strides == (5, 1) and desc.total_tensor_size_in_bytes == 32
    assert all(type(v) is int for v in desc.sizes + desc.strides)


def test_zero_size_is_rejected_with_operator_and_field():
    with pytest.raises(
        dml.InvalidArgumentError,
        match=rf"^{HS}: InputTensor.Sizes\[1\] is 0; a size of zero in any dimension is invalid",
    ):
        DEVICE.create_operator(
            dml.ActivationHardSigmoidOperatorDesc(
                input_tensor=f32((2, 0)), output_tensor=f32((2, 3)), alpha=0.2, beta=0.5
            )
        )


@pytest.mark.parametrize(
    "strides, message",
    [
        ((0, 1), r"OutputTensor: Strides give dimension of size 2 a stride of 0, so its elements would share memory"),
        ((1, 1), r"OutputTensor: Strides \(1, 1\) map two elements of Sizes \(2, 3\) to the same memory"),
        ((2, 1), r"OutputTensor: Strides \(2, 1\) map two elements of Sizes \(2, 3\) to the same memory"),
    ],
)
def test_output_strides_that_alias_elements_are_invalid(strides, message):
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: {message}; an output may not write one address twice"):
        DEVICE.create_operator(
            dml.ActivationHardSigmoidOperatorDesc(
                input_tensor=f32((2, 3)), output_tensor=f32((2, 3), strides), alpha=0.2, beta=0.5
            )
        )
    # The same strides on an input are fine: reading one address twice is broadcasting.
    compiled = hard_sigmoid_op(f32((2, 3), strides), f32((2, 3)), alpha=1.0, beta=0.0)
    values = np.arange(8, dtype=np.float32) / 8
    (out,) = execute_checked(compiled, [dml.BufferBinding(values)])
    np.testing.assert_array_equal(out.ravel(), values[positions((2, 3), strides)])


def test_output_strides_that_interleave_without_aliasing_are_valid():
    # (2, 3) with strides (1, 2): column-major, elements interleave but never collide.
    raw = sentinel_buffer(32)
    before = bytes(raw)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 8
    execute_checked(
        hard_sigmoid_op(f32((2, 3)), f32((2, 3), (1, 2)), alpha=1.0, beta=0.0), [x], [dml.BufferBinding(raw)]
    )
    np.testing.assert_array_equal(gather(raw, np.float32, (2, 3), (1, 2), 0), x)
    assert_only_elements_written(before, raw, (2, 3), (1, 2), 4, 0)
    assert bytes(raw[24:]) == bytes([SENTINEL]) * 8


# ----------------------------------------------------------------------------------------------------------------
# Read-only and unusable buffers
# ----------------------------------------------------------------------------------------------------------------


def test_read_only_buffers_are_rejected_as_outputs():
    compiled = hard_sigmoid_op(f32((2, 3)), f32((2, 3)))
    x = np.zeros((2, 3), np.float32)
    frozen = np.zeros((2, 3), np.float32)
    frozen.flags.writeable = False
    for buffer in (bytes(24), memoryview(bytearray(24)).toreadonly(), frozen):
        with pytest.raises(
            dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor: an output must be bound to a writable buffer"
        ):
            compiled.execute([x], [dml.BufferBinding(buffer)])
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{HS}: OutputTensor: the output array is read-only"):
        compiled.execute([x], [frozen])
    assert not frozen.any()


def test_read_only_buffers_are_fine_as_inputs():
    values = np.array([-8, -1, 0, 1, 2, 8], np.float32)
    frozen = values.copy()
    frozen.flags.writeable = False
    compiled = hard_sigmoid_op(f32((2, 3)), f32((2, 3)))
    expected = hard_sigmoid_numpy(values).reshape(2, 3)
    for binding in (
        dml.BufferBinding(values.tobytes()),
        dml.BufferBinding(memoryview(bytearray(values.tobytes())).toreadonly()),
        frozen.reshape(2, 3),
        dml.BufferBinding(frozen),
    ):
        (out,) = execute_checked(compiled, [binding])
        assert out.tobytes() == expected.tobytes()


def test_buffers_that_are_not_contiguous_memory_are_rejected():
    compiled = hard_sigmoid_op(f32((2, 3)), f32((2, 3)))
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: InputTensor: BufferBinding.buffer must be C-contiguous memory"
    ):
        compiled.execute([dml.BufferBinding(np.zeros((6, 4), np.float32)[:, ::2])])
    with pytest.raises(
        dml.InvalidArgumentError, match=rf"^{HS}: InputTensor: BufferBinding.buffer must support the buffer protocol"
    ):
        compiled.execute([dml.BufferBinding([0.0] * 6)])


@pytest.mark.parametrize(
    "make_buffer",
    [
        lambda b: np.frombuffer(b, np.complex64),
        lambda b: np.frombuffer(b, ">f4"),
        lambda b: np.frombuffer(b, np.bool_).reshape(4, 6),
        lambda b: np.frombuffer(b, np.dtype([("a", "<f4"), ("b", "<i2"), ("c", "u1", (2,))])),
        lambda b: np.frombuffer(b, "V24"),
    ],
    ids=["complex64", "big_endian_f4", "bool_2d", "structured", "void"],
)
def test_any_dtype_buffer_is_read_as_bytes(make_buffer):
    values = np.array([-8, -1, 0, 1, 2, 8], np.float32)
    (out,) = execute_checked(
        hard_sigmoid_op(f32((2, 3)), f32((2, 3))), [dml.BufferBinding(make_buffer(values.tobytes()))]
    )
    assert out.tobytes() == hard_sigmoid_numpy(values).reshape(2, 3).tobytes()
    raw = bytearray(24)
    execute_checked(
        hard_sigmoid_op(f32((2, 3)), f32((2, 3))), [values.reshape(2, 3)], [dml.BufferBinding(make_buffer(raw))]
    )
    assert bytes(raw) == hard_sigmoid_numpy(values).tobytes()


# ----------------------------------------------------------------------------------------------------------------
# ndarray subclasses: only those whose meaning is all in their memory are bound (as the plain array they view)
# ----------------------------------------------------------------------------------------------------------------

MASKED = np.ma.array([[1, 9, 2], [3, 1, 8]], np.float32, mask=[[0, 1, 0], [0, 0, 0]])


class Tagged(np.ndarray):
    """A subclass opendml knows nothing of: it may mean more than its memory."""


@pytest.mark.parametrize(
    "call, where",
    [
        (lambda x: F.argmax(x, axes=(1,)), "DML_OPERATOR_ARGMAX: InputTensor"),
        (lambda x: F.activation_log_softmax1(x, axes=(1,)), "DML_OPERATOR_ACTIVATION_LOG_SOFTMAX1: InputTensor"),
        (lambda x: F.activation_hard_sigmoid(x), f"{HS}: InputTensor"),
    ],
)  # fmt: skip
def test_masked_arrays_are_refused_not_read_without_their_mask(call, where):
    with pytest.raises(
        dml.InvalidArgumentError, match=f"^{where}: a numpy.ma.MaskedArray may mean more than its memory"
    ):
        call(MASKED)


def test_unknown_subclasses_are_refused_as_arrays_buffers_and_outputs():
    desc = dml.BufferTensorDesc(T.FLOAT32, (2, 3))
    op = compile_op(dml.ActivationHardSigmoidOperatorDesc(input_tensor=desc, output_tensor=desc, alpha=0.2, beta=0.5))
    plain = np.ones((2, 3), np.float32)
    tagged = plain.view(Tagged)
    for inputs, outputs, tensor in [
        ([tagged], None, "InputTensor"),
        ([dml.BufferBinding(tagged)], None, "InputTensor"),
        ([plain], [tagged], "OutputTensor"),
        ([plain], [dml.BufferBinding(MASKED.copy())], "OutputTensor"),
    ]:
        with pytest.raises(dml.InvalidArgumentError, match=f"^{HS}: {tensor}: a .*(Tagged|MaskedArray) may mean more"):
            op.execute(inputs, outputs)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_a_matrix_is_bound_as_the_array_it_views():
    """np.matrix indexes and reduces differently from an ndarray; kernels see its plain view (no copy)."""
    x = np.array([[1, 9, 2], [3, 1, 8]], np.float32)
    m = np.asmatrix(x)
    assert F.argmax(m, axes=(1,)).tolist() == [[1], [2]]
    assert F.activation_hardmax1(m, axes=(0, 1)).tolist() == [[0, 1, 0], [0, 0, 0]]
    assert np.array_equal(F.activation_log_softmax1(m, axes=(1,)), F.activation_log_softmax1(x, axes=(1,)))
    desc = dml.BufferTensorDesc(T.FLOAT32, (2, 3))
    out = np.asmatrix(np.zeros((2, 3), np.float32))
    op = compile_op(dml.ActivationHardSigmoidOperatorDesc(input_tensor=desc, output_tensor=desc, alpha=0, beta=0.25))
    op.execute([m], [out])
    assert out.tolist() == [[0.25] * 3] * 2  # written through the view, into the matrix's memory


def test_a_memmap_is_a_plain_buffer(tmp_path):
    mapped = np.memmap(tmp_path / "x.bin", np.float32, "w+", shape=(2, 3))
    mapped[:] = [[1, 9, 2], [3, 1, 8]]
    assert F.argmax(mapped, axes=(1,)).tolist() == [[1], [2]]
    desc = dml.BufferTensorDesc(T.FLOAT32, (2, 3))
    op = compile_op(dml.ActivationHardSigmoidOperatorDesc(input_tensor=desc, output_tensor=desc, alpha=0, beta=0.5))
    op.execute([dml.BufferBinding(mapped)], [dml.BufferBinding(mapped)])  # in place, through the mapping
    assert np.fromfile(tmp_path / "x.bin", np.float32).tolist() == [0.5] * 6
