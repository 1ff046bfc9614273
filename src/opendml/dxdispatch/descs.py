"""DirectML values written in JSON: enums, flags, DML_TENSOR_DESC and any registered operator descriptor.

Operator descriptors are built generically from their schema (:mod:`opendml.schema`): each field's
:class:`~opendml.schema.FieldKind` says how to read it, so an operator added to the registry is readable here
with no code of its own. The rules are DxDispatch's: field names are the C member names (case-sensitive),
every field of the descriptor is required (DxDispatch has no attribute defaults), enum values are the full C
name or its suffix (case-sensitive), a FLOAT is a number or "nan"/"inf"/"-inf", and the descriptor's fields sit
under ``Desc``, ``desc`` or (the collapsed form) directly in the dispatchable. A tensor desc is collapsed
(``{"DataType": ..., "Sizes": ...}``) or full (``{"Type": "BUFFER", "Desc": {...}}``), with the defaults of
DxDispatch: packed when ``Strides`` is absent or empty, ``TotalTensorSizeInBytes`` computed when absent or 0.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable
from typing import Any

from ..enums import OperatorType, TensorDataType, TensorFlags, TensorType
from ..errors import InvalidArgumentError, OperatorNotImplementedError
from ..schema import FieldKind, FieldSpec, OperatorDesc, schema_of
from ..tensor import BufferTensorDesc
from .jsonc import Node, closest

__all__ = ["read_enum", "read_flags", "read_tensor_desc", "read_operator_desc", "desc_fields", "locate_problem"]

_BUFFER_TENSOR_FIELDS = (
    "DataType", "Flags", "DimensionCount", "Sizes", "Strides", "TotalTensorSizeInBytes",
    "GuaranteedBaseOffsetAlignment",
)  # fmt: skip
#: Members a dispatchable may hold beside the descriptor's fields in the collapsed form.
DISPATCHABLE_MEMBERS = ("type", "Type", "executionFlags", "dmlCompileType", "bindings")
_LISTED_VALUES_MAX = 16  # enums this small are listed in full in an error message


@functools.cache
def _spellings(enum_type: type[enum.Enum]) -> tuple[str, dict[str, Any]]:
    """The C type name of an enum and every spelling of its values: ``FLOAT32`` and ``DML_..._FLOAT32``."""
    some = next(iter(enum_type))
    prefix = some.c_name[: -len(some.name)]
    c_type = "DML_OPERATOR_TYPE" if enum_type is OperatorType else prefix.rstrip("_")
    if issubclass(enum_type, enum.Flag):
        c_type += "S"  # DML_TENSOR_FLAG_NONE is a value of DML_TENSOR_FLAGS
    spellings = {}
    for name, member in enum_type.__members__.items():  # aliases too (DML_OPERATOR_SCATTER)
        spellings[name] = spellings[prefix + name] = member
    return c_type, spellings


def read_enum(node: Node, enum_type: type[enum.Enum]) -> Any:
    """An enum value by its C name or suffix; the error lists the values or suggests the closest."""
    c_type, spellings = _spellings(enum_type)
    if not isinstance(node.value, str):
        raise node.expected(f"a {c_type} value (a string)")
    if node.value in spellings:
        return spellings[node.value]
    names = [name for name in spellings if not name.startswith("DML_")]
    if len(names) <= _LISTED_VALUES_MAX:
        prefix = spellings[names[0]].c_name[: -len(names[0])]
        hint = f"; expected one of {', '.join(names)} (the prefix {prefix} is optional)"
    else:
        close = closest(node.value, spellings)
        hint = f"; did you mean {close}?" if close else ""
    if node.value.lower() in map(str.lower, spellings):
        hint = f"; values are case-sensitive: did you mean {closest(node.value, spellings)}?"
    raise node.error(f"{node.value!r} is not a {c_type} value{hint}")


def read_flags(node: Node, flag_type: type[enum.Flag]) -> Any:
    """A flags field: one value, or an array of values OR-ed together."""
    if isinstance(node.value, list):
        return functools.reduce(lambda a, b: a | b, (read_enum(e, flag_type) for e in node.elements()), flag_type(0))
    if not isinstance(node.value, str):
        raise node.expected(f"a {_spellings(flag_type)[0]} value or an array of values")
    return read_enum(node, flag_type)


def buffer_desc_node(tensor: Node) -> Node:
    """Where a tensor's DML_BUFFER_TENSOR_DESC fields are: under ``Desc``, or in the tensor itself."""
    return tensor.get("Desc") or tensor


def read_tensor_desc(tensor: Node) -> BufferTensorDesc:
    """A DML_TENSOR_DESC in collapsed or ``{Type, Desc}`` form."""
    tensor_type = tensor.optional("Type", lambda n: read_enum(n, TensorType), TensorType.BUFFER)
    if tensor_type != TensorType.BUFFER:
        raise tensor.require("Type").error(f"{tensor_type.c_name} is not a tensor; only DML_TENSOR_TYPE_BUFFER exists")
    node = buffer_desc_node(tensor)
    sizes = node.require("Sizes").uints()
    strides = node.optional("Strides", Node.uints, ()) or None  # an empty array means packed, as in DxDispatch
    count_node = node.get("DimensionCount")
    if count_node is not None and count_node.uint() != len(sizes):
        raise count_node.error(f"DimensionCount is {count_node.value}, but Sizes has {len(sizes)} elements")
    if strides is not None and len(strides) != len(sizes):
        raise node.require("Strides").error(f"Strides has {len(strides)} elements, but Sizes has {len(sizes)}")
    if node is not tensor:
        tensor.warn_unknown(("Type", "Desc"), "DML_TENSOR_DESC")
    node.warn_unknown(_BUFFER_TENSOR_FIELDS + (("Type",) if node is tensor else ()), "DML_BUFFER_TENSOR_DESC")
    fields = dict(
        data_type=read_enum(node.require("DataType"), TensorDataType),
        sizes=sizes,
        strides=strides,
        total_tensor_size_in_bytes=node.optional("TotalTensorSizeInBytes", lambda n: n.uint(64), 0) or None,
        guaranteed_base_offset_alignment=node.optional("GuaranteedBaseOffsetAlignment", Node.uint, 0),
        flags=node.optional("Flags", lambda n: read_flags(n, TensorFlags), TensorFlags.NONE),
    )
    try:
        return BufferTensorDesc(**fields)
    except InvalidArgumentError as error:
        raise node.error(str(error)) from None


def _read_uint_array(fields: Node, spec: FieldSpec) -> tuple[int, ...]:
    values = fields.require(spec.c_name).uints()
    count = fields.require(spec.count_c_name)
    if count.uint() != len(values):
        raise count.error(
            f"{spec.count_c_name} is {count.value}, but {spec.c_name} has {len(values)} elements; "
            f"DirectML reads {spec.count_c_name} elements from {spec.c_name}"
        )
    return values


_READERS: dict[FieldKind, Callable[[Node, FieldSpec], Any]] = {
    FieldKind.INPUT_TENSOR: lambda fields, spec: read_tensor_desc(fields.require(spec.c_name)),
    FieldKind.OUTPUT_TENSOR: lambda fields, spec: read_tensor_desc(fields.require(spec.c_name)),
    FieldKind.UINT_ARRAY: _read_uint_array,
    FieldKind.ENUM: lambda fields, spec: read_enum(fields.require(spec.c_name), spec.enum_type),
    FieldKind.FLOAT: lambda fields, spec: fields.require(spec.c_name).real(),
}


def desc_fields(dispatchable: Node) -> Node:
    """Where a dispatchable's descriptor fields are: ``Desc``, ``desc``, or the dispatchable itself."""
    return dispatchable.first("Desc", "desc") or dispatchable


def read_operator_desc(dispatchable: Node) -> OperatorDesc:
    """The operator descriptor of a DML dispatchable, for any operator in the registry."""
    type_node = dispatchable.first("Type", "type") or dispatchable.require("type")
    operator_type = read_enum(type_node, OperatorType)
    try:
        schema = schema_of(operator_type)
    except OperatorNotImplementedError as error:
        raise type_node.error(str(error)) from None
    fields = desc_fields(dispatchable)
    values = {spec.name: _READERS[spec.kind](fields, spec) for spec in schema.fields}
    known = [spec.c_name for spec in schema.fields] + [s.count_c_name for s in schema.fields if s.count_c_name]
    fields.warn_unknown(tuple(known) + (DISPATCHABLE_MEMBERS if fields is dispatchable else ()), schema.c_name)
    try:
        return schema.desc_class(**values)
    except InvalidArgumentError as error:
        raise locate_problem(fields, str(error), fields).error(str(error)) from None


_FIELD_REFERENCE = re.compile(r"\b([A-Z]\w*)(?:\.([A-Z]\w*))?(?:\[(\d+)\])?")


def locate_problem(fields: Node, problem: str, elsewhere: Node) -> Node:
    """The JSON value a validation problem is about: the first descriptor field the message names.

    ``InputTensor.Sizes[1] is 0`` -> ``...InputTensor.Sizes[1]``; ``expected OutputTensor.Sizes[1] to be 1`` ->
    ``...OutputTensor.Sizes[1]``; ``Axes lists axis 0 more than once`` -> ``...Axes``. A member or element the
    model does not write (a computed ``TotalTensorSizeInBytes``) is located at its tensor or array; a problem
    that names no field (the operator's feature level) at ``elsewhere``.
    """
    for match in _FIELD_REFERENCE.finditer(problem):
        name, member, index = match.groups()
        target = fields.get(name)
        if target is not None:
            break
    else:
        return elsewhere
    if member is not None and isinstance(target.value, dict):
        target = buffer_desc_node(target).get(member) or target
    if index is not None and isinstance(target.value, list) and int(index) < len(target.value):
        target = target.element(int(index))
    return target
