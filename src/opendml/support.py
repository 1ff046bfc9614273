"""The "Tensor support" tables of the DirectML operator pages: which dimension counts and data types each
tensor of an operator accepts, per "DML_FEATURE_LEVEL_x and above" row, as data."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .enums import FeatureLevel, TensorDataType

__all__ = ["TensorSupport", "SupportRow", "SupportBy", "supports", "row"]


@dataclass(frozen=True)
class TensorSupport:
    """One cell of a "Tensor support" table: supported dimension counts and data types."""

    min_dims: int
    max_dims: int
    data_types: tuple[TensorDataType, ...]
    #: The row lists a ``_Maybenull_`` tensor as a plain "Input": NULL is refused at this level (a later row
    #: says "Optional input", as QUANTIZE_LINEAR's ZeroPointTensor from 6_2).
    required: bool = False

    def allows_dimension_count(self, dimension_count: int) -> bool:
        return self.min_dims <= dimension_count <= self.max_dims

    def allows(self, desc: Any) -> bool:
        return self.allows_dimension_count(desc.dimension_count) and desc.data_type in self.data_types

    @property
    def dims_text(self) -> str:
        return str(self.min_dims) if self.min_dims == self.max_dims else f"{self.min_dims} to {self.max_dims}"

    @property
    def types_text(self) -> str:
        return ", ".join(t.name for t in self.data_types)


def supports(min_dims: int, max_dims: int, *data_types: TensorDataType, required: bool = False) -> TensorSupport:
    return TensorSupport(min_dims, max_dims, data_types, required)


@dataclass(frozen=True)
class SupportRow:
    """A "DML_FEATURE_LEVEL_x and above" table: applies from ``feature_level`` until a higher row takes over."""

    feature_level: FeatureLevel
    tensors: dict[str, TensorSupport]  # keyed by the tensor's C field name

    @staticmethod
    def ordered(rows: Iterable[SupportRow]) -> tuple[SupportRow, ...]:
        """Rows highest feature level first, the order lookups walk them in."""
        return tuple(sorted(rows, key=lambda r: r.feature_level, reverse=True))


def row(feature_level: FeatureLevel, **tensors: TensorSupport) -> SupportRow:
    return SupportRow(feature_level, tensors)


@dataclass(frozen=True)
class SupportBy:
    """Support rows that depend on an enum field (REDUCE's "Tensor support according to function"):
    ``groups`` maps a tuple of that field's values to their rows."""

    field: str  # the C name of the field, e.g. "Function"
    groups: dict[tuple[Any, ...], tuple[SupportRow, ...]]

    def __init__(self, field: str, groups: dict[tuple[Any, ...], Iterable[SupportRow]]):
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "groups", {values: SupportRow.ordered(rows) for values, rows in groups.items()})

    def rows_for(self, desc: Any) -> tuple[SupportRow, ...]:
        value = getattr(desc, desc.schema.field(self.field).name)
        return next(rows for values, rows in self.groups.items() if value in values)
