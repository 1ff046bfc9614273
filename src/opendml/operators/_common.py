"""Support-table pieces shared across families."""

from __future__ import annotations

from ..constraints import Same
from ..enums import TensorDataType as T

FLOATS = (T.FLOAT32, T.FLOAT16)
SAME_AS_INPUT = (
    Same("DataType", "InputTensor", "OutputTensor"),
    Same("DimensionCount", "InputTensor", "OutputTensor"),
    Same("Sizes", "InputTensor", "OutputTensor"),
)
