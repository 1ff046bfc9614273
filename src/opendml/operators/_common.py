"""Support-table pieces shared across families."""

from __future__ import annotations

from ..constraints import Same
from ..enums import TensorDataType as T
from ..schema import row, supports

FLOATS = (T.FLOAT32, T.FLOAT16)
SAME_AS_INPUT = (
    Same("DataType", "InputTensor", "OutputTensor"),
    Same("DimensionCount", "InputTensor", "OutputTensor"),
    Same("Sizes", "InputTensor", "OutputTensor"),
)


def same_type_and_shape(*tensors: str) -> list[Same]:
    """The tensors must have the same DataType, DimensionCount and Sizes (most element-wise pages' constraint)."""
    return [Same(attribute, *tensors) for attribute in ("DataType", "DimensionCount", "Sizes")]


def uniform_rows(tensors: tuple[str, ...], tables) -> list:
    """One support row per printed table ``(level, min dims, max dims, data types)`` in which every tensor
    shares the same cell (most element-wise and activation pages)."""
    return [row(level, **dict.fromkeys(tensors, supports(low, high, *types))) for level, low, high, types in tables]
