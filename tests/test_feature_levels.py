"""Walk every "Tensor support" row of every operator, and its boundaries, at the feature levels around it.

The rows come from opendml's table (checked against the doc pages in test_tables.py); this file proves that the
validator enforces each one: inside a row is valid from its level up, one level below is refused with a message
naming the level that would accept it, and a dimension count or data type just outside the row is refused.
"""

import pytest

import opendml as dml

T = dml.TensorDataType
FL = dml.FeatureLevel
LEVELS = list(FL)
ALL_TYPES = [t for t in T]


def make(op_type, dims, data_type=T.FLOAT32, *, index_type=T.UINT32, condition_type=T.UINT8):
    """A descriptor of ``op_type`` whose value tensors have ``dims`` dimensions and ``data_type``."""
    sizes = (2,) * dims
    x = dml.BufferTensorDesc(data_type, sizes)
    if op_type == dml.OperatorType.ELEMENT_WISE_IF:
        cond = dml.BufferTensorDesc(condition_type, sizes)
        return dml.ElementWiseIfOperatorDesc(condition_tensor=cond, a_tensor=x, b_tensor=x, output_tensor=x)
    if op_type in (dml.OperatorType.ARGMAX, dml.OperatorType.ARGMIN):
        out = dml.BufferTensorDesc(index_type, sizes[:-1] + (1,))
        return dml.REGISTRY[op_type].desc_class(
            input_tensor=x, output_tensor=out, axes=(dims - 1,), axis_direction=dml.AxisDirection.INCREASING
        )
    if op_type == dml.OperatorType.ACTIVATION_HARD_SIGMOID:
        return dml.ActivationHardSigmoidOperatorDesc(input_tensor=x, output_tensor=x, alpha=0.2, beta=0.5)
    return dml.REGISTRY[op_type].desc_class(input_tensor=x, output_tensor=x, axes=(dims - 1,))


# The tensor whose data type each case varies, and how make() sets it.
VARIED = {
    dml.OperatorType.ACTIVATION_HARDMAX1: [("InputTensor", "data_type")],
    dml.OperatorType.ACTIVATION_LOG_SOFTMAX1: [("InputTensor", "data_type")],
    dml.OperatorType.ACTIVATION_HARD_SIGMOID: [("InputTensor", "data_type")],
    dml.OperatorType.ELEMENT_WISE_IF: [("ATensor", "data_type"), ("ConditionTensor", "condition_type")],
    dml.OperatorType.ARGMAX: [("InputTensor", "data_type"), ("OutputTensor", "index_type")],
}

# The first five operators, walked by hand here; every operator (these too) is walked generically from its case by
# tests/test_cases_feature_levels.py.
CASES = [
    (op_type, r, tensor, keyword)
    for op_type, schema in dml.REGISTRY.items()
    if op_type in VARIED
    for r in schema.support
    for tensor, keyword in VARIED[op_type]
]


def ids(case):
    op_type, r, tensor, _ = case
    return f"{op_type.name}-{r.feature_level.version}-{tensor}"


def problems(desc, level):
    return dml.Device(feature_level=level).validate(desc)


def default_type(support):
    return support.data_types[0]


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_row_accepts_its_types_and_dimension_counts_from_its_level_up(case):
    op_type, r, tensor, keyword = case
    support = r.tensors[tensor]
    value_type = default_type(r.tensors["InputTensor" if "InputTensor" in r.tensors else "ATensor"])
    for dims in {support.min_dims, support.max_dims}:
        for data_type in support.data_types:
            desc = make(op_type, dims, **{"data_type": value_type, keyword: data_type})
            for level in (r.feature_level, FL.FL_6_4):
                assert problems(desc, level) == [], (dims, data_type, level)
            dml.Device(feature_level=r.feature_level).create_operator(desc)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_one_level_below_the_row(case):
    op_type, r, tensor, keyword = case
    schema = dml.REGISTRY[op_type]
    below = LEVELS[LEVELS.index(r.feature_level) - 1] if r.feature_level != FL.FL_1_0 else None
    lower_row = schema.support_row(below) if below else None
    support = r.tensors[tensor]
    value_type = default_type(r.tensors["InputTensor" if "InputTensor" in r.tensors else "ATensor"])
    for dims in {support.min_dims, support.max_dims}:
        for data_type in support.data_types:
            desc = make(op_type, dims, **{"data_type": value_type, keyword: data_type})
            if below is None:
                continue  # FL_1_0 is the lowest level there is
            found = problems(desc, below)
            if lower_row is None:
                assert found == [
                    f"{op_type.c_name}: the operator was introduced in {r.feature_level.c_name}, "
                    f"but the device's feature level is {below.c_name}"
                ]
            elif all(lower_row.tensors[name].allows(getattr(desc, schema.field(name).name)) for name in r.tensors):
                assert found == []
            else:
                assert found, (dims, data_type)
                assert all(p.startswith(op_type.c_name + ": ") for p in found)
                assert any(f"is not supported at {below.c_name}" in p for p in found)
                assert any(f"{r.feature_level.c_name} and above support it" in p for p in found), found
                with pytest.raises(dml.InvalidArgumentError) as raised:
                    dml.Device(feature_level=below).create_operator(desc)
                assert raised.value.hresult == 0x80070057
                assert raised.value.problems == tuple(found)


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_dimension_counts_just_outside_the_row(case):
    op_type, r, tensor, keyword = case
    support = r.tensors[tensor]
    value_type = default_type(r.tensors["InputTensor" if "InputTensor" in r.tensors else "ATensor"])
    for dims in (support.min_dims - 1, support.max_dims + 1):
        if dims < 1:
            continue
        desc = make(op_type, dims, **{"data_type": value_type, keyword: support.data_types[0]})
        found = problems(desc, r.feature_level)
        if dims > 8:  # reported once, by the rule every tensor obeys
            assert any("DimensionCount is 9, but it must be 1 to 8" in p for p in found), found
            assert not any("DimensionCount 9 is not supported" in p for p in found), found
        else:
            assert any(
                f"DimensionCount {dims} is not supported at {r.feature_level.c_name} (supported: {support.dims_text})"
                in p
                for p in found
            ), found


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_every_data_type_outside_the_row_is_refused(case):
    op_type, r, tensor, keyword = case
    support = r.tensors[tensor]
    value_type = default_type(r.tensors["InputTensor" if "InputTensor" in r.tensors else "ATensor"])
    outside = [t for t in ALL_TYPES if t not in support.data_types]
    assert outside
    for data_type in outside:
        desc = make(op_type, support.min_dims, **{"data_type": value_type, keyword: data_type})
        found = problems(desc, r.feature_level)
        if data_type == T.UNKNOWN:  # reported once, by the rule every tensor obeys
            assert f"{op_type.c_name}: {tensor}.DataType is DML_TENSOR_DATA_TYPE_UNKNOWN" in "".join(found), found
            assert not any("DataType UNKNOWN is not supported" in p for p in found), found
        else:
            assert any(
                f"{tensor}.DataType {data_type.name} is not supported at {r.feature_level.c_name}" in p for p in found
            ), (data_type, found)


@pytest.mark.parametrize(
    "op_type, level",
    [(t, LEVELS[LEVELS.index(s.introduced) - 1]) for t, s in dml.REGISTRY.items() if s.introduced != FL.FL_1_0],
)
def test_operator_unavailable_below_its_introduction(op_type, level):
    desc = make(op_type, 4, T.FLOAT16)
    with pytest.raises(dml.InvalidArgumentError, match=f"introduced in {dml.REGISTRY[op_type].introduced.c_name}"):
        dml.Device(feature_level=level).create_operator(desc)


def test_if_at_2_0_takes_only_float16_as_printed():
    assert problems(make(dml.OperatorType.ELEMENT_WISE_IF, 4, T.FLOAT16), FL.FL_2_0) == []
    found = problems(make(dml.OperatorType.ELEMENT_WISE_IF, 4, T.FLOAT32), FL.FL_2_1)
    assert (
        "DML_OPERATOR_ELEMENT_WISE_IF: ATensor.DataType FLOAT32 is not supported at DML_FEATURE_LEVEL_2_1 "
        "(supported: FLOAT16); DML_FEATURE_LEVEL_3_0 and above support it"
    ) in found


def test_argmax_64_bit_input_arrives_at_4_1():
    desc = make(dml.OperatorType.ARGMAX, 3, T.INT64)
    assert problems(desc, FL.FL_4_1) == []
    assert problems(desc, FL.FL_4_0) == [
        "DML_OPERATOR_ARGMAX: InputTensor.DataType INT64 is not supported at DML_FEATURE_LEVEL_4_0 "
        "(supported: FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8); "
        "DML_FEATURE_LEVEL_4_1 and above support it"
    ]


def test_hard_sigmoid_dimension_counts_by_level():
    assert problems(make(dml.OperatorType.ACTIVATION_HARD_SIGMOID, 5), FL.FL_1_0) == [
        "DML_OPERATOR_ACTIVATION_HARD_SIGMOID: InputTensor.DimensionCount 5 is not supported at DML_FEATURE_LEVEL_1_0 "
        "(supported: 4); DML_FEATURE_LEVEL_2_0 and above support it",
        "DML_OPERATOR_ACTIVATION_HARD_SIGMOID: OutputTensor.DimensionCount 5 is not supported at DML_FEATURE_LEVEL_1_0 "
        "(supported: 4); DML_FEATURE_LEVEL_2_0 and above support it",
    ]
    assert problems(make(dml.OperatorType.ACTIVATION_HARD_SIGMOID, 1), FL.FL_2_0)[0].endswith(
        "(supported: 4 to 5); DML_FEATURE_LEVEL_3_0 and above support it"
    )


def test_device_feature_level_argument():
    assert dml.Device().feature_level is FL.FL_6_4
    assert dml.Device(feature_level=0x3000).feature_level is FL.FL_3_0
    with pytest.raises(dml.UnsupportedError, match="above the highest opendml implements"):
        dml.Device(feature_level=0x7000)
    with pytest.raises(dml.InvalidArgumentError, match="not a FeatureLevel"):
        dml.Device(feature_level=0x3200)
    with pytest.raises(dml.InvalidArgumentError, match="must be a FeatureLevel"):
        dml.Device(feature_level="5_1")
