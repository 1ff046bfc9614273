"""DirectML values written in JSON: enums, flags, DML_TENSOR_DESC and any registered operator descriptor.

Operator descriptors are built generically from their schema (:mod:`opendml.schema`): each field's kind
reads itself (``Kind.read_json``) with the primitives of this module, so an operator added to the registry is
readable here with no code of its own. The rules are DxDispatch's: field names are the C member names (case-sensitive),
every field of the descriptor is required (DxDispatch has no attribute defaults), enum values are the full C
name or its suffix (case-sensitive), a FLOAT is a number or "nan"/"inf"/"-inf", and the descriptor's fields sit
under ``Desc``, ``desc`` or (the collapsed form) directly in the dispatchable. A tensor desc is collapsed
(``{"DataType": ..., "Sizes": ...}``) or full (``{"Type": "BUFFER", "Desc": {...}}``), with the defaults of
DxDispatch: packed when ``Strides`` is absent or empty, ``TotalTensorSizeInBytes`` computed when absent or 0.
"""

from __future__ import annotations

import enum
import functools
from typing import Any

import numpy as np

from ..enums import OperatorType, TensorDataType, TensorFlags, TensorType
from ..errors import InvalidArgumentError, OperatorNotImplementedError
from ..problems import Problem
from ..schema import REGISTRY, FieldSpec, OperatorDesc, Scalar, schema_of
from ..tensor import BufferTensorDesc
from .jsonc import Node, closest

__all__ = ["read_enum", "read_flags", "read_tensor_desc", "read_operator_desc", "desc_fields", "locate_problem"]
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

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


def read_array(fields: Node, spec: FieldSpec, element: Scalar) -> tuple:
    """A count member plus an array member (``AxisCount`` + ``Axes``); the count must match the array."""
    array = fields.require(spec.c_name)
    if element.c_type == "FLOAT":
        values = tuple(e.real() for e in array.elements())
    elif element.c_type == "INT":
        values = tuple(read_int(e) for e in array.elements())
    else:
        values = array.uints()
    count_name = spec.kind.count_c_name
    count = fields.require(count_name)
    if count.uint() != len(values):
        raise count.error(
            f"{count_name} is {count.value}, but {spec.c_name} has {len(values)} elements; "
            f"DirectML reads {count_name} elements from {spec.c_name}"
        )
    return values


def read_int(node: Node) -> int:
    return node.integer(INT32_MIN, INT32_MAX, "a signed 32-bit integer")


def read_bool(node: Node) -> bool:
    """A BOOL: true/false, or 0/1 as the C member holds it."""
    if isinstance(node.value, bool):
        return node.value
    return bool(node.integer(0, 1, "true, false, 0 or 1"))


def read_struct(node: Node, struct_type: type) -> Any:
    """A struct of scalars (``{"Scale": 2, "Bias": 1}``); every member is required, as in DxDispatch."""
    values = {spec.name: spec.kind.read_json(node, spec, _this_module()) for spec in struct_type.fields}
    node.warn_unknown(tuple(spec.c_name for spec in struct_type.fields), struct_type.c_type)
    try:
        return struct_type(**values)
    except InvalidArgumentError as error:
        raise node.error(str(error)) from None


#: The member of DxDispatch's object form of a DML_SCALAR_UNION, per data type (FLOAT16 is given as raw bits).
_UNION_MEMBERS = {
    TensorDataType.FLOAT16: "UInt16", TensorDataType.FLOAT32: "Float32", TensorDataType.FLOAT64: "Float64",
    TensorDataType.UINT8: "UInt8", TensorDataType.UINT16: "UInt16", TensorDataType.UINT32: "UInt32",
    TensorDataType.UINT64: "UInt64", TensorDataType.INT8: "Int8", TensorDataType.INT16: "Int16",
    TensorDataType.INT32: "Int32", TensorDataType.INT64: "Int64",
}  # fmt: skip


def read_scalar_union(node: Node, data_type: TensorDataType, data_type_node: Node) -> int | float:
    """A DML_SCALAR_UNION read as ``data_type``, in DxDispatch's two forms: a number (an integer type takes a JSON
    integer in its range; a float type also "nan"/"inf"/"-inf"; FLOAT16 is truncated as DxDispatch's half is), or an
    object whose one member names the union member (``{"Int32": 5}``, ``{"Float32": 1.5}``, FLOAT16 as raw bits
    ``{"UInt16": 15360}``)."""
    from .resources import float16_truncated, read_scalar  # resources reads enums from this module

    member = _UNION_MEMBERS.get(data_type)
    if member is None:
        raise data_type_node.error(f"{data_type.name} cannot type a DML_SCALAR_UNION")
    if isinstance(node.value, dict):
        node.warn_unknown((member,), f"DML_SCALAR_UNION read as {data_type.name}")
        value = node.require(member)
        if data_type == TensorDataType.FLOAT16:
            return float(np.array(value.uint(16), np.uint16).view(np.float16))
        return read_scalar(value, data_type)
    if isinstance(node.value, (list, bool)) or node.value is None:
        form = f'a number or an object {{"{member}": ...}}'
        raise node.expected(f"{form} (a DML_SCALAR_UNION read as {data_type.name})")
    if data_type == TensorDataType.FLOAT16:
        return float(float16_truncated(np.float32(node.real()))[()])
    return read_scalar(node, data_type)


def read_nested_operator_desc(node: Node) -> OperatorDesc:
    """A nested operator descriptor (``FusedActivation``): ``{"Type": ..., "Desc": {...}}`` or collapsed."""
    return read_operator_desc(node, members=("type", "Type"), nested=True)


def _this_module() -> Any:
    import sys

    return sys.modules[__name__]


def desc_fields(dispatchable: Node) -> Node:
    """Where a dispatchable's descriptor fields are: ``Desc``, ``desc``, or the dispatchable itself."""
    return dispatchable.first("Desc", "desc") or dispatchable


def read_operator_desc(
    dispatchable: Node, members: tuple[str, ...] = DISPATCHABLE_MEMBERS, nested: bool = False
) -> OperatorDesc:
    """The operator descriptor of a DML dispatchable (or a nested one), for any operator in the registry.

    ``members``: what the object may hold beside the descriptor's fields in the collapsed form. ``nested``: a
    fused activation, whose tensors DxDispatch never reads (they are NULL; written ones draw a warning).
    """
    type_node = dispatchable.first("Type", "type") or dispatchable.require("type")
    operator_type = read_enum(type_node, OperatorType)
    try:
        schema = schema_of(operator_type)
    except OperatorNotImplementedError as error:
        raise type_node.error(str(error)) from None
    if nested and not schema.fusable:  # its tensors are required, but a fused activation has none
        fusable = ", ".join(s.operator_type.name for s in REGISTRY.values() if s.fusable)
        raise type_node.error(f"{schema.c_name} cannot be fused (fusable: {fusable})")
    fields = desc_fields(dispatchable)
    json = _this_module()
    read = [spec for spec in schema.fields if not (nested and spec.is_tensor)]
    values = {spec.name: spec.kind.read_json(fields, spec, json) for spec in read}
    known = tuple(name for spec in read for name in spec.kind.json_names(spec))
    fields.warn_unknown(known + (members if fields is dispatchable else ()), schema.c_name)
    try:
        return schema.desc_class(**values)
    except InvalidArgumentError as error:
        problem = error.problem or Problem(str(error))
        raise locate_problem(fields, problem, fields).error(str(error)) from None


def locate_problem(fields: Node, problem: Problem, elsewhere: Node) -> Node:
    """The JSON value a validation problem is about: ``InputTensor.Sizes[1]`` -> that element, ``Axes[3]`` ->
    that axis. A member or element the model does not write (a computed ``TotalTensorSizeInBytes``, a count
    beyond the array) is located at its tensor or array; a problem with no field (the operator's feature
    level) at ``elsewhere``."""
    target = fields.get(problem.field) if problem.field is not None and isinstance(fields.value, dict) else None
    if target is None:
        return elsewhere
    if problem.member is not None and isinstance(target.value, dict):
        target = buffer_desc_node(target).get(problem.member) or target
    index = problem.index
    if index is not None and isinstance(target.value, list) and index < len(target.value):
        target = target.element(index)
    return target
