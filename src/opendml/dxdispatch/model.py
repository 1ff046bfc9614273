"""A DxDispatch model read into dataclasses: resources, DML dispatchables and commands, every name resolved.

``load_model`` reads the whole file before it gives up, like a compiler: each resource, dispatchable and
command is read on its own, and every error is reported with its JSON path. References are resolved while
reading (commands come last in the file, as in DxDispatch): a :class:`Dispatch` holds the
:class:`Dispatchable` and one :class:`TensorBinding` per tensor field of its descriptor, in descriptor order.
What needs a device (operator validation at a feature level, binding sizes) is checked by
:class:`~opendml.dxdispatch.runner.Session`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..enums import ExecutionFlags, TensorDataType
from ..schema import FieldSpec, OperatorDesc
from . import jsonc
from .descs import desc_fields, read_flags, read_operator_desc
from .errors import Diagnostics, Unavailable, gather
from .jsonc import Node, closest
from .resources import MAX_RESOURCE_BYTES, Resource, read_resource

__all__ = ["Model", "Dispatchable", "TensorBinding", "Dispatch", "Print", "WriteFile", "Command", "load_model"]

_OTHER_DISPATCHABLES = ("hlsl", "onnx", "dmlserializedgraph")  # DxDispatch compares these case-insensitively
_COMPILE_TYPES = ("DmlCompileOp", "DmlCompileGraph")
#: The optional members of a binding object, read (and so type-checked) as DxDispatch reads them. Only the first
#: two matter to a DML operator; the others serve HLSL dispatchables (format, counter) and ONNX ones (shape).
_BINDING_MEMBERS: dict[str, Callable[[Node], Any]] = {
    "elementOffset": lambda n: n.uint(64),
    "elementSizeInBytes": lambda n: n.uint(64),
    "elementCount": lambda n: n.uint(64),
    "format": Node.string,
    "counter": Node.string,
    "counterOffsetBytes": lambda n: n.uint(64),
    "shape": lambda n: [e.sint(64) for e in n.elements()],
}
_IMAGE_SUFFIXES = (".png", ".jpg")
_HINTS_MAX = 10  # "did you mean" for the first unknown references only: each compares every name of a section
_NPY_MAX_DIMENSIONS = 32  # NumPy 1 reads arrays of at most 32 dimensions (NumPy 2: 64)


@dataclass(frozen=True, eq=False)
class Dispatchable:
    """A DML operator dispatchable: its descriptor and execution flags."""

    name: str
    desc: OperatorDesc
    execution_flags: ExecutionFlags
    node: Node

    @property
    def fields(self) -> Node:
        """Where the descriptor's fields are written (to locate validation problems)."""
        return desc_fields(self.node)


@dataclass(frozen=True, eq=False)
class TensorBinding:
    """A tensor field bound to a resource from ``offset`` bytes to its end, as DxDispatch binds DML tensors."""

    field: FieldSpec
    resource: Resource
    offset: int
    node: Node


@dataclass(frozen=True, eq=False)
class Dispatch:
    dispatchable: Dispatchable
    bindings: tuple[TensorBinding, ...]  # one per tensor field, in the descriptor's order
    node: Node


@dataclass(frozen=True, eq=False)
class Print:
    resource: Resource
    verbose: bool
    node: Node


@dataclass(frozen=True, eq=False)
class WriteFile:
    resource: Resource
    target_path: str  # relative to the current directory, as in DxDispatch
    dimensions: tuple[int, ...] | None
    node: Node


Command = Dispatch | Print | WriteFile


@dataclass(frozen=True, eq=False)
class Model:
    path: Path
    description: str  # the optional top-level "description" (DxDispatch ignores members it does not read)
    resources: dict[str, Resource]
    dispatchables: dict[str, Dispatchable]
    commands: tuple[Command, ...]


def load_model(
    path: str | Path, diagnostics: Diagnostics | None = None, name: str | None = None, partial: bool = False
) -> Model | None:
    """Read a model file; raise InvalidModel with every error found (OSError if the file cannot be read).

    ``name`` is how messages call the file (default: ``path`` as given). With ``partial``, errors are left in
    ``diagnostics`` and the items that were read are returned (None if the file is not a model at all), so that
    the dispatchables that were read can still be checked on a device.
    """
    diagnostics = Diagnostics() if diagnostics is None else diagnostics
    path = Path(path)
    model = None
    with diagnostics.item():
        model = _Reader(jsonc.read(path, diagnostics, name).root, path, diagnostics).model()
    if not partial:
        diagnostics.check()
    return model


class _Reader:
    """Reads the three sections in document order, resolving each command's references as it goes."""

    def __init__(self, root: Node, path: Path, diagnostics: Diagnostics):
        self.root = root
        self.path = path
        self.diagnostics = diagnostics
        self.resources: dict[str, Resource] = {}
        self.resource_bytes = 0  # the size of the resources read so far
        self.hints_left = _HINTS_MAX
        self.dispatchables: dict[str, Dispatchable] = {}

    def model(self) -> Model:
        root = self.root
        if not isinstance(root.value, dict):
            raise root.expected("a JSON object with resources, dispatchables and commands")
        sections = [
            self.section(key, kind) for key, kind in (("resources", dict), ("dispatchables", dict), ("commands", list))
        ]
        self.read_all(sections[0].members(), self.resources, self.resource)
        self.read_all(sections[1].members(), self.dispatchables, _read_dispatchable)
        commands: list[Command] = []
        for node in sections[2].elements():
            with self.diagnostics.item():
                commands.append(self.command(node))
        return Model(self.path, root.optional("description", Node.string, ""), self.resources, self.dispatchables,
                     tuple(commands))  # fmt: skip

    def section(self, key: str, kind: type) -> Node:
        node = self.root.require(key)
        if not isinstance(node.value, kind):
            raise node.expected(f"an object of named {key}" if kind is dict else "an array of commands")
        return node

    def resource(self, name: str, node: Node) -> Resource:
        """A resource, in the room the resources before it leave (see MAX_RESOURCE_BYTES)."""
        resource = read_resource(name, node, self.path.parent, MAX_RESOURCE_BYTES - self.resource_bytes)
        self.resource_bytes += resource.size_in_bytes
        return resource

    def read_all(self, members: list[tuple[str, Node]], into: dict[str, Any], read: Callable[[str, Node], Any]) -> None:
        for name, node in members:
            with self.diagnostics.item():
                into[name] = read(name, node)

    # Commands.

    def command(self, node: Node) -> Command:
        kind = node.require("type")
        read = {"dispatch": self.dispatch, "print": self.print, "writefile": self.write_file}.get(kind.string().lower())
        if read is None:
            raise kind.error(f"unrecognized command type {kind.value!r}; expected dispatch, print or writeFile")
        return read(node)

    def find(self, reference: Node, section: str, action: str) -> Any:
        """The item a command names, or DxDispatch's error ``Command attempts to <action> '<name>', which...``."""
        name = reference.string()
        items = self.resources if section == "resources" else self.dispatchables
        if name in items:
            return items[name]
        if name in self.root.value[section]:
            raise Unavailable  # it exists but is broken; its own error is already reported
        self.hints_left -= 1
        close = closest(name, self.root.value[section]) if self.hints_left >= 0 else None
        hint = f"; did you mean {close!r}?" if close else ""
        raise reference.error(f"Command attempts to {action} {name!r}, which does not exist in the model{hint}")

    def dispatch(self, node: Node) -> Dispatch:
        node.warn_unknown(("type", "dispatchable", "bindings", "threadGroupCount"), "a dispatch command")
        dispatchable = self.find(node.require("dispatchable"), "dispatchables", "dispatch")
        groups = node.get("threadGroupCount")  # HLSL only, but DxDispatch checks its shape for every dispatch
        if groups is not None and len(groups.uints()) != 3:
            raise groups.error("threadGroupCount must be an array of 3 integers")
        bindings = node.require("bindings")
        tensors = [spec for spec in dispatchable.desc.schema.fields if spec.is_tensor]
        bindings.warn_unknown(tuple(spec.c_name for spec in tensors), dispatchable.desc.schema.c_name, "tensor")
        bound = gather(lambda spec: self.bind(bindings, spec, dispatchable), tensors)
        return Dispatch(dispatchable, tuple(bound), node)

    def bind(self, bindings: Node, spec: FieldSpec, dispatchable: Dispatchable) -> TensorBinding:
        """The binding of one tensor field: a resource name, a binding object, or an array of one of those."""
        value = bindings.get(spec.c_name)
        if value is None:
            raise bindings.missing(
                spec.c_name,
                f"{spec.c_name} is not bound; {dispatchable.desc.schema.c_name} needs every tensor of its descriptor",
            )
        sources = value.elements() if isinstance(value.value, list) else [value]
        if len(sources) != 1:
            raise value.error(f"Bind point {spec.c_name!r} requires 1 resource, but {len(sources)} were bound")
        return self.tensor_binding(spec, sources[0])

    def tensor_binding(self, spec: FieldSpec, source: Node) -> TensorBinding:
        if isinstance(source.value, str):
            name, members = source, {}
        elif isinstance(source.value, dict):
            source.warn_unknown(("name", *_BINDING_MEMBERS), "a binding")
            name = source.require("name")
            members = {key: source.optional(key, read, None) for key, read in _BINDING_MEMBERS.items()}
        else:
            raise source.expected("a resource name or a binding object {name, elementOffset, elementSizeInBytes}")
        resource: Resource = self.find(name, "resources", "bind resource")
        element_offset = members.get("elementOffset") or 0
        element_size = members.get("elementSizeInBytes") or resource.element_size  # 0 or absent: the resource's
        if element_size is None and element_offset:
            raise source.error(
                f"resource {resource.name!r} has no data type: give elementSizeInBytes with elementOffset"
            )
        offset = element_offset * (element_size or 0)
        if offset > resource.size_in_bytes:
            raise source.error(
                f"elementOffset {element_offset} is byte {offset}, beyond the end of resource {resource.name!r} "
                f"({resource.size_in_bytes} bytes)"
            )
        return TensorBinding(spec, resource, offset, source)

    def print(self, node: Node) -> Print:
        node.warn_unknown(("type", "resource", "verbose"), "a print command")
        reference = node.require("resource")
        resource = _decodable(reference, self.find(reference, "resources", "print resource"), "printed")
        return Print(resource, node.optional("verbose", Node.boolean, False), node)

    def write_file(self, node: Node) -> WriteFile:
        node.warn_unknown(("type", "resource", "targetPath", "dimensions"), "a writeFile command")
        reference = node.require("resource")
        resource: Resource = self.find(reference, "resources", "write to a file the resource")
        target = node.require("targetPath")
        suffix = Path(target.file_path()).suffix.lower()
        if suffix in _IMAGE_SUFFIXES:
            raise target.error(f"writing images ({suffix}) is not supported by opendml; write a .npy file")
        dimensions = node.optional("dimensions", Node.uints, ()) or None  # empty means absent, as in DxDispatch
        if suffix == ".npy":
            _decodable(reference, resource, "written as .npy")
            if dimensions and len(dimensions) > _NPY_MAX_DIMENSIONS:
                raise node.require("dimensions").error(
                    f"dimensions has {len(dimensions)} elements; a .npy array has at most {_NPY_MAX_DIMENSIONS}"
                )
            if dimensions and math.prod(dimensions) * resource.element_size > resource.size_in_bytes:
                raise node.require("dimensions").error(
                    f"dimensions {list(dimensions)} hold {math.prod(dimensions) * resource.element_size} bytes, "
                    f"more than the {resource.size_in_bytes} bytes of resource {resource.name!r}"
                )
        return WriteFile(resource, target.value, dimensions, node)


def _decodable(reference: Node, resource: Resource, use: str) -> Resource:
    """A resource that print or a .npy writeFile decodes, which needs its data type."""
    if resource.data_type == TensorDataType.UNKNOWN:
        raise reference.error(f"resource {resource.name!r} has no initialValuesDataType, so it cannot be {use}")
    return resource


def _read_dispatchable(name: str, node: Node) -> Dispatchable:
    kind = node.require("type")
    if kind.string().lower() in _OTHER_DISPATCHABLES:
        raise kind.error(
            f"{kind.value!r} dispatchables are not supported by opendml, which runs DirectML operators only"
        )
    desc = read_operator_desc(node)
    flags = node.optional("executionFlags", lambda n: read_flags(n, ExecutionFlags), ExecutionFlags.NONE)
    compile_type = node.optional("dmlCompileType", Node.string, _COMPILE_TYPES[0])
    if compile_type not in _COMPILE_TYPES:
        raise node.require("dmlCompileType").error(
            f"{compile_type!r} is not a DmlCompileType; expected DmlCompileOp or DmlCompileGraph"
        )
    init_bindings = node.get("bindings")
    if init_bindings is not None and init_bindings.value:
        raise init_bindings.error(
            "initialization bindings serve DML_TENSOR_FLAG_OWNED_BY_DML tensors, which opendml does not support"
        )
    return Dispatchable(name, desc, flags, node)
