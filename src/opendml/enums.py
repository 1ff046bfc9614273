"""The enumerations of ``directml.h``, mirrored mechanically.

Names drop the C type prefix (``DML_TENSOR_DATA_TYPE_FLOAT32`` -> ``TensorDataType.FLOAT32``); values are the
header's (DirectML.h for DML_TARGET_VERSION 0x6400). Members are only ever appended in the header, so a value
never depends on the target version. Feature levels start with ``FL_`` because identifiers cannot start with a
digit (``DML_FEATURE_LEVEL_5_1`` -> ``FeatureLevel.FL_5_1``).
"""

from __future__ import annotations

import enum

__all__ = [
    "TensorDataType",
    "TensorType",
    "TensorFlags",
    "OperatorType",
    "ReduceFunction",
    "RoundingMode",
    "IsInfinityMode",
    "AxisDirection",
    "ExecutionFlags",
    "CreateDeviceFlags",
    "FeatureLevel",
    "Feature",
    "BindingType",
    "GraphEdgeType",
    "GraphNodeType",
    "TENSOR_DIMENSION_COUNT_MAX",
    "TENSOR_DIMENSION_COUNT_MAX1",
    "TEMPORARY_BUFFER_ALIGNMENT",
    "PERSISTENT_BUFFER_ALIGNMENT",
    "MINIMUM_BUFFER_TENSOR_ALIGNMENT",
]

# DirectML constants (DML_ prefix stripped).
TENSOR_DIMENSION_COUNT_MAX = 5  # before DML_FEATURE_LEVEL_3_0
TENSOR_DIMENSION_COUNT_MAX1 = 8  # from DML_FEATURE_LEVEL_3_0
TEMPORARY_BUFFER_ALIGNMENT = 256
PERSISTENT_BUFFER_ALIGNMENT = 256
MINIMUM_BUFFER_TENSOR_ALIGNMENT = 16


class _CName:
    """Mixin: ``c_name`` gives the member's spelling in directml.h."""

    @property
    def c_name(self) -> str:
        return f"{_C_PREFIXES[type(self)]}{self.name}"


class TensorDataType(_CName, enum.IntEnum):
    """DML_TENSOR_DATA_TYPE."""

    UNKNOWN = 0
    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11
    UINT4 = 12  # DML_TARGET_VERSION >= 0x6300; no operator of opendml takes it
    INT4 = 13  # likewise


class TensorType(_CName, enum.IntEnum):
    """DML_TENSOR_TYPE."""

    INVALID = 0
    BUFFER = 1


class TensorFlags(_CName, enum.IntFlag):
    """DML_TENSOR_FLAGS (bit flags)."""

    NONE = 0x0
    OWNED_BY_DML = 0x1


class OperatorType(_CName, enum.IntEnum):
    """DML_OPERATOR_TYPE: every operator of DirectML.h up to DML_FEATURE_LEVEL_6_4."""

    INVALID = 0
    ELEMENT_WISE_IDENTITY = 1
    ELEMENT_WISE_ABS = 2
    ELEMENT_WISE_ACOS = 3
    ELEMENT_WISE_ADD = 4
    ELEMENT_WISE_ASIN = 5
    ELEMENT_WISE_ATAN = 6
    ELEMENT_WISE_CEIL = 7
    ELEMENT_WISE_CLIP = 8
    ELEMENT_WISE_COS = 9
    ELEMENT_WISE_DIVIDE = 10
    ELEMENT_WISE_EXP = 11
    ELEMENT_WISE_FLOOR = 12
    ELEMENT_WISE_LOG = 13
    ELEMENT_WISE_LOGICAL_AND = 14
    ELEMENT_WISE_LOGICAL_EQUALS = 15
    ELEMENT_WISE_LOGICAL_GREATER_THAN = 16
    ELEMENT_WISE_LOGICAL_LESS_THAN = 17
    ELEMENT_WISE_LOGICAL_NOT = 18
    ELEMENT_WISE_LOGICAL_OR = 19
    ELEMENT_WISE_LOGICAL_XOR = 20
    ELEMENT_WISE_MAX = 21
    ELEMENT_WISE_MEAN = 22
    ELEMENT_WISE_MIN = 23
    ELEMENT_WISE_MULTIPLY = 24
    ELEMENT_WISE_POW = 25
    ELEMENT_WISE_CONSTANT_POW = 26
    ELEMENT_WISE_RECIP = 27
    ELEMENT_WISE_SIN = 28
    ELEMENT_WISE_SQRT = 29
    ELEMENT_WISE_SUBTRACT = 30
    ELEMENT_WISE_TAN = 31
    ELEMENT_WISE_THRESHOLD = 32
    ELEMENT_WISE_QUANTIZE_LINEAR = 33
    ELEMENT_WISE_DEQUANTIZE_LINEAR = 34
    ACTIVATION_ELU = 35
    ACTIVATION_HARDMAX = 36
    ACTIVATION_HARD_SIGMOID = 37
    ACTIVATION_IDENTITY = 38
    ACTIVATION_LEAKY_RELU = 39
    ACTIVATION_LINEAR = 40
    ACTIVATION_LOG_SOFTMAX = 41
    ACTIVATION_PARAMETERIZED_RELU = 42
    ACTIVATION_PARAMETRIC_SOFTPLUS = 43
    ACTIVATION_RELU = 44
    ACTIVATION_SCALED_ELU = 45
    ACTIVATION_SCALED_TANH = 46
    ACTIVATION_SIGMOID = 47
    ACTIVATION_SOFTMAX = 48
    ACTIVATION_SOFTPLUS = 49
    ACTIVATION_SOFTSIGN = 50
    ACTIVATION_TANH = 51
    ACTIVATION_THRESHOLDED_RELU = 52
    CONVOLUTION = 53
    GEMM = 54
    REDUCE = 55
    AVERAGE_POOLING = 56
    LP_POOLING = 57
    MAX_POOLING = 58
    ROI_POOLING = 59
    SLICE = 60
    CAST = 61
    SPLIT = 62
    JOIN = 63
    PADDING = 64
    VALUE_SCALE_2D = 65
    UPSAMPLE_2D = 66
    GATHER = 67
    SPACE_TO_DEPTH = 68
    DEPTH_TO_SPACE = 69
    TILE = 70
    TOP_K = 71
    BATCH_NORMALIZATION = 72
    MEAN_VARIANCE_NORMALIZATION = 73
    LOCAL_RESPONSE_NORMALIZATION = 74
    LP_NORMALIZATION = 75
    RNN = 76
    LSTM = 77
    GRU = 78
    ELEMENT_WISE_SIGN = 79
    ELEMENT_WISE_IS_NAN = 80
    ELEMENT_WISE_ERF = 81
    ELEMENT_WISE_SINH = 82
    ELEMENT_WISE_COSH = 83
    ELEMENT_WISE_TANH = 84
    ELEMENT_WISE_ASINH = 85
    ELEMENT_WISE_ACOSH = 86
    ELEMENT_WISE_ATANH = 87
    ELEMENT_WISE_IF = 88
    ELEMENT_WISE_ADD1 = 89
    ACTIVATION_SHRINK = 90
    MAX_POOLING1 = 91
    MAX_UNPOOLING = 92
    DIAGONAL_MATRIX = 93
    SCATTER_ELEMENTS = 94
    SCATTER = 94  # alias of SCATTER_ELEMENTS, as in the header
    ONE_HOT = 95
    RESAMPLE = 96
    ELEMENT_WISE_BIT_SHIFT_LEFT = 97
    ELEMENT_WISE_BIT_SHIFT_RIGHT = 98
    ELEMENT_WISE_ROUND = 99
    ELEMENT_WISE_IS_INFINITY = 100
    ELEMENT_WISE_MODULUS_TRUNCATE = 101
    ELEMENT_WISE_MODULUS_FLOOR = 102
    FILL_VALUE_CONSTANT = 103
    FILL_VALUE_SEQUENCE = 104
    CUMULATIVE_SUMMATION = 105
    REVERSE_SUBSEQUENCES = 106
    GATHER_ELEMENTS = 107
    GATHER_ND = 108
    SCATTER_ND = 109
    MAX_POOLING2 = 110
    SLICE1 = 111
    TOP_K1 = 112
    DEPTH_TO_SPACE1 = 113
    SPACE_TO_DEPTH1 = 114
    MEAN_VARIANCE_NORMALIZATION1 = 115
    RESAMPLE1 = 116
    MATRIX_MULTIPLY_INTEGER = 117
    QUANTIZED_LINEAR_MATRIX_MULTIPLY = 118
    CONVOLUTION_INTEGER = 119
    QUANTIZED_LINEAR_CONVOLUTION = 120
    ELEMENT_WISE_BIT_AND = 121
    ELEMENT_WISE_BIT_OR = 122
    ELEMENT_WISE_BIT_XOR = 123
    ELEMENT_WISE_BIT_NOT = 124
    ELEMENT_WISE_BIT_COUNT = 125
    ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL = 126
    ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL = 127
    ACTIVATION_CELU = 128
    ACTIVATION_RELU_GRAD = 129
    AVERAGE_POOLING_GRAD = 130
    MAX_POOLING_GRAD = 131
    RANDOM_GENERATOR = 132
    NONZERO_COORDINATES = 133
    RESAMPLE_GRAD = 134
    SLICE_GRAD = 135
    ADAM_OPTIMIZER = 136
    ARGMIN = 137
    ARGMAX = 138
    ROI_ALIGN = 139
    GATHER_ND1 = 140
    ELEMENT_WISE_ATAN_YX = 141
    ELEMENT_WISE_CLIP_GRAD = 142
    ELEMENT_WISE_DIFFERENCE_SQUARE = 143
    LOCAL_RESPONSE_NORMALIZATION_GRAD = 144
    CUMULATIVE_PRODUCT = 145
    BATCH_NORMALIZATION_GRAD = 146
    ELEMENT_WISE_QUANTIZED_LINEAR_ADD = 147
    DYNAMIC_QUANTIZE_LINEAR = 148
    ROI_ALIGN1 = 149
    ROI_ALIGN_GRAD = 150
    BATCH_NORMALIZATION_TRAINING = 151
    BATCH_NORMALIZATION_TRAINING_GRAD = 152
    ELEMENT_WISE_CLIP1 = 153
    ELEMENT_WISE_CLIP_GRAD1 = 154
    PADDING1 = 155
    ELEMENT_WISE_NEGATE = 156
    ACTIVATION_GELU = 157
    ACTIVATION_SOFTMAX1 = 158
    ACTIVATION_LOG_SOFTMAX1 = 159
    ACTIVATION_HARDMAX1 = 160
    RESAMPLE2 = 161
    RESAMPLE_GRAD1 = 162
    DIAGONAL_MATRIX1 = 163
    MULTIHEAD_ATTENTION = 164
    LP_POOLING1 = 165
    AVERAGE_POOLING1 = 166
    ACTIVATION_SWISH = 167
    ACTIVATION_HARD_SWISH = 168
    QUANTIZED_LINEAR_AVERAGE_POOLING = 169
    MATRIX_MULTIPLY_INTEGER_TO_FLOAT = 170
    MEAN_VARIANCE_NORMALIZATION2 = 171
    MULTIHEAD_ATTENTION1 = 172
    QUANTIZE = 173
    DEQUANTIZE = 174
    RESAMPLE3 = 175
    FOLD = 176
    UNFOLD = 177


class ReduceFunction(_CName, enum.IntEnum):
    """DML_REDUCE_FUNCTION."""

    ARGMAX = 0
    ARGMIN = 1
    AVERAGE = 2
    L1 = 3
    L2 = 4
    LOG_SUM = 5
    LOG_SUM_EXP = 6
    MAX = 7
    MIN = 8
    MULTIPLY = 9
    SUM = 10
    SUM_SQUARE = 11


class RoundingMode(_CName, enum.IntEnum):
    """DML_ROUNDING_MODE: how ELEMENT_WISE_ROUND rounds (values in the header's order)."""

    HALVES_TO_NEAREST_EVEN = 0
    TOWARD_ZERO = 1
    TOWARD_INFINITY = 2


class IsInfinityMode(_CName, enum.IntEnum):
    """DML_IS_INFINITY_MODE: which infinities ELEMENT_WISE_IS_INFINITY detects."""

    EITHER = 0
    POSITIVE = 1
    NEGATIVE = 2


class AxisDirection(_CName, enum.IntEnum):
    """DML_AXIS_DIRECTION: which of several equal extrema ARGMAX/ARGMIN return."""

    INCREASING = 0
    DECREASING = 1


class ExecutionFlags(_CName, enum.IntFlag):
    """DML_EXECUTION_FLAGS (bit flags)."""

    NONE = 0x0
    ALLOW_HALF_PRECISION_COMPUTATION = 0x1
    DISABLE_META_COMMANDS = 0x2
    DESCRIPTORS_VOLATILE = 0x4


class CreateDeviceFlags(_CName, enum.IntFlag):
    """DML_CREATE_DEVICE_FLAGS (bit flags)."""

    NONE = 0x0
    DEBUG = 0x1


class FeatureLevel(_CName, enum.IntEnum):
    """DML_FEATURE_LEVEL. Ordered: a device at one level supports everything of the levels below it."""

    FL_1_0 = 0x1000
    FL_2_0 = 0x2000
    FL_2_1 = 0x2100
    FL_3_0 = 0x3000
    FL_3_1 = 0x3100
    FL_4_0 = 0x4000
    FL_4_1 = 0x4100
    FL_5_0 = 0x5000
    FL_5_1 = 0x5100
    FL_5_2 = 0x5200
    FL_6_0 = 0x6000
    FL_6_1 = 0x6100
    FL_6_2 = 0x6200
    FL_6_3 = 0x6300
    FL_6_4 = 0x6400

    @property
    def c_name(self) -> str:
        return f"DML_FEATURE_LEVEL_{self.name[3:]}"

    @property
    def version(self) -> str:
        """``"5_1"`` for FL_5_1: the spelling of ``--feature-level`` and of the docs."""
        return self.name[3:]


class Feature(_CName, enum.IntEnum):
    """DML_FEATURE."""

    TENSOR_DATA_TYPE_SUPPORT = 0
    FEATURE_LEVELS = 1


class BindingType(_CName, enum.IntEnum):
    """DML_BINDING_TYPE."""

    NONE = 0
    BUFFER = 1
    BUFFER_ARRAY = 2


class GraphEdgeType(_CName, enum.IntEnum):
    """DML_GRAPH_EDGE_TYPE."""

    INVALID = 0
    INPUT = 1
    OUTPUT = 2
    INTERMEDIATE = 3


class GraphNodeType(_CName, enum.IntEnum):
    """DML_GRAPH_NODE_TYPE."""

    INVALID = 0
    OPERATOR = 1
    CONSTANT = 2  # DML_TARGET_VERSION >= 0x6200


_C_PREFIXES = {
    TensorDataType: "DML_TENSOR_DATA_TYPE_",
    TensorType: "DML_TENSOR_TYPE_",
    TensorFlags: "DML_TENSOR_FLAG_",
    OperatorType: "DML_OPERATOR_",
    ReduceFunction: "DML_REDUCE_FUNCTION_",
    RoundingMode: "DML_ROUNDING_MODE_",
    IsInfinityMode: "DML_IS_INFINITY_MODE_",
    AxisDirection: "DML_AXIS_DIRECTION_",
    ExecutionFlags: "DML_EXECUTION_FLAG_",
    CreateDeviceFlags: "DML_CREATE_DEVICE_FLAG_",
    Feature: "DML_FEATURE_",
    BindingType: "DML_BINDING_TYPE_",
    GraphEdgeType: "DML_GRAPH_EDGE_TYPE_",
    GraphNodeType: "DML_GRAPH_NODE_TYPE_",
}
