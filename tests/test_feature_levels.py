"""Feature-level messages read in full for the rows of the seed operators that are worth it (IF's 2_0 row as
printed, ARGMAX's 64-bit inputs, HARD_SIGMOID's dimension counts), and the Device's feature-level argument.
Every row of every operator is walked generically by tests/test_cases_feature_levels.py."""

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


def problems(desc, level):
    return dml.Device(feature_level=level).validate(desc)


# The walk of every row of every operator is generic (tests/test_cases_feature_levels.py); these are the rows
# whose messages are worth reading in full.


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
