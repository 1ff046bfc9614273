"""The mirror of directml.h and the operator table checked against each other and against the header's values."""

import dataclasses
import re

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


# What the DirectML doc pages say, transcribed here a second time: availability and the support rows' levels.
EXPECTED_OPERATORS = {
    dml.OperatorType.ACTIVATION_HARDMAX1: ("ActivationHardmax1OperatorDesc", "5_1", ["5_1"]),
    dml.OperatorType.ACTIVATION_LOG_SOFTMAX1: ("ActivationLogSoftmax1OperatorDesc", "5_1", ["5_1"]),
    dml.OperatorType.ELEMENT_WISE_IF: ("ElementWiseIfOperatorDesc", "2_0", ["5_0", "3_0", "2_0"]),
    dml.OperatorType.ARGMAX: ("ArgmaxOperatorDesc", "3_0", ["4_1", "3_0"]),
    dml.OperatorType.ACTIVATION_HARD_SIGMOID: ("ActivationHardSigmoidOperatorDesc", "1_0", ["3_0", "2_0", "1_0"]),
}
# The activation family of issue 10 and ADD1 (their pages' "Availability" and table headings), written out again.
_CLASSIC = ["3_0", "2_0", "1_0"]
EXPECTED_OPERATORS.update({
    getattr(dml.OperatorType, name): ("".join(w.capitalize() for w in name.split("_")) + "OperatorDesc", low, rows)
    for name, low, rows in [
        ("ACTIVATION_ELU", "1_0", _CLASSIC), ("ACTIVATION_IDENTITY", "1_0", _CLASSIC),
        ("ACTIVATION_LEAKY_RELU", "1_0", _CLASSIC), ("ACTIVATION_LINEAR", "1_0", _CLASSIC),
        ("ACTIVATION_PARAMETERIZED_RELU", "1_0", ["5_1", *_CLASSIC]),
        ("ACTIVATION_PARAMETRIC_SOFTPLUS", "1_0", _CLASSIC), ("ACTIVATION_RELU", "1_0", ["5_1", *_CLASSIC]),
        ("ACTIVATION_SCALED_ELU", "1_0", _CLASSIC), ("ACTIVATION_SCALED_TANH", "1_0", _CLASSIC),
        ("ACTIVATION_SIGMOID", "1_0", _CLASSIC), ("ACTIVATION_SOFTPLUS", "1_0", _CLASSIC),
        ("ACTIVATION_SOFTSIGN", "1_0", _CLASSIC), ("ACTIVATION_TANH", "1_0", _CLASSIC),
        ("ACTIVATION_THRESHOLDED_RELU", "1_0", _CLASSIC), ("ACTIVATION_SHRINK", "2_0", ["5_1", "3_0", "2_0"]),
        ("ACTIVATION_CELU", "3_0", ["3_0"]), ("ACTIVATION_RELU_GRAD", "3_0", ["5_1", "4_0", "3_0"]),
        ("ACTIVATION_GELU", "5_1", ["5_1"]), ("ACTIVATION_SWISH", "6_2", ["6_2"]),
        ("ACTIVATION_HARD_SWISH", "6_2", ["6_2"]), ("ELEMENT_WISE_ADD1", "2_0", ["3_0", "2_0"]),
    ]
})  # fmt: skip
#: Operators whose page says the output may alias the input (the rest of EXPECTED_OPERATORS may not).
IN_PLACE = {getattr(dml.OperatorType, name) for name in (
    "ACTIVATION_HARD_SIGMOID", "ACTIVATION_ELU", "ACTIVATION_IDENTITY", "ACTIVATION_LEAKY_RELU", "ACTIVATION_LINEAR",
    "ACTIVATION_PARAMETERIZED_RELU", "ACTIVATION_PARAMETRIC_SOFTPLUS", "ACTIVATION_RELU", "ACTIVATION_SCALED_ELU",
    "ACTIVATION_SCALED_TANH", "ACTIVATION_SIGMOID", "ACTIVATION_SOFTPLUS", "ACTIVATION_SOFTSIGN", "ACTIVATION_TANH",
    "ACTIVATION_THRESHOLDED_RELU", "ACTIVATION_SHRINK", "ACTIVATION_CELU", "ACTIVATION_SWISH", "ACTIVATION_HARD_SWISH",
    "ELEMENT_WISE_ADD1")}  # fmt: skip
C_FIELDS = {  # the C structs' fields, in header order (directml-notes §2)
    dml.OperatorType.ACTIVATION_HARDMAX1: ["InputTensor", "OutputTensor", "AxisCount", "Axes"],
    dml.OperatorType.ACTIVATION_LOG_SOFTMAX1: ["InputTensor", "OutputTensor", "AxisCount", "Axes"],
    dml.OperatorType.ELEMENT_WISE_IF: ["ConditionTensor", "ATensor", "BTensor", "OutputTensor"],
    dml.OperatorType.ARGMAX: ["InputTensor", "OutputTensor", "AxisCount", "Axes", "AxisDirection"],
    dml.OperatorType.ACTIVATION_HARD_SIGMOID: ["InputTensor", "OutputTensor", "Alpha", "Beta"],
}


def test_registry_declares_the_expected_operators():
    assert set(EXPECTED_OPERATORS) <= set(dml.REGISTRY)  # every declared one has a case: tests/test_cases.py
    for op_type, (class_name, introduced, rows) in EXPECTED_OPERATORS.items():
        schema = dml.REGISTRY[op_type]
        assert schema.desc_class is getattr(dml, class_name)
        assert schema.introduced.version == introduced
        assert [r.feature_level.version for r in schema.support] == rows


@pytest.mark.parametrize("op_type", list(C_FIELDS))
def test_descriptor_mirrors_the_c_struct_mechanically(op_type):
    schema = dml.REGISTRY[op_type]
    # Type name: strip DML_, PascalCase.
    c_struct = f"{op_type.c_name}_OPERATOR_DESC".removeprefix("DML_OPERATOR_")
    assert schema.desc_class.__name__ == "".join(w.capitalize() for w in c_struct.split("_"))
    # Fields: header order; snake_case of the C name; a count field folded into its array (a listed deviation).
    mirrored = []
    for spec in schema.fields:
        assert spec.name == re.sub(r"(?<!^)(?=[A-Z])", "_", spec.c_name).lower()
        if isinstance(spec.kind, Array):
            mirrored.append(spec.kind.count_c_name)
        mirrored.append(spec.c_name)
    assert mirrored == C_FIELDS[op_type]
    assert [f.name for f in dataclasses.fields(schema.desc_class)] == [s.name for s in schema.fields]


def test_every_folded_field_is_a_recorded_deviation():
    folded = {
        s.kind.count_c_name for schema in dml.REGISTRY.values() for s in schema.fields if isinstance(s.kind, Array)
    }
    assert folded == {"AxisCount"}
    assert any("AxisCount" in d.c_api for d in DEVIATIONS)


def test_in_place_exactly_where_the_page_says_so():
    assert {t for t in EXPECTED_OPERATORS if dml.REGISTRY[t].in_place} == IN_PLACE


def test_public_names():
    for name in dml.__all__:
        assert hasattr(dml, name), name
