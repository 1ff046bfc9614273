"""The "Tensor constraints" of the DirectML operator pages, as reusable rules.

Each rule names its fields by their C names (``fields()``, checked against the operator when it is declared),
checks a descriptor (``check(desc) -> list[Problem]``, each located at the field it is about) and states itself
(``str(rule)``) for the docs. Rules never raise on a malformed descriptor: they report.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .enums import TENSOR_DIMENSION_COUNT_MAX1, FeatureLevel, TensorDataType
from .problems import Problem, summarised
from .tensor import numpy_dtype

__all__ = [
    "Same",
    "TypeOfField",
    "Below",
    "ValidAxes",
    "ReducedOutputSizes",
    "IndexFitsOutput",
    "EffectiveRankAtMost",
    "When",
    "AtLeast",
    "DataTypeLike",
    "SingleElement",
]


def _get(desc, c_name: str):
    return getattr(desc, desc.schema.field(c_name).name)


_INTEGER_TYPES = {
    TensorDataType.UINT8,
    TensorDataType.UINT16,
    TensorDataType.UINT32,
    TensorDataType.UINT64,
    TensorDataType.INT8,
    TensorDataType.INT16,
    TensorDataType.INT32,
    TensorDataType.INT64,
}

_ATTRIBUTES = {
    "DataType": lambda t: t.data_type.name,
    "DimensionCount": lambda t: t.dimension_count,
    "Sizes": lambda t: "{" + ", ".join(map(str, t.sizes)) + "}",
}


@dataclass(frozen=True)
class Same:
    """The tensors must agree on one property of DML_BUFFER_TENSOR_DESC (DataType, DimensionCount or Sizes)."""

    attribute: str
    tensors: tuple[str, ...]

    def __init__(self, attribute: str, *tensors: str):
        assert attribute in _ATTRIBUTES, attribute
        object.__setattr__(self, "attribute", attribute)
        object.__setattr__(self, "tensors", tensors)

    def fields(self) -> tuple[str, ...]:
        return self.tensors

    def check(self, desc) -> list[Problem]:
        value_of = _ATTRIBUTES[self.attribute]
        present = [name for name in self.tensors if _get(desc, name) is not None]  # an absent optional tensor
        if not present:
            return []
        first, *others = present
        expected = value_of(_get(desc, first))
        return [
            Problem(
                f"{first} and {name} must have the same {self.attribute}, but {first} has {expected} "
                f"and {name} has {value_of(_get(desc, name))}",
                name,
                self.attribute,
            )
            for name in others
            if value_of(_get(desc, name)) != expected
        ]

    def __str__(self) -> str:
        return f"{_join(self.tensors)} must have the same {self.attribute}"


@dataclass(frozen=True)
class TypeOfField:
    """A DML_TENSOR_DATA_TYPE field (CLIP1's MinMaxDataType) must be the tensor's DataType."""

    field: str
    tensor: str

    def fields(self) -> tuple[str, ...]:
        return (self.field, self.tensor)

    def check(self, desc) -> list[Problem]:
        data_type, tensor = _get(desc, self.field), _get(desc, self.tensor)
        if data_type == tensor.data_type:
            return []
        return [Problem(f"{self.field} is {data_type.name}, but {self.tensor}.DataType is {tensor.data_type.name}; "
                        "they must match", self.field)]  # fmt: skip

    def __str__(self) -> str:
        return f"{self.field} must equal {self.tensor}.DataType"


@dataclass(frozen=True)
class ValidAxes:
    """Axes must be non-empty, distinct and each in [0, tensor.DimensionCount - 1]."""

    axes: str
    tensor: str

    def fields(self) -> tuple[str, ...]:
        return (self.axes, self.tensor)

    def check(self, desc) -> list[Problem]:
        axes, dims = _get(desc, self.axes), _get(desc, self.tensor).dimension_count
        count = desc.schema.field(self.axes).kind.count_c_name
        if not axes:
            return [Problem(f"{count} is 0; at least one axis must be given in {self.axes}", self.axes)]
        if len(axes) > TENSOR_DIMENSION_COUNT_MAX1:  # never valid: refused before any per-axis work
            text = (
                f"{count} is {len(axes)}, but a tensor has at most {TENSOR_DIMENSION_COUNT_MAX1} dimensions "
                f"(DML_TENSOR_DIMENSION_COUNT_MAX1) and each may be listed once in {self.axes}"
            )
            return [Problem(text, self.axes)]
        out_of_range = [
            Problem(f"{self.axes}[{i}] is {axis}, outside [0, {dims - 1}] ({self.tensor}.DimensionCount is {dims})",
                    self.axes, index=i)
            for i, axis in enumerate(axes)
            if axis >= dims
        ]  # fmt: skip
        problems = summarised(out_of_range, f"are outside [0, {dims - 1}]")
        duplicates = sorted(axis for axis, times in Counter(axes).items() if times > 1)
        if duplicates:
            problems.append(
                Problem(f"{self.axes} lists axis {', '.join(map(str, duplicates))} more than once", self.axes)
            )
        return problems

    def __str__(self) -> str:
        return f"{self.axes} must be non-empty, without repeats, each in [0, {self.tensor}.DimensionCount - 1]"


@dataclass(frozen=True)
class ReducedOutputSizes:
    """The output keeps the input's rank; reduced dimensions have size 1, the others the input's size."""

    input: str
    output: str
    axes: str

    def fields(self) -> tuple[str, ...]:
        return (self.input, self.output, self.axes)

    def check(self, desc) -> list[Problem]:
        source, target, axes = _get(desc, self.input), _get(desc, self.output), set(_get(desc, self.axes))
        if source.dimension_count != target.dimension_count:
            return []  # reported by Same("DimensionCount", ...)
        problems = []
        for d, (size_in, size_out) in enumerate(zip(source.sizes, target.sizes)):
            if d in axes and size_out != 1:
                problems.append(Problem(
                    f"expected {self.output}.Sizes[{d}] to be 1 since dimension {d} is reduced, "
                    f"but {size_out} was provided", self.output, "Sizes", d))  # fmt: skip
            elif d not in axes and size_out != size_in:
                problems.append(Problem(
                    f"expected {self.output}.Sizes[{d}] to be {self.input}.Sizes[{d}] ({size_in}) since dimension "
                    f"{d} is not reduced, but {size_out} was provided", self.output, "Sizes", d))  # fmt: skip
        return problems

    def __str__(self) -> str:
        return (
            f"{self.output}.Sizes must equal {self.input}.Sizes except in the reduced dimensions ({self.axes}), "
            "which must be 1"
        )


@dataclass(frozen=True)
class IndexFitsOutput:
    """Every index over the reduced dimensions must be representable in the output data type."""

    input: str
    output: str
    axes: str

    def fields(self) -> tuple[str, ...]:
        return (self.input, self.output, self.axes)

    def check(self, desc) -> list[Problem]:
        source, target = _get(desc, self.input), _get(desc, self.output)
        axes = {a for a in _get(desc, self.axes) if a < source.dimension_count}  # repeats are reported elsewhere
        if target.data_type not in _INTEGER_TYPES or source.dimension_count > TENSOR_DIMENSION_COUNT_MAX1:
            return []  # reported by the support table and the tensor rules
        limit = int(np.iinfo(numpy_dtype(target.data_type)).max)
        largest = math.prod(source.sizes[a] for a in axes) - 1
        if largest > limit:
            return [Problem(
                f"the reduced dimensions hold {largest + 1} elements, so indices up to {largest} do not fit in "
                f"{self.output}.DataType {target.data_type.name} (max {limit})", self.output, "DataType")]  # fmt: skip
        return []

    def __str__(self) -> str:
        return f"the largest index over the reduced dimensions must fit in {self.output}.DataType"


@dataclass(frozen=True)
class EffectiveRankAtMost:
    """The tensor's *effective rank* (its DimensionCount without the leftmost dimensions of size 1) must be at most
    ``rank``: the v0 softmax family reads ``{1, 1, BatchCount, Width}`` as ``{BatchCount, Width}``."""

    tensor: str
    rank: int

    def fields(self) -> tuple[str, ...]:
        return (self.tensor,)

    def check(self, desc) -> list[Problem]:
        sizes = _get(desc, self.tensor).sizes
        leading = next((d for d, size in enumerate(sizes) if size != 1), len(sizes))
        effective = len(sizes) - leading
        if effective <= self.rank:
            return []
        shown = "{" + ", ".join(map(str, sizes)) + "}"
        return [Problem(
            f"{self.tensor} has an effective rank of {effective} (Sizes {shown} without its leftmost dimensions of "
            f"size 1), but at most {self.rank} is allowed", self.tensor, "Sizes")]  # fmt: skip

    def __str__(self) -> str:
        return (
            f"{self.tensor} must have an effective rank (DimensionCount without leftmost dimensions of size 1) of at "
            f"most {self.rank}"
        )


@dataclass(frozen=True)
class When:
    """Rules that hold only when the enum field ``field`` has one of ``values`` (REDUCE's per-function rules)."""

    field: str
    values: tuple
    rules: tuple

    def __init__(self, field: str, values, *rules):
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "rules", rules)

    def fields(self) -> tuple[str, ...]:
        return (self.field, *(name for rule in self.rules for name in rule.fields()))

    def check(self, desc) -> list[Problem]:
        if _get(desc, self.field) not in self.values:
            return []
        return [problem for rule in self.rules for problem in rule.check(desc)]

    def __str__(self) -> str:
        names = [v.name for v in self.values]
        names = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
        return f"when {self.field} is {names}: " + "; ".join(str(rule) for rule in self.rules)


@dataclass(frozen=True)
class AtLeast:
    """A FLOAT field's lower bound (NaN breaks it too), in force below the feature level that lifted it, if any:
    rules that depend on the level define ``check_at(desc, feature_level)``, which validation prefers."""

    field: str
    minimum: float
    lifted_in: FeatureLevel | None = None

    def fields(self) -> tuple[str, ...]:
        return (self.field,)

    def check(self, desc) -> list[Problem]:
        return self.check_at(desc, None)

    def check_at(self, desc, feature_level: FeatureLevel | None) -> list[Problem]:
        if self.lifted_in is not None and feature_level is not None and feature_level >= self.lifted_in:
            return []
        value = _get(desc, self.field)
        if value >= self.minimum:
            return []
        lifted = f"; {self.lifted_in.c_name} and above allow it" if self.lifted_in else ""
        return [Problem(f"{self.field} is {value}, but it must be at least {self.minimum:g}{lifted}", self.field)]

    def __str__(self) -> str:
        below = f" below {self.lifted_in.c_name}" if self.lifted_in else ""
        return f"{self.field} must be at least {self.minimum:g}{below}"


@dataclass(frozen=True)
class Below:
    """Rules that hold only on devices below ``feature_level`` (POW: until 3_0 ExponentTensor has InputTensor's
    DataType). Validation calls :meth:`check_at` with the device's level."""

    feature_level: FeatureLevel
    rules: tuple

    def __init__(self, feature_level: FeatureLevel, *rules):
        object.__setattr__(self, "feature_level", feature_level)
        object.__setattr__(self, "rules", rules)

    def fields(self) -> tuple[str, ...]:
        return tuple(name for rule in self.rules for name in rule.fields())

    def check(self, desc) -> list[Problem]:
        return []  # the rules depend on the feature level: see check_at

    def check_at(self, desc, feature_level: FeatureLevel) -> list[Problem]:
        if feature_level >= self.feature_level:
            return []
        return [Problem(f"below {self.feature_level.c_name}, {p.text}", p.field, p.member, p.index)
                for rule in self.rules for p in rule.check(desc)]  # fmt: skip

    def __str__(self) -> str:
        return f"below {self.feature_level.c_name}: " + "; ".join(str(rule) for rule in self.rules)


@dataclass(frozen=True)
class DataTypeLike:
    """``tensor`` must have the DataType of ``source``, except where ``instead`` maps the source's type to another
    (QUANTIZE_LINEAR: ScaleTensor is InputTensor's type, but FLOAT32 for an INT32 input)."""

    tensor: str
    source: str
    instead: tuple[tuple[TensorDataType, TensorDataType], ...]

    def __init__(self, tensor: str, source: str, instead: dict[TensorDataType, TensorDataType]):
        object.__setattr__(self, "tensor", tensor)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "instead", tuple(instead.items()))

    def fields(self) -> tuple[str, ...]:
        return (self.tensor, self.source)

    def check(self, desc) -> list[Problem]:
        got, source = _get(desc, self.tensor).data_type, _get(desc, self.source).data_type
        wanted = dict(self.instead).get(source, source)
        if got == wanted:
            return []
        return [Problem(f"{self.tensor}.DataType must be {wanted.name} since {self.source}.DataType is {source.name}, "
                        f"but {got.name} was provided", self.tensor, "DataType")]  # fmt: skip

    def __str__(self) -> str:
        exceptions = ", ".join(f"{to.name} when {self.source} is {of.name}" for of, to in self.instead)
        return f"{self.tensor} must have the DataType of {self.source} ({exceptions})"


@dataclass(frozen=True)
class SingleElement:
    """Each tensor holds exactly one element: every size is 1 (a per-tensor scale or zero point)."""

    tensors: tuple[str, ...]

    def __init__(self, *tensors: str):
        object.__setattr__(self, "tensors", tensors)

    def fields(self) -> tuple[str, ...]:
        return self.tensors

    def check(self, desc) -> list[Problem]:
        problems = []
        for name in self.tensors:
            tensor = _get(desc, name)
            if tensor is not None and any(size != 1 for size in tensor.sizes):
                sizes = "{" + ", ".join(map(str, tensor.sizes)) + "}"
                problems.append(Problem(f"{name} must hold one element (every size 1), but its Sizes are {sizes}",
                                        name, "Sizes"))  # fmt: skip
        return problems

    def __str__(self) -> str:
        return f"{_join(self.tensors)} must each hold one element (every size 1)"


def _join(names: tuple[str, ...]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
