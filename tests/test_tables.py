"""The mirror of directml.h and the operator table checked against each other and against the header's values."""

import pytest

import opendml as dml
from opendml.deviations import DEVIATIONS
from opendml.schema import Array

# Values counted from DirectML.h (directml-notes §1), written out here independently of opendml/enums.py.
DATA_TYPES = ["UNKNOWN", "FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32", "INT16", "INT8", "FLOAT64",
              "UINT64", "INT64", "UINT4", "INT4"]  # fmt: skip
FEATURE_LEVELS = {"1_0": 0x1000, "2_0": 0x2000, "2_1": 0x2100, "3_0": 0x3000, "3_1": 0x3100, "4_0": 0x4000,
                  "4_1": 0x4100, "5_0": 0x5000, "5_1": 0x5100, "5_2": 0x5200, "6_0": 0x6000, "6_1": 0x6100,
                  "6_2": 0x6200, "6_3": 0x6300, "6_4": 0x6400}  # fmt: skip
OPERATOR_SPOT_CHECKS = {  # cross-checked in the notes against windows-sys, Beef bindings and onnxruntime
    "INVALID": 0, "ELEMENT_WISE_IDENTITY": 1, "ELEMENT_WISE_DEQUANTIZE_LINEAR": 34, "ACTIVATION_ELU": 35,
    "ACTIVATION_HARDMAX": 36, "ACTIVATION_HARD_SIGMOID": 37, "ACTIVATION_LOG_SOFTMAX": 41,
    "ACTIVATION_SOFTMAX": 48, "ACTIVATION_THRESHOLDED_RELU": 52, "REDUCE": 55, "GRU": 78,
    "ELEMENT_WISE_SIGN": 79, "ELEMENT_WISE_IF": 88, "SCATTER_ELEMENTS": 94, "SCATTER": 94, "RESAMPLE": 96,
    "ELEMENT_WISE_BIT_SHIFT_LEFT": 97, "ARGMIN": 137, "ARGMAX": 138, "ACTIVATION_SOFTMAX1": 158,
    "ACTIVATION_LOG_SOFTMAX1": 159, "ACTIVATION_HARDMAX1": 160, "QUANTIZED_LINEAR_AVERAGE_POOLING": 169,
    "MATRIX_MULTIPLY_INTEGER_TO_FLOAT": 170, "UNFOLD": 177,
}  # fmt: skip


def test_tensor_data_type_values():
    assert [(m.name, m.value) for m in dml.TensorDataType] == [(n, i) for i, n in enumerate(DATA_TYPES)]


def test_feature_level_values_and_order():
    assert {m.name: m.value for m in dml.FeatureLevel} == {f"FL_{k}": v for k, v in FEATURE_LEVELS.items()}
    assert list(dml.FeatureLevel) == sorted(dml.FeatureLevel)
    assert dml.FeatureLevel.FL_5_1.c_name == "DML_FEATURE_LEVEL_5_1"


def test_operator_type_values():
    assert {m: dml.OperatorType[m].value for m in OPERATOR_SPOT_CHECKS} == OPERATOR_SPOT_CHECKS
    values = sorted({m.value for m in dml.OperatorType})
    assert values == list(range(178))  # implicitly numbered: no gaps
    assert dml.OperatorType.SCATTER is dml.OperatorType.SCATTER_ELEMENTS


@pytest.mark.parametrize(
    "enum, members",
    [
        (dml.TensorFlags, {"NONE": 0, "OWNED_BY_DML": 1}),
        (dml.AxisDirection, {"INCREASING": 0, "DECREASING": 1}),
        (
            dml.ExecutionFlags,
            {"NONE": 0, "ALLOW_HALF_PRECISION_COMPUTATION": 1, "DISABLE_META_COMMANDS": 2, "DESCRIPTORS_VOLATILE": 4},
        ),  # fmt: skip
        (dml.TensorType, {"INVALID": 0, "BUFFER": 1}),
        (
            dml.ReduceFunction,
            {
                "ARGMAX": 0,
                "ARGMIN": 1,
                "AVERAGE": 2,
                "L1": 3,
                "L2": 4,
                "LOG_SUM": 5,
                "LOG_SUM_EXP": 6,
                "MAX": 7,
                "MIN": 8,
                "MULTIPLY": 9,
                "SUM": 10,
                "SUM_SQUARE": 11,
            },
        ),  # fmt: skip
    ],
)
def test_small_enums(enum, members):
    assert {m.name: m.value for m in enum.__members__.values()} == members


def test_constants():
    assert (dml.TENSOR_DIMENSION_COUNT_MAX, dml.TENSOR_DIMENSION_COUNT_MAX1) == (5, 8)
    assert dml.MINIMUM_BUFFER_TENSOR_ALIGNMENT == 16


def test_every_folded_count_is_a_recorded_deviation():
    """Each count + pointer pair is one tuple in Python (the header mirror itself is tests/test_cases.py's)."""
    folded = {
        s.kind.count_c_name for schema in dml.REGISTRY.values() for s in schema.fields if isinstance(s.kind, Array)
    }
    assert folded and all(name.endswith("Count") for name in folded)
    assert any("count plus array pointer" in d.c_api for d in DEVIATIONS)


def test_public_names():
    for name in dml.__all__:
        assert hasattr(dml, name), name
