"""How an operator is declared: its descriptor's fields, the level it arrived in, its support table, its rules.

Each operator is written once, in its family's module under :mod:`opendml.operators`, as a frozen dataclass
mirroring its ``DML_*_OPERATOR_DESC`` (decorated with :func:`operator`, or built by :func:`declare`). The
decorator records an :class:`OperatorSchema` that validation, execution, the JSON runner, the functional layer,
the tests and the README's tables all read.

A field's *kind* is an object (:class:`Kind`) that owns everything about that kind of C member: how a Python
value is normalised (:meth:`Kind.normalise`), how DxDispatch JSON spells it (:meth:`Kind.read_json`) and the
rules it obeys at a feature level (:meth:`Kind.problems`). A new kind of field is one new class here.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import operator as _operator
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .enums import TENSOR_DIMENSION_COUNT_MAX1, FeatureLevel, OperatorType, TensorDataType, TensorFlags
from .errors import InvalidArgumentError, OperatorNotImplementedError
from .problems import Problem
from .support import SupportBy, SupportRow, TensorSupport, row, supports
from .tensor import UINT32_MAX, BufferTensorDesc, as_enum, as_uint_tuple, output_overlap_problem, tensor_desc_problems

__all__ = [
    "Kind",
    "Tensor",
    "Array",
    "Scalar",
    "Enum",
    "Struct",
    "ScalarUnion",
    "NestedOperator",
    "FieldSpec",
    "OutputRule",
    "OperatorSchema",
    "OperatorDesc",
    "operator",
    "declare",
    "desc_json",
    "struct",
    "REGISTRY",
    "schema_of",
    "c_name_of",
    "TensorSupport",
    "SupportRow",
    "SupportBy",
    "row",
    "supports",
    "input_tensor",
    "output_tensor",
    "uint_array",
    "int_array",
    "float_array",
    "enum_field",
    "float_field",
    "uint_field",
    "int_field",
    "bool_field",
    "struct_field",
    "scalar_union",
    "fused_activation",
]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


# ----------------------------------------------------------------------------------------------------------------
# Field kinds
# ----------------------------------------------------------------------------------------------------------------


class Kind:
    """What a descriptor field is. Subclasses say how to normalise, read from JSON and check one."""

    #: A ``_Maybenull_`` field: ``None`` (NULL in C) is a valid value.
    optional: bool = False

    def normalise(self, value: Any, what: str) -> Any:
        raise NotImplementedError

    def read_json(self, fields: Any, spec: FieldSpec, json: Any) -> Any:
        """The value of ``spec`` among the JSON ``fields`` node; ``json`` is :mod:`opendml.dxdispatch.descs`."""
        raise NotImplementedError

    def problems(self, desc: OperatorDesc, spec: FieldSpec, feature_level: FeatureLevel) -> list[Problem]:
        """The rules this field's value breaks beyond what :meth:`normalise` refused (default: none)."""
        return []

    def json_names(self, spec: FieldSpec) -> tuple[str, ...]:
        """The C members this field occupies in a JSON descriptor."""
        return (spec.c_name,)

    def write_json(self, value: Any, spec: FieldSpec) -> dict[str, Any]:
        """The JSON members that :meth:`read_json` reads back as ``value`` (DxDispatch's spellings)."""
        return {spec.c_name: _json_value(value)}

    def describe(self) -> str:
        """The C type, for docs and messages."""
        raise NotImplementedError

    def _read_present(self, fields: Any, spec: FieldSpec, read: Callable[[Any], Any]) -> Any:
        """A required member, or an optional one that may be absent or null."""
        if not self.optional:
            return read(fields.require(spec.c_name))
        node = fields.get(spec.c_name)
        return None if node is None or node.value is None else read(node)


@dataclass(frozen=True)
class Tensor(Kind):
    """``const DML_TENSOR_DESC*``: an input or output buffer tensor; ``optional`` for ``_Maybenull_`` ones."""

    is_output: bool
    optional: bool = False

    def normalise(self, value: Any, what: str) -> Any:
        if value is None and self.optional:
            return None
        if not isinstance(value, BufferTensorDesc):
            raise InvalidArgumentError(f"{what} must be a BufferTensorDesc, not {type(value).__name__}")
        return value

    def read_json(self, fields: Any, spec: FieldSpec, json: Any) -> Any:
        return self._read_present(fields, spec, json.read_tensor_desc)

    def problems(self, desc: OperatorDesc, spec: FieldSpec, feature_level: FeatureLevel) -> list[Problem]:
        tensor = getattr(desc, spec.name)
        if tensor is None:
            if spec.nullable_when_fused:
                return [Problem(f"{spec.c_name} is NULL; only a fused activation has no tensors", spec.c_name)]
            return _required_problems(desc, spec, feature_level)
        return _tensor_problems(desc.schema, spec, tensor, feature_level, desc)

    def write_json(self, value: Any, spec: FieldSpec) -> dict[str, Any]:
        if value is None:
            return {}
        tensor = {"DataType": value.data_type.name, "Sizes": list(value.sizes)}
        if value.strides is not None:
            tensor["Strides"] = list(value.strides)
        tensor["TotalTensorSizeInBytes"] = value.total_tensor_size_in_bytes
        if value.guaranteed_base_offset_alignment:
            tensor["GuaranteedBaseOffsetAlignment"] = value.guaranteed_base_offset_alignment
        if value.flags:
            tensor["Flags"] = [flag.name for flag in type(value.flags) if flag and flag in value.flags]
        return {spec.c_name: tensor}

    def describe(self) -> str:
        return ("_Maybenull_ " if self.optional else "") + "const DML_TENSOR_DESC*"


def _tensor_problems(
    schema: OperatorSchema, spec: FieldSpec, tensor: BufferTensorDesc, feature_level: FeatureLevel, desc: Any
) -> list[Problem]:
    """One tensor: the rules every buffer tensor obeys, then the "Tensor support" row in force at the level."""
    name = spec.c_name
    problems = [Problem(f"{name}{'.' if member else ' '}{text}", name, member, index)
                for text, member, index in tensor_desc_problems(tensor)]  # fmt: skip
    if tensor.flags & TensorFlags.OWNED_BY_DML:
        problems.append(Problem(
            f"{name}.Flags has DML_TENSOR_FLAG_OWNED_BY_DML; opendml binds every tensor at execution and has no "
            "operator initializer for DirectML-owned tensors", name, "Flags"))  # fmt: skip
    support_row = schema.support_row(feature_level, desc)
    support = support_row.tensors[name] if support_row else None
    # A dimension count outside 1..8 or an UNKNOWN type is already reported above: say it once.
    dims = tensor.dimension_count
    if support and 1 <= dims <= TENSOR_DIMENSION_COUNT_MAX1 and not support.allows_dimension_count(dims):
        later = _first_level(schema, feature_level, name, desc, lambda s: s.allows_dimension_count(dims))
        problems.append(Problem(
            f"{name}.DimensionCount {dims} is not supported at {feature_level.c_name} "
            f"(supported: {support.dims_text}){later}", name, "DimensionCount"))  # fmt: skip
    if support and tensor.data_type != TensorDataType.UNKNOWN and tensor.data_type not in support.data_types:
        later = _first_level(schema, feature_level, name, desc, lambda s: tensor.data_type in s.data_types)
        problems.append(Problem(
            f"{name}.DataType {tensor.data_type.name} is not supported at {feature_level.c_name} "
            f"(supported: {support.types_text}){later}", name, "DataType"))  # fmt: skip
    if spec.kind.is_output and not problems:  # the overlap proof needs a well-formed tensor
        overlap = output_overlap_problem(tensor)
        if overlap:
            problems.append(Problem(f"{name}: {overlap}; an output may not write one address twice", name, "Strides"))
    return problems


def _required_problems(desc: OperatorDesc, spec: FieldSpec, feature_level: FeatureLevel) -> list[Problem]:
    """An absent ``_Maybenull_`` tensor that the support row in force still lists as a plain input."""
    support_row = desc.schema.support_row(feature_level, desc)
    if support_row is None or not support_row.tensors[spec.c_name].required:
        return []
    later = _first_level(desc.schema, feature_level, spec.c_name, desc, lambda s: not s.required)
    return [Problem(f"{spec.c_name} is NULL, but it is required at {feature_level.c_name}{later}", spec.c_name)]


def _first_level(schema: OperatorSchema, feature_level: FeatureLevel, c_name: str, desc: Any, accepts) -> str:
    for support_row in reversed(schema.support_rows(desc)):  # lowest level first
        if support_row.feature_level > feature_level and accepts(support_row.tensors[c_name]):
            return f"; {support_row.feature_level.c_name} and above support it"
    return ""


#: C scalar types: (description, normaliser).
_SCALARS = ("UINT", "INT", "FLOAT", "BOOL")


def _as_integer(value: Any, what: str, low: int, high: int, c_type: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"{what} must be an integer ({c_type}), not the bool {value!r}")
    try:
        number = _operator.index(value)
    except TypeError:
        raise InvalidArgumentError(
            f"{what} must be an integer ({c_type}), not {type(value).__name__} {value!r}"
        ) from None
    if not low <= number <= high:
        raise InvalidArgumentError(f"{what} is {number}, outside the range of {c_type} [{low}, {high}]")
    return number


def as_float32_number(value: Any, what: str) -> float:
    """A Python number as the C ``FLOAT`` will hold it; refused when it is no number or beyond FLOAT's range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidArgumentError(f"{what} must be a number (FLOAT), not {type(value).__name__} {value!r}")
    finite_given = isinstance(value, (int, np.integer)) or bool(np.isfinite(value))
    number = math.inf
    try:
        with np.errstate(over="ignore"):
            number = float(value)  # a huge int overflows; a long double beyond double's range becomes inf
            overflows = finite_given and (math.isinf(number) or math.isinf(np.float32(number)))
    except OverflowError:
        overflows = True
    if overflows:  # C would round it to infinity (values that round to FLT_MAX are fine)
        shown = f"an integer of {value.bit_length()} bits" if isinstance(value, int) else str(value)
        raise InvalidArgumentError(f"{what} is {shown}, beyond the range of a 32-bit FLOAT")
    return number


@dataclass(frozen=True)
class Scalar(Kind):
    """A ``UINT``, ``INT``, ``FLOAT`` or ``BOOL`` member."""

    c_type: str

    def __post_init__(self) -> None:
        if self.c_type not in _SCALARS:
            raise TypeError(f"unknown scalar type {self.c_type!r}; expected one of {_SCALARS}")

    def normalise(self, value: Any, what: str) -> Any:
        if self.c_type == "FLOAT":
            return as_float32_number(value, what)
        if self.c_type == "BOOL":
            if not isinstance(value, (bool, np.bool_, int, np.integer)) or value not in (0, 1):
                raise InvalidArgumentError(f"{what} must be a BOOL (True/False or 0/1), not {value!r}")
            return bool(value)
        low, high = (0, UINT32_MAX) if self.c_type == "UINT" else (INT32_MIN, INT32_MAX)
        return _as_integer(value, what, low, high, self.c_type)

    def read_json(self, fields: Any, spec: FieldSpec, json: Any) -> Any:
        node = fields.require(spec.c_name)
        if self.c_type == "FLOAT":
            return node.real()
        if self.c_type == "BOOL":
            return json.read_bool(node)
        return node.uint() if self.c_type == "UINT" else json.read_int(node)

    def describe(self) -> str:
        return self.c_type


@dataclass(frozen=True)
class Array(Kind):
    """A count member plus a pointer (``UINT AxisCount; const UINT* Axes``): one tuple in Python."""

    element: Scalar
    count_c_name: str

    def normalise(self, value: Any, what: str) -> Any:
        if self.element.c_type == "UINT":
            return as_uint_tuple(value, what)
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise InvalidArgumentError(f"{what} must be a sequence, not {type(value).__name__} {value!r}")
        return tuple(self.element.normalise(v, f"{what}[{i}]") for i, v in enumerate(value))

    def read_json(self, fields: Any, spec: FieldSpec, json: Any) -> Any:
        return json.read_array(fields, spec, self.element)

    def json_names(self, spec: FieldSpec) -> tuple[str, ...]:
        return (spec.c_name, self.count_c_name)

    def write_json(self, value: Any, spec: FieldSpec) -> dict[str, Any]:
        return {self.count_c_name: len(value), spec.c_name: [_json_value(v) for v in value]}

    def describe(self) -> str:
        return f"UINT {self.count_c_name}; const {self.element.c_type}*"


@dataclass(frozen=True)
class Enum(Kind):
    """A ``DML_*`` enum (or flags) member."""

    enum_type: type

    def normalise(self, value: Any, what: str) -> Any:
        return as_enum(self.enum_type, value, what)

    def read_json(self, fields: Any, spec: FieldSpec, json: Any) -> Any:
        node = fields.require(spec.c_name)
        if issubclass(self.enum_type, enum.Flag):
            return json.read_flags(node, self.enum_type)
        return json.read_enum(node, self.enum_type)

    def describe(self) -> str:
        return "DML_" + re.sub(r"(?<!^)(?=[A-Z])", "_", self.enum_type.__name__).upper()


@dataclass(frozen=True)
class Struct(Kind):
    """A nested struct of scalars (``DML_SCALE_BIAS``, ``DML_SIZE_2D``), by pointer when ``optional``."""

    struct_type: type
    optional: bool = False

    def normalise(self, value: Any, what: str) -> Any:
        if value is None and self.optional:
            return None
        if not isinstance(value, self.struct_type):
            raise InvalidArgumentError(
                f"{what} must be a {self.struct_type.__name__}{' or None' if self.optional else ''}, "
                f"not {type(value).__name__}"
            )
        return value

    def read_json(self, fields: Any, spec: FieldSpec, json: Any) -> Any:
        return self._read_present(fields, spec, lambda node: json.read_struct(node, self.struct_type))

    def write_json(self, value: Any, spec: FieldSpec) -> dict[str, Any]:
        if value is None:
            return {}
        members: dict[str, Any] = {}
        for member in self.struct_type.fields:
            members.update(member.kind.write_json(getattr(value, member.name), member))
        return {spec.c_name: members}

    def describe(self) -> str:
        return (
            ("_Maybenull_ const " if self.optional else "") + self.struct_type.c_type + ("*" if self.optional else "")
        )


@dataclass(frozen=True)
class ScalarUnion(Kind):
    """``DML_SCALAR_UNION``, read as the data type held by the field ``data_type_field`` (a C name)."""

    data_type_field: str

    def normalise(self, value: Any, what: str) -> Any:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise InvalidArgumentError(f"{what} must be a number, not {type(value).__name__} {value!r}")
        return value.item() if isinstance(value, np.generic) else value

    def read_json(self, fields: Any, spec: FieldSpec, json: Any) -> Any:
        type_node = fields.require(self.data_type_field)
        data_type = json.read_enum(type_node, TensorDataType)
        return json.read_scalar_union(fields.require(spec.c_name), data_type, type_node)

    def problems(self, desc: OperatorDesc, spec: FieldSpec, feature_level: FeatureLevel) -> list[Problem]:
        from .tensor import scalar_union_problem  # the range rules of each data type live with the data types

        data_type = getattr(desc, desc.schema.field(self.data_type_field).name)
        text = scalar_union_problem(getattr(desc, spec.name), data_type)
        return [Problem(f"{spec.c_name} {text}", spec.c_name)] if text else []

    def describe(self) -> str:
        return "DML_SCALAR_UNION"


@dataclass(frozen=True)
class NestedOperator(Kind):
    """``_Maybenull_ const DML_OPERATOR_DESC*`` holding a fused activation: an activation descriptor whose
    tensors are None, of an operator declared ``fusable``; the host's outputs must be FLOAT32 or FLOAT16."""

    optional: bool = True

    def normalise(self, value: Any, what: str) -> Any:
        if value is None:
            return None
        if not isinstance(value, OperatorDesc):
            raise InvalidArgumentError(f"{what} must be an activation operator descriptor or None, not {value!r}")
        return value

    def read_json(self, fields: Any, spec: FieldSpec, json: Any) -> Any:
        return self._read_present(fields, spec, json.read_nested_operator_desc)

    def write_json(self, value: Any, spec: FieldSpec) -> dict[str, Any]:
        return {} if value is None else {spec.c_name: desc_json(value)}

    def problems(self, desc: OperatorDesc, spec: FieldSpec, feature_level: FeatureLevel) -> list[Problem]:
        fused = getattr(desc, spec.name)
        if fused is None:
            return []
        name = spec.c_name
        if not fused.schema.fusable:
            fusable = ", ".join(s.operator_type.name for s in REGISTRY.values() if s.fusable)
            return [Problem(f"{name} is {fused.schema.c_name}, which cannot be fused (fusable: {fusable})", name)]
        problems = []
        for tensor_spec in fused.schema.tensor_fields:
            if getattr(fused, tensor_spec.name) is not None:
                problems.append(Problem(
                    f"{name}: {fused.schema.c_name}.{tensor_spec.c_name} must be NULL (None) in a fused "
                    "activation; the host operator's tensors are used", name))  # fmt: skip
        for output in desc.schema.output_fields:
            tensor = getattr(desc, output.name)
            if tensor is not None and tensor.data_type not in (TensorDataType.FLOAT32, TensorDataType.FLOAT16):
                problems.append(Problem(
                    f"{name} is set, but {output.c_name}.DataType is {tensor.data_type.name}; a fused activation "
                    "needs a FLOAT32 or FLOAT16 output", name))  # fmt: skip
        from .validation import problems_of  # the nested descriptor is validated as a whole operator

        nested = problems_of(fused, feature_level, fused=True)
        problems += [Problem(f"{fused.schema.c_name}: {p}", p.field).within(name) for p in nested]
        return problems

    def describe(self) -> str:
        return "_Maybenull_ const DML_OPERATOR_DESC*"


def _json_value(value: Any) -> Any:
    """A scalar as DxDispatch JSON spells it: enums by name, non-finite floats as "nan", "inf", "-inf"."""
    if isinstance(value, enum.Flag):
        return [flag.name for flag in type(value) if flag and flag in value]
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def desc_json(desc: OperatorDesc) -> dict[str, Any]:
    """``desc`` as a DxDispatch dispatchable (``{"type": ..., "desc": {...}}``): what the JSON runner reads back
    as an equal descriptor (tests hold every operator to it)."""
    members: dict[str, Any] = {}
    for spec in desc.schema.fields:
        members.update(spec.kind.write_json(getattr(desc, spec.name), spec))
    return {"type": desc.schema.c_name, "desc": members}


# Field declarations used in operator dataclasses. ``dmlx_default`` is the functional layer's default
# (DirectMLX's, where it has one); a descriptor itself has no defaults but for optional (``_Maybenull_``) fields.
def _field(kind: Kind, dmlx_default: Any = dataclasses.MISSING) -> Any:
    metadata = {"kind": kind, "dmlx_default": dmlx_default}
    if kind.optional:
        return dataclasses.field(default=None, metadata=metadata)
    return dataclasses.field(metadata=metadata)


def input_tensor(*, optional: bool = False) -> Any:
    return _field(Tensor(is_output=False, optional=optional))


def output_tensor() -> Any:
    return _field(Tensor(is_output=True))


def uint_array(count: str, **options: Any) -> Any:
    return _field(Array(Scalar("UINT"), count), **options)


def int_array(count: str, **options: Any) -> Any:
    return _field(Array(Scalar("INT"), count), **options)


def float_array(count: str, **options: Any) -> Any:
    return _field(Array(Scalar("FLOAT"), count), **options)


def enum_field(enum_type: type, **options: Any) -> Any:
    return _field(Enum(enum_type), **options)


def float_field(**options: Any) -> Any:
    return _field(Scalar("FLOAT"), **options)


def uint_field(**options: Any) -> Any:
    return _field(Scalar("UINT"), **options)


def int_field(**options: Any) -> Any:
    return _field(Scalar("INT"), **options)


def bool_field(**options: Any) -> Any:
    return _field(Scalar("BOOL"), **options)


def struct_field(struct_type: type, *, optional: bool = False) -> Any:
    return _field(Struct(struct_type, optional))


def scalar_union(data_type_field: str, **options: Any) -> Any:
    return _field(ScalarUnion(data_type_field), **options)


def fused_activation() -> Any:
    return _field(NestedOperator())


# ----------------------------------------------------------------------------------------------------------------
# Structs of scalars (DML_SCALE_BIAS, DML_SIZE_2D)
# ----------------------------------------------------------------------------------------------------------------


def struct(c_type: str) -> Callable[[type], type]:
    """Class decorator: a frozen dataclass mirroring the C struct ``c_type``, its members declared with the
    scalar field functions (``float_field()``, ``uint_field()``) and normalised at construction."""

    def make(cls: type) -> type:
        def __post_init__(self) -> None:
            for spec in type(self).fields:
                what = f"{c_type}.{spec.c_name}"
                object.__setattr__(self, spec.name, spec.kind.normalise(getattr(self, spec.name), what))

        cls.__post_init__ = __post_init__
        cls = dataclass(frozen=True, kw_only=True)(cls)
        cls.c_type = c_type
        cls.fields = tuple(_spec_of(f) for f in dataclasses.fields(cls))
        return cls

    return make


# ----------------------------------------------------------------------------------------------------------------
# Operator schemas
# ----------------------------------------------------------------------------------------------------------------


def c_name_of(python_name: str) -> str:
    """``input_tensor`` -> ``InputTensor``, ``a_tensor`` -> ``ATensor``: the mechanical mirror, reversed."""
    return "".join(part[:1].upper() + part[1:] for part in python_name.split("_"))


def desc_class_name(operator_type: OperatorType) -> str:
    """``ACTIVATION_HARDMAX1`` -> ``ActivationHardmax1OperatorDesc``: DML_..._OPERATOR_DESC PascalCased."""
    return "".join(part.capitalize() for part in operator_type.name.split("_")) + "OperatorDesc"


@dataclass(frozen=True)
class FieldSpec:
    """One field of a descriptor: the Python name, the C name, its kind."""

    name: str
    c_name: str
    kind: Kind
    dmlx_default: Any = dataclasses.MISSING
    #: A tensor of a fusable activation: NULL (None) when the descriptor is a fused activation.
    nullable_when_fused: bool = False

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.kind, Tensor)

    @property
    def is_input(self) -> bool:
        return self.is_tensor and not self.kind.is_output

    @property
    def is_output(self) -> bool:
        return self.is_tensor and self.kind.is_output


def _spec_of(f: dataclasses.Field) -> FieldSpec:
    if "kind" not in f.metadata:
        raise TypeError(f"field {f.name!r} is not declared with a field function (input_tensor(), float_field(), ...)")
    return FieldSpec(f.name, c_name_of(f.name), f.metadata["kind"], f.metadata["dmlx_default"])


@dataclass(frozen=True)
class OperatorSchema:
    """Everything opendml knows about one operator, read by validation, execution, tests and docs."""

    operator_type: OperatorType
    desc_class: type
    introduced: FeatureLevel
    fields: tuple[FieldSpec, ...]
    support: tuple[SupportRow, ...] | SupportBy  # rows highest feature level first
    constraints: tuple[Any, ...]  # rules with check(desc) -> list[Problem], fields() and a str() for the docs
    #: True: the output may alias any input; a tuple of input C names: only those (POW's InputTensor).
    in_place: bool | tuple[str, ...]
    fusable: bool
    output_rule: OutputRule

    @property
    def c_name(self) -> str:
        return self.operator_type.c_name

    @property
    def tensor_fields(self) -> tuple[FieldSpec, ...]:
        return tuple(f for f in self.fields if f.is_tensor)

    @property
    def input_fields(self) -> tuple[FieldSpec, ...]:
        return tuple(f for f in self.fields if f.is_input)

    @property
    def output_fields(self) -> tuple[FieldSpec, ...]:
        return tuple(f for f in self.fields if f.is_output)

    def field(self, c_name: str) -> FieldSpec:
        for f in self.fields:
            if f.c_name == c_name:
                return f
        raise KeyError(f"{self.c_name} has no field {c_name}")

    def support_rows(self, desc: Any = None) -> tuple[SupportRow, ...]:
        """The support rows for ``desc`` (rows that depend on a field, like REDUCE's Function, need it)."""
        if isinstance(self.support, SupportBy):
            return self.support.rows_for(desc)
        return self.support

    def support_row(self, feature_level: FeatureLevel, desc: Any = None) -> SupportRow | None:
        """The table in force at ``feature_level``: the highest row at or below it."""
        return next((r for r in self.support_rows(desc) if r.feature_level <= feature_level), None)


REGISTRY: dict[OperatorType, OperatorSchema] = {}


@dataclass(frozen=True)
class OutputRule:
    """How the functional layer makes an operator's outputs from its inputs: the sizes of the input ``like``
    (with the dimensions listed by the field ``reduced_by`` set to 1) and its data type, or ``data_type``; when
    ``data_type_parameter``, the caller may choose it (``output_data_type=``, default ``data_type``); the data type
    of the input ``type_like`` wins when that input is given."""

    like: str | None = None  # the C name of an input tensor; None: the first input
    reduced_by: str | None = None
    data_type: TensorDataType | None = None
    data_type_parameter: bool = False
    #: The data type of this (optional) input when it is given (QUANTIZE_LINEAR's ZeroPointTensor), else the above.
    type_like: str | None = None
    #: ``(field C name, values, data type)``: the data type when that field has one of ``values`` (REDUCE's
    #: ARGMAX/ARGMIN give UINT32 indices); a chosen ``output_data_type`` still wins.
    data_type_when: tuple[str, tuple, TensorDataType] | None = None

    def fields(self) -> tuple[str, ...]:
        names = (self.like, self.reduced_by, self.type_like, self.data_type_when and self.data_type_when[0])
        return tuple(name for name in names if name)

    def output(self, schema: OperatorSchema, inputs: dict, values: dict, chosen: TensorDataType | None) -> Any:
        source = inputs[self.like or schema.input_fields[0].c_name]
        sizes = source.sizes
        if self.reduced_by:
            reduced = set(values[schema.field(self.reduced_by).name])
            sizes = tuple(1 if d in reduced else size for d, size in enumerate(sizes))
        data_type = self.data_type or source.data_type
        if self.data_type_when and values[schema.field(self.data_type_when[0]).name] in self.data_type_when[1]:
            data_type = self.data_type_when[2]
        if self.data_type_parameter and chosen is not None:
            data_type = chosen
        if self.type_like and inputs.get(self.type_like) is not None:
            data_type = inputs[self.type_like].data_type
        return BufferTensorDesc(data_type, sizes)


class OperatorDesc:
    """Base of the ``*OperatorDesc`` dataclasses: checks and normalises field values at construction."""

    schema: ClassVar[OperatorSchema]

    def __post_init__(self) -> None:
        for spec in self.schema.fields:
            what = f"{self.schema.c_name}: {spec.c_name}"
            try:
                value = spec.kind.normalise(getattr(self, spec.name), what)
            except InvalidArgumentError as error:
                error.problem = Problem(str(error), spec.c_name)
                raise
            object.__setattr__(self, spec.name, value)

    @property
    def operator_type(self) -> OperatorType:
        return self.schema.operator_type


def operator(
    operator_type: OperatorType,
    *,
    introduced: FeatureLevel,
    support: Iterable[SupportRow] | SupportBy,
    constraints: Iterable[Any] = (),
    in_place: bool | tuple[str, ...] = False,
    fusable: bool = False,
    output_rule: OutputRule = OutputRule(),
) -> Callable[[type], type]:
    """Class decorator: make ``cls`` a frozen descriptor dataclass and register its schema.

    Every declaration is checked here, at import, with errors that name the operator: the class name follows
    the mechanical mirror, each support row lists exactly the tensor fields, the lowest row is the level of
    introduction, and every field a constraint names exists.
    """

    def register(cls: type) -> type:
        name = desc_class_name(operator_type)
        if cls.__name__ != name:
            raise TypeError(f"the descriptor of {operator_type.c_name} must be named {name}, not {cls.__name__}")
        if operator_type in REGISTRY:
            raise TypeError(f"{operator_type.c_name} is declared twice")
        if fusable:  # a fused activation is the same descriptor with its tensors None (NULL)
            for attr, value in list(vars(cls).items()):
                if isinstance(value, dataclasses.Field) and isinstance(value.metadata.get("kind"), Tensor):
                    setattr(cls, attr, _field(Tensor(value.metadata["kind"].is_output, optional=True)))
        cls = dataclass(frozen=True, kw_only=True)(cls)
        specs = [_spec_of(f) for f in dataclasses.fields(cls)]
        fields = tuple(dataclasses.replace(s, nullable_when_fused=fusable and s.is_tensor) for s in specs)
        rows = support if isinstance(support, SupportBy) else SupportRow.ordered(support)
        schema = OperatorSchema(
            operator_type, cls, introduced, fields, rows, tuple(constraints), in_place, fusable, output_rule
        )
        _check_declaration(schema)
        cls.schema = schema
        REGISTRY[operator_type] = schema
        return cls

    return register


def declare(operator_type: OperatorType, doc: str, *, fields: dict[str, Any], **schema: Any) -> type:
    """A descriptor class built from ``fields`` (name -> field function result) and registered with
    :func:`operator`: the compact form for a family's simple members, as in
    ``ActivationReluOperatorDesc = declare(OperatorType.ACTIVATION_RELU, "...", fields=UNARY, ...)``."""
    namespace = {"__annotations__": dict.fromkeys(fields, Any), "__doc__": doc, **fields}
    namespace["__module__"] = sys._getframe(1).f_globals.get("__name__", __name__)  # where it is declared
    cls = type(desc_class_name(operator_type), (OperatorDesc,), namespace)
    return operator(operator_type, **schema)(cls)


def _check_declaration(schema: OperatorSchema) -> None:
    where = schema.c_name
    c_names = {f.c_name for f in schema.fields}
    tensor_names = {f.c_name for f in schema.tensor_fields}
    groups = schema.support.groups if isinstance(schema.support, SupportBy) else {None: schema.support}
    if isinstance(schema.support, SupportBy):
        by = schema.support.field
        if by not in c_names or not isinstance(schema.field(by).kind, Enum):
            raise TypeError(f"{where}: its support rows depend on {by}, which is not an enum field")
        covered = {value for values in groups for value in values}
        missing = [m.name for m in schema.field(by).kind.enum_type if m not in covered]
        if missing:
            raise TypeError(f"{where}: no support rows for {by} {', '.join(missing)}")
    for label, rows in groups.items():
        if not rows or (rows[-1].feature_level != schema.introduced and label is None):
            raise TypeError(f"{where}: the lowest support row must be the level of introduction")
        for r in rows:
            if set(r.tensors) != tensor_names:
                raise TypeError(
                    f"{where}: the {r.feature_level.c_name} support row lists {sorted(r.tensors)}, but the "
                    f"tensors are {sorted(tensor_names)}"
                )
    for rule in (*schema.constraints, schema.output_rule):
        unknown = [name for name in rule.fields() if name not in c_names]
        if unknown:
            raise TypeError(f"{where}: the constraint {rule!s} names {', '.join(unknown)}, which is not a field")
    if isinstance(schema.in_place, tuple) and not set(schema.in_place) <= {f.c_name for f in schema.input_fields}:
        raise TypeError(f"{where}: in_place names {schema.in_place}, but the inputs are {sorted(tensor_names)}")
    for f in schema.fields:
        if isinstance(f.kind, ScalarUnion) and f.kind.data_type_field not in c_names:
            raise TypeError(f"{where}: {f.c_name} is read as {f.kind.data_type_field}, which is not a field")


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
