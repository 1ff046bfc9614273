"""Functions on plain arrays, in the spirit of DirectMLX: build the descriptors, compile once, execute.

One function per registered operator, derived from its declaration (nothing here is written per operator):
``F.activation_hard_sigmoid(x, alpha=0.2, beta=0.5)``, ``F.argmax(x, axes, axis_direction=..., output_data_type=...)``,
``F.element_wise_if(condition, a, b)``. Input tensors come first, as arrays (``input_tensor`` is ``x``, any other
``xxx_tensor`` is ``xxx``), then the descriptor's other fields, with DirectMLX's defaults where the declaration
records one (``dmlx_default``). Outputs take their sizes and data type from the operator's
:class:`~opendml.schema.OutputRule`. Compiled operators are cached per device and descriptor.

Inputs that the operator requires to have the same Sizes (a ``Same("Sizes", ...)`` rule: A and B of the binary
ELEMENT_WISE members, IF's three inputs, POW's exponent) broadcast as NumPy broadcasts them:
``F.element_wise_add(a[2, 3], b[3])`` gives every tensor Sizes {2, 3} and b Strides {0, 1}, the zero-stride
form DirectML callers (onnxruntime among them) use; the smaller array is bound as a buffer, never expanded.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from .binding import BufferBinding
from .constraints import Same
from .device import CompiledOperator, Device
from .errors import InvalidArgumentError
from .schema import REGISTRY, FieldSpec, OperatorDesc, OperatorSchema
from .tensor import BufferTensorDesc, packed_strides

__all__ = ["default_device", "parameter_name"]


@functools.cache
def default_device() -> Device:
    """The device the functions use when none is given: the highest feature level opendml implements."""
    return Device()


@functools.lru_cache(maxsize=256)
def _compiled(device: Device, desc: OperatorDesc, float_bits: tuple[bytes, ...]) -> CompiledOperator:
    return device.compile_operator(device.create_operator(desc))


def _float_bits(value: Any) -> tuple[bytes, ...]:
    """Descriptors compare FLOATs by value (-0.0 == 0.0, NaN != NaN); the cache tells them apart by bits."""
    if isinstance(value, float):
        return (struct.pack("<d", value),)
    if isinstance(value, tuple):
        return tuple(bits for v in value for bits in _float_bits(v))
    if dataclasses.is_dataclass(value):
        return tuple(bits for f in dataclasses.fields(value) for bits in _float_bits(getattr(value, f.name)))
    return ()


def parameter_name(spec: FieldSpec) -> str:
    """The functional name of a tensor field: ``input_tensor`` -> ``x``, ``condition_tensor`` -> ``condition``."""
    return "x" if spec.name == "input_tensor" else spec.name.removesuffix("_tensor")


def _maybe_null(spec: FieldSpec) -> bool:
    """A ``_Maybenull_`` tensor; a fusable activation's tensors are NULL only inside a host, never here."""
    return spec.kind.optional and not spec.nullable_when_fused


def _array(x: Any, name: str) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise InvalidArgumentError(
            f"{name} must be a numpy.ndarray, not {type(x).__name__} (opendml never guesses a dtype)"
        )
    return x


def _broadcast_group(schema: OperatorSchema) -> frozenset[str]:
    """The inputs (C names) that must share Sizes with another input: those NumPy-broadcast together."""
    inputs = {spec.c_name for spec in schema.input_fields}
    group: set[str] = set()
    for rule in schema.constraints:
        if isinstance(rule, Same) and rule.attribute == "Sizes" and len(inputs & set(rule.tensors)) > 1:
            group |= inputs & set(rule.tensors)
    return frozenset(group)


def _broadcast_desc(array: np.ndarray, shape: tuple[int, ...]) -> BufferTensorDesc:
    """``array`` read with ``shape``: right-aligned, stride 0 in every dimension it lacks or has as 1."""
    own = (1,) * (len(shape) - array.ndim) + array.shape
    strides = tuple(0 if size == 1 else stride for size, stride in zip(own, packed_strides(own)))
    return BufferTensorDesc(BufferTensorDesc.like(array).data_type, shape, strides)


def _as_buffer(array: np.ndarray) -> BufferBinding:
    """A broadcast input's binding: its elements, packed, in a buffer of whole DWORDs (as DirectML sizes them)."""
    data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    if data.size % 4:
        data = np.concatenate([data, np.zeros(4 - data.size % 4, np.uint8)])
    return BufferBinding(data)


def _make(schema: OperatorSchema) -> Callable[..., Any]:
    rule = schema.output_rule
    group = _broadcast_group(schema)
    tensors = [(spec, parameter_name(spec)) for spec in schema.input_fields]
    others = [spec for spec in schema.fields if not spec.is_tensor]
    parameters = [
        inspect.Parameter(
            name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=None if _maybe_null(spec) else inspect.Parameter.empty,
        )
        for spec, name in tensors
    ]
    for spec in others:
        default = spec.dmlx_default
        if default is dataclasses.MISSING:
            default = None if spec.kind.optional else inspect.Parameter.empty
        parameters.append(inspect.Parameter(spec.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    if rule.data_type_parameter:
        parameters.append(
            inspect.Parameter("output_data_type", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=rule.data_type)
        )
    parameters.append(inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None))
    signature = inspect.Signature(_sorted_defaults(parameters))

    def build(args: tuple, kwargs: dict) -> tuple[CompiledOperator, list, frozenset[int]]:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{name}(): {error}") from None
        bound.apply_defaults()
        values = bound.arguments
        arrays, descs = [], {}
        for spec, parameter in tensors:
            given = values[parameter]
            if given is None and _maybe_null(spec):
                arrays.append(None)
                continue
            arrays.append(_array(given, parameter))
            descs[spec.c_name] = BufferTensorDesc.like(given)
        broadcast = _broadcast(arrays, descs)
        fields = {spec.name: values[spec.name] for spec in others}
        # Normalise the non-tensor fields once (an iterator of axes is read here, once), then derive the outputs.
        for spec in others:
            fields[spec.name] = spec.kind.normalise(fields[spec.name], f"{schema.c_name}: {spec.c_name}")
        output_type = values.get("output_data_type")
        for spec in schema.output_fields:
            descs[spec.c_name] = rule.output(schema, descs, fields, output_type)
        tensor_values = {spec.name: descs.get(spec.c_name) for spec in schema.tensor_fields}
        desc = schema.desc_class(**tensor_values, **fields)
        device = values["device"] or default_device()
        return _compiled(device, desc, _float_bits(desc)), arrays, broadcast

    def _broadcast(arrays: list, descs: dict) -> frozenset[int]:
        """Broadcast the group's arrays when their shapes differ: their descs get the common Sizes and zero strides;
        returns the positions of the arrays to bind as buffers."""
        members = [(i, spec.c_name) for i, (spec, _) in enumerate(tensors)
                   if spec.c_name in group and arrays[i] is not None]  # fmt: skip
        shapes = {arrays[i].shape for i, _ in members}
        if len(shapes) < 2:
            return frozenset()
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            listed = ", ".join(f"{c_name} {arrays[i].shape}" for i, c_name in members)
            raise InvalidArgumentError(f"{schema.c_name}: the shapes do not broadcast together: {listed}") from None
        moved = set()
        for i, c_name in members:
            if arrays[i].shape != shape:
                descs[c_name] = _broadcast_desc(arrays[i], shape)
                moved.add(i)
        return frozenset(moved)

    names = [parameter for _, parameter in tensors]
    calls: dict[Any, tuple[CompiledOperator, frozenset[int]]] = {}  # a call's shape -> its compiled operator

    def function(*args: Any, **kwargs: Any) -> Any:
        key = _call_key(args, kwargs)
        cached = calls.get(key) if key is not None else None
        if cached is None:
            compiled, arrays, broadcast = build(args, kwargs)
            if key is not None:
                if len(calls) >= _CALLS_MAX:
                    calls.clear()
                calls[key] = compiled, broadcast
        else:  # the same call shape as one that bound and validated: the tensors are the leading parameters
            compiled, broadcast = cached
            arrays = [args[i] if i < len(args) else kwargs.get(n) for i, n in enumerate(names)]
        if broadcast:
            arrays = [_as_buffer(a) if i in broadcast else a for i, a in enumerate(arrays)]
        results = compiled.execute(arrays)
        return results[0] if len(results) == 1 else results

    name = schema.operator_type.name.lower()
    function.__name__ = function.__qualname__ = name
    function.__signature__ = signature
    function.__doc__ = f"{schema.c_name}: {schema.desc_class.__doc__ or ''}\n\nBuilt from the operator's declaration."
    function.__module__ = __name__
    return function


_CALLS_MAX = 1024


def _key(value: Any) -> Any:
    """A hashable stand-in for an argument that tells apart everything a descriptor would: an array by its exact
    type, dtype and shape; a float by its bits (-0.0 is not 0.0); a sequence element by element."""
    kind = type(value)
    if kind is np.ndarray:
        return (kind, value.dtype, value.shape)
    if kind is float:
        return (kind, value, math.copysign(1.0, value))  # NaN never equals itself: such calls are not cached
    if isinstance(value, np.floating):
        return (kind, float(value).hex())
    if kind is tuple or kind is list:
        return (kind, tuple(_key(v) for v in value))
    hash(value)  # anything else must be an immutable value (ints, enums, None, devices); else no caching
    if kind in (int, bool, type(None)) or isinstance(value, (np.integer, enum.Enum, Device)):
        return (kind, value)
    raise TypeError(kind)


def _call_key(args: tuple, kwargs: dict) -> Any:
    """The key of a call in the per-function cache, or None when an argument is not a plain value."""
    try:
        return tuple(map(_key, args)), tuple((k, _key(v)) for k, v in kwargs.items())
    except TypeError:
        return None


def _sorted_defaults(parameters: list[inspect.Parameter]) -> list[inspect.Parameter]:
    """Positional parameters without a default after one with a default become keyword-only."""
    seen_default, result = False, []
    for p in parameters:
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            if p.default is not inspect.Parameter.empty:
                seen_default = True
            elif seen_default:
                p = p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        result.append(p)
    positional = [p for p in result if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    return positional + [p for p in result if p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD]


def __getattr__(name: str) -> Callable[..., Any]:
    """``F.<operator>``: made from the registry on first use (operators declared later are found too)."""
    for schema in REGISTRY.values():
        if schema.operator_type.name.lower() == name:
            function = _make(schema)
            globals()[name] = function
            return function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *(schema.operator_type.name.lower() for schema in REGISTRY.values())])
