"""Bad descriptors and bad arguments: a typed error whose message names the operator, the field and the rule."""

import numpy as np
import pytest

import opendml as dml

T = dml.TensorDataType
E = dml.InvalidArgumentError


def desc_(data_type=T.FLOAT32, sizes=(2, 3), **kw):
    return dml.BufferTensorDesc(data_type, sizes, **kw)


def problems(desc, level=dml.FeatureLevel.FL_6_4):
    return dml.Device(feature_level=level).validate(desc)


def argmax(x, out, axes=(1,), direction=dml.AxisDirection.INCREASING):
    return dml.ArgmaxOperatorDesc(input_tensor=x, output_tensor=out, axes=axes, axis_direction=direction)


def hardmax(x, out=None, axes=(1,)):
    return dml.ActivationHardmax1OperatorDesc(input_tensor=x, output_tensor=out or x, axes=axes)


# --- BufferTensorDesc construction: what the C struct cannot hold -------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(sizes=(2, -1)), r"BufferTensorDesc.Sizes\[1\] is -1, but it is unsigned"),
        (dict(sizes=(2, 1.5)), r"BufferTensorDesc.Sizes\[1\] must be an integer, not float 1.5"),
        (dict(sizes=(True, 2)), r"Sizes\[0\] must be an integer, not the bool True"),
        (dict(sizes=(2, 2**32)), r"Sizes\[1\] is 4294967296, more than its C type holds \(4294967295\)"),
        (dict(sizes=5), r"BufferTensorDesc.Sizes must be a sequence of integers, not int 5"),
        (dict(strides=(1, -3)), r"Strides\[1\] is -3, but it is unsigned"),
        (dict(strides=(1,)), r"Strides has 1 entries but Sizes has 2; both are DimensionCount long"),
        (dict(total_tensor_size_in_bytes=-4), r"TotalTensorSizeInBytes is -4, but it is unsigned"),
        (dict(data_type=99), r"DataType is 99, which is not a TensorDataType"),
        (dict(data_type="FLOAT32"), r"DataType must be a TensorDataType, not str"),
        (dict(flags=2), r"Flags is 2, which is not a TensorFlags"),
        (dict(guaranteed_base_offset_alignment=-1), r"GuaranteedBaseOffsetAlignment is -1"),
    ],
)
def test_buffer_tensor_desc_construction_errors(kwargs, message):
    with pytest.raises(E, match=message):
        desc_(**kwargs)


def test_buffer_tensor_desc_normalises_and_fills_the_total_size():
    d = dml.BufferTensorDesc(np.int64(5), [np.uint8(2), 3], strides=[3, 1])
    assert d.data_type is T.UINT8 and d.sizes == (2, 3) and d.strides == (3, 1)
    assert d.total_tensor_size_in_bytes == 8  # 6 bytes rounded up to a multiple of 4
    assert d.is_packed and d.dimension_count == 2 and d.element_count == 6
    assert hash(d) == hash(dml.BufferTensorDesc(T.UINT8, (2, 3), (3, 1)))
    with pytest.raises(AttributeError):
        d.sizes = (1,)


# --- Operator descriptor construction --------------------------------------------------------------------


def test_operator_desc_field_types():
    x = desc_()
    with pytest.raises(
        E, match="DML_OPERATOR_ACTIVATION_HARDMAX1: InputTensor must be a BufferTensorDesc, not ndarray"
    ):
        dml.ActivationHardmax1OperatorDesc(input_tensor=np.zeros(2), output_tensor=x, axes=(0,))
    with pytest.raises(E, match=r"DML_OPERATOR_ARGMAX: Axes\[0\] must be an integer, not float 0.5"):
        argmax(x, x, axes=(0.5,))
    with pytest.raises(E, match="DML_OPERATOR_ARGMAX: AxisDirection is 2, which is not a AxisDirection"):
        argmax(x, x, direction=2)
    with pytest.raises(E, match="DML_OPERATOR_ACTIVATION_HARD_SIGMOID: Alpha must be a number"):
        dml.ActivationHardSigmoidOperatorDesc(input_tensor=x, output_tensor=x, alpha="0.2", beta=0.5)
    with pytest.raises(E, match="beyond the range of a 32-bit FLOAT"):
        dml.ActivationHardSigmoidOperatorDesc(input_tensor=x, output_tensor=x, alpha=1e39, beta=0.5)
    with pytest.raises(TypeError):  # a missing field: every field of a C desc is required
        dml.ActivationHardSigmoidOperatorDesc(input_tensor=x, output_tensor=x, alpha=0.2)
    d = argmax(x, desc_(T.UINT32, (2, 1)), axes=[np.int32(1)], direction=1)
    assert d.axes == (1,) and d.axis_direction is dml.AxisDirection.DECREASING
    assert d.operator_type is dml.OperatorType.ARGMAX


# --- Rules every tensor obeys, checked at create_operator -------------------------------------------------


@pytest.mark.parametrize(
    "tensor, message",
    [
        (desc_(sizes=(2, 0)), "InputTensor.Sizes[1] is 0; a size of zero in any dimension is invalid"),
        (
            desc_(sizes=(1,) * 9),
            "InputTensor.DimensionCount is 9, but it must be 1 to 8 (DML_TENSOR_DIMENSION_COUNT_MAX1)",
        ),
        (desc_(sizes=()), "InputTensor.DimensionCount is 0, but it must be 1 to 8"),
        (desc_(T.UNKNOWN), "InputTensor.DataType is DML_TENSOR_DATA_TYPE_UNKNOWN; a tensor needs a known data type"),
        (
            desc_(total_tensor_size_in_bytes=20),
            "InputTensor.TotalTensorSizeInBytes is 20, below the 24 bytes that DMLCalcBufferTensorSize gives",
        ),
        (desc_(total_tensor_size_in_bytes=26), "InputTensor.TotalTensorSizeInBytes is 26; it must be a multiple of 4"),
        (
            desc_(guaranteed_base_offset_alignment=12),
            "InputTensor.GuaranteedBaseOffsetAlignment is 12; it must be 0 or a power of two",
        ),
        (
            desc_(guaranteed_base_offset_alignment=2),
            "InputTensor.GuaranteedBaseOffsetAlignment is 2; it must be 0 or a power of two at least the element "
            "size (4 bytes)",
        ),
        (desc_(sizes=(65536, 65537)), "InputTensor has 4295032832 elements; a tensor may hold at most 2^32-1"),
        (desc_(sizes=(3, 2), strides=(2**31, 1)), "InputTensor.Strides place the last element at index 4294967297"),
        (desc_(flags=dml.TensorFlags.OWNED_BY_DML), "InputTensor.Flags has DML_TENSOR_FLAG_OWNED_BY_DML"),
    ],
)
def test_tensor_rules(tensor, message):
    found = problems(dml.ActivationHardSigmoidOperatorDesc(input_tensor=tensor, output_tensor=desc_(), alpha=1, beta=0))
    assert any(p.startswith("DML_OPERATOR_ACTIVATION_HARD_SIGMOID: " + message) for p in found), found


def test_valid_alignment_and_total_size_are_accepted():
    x = desc_(total_tensor_size_in_bytes=64, guaranteed_base_offset_alignment=16)
    assert problems(dml.ActivationHardSigmoidOperatorDesc(input_tensor=x, output_tensor=x, alpha=1, beta=0)) == []


# --- Operator constraints ---------------------------------------------------------------------------------


def test_same_data_type_dimension_count_and_sizes():
    found = problems(hardmax(desc_(), desc_(T.FLOAT16, (2, 3, 1))))
    assert found == [
        "DML_OPERATOR_ACTIVATION_HARDMAX1: InputTensor and OutputTensor must have the same DataType, but "
        "InputTensor has FLOAT32 and OutputTensor has FLOAT16",
        "DML_OPERATOR_ACTIVATION_HARDMAX1: InputTensor and OutputTensor must have the same DimensionCount, but "
        "InputTensor has 2 and OutputTensor has 3",
        "DML_OPERATOR_ACTIVATION_HARDMAX1: InputTensor and OutputTensor must have the same Sizes, but "
        "InputTensor has {2, 3} and OutputTensor has {2, 3, 1}",
    ]


@pytest.mark.parametrize(
    "axes, message",
    [
        ((), "AxisCount is 0; at least one axis must be given in Axes"),
        ((0, 2), "Axes[1] is 2, outside [0, 1] (InputTensor.DimensionCount is 2)"),
        ((1, 0, 1), "Axes lists axis 1 more than once"),
    ],
)
def test_axes_rules(axes, message):
    assert problems(hardmax(desc_(), axes=axes)) == ["DML_OPERATOR_ACTIVATION_HARDMAX1: " + message]


def test_argmax_output_sizes_rule_reads_like_the_debug_layer():
    found = problems(argmax(desc_(sizes=(2, 3)), desc_(T.UINT32, (1, 3)), axes=(1,)))
    assert found == [
        "DML_OPERATOR_ARGMAX: expected OutputTensor.Sizes[0] to be InputTensor.Sizes[0] (2) since dimension 0 "
        "is not reduced, but 1 was provided",
        "DML_OPERATOR_ARGMAX: expected OutputTensor.Sizes[1] to be 1 since dimension 1 is reduced, but 3 was provided",
    ]
    assert problems(argmax(desc_(sizes=(2, 3)), desc_(T.UINT32, (2,)), axes=(1,))) == [
        "DML_OPERATOR_ARGMAX: InputTensor and OutputTensor must have the same DimensionCount, but InputTensor "
        "has 2 and OutputTensor has 1"
    ]


def test_argmax_index_must_fit_the_output_type():
    big = desc_(T.UINT8, (1, 2**31 + 1))
    found = problems(argmax(big, desc_(T.INT32, (1, 1))))
    assert found == [
        "DML_OPERATOR_ARGMAX: the reduced dimensions hold 2147483649 elements, so indices up to 2147483648 do not "
        "fit in OutputTensor.DataType INT32 (max 2147483647)"
    ]
    assert problems(argmax(big, desc_(T.UINT32, (1, 1)))) == []


def test_if_constraints():
    f, c = desc_(T.FLOAT32), desc_(T.UINT8)
    d = dml.ElementWiseIfOperatorDesc(condition_tensor=desc_(T.UINT8, (3, 2)), a_tensor=f, b_tensor=desc_(T.INT32),
                                      output_tensor=f)  # fmt: skip
    assert problems(d) == [
        "DML_OPERATOR_ELEMENT_WISE_IF: ATensor and ConditionTensor must have the same Sizes, but ATensor has "
        "{2, 3} and ConditionTensor has {3, 2}",
        "DML_OPERATOR_ELEMENT_WISE_IF: ATensor and BTensor must have the same DataType, but ATensor has FLOAT32 "
        "and BTensor has INT32",
    ]
    bad_cond = dml.ElementWiseIfOperatorDesc(condition_tensor=desc_(T.INT8), a_tensor=f, b_tensor=f, output_tensor=f)
    assert problems(bad_cond) == [
        "DML_OPERATOR_ELEMENT_WISE_IF: ConditionTensor.DataType INT8 is not supported at DML_FEATURE_LEVEL_6_4 "
        "(supported: UINT8)"
    ]
    assert problems(dml.ElementWiseIfOperatorDesc(condition_tensor=c, a_tensor=f, b_tensor=f, output_tensor=f)) == []


def test_output_that_writes_one_address_twice_is_invalid():
    x = desc_(sizes=(2, 3))
    for strides in [(0, 1), (1, 1), (2, 1)]:
        found = problems(hardmax(x, desc_(sizes=(2, 3), strides=strides)))
        assert any("OutputTensor: Strides" in p and "an output may not write one address twice" in p for p in found), (
            strides
        )
    for strides in [(3, 1), (1, 2), (4, 1), (0, 1)[::-1] and (1, 2)]:  # packed, transposed, padded
        assert problems(hardmax(x, desc_(sizes=(2, 3), strides=strides))) == []
    # Interleaved but distinct (offsets 0,2,4,3,5,7): valid; a broadcast input is fine too.
    assert problems(hardmax(x, desc_(sizes=(2, 3), strides=(3, 2)))) == []
    assert problems(hardmax(desc_(sizes=(2, 3), strides=(0, 1)), x)) == []


def test_create_operator_raises_with_every_problem():
    bad = hardmax(desc_(sizes=(2, 0)), desc_(T.FLOAT16), axes=(5,))
    with pytest.raises(E) as raised:
        dml.Device().create_operator(bad)
    err = raised.value
    assert isinstance(err, ValueError) and err.hresult == 0x80070057
    assert str(err).startswith("DML_OPERATOR_ACTIVATION_HARDMAX1: InputTensor.Sizes[1] is 0")
    assert str(err).endswith(f"(and {len(err.problems) - 1} more problems)")
    assert len(err.problems) >= 3


def test_create_operator_rejects_non_descriptors_and_foreign_operators():
    with pytest.raises(E, match="takes an operator descriptor, not dict"):
        dml.Device().create_operator({"InputTensor": 1})
    x = desc_()
    op = dml.Device().create_operator(hardmax(x))
    with pytest.raises(E, match="was not created by this device"):
        dml.Device().compile_operator(op)
    with pytest.raises(E, match="ExecutionFlags"):
        op.device.compile_operator(op, 8)


# --- Execution arguments ---------------------------------------------------------------------------------


@pytest.fixture
def compiled():
    x = desc_(T.FLOAT32, (2, 3))
    device = dml.Device()
    return device.compile_operator(device.create_operator(hardmax(x)))


@pytest.mark.parametrize(
    "inputs, outputs, message",
    [
        ([], None, r"expected 1 input binding\(s\) \(InputTensor\), but 0 were provided"),
        (
            [np.zeros((2, 3), np.float32)] * 2,
            None,
            r"expected 1 input binding\(s\), .* 2 were provided|expected 1 input",
        ),
        (
            [np.zeros((2, 3), np.float64)],
            None,
            r"InputTensor is FLOAT32, so it takes a <f4 array, not <f8 \(opendml never casts\)",
        ),
        ([np.zeros((3, 2), np.float32)], None, r"InputTensor has Sizes \(2, 3\), but the array's shape is \(3, 2\)"),
        ([[[0.0] * 3] * 2], None, "InputTensor must be bound to a numpy.ndarray or a BufferBinding, not list"),
        (np.zeros((2, 3), np.float32), None, "inputs must be a list"),
        ([np.zeros((2, 3), np.float32)], [np.zeros((2, 3), np.float32)] * 2, r"expected 1 output binding"),
        ([np.zeros((2, 3), np.float32).astype(">f4")], None, "not >f4"),
    ],
)
def test_execute_argument_errors(compiled, inputs, outputs, message):
    with pytest.raises(E, match=message):
        compiled.execute(inputs, outputs)


def test_read_only_output_array_is_refused(compiled):
    out = np.zeros((2, 3), np.float32)
    out.flags.writeable = False
    with pytest.raises(E, match="the output array is read-only"):
        compiled.execute([np.zeros((2, 3), np.float32)], [out])


def test_execute_writes_caller_outputs_and_returns_them(compiled):
    x = np.array([[1, 3, 2], [5, 5, 4]], np.float32)
    before = x.copy()
    out = np.full((2, 3), 7, np.float32)
    (result,) = compiled.execute([x], [out])
    assert result is out
    np.testing.assert_array_equal(out, [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(x, before)


def test_strided_descriptor_bound_to_an_array_says_to_use_a_buffer_binding():
    x = desc_(sizes=(2, 3), strides=(4, 1))
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(hardmax(x, desc_())))
    with pytest.raises(E, match=r"InputTensor has Strides \(4, 1\).*BufferBinding"):
        compiled.execute([np.zeros((2, 3), np.float32)])


# --- Edges found in review --------------------------------------------------------------------------------


def test_buffers_that_are_not_plain_memory_are_refused():
    x = desc_(T.FLOAT32, (2,))
    device = dml.Device()
    compiled = device.compile_operator(
        device.create_operator(dml.ActivationHardSigmoidOperatorDesc(input_tensor=x, output_tensor=x, alpha=1, beta=0))
    )
    objects = np.array([object(), object()], dtype=object)
    with pytest.raises(E, match="OutputTensor: BufferBinding.buffer holds Python objects, not plain memory"):
        compiled.execute([np.zeros(2, np.float32)], [dml.BufferBinding(objects)])
    with pytest.raises(E, match="InputTensor: BufferBinding.buffer holds Python objects"):
        compiled.execute([dml.BufferBinding(np.zeros(4, object))])
    with pytest.raises(E, match="InputTensor: BufferBinding.buffer cannot be read as memory"):
        compiled.execute([dml.BufferBinding(np.zeros(2, "M8[D]"))])


def test_output_array_whose_elements_share_memory_is_refused():
    x = desc_(T.FLOAT32, (2, 2))
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(hardmax(x)))
    shared = np.lib.stride_tricks.as_strided(np.zeros(2, np.float32), shape=(2, 2), strides=(0, 4))
    with pytest.raises(E, match="OutputTensor: the output array's Strides give dimension of size 2 a stride of 0"):
        compiled.execute([np.ones((2, 2), np.float32)], [shared])
    transposed = np.zeros((2, 2), np.float32).T  # distinct elements, any layout: fine
    (out,) = compiled.execute([np.array([[1, 2], [4, 3]], np.float32)], [transposed])
    np.testing.assert_array_equal(out, [[0, 1], [1, 0]])


@pytest.mark.parametrize(
    "value, ok",
    [(3.4028235e38, True), (3.4028235677973362e38, True), (3.4028236e38, False), (-1e39, False), (float("inf"), True)],
)
def test_float_fields_take_what_rounds_to_a_finite_float32(value, ok):
    x = desc_()
    make = lambda: dml.ActivationHardSigmoidOperatorDesc(input_tensor=x, output_tensor=x, alpha=value, beta=0)  # noqa: E731
    if ok:
        assert make().alpha == value
    else:
        with pytest.raises(E, match="beyond the range of a 32-bit FLOAT"):
            make()


def test_many_axes_are_refused_by_their_count_before_any_axis_is_read():
    found = problems(hardmax(desc_(), axes=list(range(200_000)) + [7]))
    assert found == [
        "DML_OPERATOR_ACTIVATION_HARDMAX1: AxisCount is 200001, but a tensor has at most 8 dimensions "
        "(DML_TENSOR_DIMENSION_COUNT_MAX1) and each may be listed once in Axes"
    ]


def test_absurdly_large_descriptors_are_refused_quickly():
    huge = desc_(T.FLOAT32, (2**32 - 1,) * 400_000)  # 400000 dimensions of the largest UINT
    found = problems(hardmax(huge, axes=[0] * 400_000))
    assert found[0] == (
        "DML_OPERATOR_ACTIVATION_HARDMAX1: InputTensor.DimensionCount is 400000, but it must be 1 to 8 "
        "(DML_TENSOR_DIMENSION_COUNT_MAX1)"
    )
    assert any("AxisCount is 400000, but a tensor has at most 8 dimensions" in p for p in found)
    out = desc_(T.UINT32, (1,) * 400_000)
    assert any("DimensionCount is 400000" in p for p in problems(argmax(huge, out, axes=[0] * 400_000)))
