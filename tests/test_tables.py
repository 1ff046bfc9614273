"""The mirror of directml.h and the operator table checked against each other and against the header's values."""

import dataclasses
import re

import pytest

import opendml as dml
from opendml.deviations import DEVIATIONS
from opendml.schema import Array, SupportBy

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
    dml.OperatorType.ACTIVATION_HARDMAX: ("ActivationHardmaxOperatorDesc", "1_0", ["3_0", "2_0", "1_0"]),
    dml.OperatorType.ACTIVATION_LOG_SOFTMAX: ("ActivationLogSoftmaxOperatorDesc", "1_0", ["3_0", "2_0", "1_0"]),
    dml.OperatorType.ACTIVATION_SOFTMAX: ("ActivationSoftmaxOperatorDesc", "1_0", ["3_0", "2_0", "1_0"]),
    dml.OperatorType.ACTIVATION_SOFTMAX1: ("ActivationSoftmax1OperatorDesc", "5_1", ["5_1"]),
    dml.OperatorType.ARGMIN: ("ArgminOperatorDesc", "3_0", ["4_1", "3_0"]),
    # REDUCE: "Tensor support according to function", one heading per group of functions.
    dml.OperatorType.REDUCE: (
        "ReduceOperatorDesc",
        "1_0",
        {
            ("ARGMIN", "ARGMAX"): ["4_1", "3_0", "2_1", "1_0"],
            ("AVERAGE", "L2", "LOG_SUM", "LOG_SUM_EXP"): ["3_0", "1_0"],
            ("L1", "SUM_SQUARE"): ["5_0", "3_0", "1_0"],
            ("MIN", "MAX"): ["5_0", "3_0", "2_1", "1_0"],
            ("MULTIPLY", "SUM"): ["5_0", "3_0", "2_1", "1_0"],
        },
    ),
}
C_FIELDS = {  # the C structs' fields, in header order (directml-notes §2)
    dml.OperatorType.ACTIVATION_HARDMAX1: ["InputTensor", "OutputTensor", "AxisCount", "Axes"],
    dml.OperatorType.ACTIVATION_LOG_SOFTMAX1: ["InputTensor", "OutputTensor", "AxisCount", "Axes"],
    dml.OperatorType.ELEMENT_WISE_IF: ["ConditionTensor", "ATensor", "BTensor", "OutputTensor"],
    dml.OperatorType.ARGMAX: ["InputTensor", "OutputTensor", "AxisCount", "Axes", "AxisDirection"],
    dml.OperatorType.ACTIVATION_HARD_SIGMOID: ["InputTensor", "OutputTensor", "Alpha", "Beta"],
    dml.OperatorType.ACTIVATION_HARDMAX: ["InputTensor", "OutputTensor"],
    dml.OperatorType.ACTIVATION_LOG_SOFTMAX: ["InputTensor", "OutputTensor"],
    dml.OperatorType.ACTIVATION_SOFTMAX: ["InputTensor", "OutputTensor"],
    dml.OperatorType.ACTIVATION_SOFTMAX1: ["InputTensor", "OutputTensor", "AxisCount", "Axes"],
    dml.OperatorType.ARGMIN: ["InputTensor", "OutputTensor", "AxisCount", "Axes", "AxisDirection"],
    dml.OperatorType.REDUCE: ["Function", "InputTensor", "OutputTensor", "AxisCount", "Axes"],
}


def test_registry_is_exactly_the_implemented_operators():
    assert set(dml.REGISTRY) == set(EXPECTED_OPERATORS)
    for op_type, (class_name, introduced, rows) in EXPECTED_OPERATORS.items():
        schema = dml.REGISTRY[op_type]
        assert schema.desc_class is getattr(dml, class_name)
        assert schema.introduced.version == introduced
        if isinstance(schema.support, SupportBy):
            groups = {tuple(v.name for v in values): group for values, group in schema.support.groups.items()}
            assert {k: [r.feature_level.version for r in group] for k, group in groups.items()} == rows
        else:
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


def test_only_hard_sigmoid_runs_in_place():
    assert {t for t, s in dml.REGISTRY.items() if s.in_place} == {dml.OperatorType.ACTIVATION_HARD_SIGMOID}


def test_public_names():
    for name in dml.__all__:
        assert hasattr(dml, name), name
