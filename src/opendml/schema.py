"""How an operator is declared: its descriptor's fields, the level it arrived in, its support table, its rules.

Each operator is written once, in :mod:`opendml.operators`, as a frozen dataclass mirroring its
``DML_*_OPERATOR_DESC`` and decorated with :func:`operator`. The decorator records an :class:`OperatorSchema`
that validation (:mod:`opendml.validation`), execution (:mod:`opendml.device`), the JSON runner, the tests and
the README's operator table all read. Nothing about an operator is written anywhere else.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .enums import FeatureLevel, OperatorType, TensorDataType
from .errors import InvalidArgumentError, OperatorNotImplementedError
from .tensor import BufferTensorDesc, as_enum, as_uint_tuple

__all__ = [
    "FieldKind",
    "FieldSpec",
    "TensorSupport",
    "SupportRow",
    "OperatorSchema",
    "OperatorDesc",
    "operator",
    "REGISTRY",
    "schema_of",
]


class FieldKind(enum.Enum):
    """What a descriptor field is, as DirectMLSchema.h classifies it."""

    INPUT_TENSOR = "input tensor"
    OUTPUT_TENSOR = "output tensor"
    UINT_ARRAY = "UINT array"  # a count field plus a pointer in C (AxisCount + Axes)
    ENUM = "enum"
    FLOAT = "FLOAT"


@dataclass(frozen=True)
class FieldSpec:
    """One field of a descriptor: the Python name, the C name, its kind."""

    name: str
    c_name: str
    kind: FieldKind
    enum_type: type | None = None
    count_c_name: str | None = None  # for UINT_ARRAY: the C field that holds its length

    @property
    def is_tensor(self) -> bool:
        return self.kind in (FieldKind.INPUT_TENSOR, FieldKind.OUTPUT_TENSOR)


def c_name_of(python_name: str) -> str:
    """``input_tensor`` -> ``InputTensor``, ``a_tensor`` -> ``ATensor``: the mechanical mirror, reversed."""
    return "".join(part[:1].upper() + part[1:] for part in python_name.split("_"))


# Field declarations used in operator dataclasses (required, like every field of a C desc).
def input_tensor() -> Any:
    return dataclasses.field(metadata={"kind": FieldKind.INPUT_TENSOR})


def output_tensor() -> Any:
    return dataclasses.field(metadata={"kind": FieldKind.OUTPUT_TENSOR})


def uint_array(count: str) -> Any:
    return dataclasses.field(metadata={"kind": FieldKind.UINT_ARRAY, "count": count})


def enum_field(enum_type: type) -> Any:
    return dataclasses.field(metadata={"kind": FieldKind.ENUM, "enum": enum_type})


def float_field() -> Any:
    return dataclasses.field(metadata={"kind": FieldKind.FLOAT})


@dataclass(frozen=True)
class TensorSupport:
    """One cell of a "Tensor support" table: supported dimension counts and data types."""

    min_dims: int
    max_dims: int
    data_types: tuple[TensorDataType, ...]

    def allows_dimension_count(self, dimension_count: int) -> bool:
        return self.min_dims <= dimension_count <= self.max_dims

    def allows(self, desc: BufferTensorDesc) -> bool:
        return self.allows_dimension_count(desc.dimension_count) and desc.data_type in self.data_types

    @property
    def dims_text(self) -> str:
        return str(self.min_dims) if self.min_dims == self.max_dims else f"{self.min_dims} to {self.max_dims}"

    @property
    def types_text(self) -> str:
        return ", ".join(t.name for t in self.data_types)


def supports(min_dims: int, max_dims: int, *data_types: TensorDataType) -> TensorSupport:
    return TensorSupport(min_dims, max_dims, data_types)


@dataclass(frozen=True)
class SupportRow:
    """A "DML_FEATURE_LEVEL_x and above" table: applies from ``feature_level`` until a higher row takes over."""

    feature_level: FeatureLevel
    tensors: dict[str, TensorSupport]  # keyed by the tensor's C field name


def row(feature_level: FeatureLevel, **tensors: TensorSupport) -> SupportRow:
    return SupportRow(feature_level, tensors)


@dataclass(frozen=True)
class OperatorSchema:
    """Everything opendml knows about one operator, read by validation, execution, tests and docs."""

    operator_type: OperatorType
    desc_class: type
    introduced: FeatureLevel
    fields: tuple[FieldSpec, ...]
    support: tuple[SupportRow, ...]  # highest feature level first
    constraints: tuple[Any, ...]  # objects with check(desc) -> list[str] and a str() that states the rule
    in_place: bool

    @property
    def c_name(self) -> str:
        return self.operator_type.c_name

    @property
    def input_fields(self) -> tuple[FieldSpec, ...]:
        return tuple(f for f in self.fields if f.kind is FieldKind.INPUT_TENSOR)

    @property
    def output_fields(self) -> tuple[FieldSpec, ...]:
        return tuple(f for f in self.fields if f.kind is FieldKind.OUTPUT_TENSOR)

    def field(self, c_name: str) -> FieldSpec:
        return next(f for f in self.fields if f.c_name == c_name)

    def support_row(self, feature_level: FeatureLevel) -> SupportRow | None:
        """The table in force at ``feature_level``: the highest row at or below it."""
        return next((r for r in self.support if r.feature_level <= feature_level), None)


REGISTRY: dict[OperatorType, OperatorSchema] = {}


class OperatorDesc:
    """Base of the ``*OperatorDesc`` dataclasses: checks and normalises field values at construction."""

    schema: ClassVar[OperatorSchema]

    def __post_init__(self) -> None:
        for spec in self.schema.fields:
            value = getattr(self, spec.name)
            what = f"{self.schema.c_name}: {spec.c_name}"
            object.__setattr__(self, spec.name, _normalise(spec, value, what))

    @property
    def operator_type(self) -> OperatorType:
        return self.schema.operator_type


def _normalise(spec: FieldSpec, value: Any, what: str) -> Any:
    if spec.is_tensor:
        if not isinstance(value, BufferTensorDesc):
            raise InvalidArgumentError(f"{what} must be a BufferTensorDesc, not {type(value).__name__}")
        return value
    if spec.kind is FieldKind.UINT_ARRAY:
        return as_uint_tuple(value, what)
    if spec.kind is FieldKind.ENUM:
        return as_enum(spec.enum_type, value, what)
    if spec.kind is FieldKind.FLOAT:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise InvalidArgumentError(f"{what} must be a number (FLOAT), not {type(value).__name__} {value!r}")
        number = float(value)
        with np.errstate(over="ignore"):
            overflows = math.isfinite(number) and math.isinf(np.float32(number))
        if overflows:  # C would round it to infinity (values that round to FLT_MAX are fine)
            raise InvalidArgumentError(f"{what} is {number}, beyond the range of a 32-bit FLOAT")
        return number
    raise AssertionError(spec.kind)


def operator(
    operator_type: OperatorType,
    *,
    introduced: FeatureLevel,
    support: Iterable[SupportRow],
    constraints: Iterable[Any] = (),
    in_place: bool = False,
) -> Callable[[type], type]:
    """Class decorator: make ``cls`` a frozen descriptor dataclass and register its schema."""

    def register(cls: type) -> type:
        cls = dataclass(frozen=True, kw_only=True)(cls)
        fields = tuple(
            FieldSpec(
                name=f.name,
                c_name=c_name_of(f.name),
                kind=f.metadata["kind"],
                enum_type=f.metadata.get("enum"),
                count_c_name=f.metadata.get("count"),
            )
            for f in dataclasses.fields(cls)
        )
        rows = tuple(sorted(support, key=lambda r: r.feature_level, reverse=True))
        tensor_names = {f.c_name for f in fields if f.is_tensor}
        for r in rows:
            assert set(r.tensors) == tensor_names, (cls.__name__, r.feature_level, set(r.tensors) ^ tensor_names)
        assert rows[-1].feature_level == introduced, cls.__name__
        cls.schema = OperatorSchema(operator_type, cls, introduced, fields, rows, tuple(constraints), in_place)
        assert operator_type not in REGISTRY, operator_type
        REGISTRY[operator_type] = cls.schema
        return cls

    return register


def schema_of(operator_type: OperatorType) -> OperatorSchema:
    """The schema of an operator opendml implements (see :data:`REGISTRY` for which)."""
    try:
        return REGISTRY[operator_type]
    except KeyError:
        implemented = ", ".join(t.name for t in REGISTRY)
        raise OperatorNotImplementedError(
            f"{OperatorType(operator_type).c_name} is a DirectML operator not implemented by opendml yet "
            f"(implemented: {implemented})"
        ) from None
