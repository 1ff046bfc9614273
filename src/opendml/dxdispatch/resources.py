"""Resources: byte buffers and their initial values, made as DxDispatch makes them.

A resource is raw little-endian bytes. ``initialValuesDataType`` says how the initial values are encoded and how
``print`` decodes the buffer; it does not say how an operator reads it (the tensor desc does). The initializer
forms are a list, a constant ``{value, valueCount}``, a sequence ``{valueStart, valueDelta, valueCount}``
accumulated step by step in the element type, a file ``{sourcePath}`` (``.npy`` or raw bytes, relative to the
model's folder, else to the current directory) and ``"deferred"``. The buffer is the initial bytes rounded up to
a multiple of 4, or exactly ``sizeInBytes``.

FLOAT16 values are converted as DxDispatch converts them: the JSON number (a double) becomes a float, then a
half by truncation toward zero (half.hpp 1.12 with its default rounding style), not by NumPy's
round-to-nearest-even: 0.7 is stored as 0x3999, not 0x399A, and 65520 as 65504, not infinity.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..enums import TensorDataType
from ..errors import InvalidArgumentError
from ..tensor import data_type_of, element_bits, numpy_dtype
from .descs import read_enum
from .jsonc import Node

__all__ = ["Resource", "read_resource", "float16_truncated", "sequence", "pack"]

T = TensorDataType
_FLOATS = (T.FLOAT16, T.FLOAT32, T.FLOAT64)
_SIGNED = (T.INT8, T.INT16, T.INT32, T.INT64)
_RESOURCE_FIELDS = (
    "initialValues", "initialValuesDataType", "sizeInBytes", "initialValuesOffsetInBytes", "type", "resampleSize",
    "resampleMode",
)  # fmt: skip
_INITIALIZER_FORMS = "{value, valueCount}, {valueStart, valueDelta, valueCount} or {sourcePath}"


@dataclass(frozen=True, eq=False)
class Resource:
    """A buffer of the model: its initial bytes, its size and the type its values are printed as."""

    name: str
    data_type: TensorDataType  # initialValuesDataType; UNKNOWN for a mixed list or a deferred resource
    initial_values: bytes
    size_in_bytes: int
    node: Node

    @property
    def element_size(self) -> int | None:
        """Bytes per element of ``data_type``; None when it is UNKNOWN."""
        return None if self.data_type == T.UNKNOWN else element_bits(self.data_type) // 8

    @property
    def element_count(self) -> int:
        """The number of initial elements: what ``print`` shows (padding and rounding are not shown)."""
        return len(self.initial_values) // self.element_size

    def allocate(self) -> bytearray:
        """A fresh buffer holding the initial values at offset 0 and zeros after them."""
        buffer = bytearray(self.size_in_bytes)
        buffer[: len(self.initial_values)] = self.initial_values
        return buffer


def read_resource(name: str, node: Node, base_dir: Path) -> Resource:
    type_node = node.get("initialValuesDataType")
    data_type = T.UNKNOWN if type_node is None else read_enum(type_node, T)
    if data_type != T.UNKNOWN and element_bits(data_type) % 8:
        raise type_node.error(f"{data_type.c_name} has no whole-byte element size, so it cannot type a resource")
    node.warn_unknown(_RESOURCE_FIELDS, "a resource")
    values = node.require("initialValues")
    if isinstance(values.value, str):
        if values.value != "deferred":
            raise values.error(f'the only string initializer is "deferred", not {values.value!r}')
        return Resource(name, data_type, b"", 0, node)  # an ONNX output: no storage, as in DxDispatch
    data, data_type = _initial_values(node, values, data_type, base_dir)
    if not data:
        raise values.error("the initial values are empty; a resource needs at least one value")
    return Resource(name, data_type, data, _size_in_bytes(node, len(data)), node)


def _initial_values(resource: Node, values: Node, data_type: T, base_dir: Path) -> tuple[bytes, T]:
    """The initial bytes, and the data type (a .npy file brings its own)."""
    if isinstance(values.value, list):
        if data_type == T.UNKNOWN:
            return b"".join(map(_mixed_element, values.elements())), data_type
        return pack([read_scalar(e, data_type) for e in values.elements()], data_type), data_type
    if not isinstance(values.value, dict):
        raise values.expected(f'an array of values, an initializer object {_INITIALIZER_FORMS} or "deferred"')
    values.warn_unknown(("value", "valueCount", "valueStart", "valueDelta", "sourcePath"), "an initializer")
    if values.get("value") is not None:
        if values.first("valueStart", "sourcePath") is not None:
            raise values.error("value, valueStart and sourcePath are mutually exclusive")
        _known_type(resource, data_type, "constant")
        count = values.require("valueCount").uint()
        return pack([read_scalar(values.require("value"), data_type)], data_type) * count, data_type
    if values.get("valueStart") is not None:
        _known_type(resource, data_type, "sequence")
        count = values.require("valueCount").uint()
        start, delta = (read_scalar(values.require(k), data_type) for k in ("valueStart", "valueDelta"))
        return sequence(start, delta, count, data_type).tobytes(), data_type
    if values.get("sourcePath") is not None:
        return _from_file(resource, values.require("sourcePath"), data_type, base_dir)
    raise values.error(f"unknown initializer: expected {_INITIALIZER_FORMS}")


def _known_type(resource: Node, data_type: T, form: str) -> None:
    if data_type == T.UNKNOWN:
        raise resource.require("initialValuesDataType").error(
            f"a {form} initializer needs a data type other than UNKNOWN"
        )


def _size_in_bytes(resource: Node, data_size: int) -> int:
    """``sizeInBytes`` as given, else the data size rounded up to 4; the initial values must fit."""
    explicit = resource.get("sizeInBytes")
    size = (data_size + 3) & ~3 if explicit is None else explicit.uint(64)
    offset_node = resource.get("initialValuesOffsetInBytes")
    offset = 0 if offset_node is None else offset_node.uint(64)
    if data_size + offset > size:
        raise (explicit or offset_node).error(
            f"the buffer size ({size} bytes) is too small for the initial values ({data_size} bytes) "
            f"at offset {offset} bytes"
        )
    if offset:
        offset_node.warn("is checked but not applied: the initial values are copied to offset 0, as DxDispatch does")
    return size


def read_scalar(node: Node, data_type: T) -> int | float:
    """One value of ``data_type``: floats accept "nan"/"inf"/"-inf"; integers must be JSON integers in range."""
    if data_type in _FLOATS:
        return node.real()
    bits = element_bits(data_type)
    return node.sint(bits) if data_type in _SIGNED else node.uint(bits)


def _mixed_element(element: Node) -> bytes:
    """One ``{"type": T, "value": v}`` of a mixed list (DxDispatch packs HLSL constants this way)."""
    type_node = element.require("type")
    data_type = read_enum(type_node, T)
    if data_type == T.FLOAT16 or element_bits(data_type) % 8 or data_type == T.UNKNOWN:
        raise type_node.error(f"{data_type.c_name} is not supported in a mixed list")
    return pack([read_scalar(element.require("value"), data_type)], data_type)


def pack(values: Sequence[int | float], data_type: T) -> bytes:
    """Values (already range-checked) as the little-endian bytes of ``data_type``."""
    with np.errstate(over="ignore"):  # a double beyond float range becomes infinity, as a C cast makes it
        if data_type == T.FLOAT16:
            return float16_truncated(np.array(values, np.float32)).tobytes()
        return np.array(values, numpy_dtype(data_type)).tobytes()


def float16_truncated(values: np.ndarray) -> np.ndarray:
    """float32 -> float16 as half.hpp 1.12 converts by default: toward zero, overflowing to infinity.

    |x| >= 65536 becomes infinity, 65504 <= |x| < 65536 becomes 65504; NaN keeps the top of its payload.
    """
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.int64)
    sign = (bits >> 16) & 0x8000
    exponent = (bits >> 23) & 0xFF  # biased by 127; a half's bias is 15
    mantissa = bits & 0x7FFFFF
    magnitude = np.select(
        [exponent == 0xFF, exponent >= 127 + 16, exponent >= 127 - 14, exponent >= 127 - 24],
        [
            0x7C00 | (mantissa >> 13),  # infinity or NaN
            0x7C00,  # beyond the largest half: infinity
            ((exponent - 112) << 10) | (mantissa >> 13),  # normal: drop 13 mantissa bits
            (mantissa | 0x800000) >> np.clip(126 - exponent, 0, 63),  # subnormal: units of 2**-24
        ],
        default=0,
    )
    return (sign | magnitude).astype(np.uint16).view(np.float16)


def sequence(start: int | float, delta: int | float, count: int, data_type: T) -> np.ndarray:
    """``x = start; count times: emit x; x += delta`` with every addition done in the element type."""
    dtype = numpy_dtype(data_type)
    if data_type not in _FLOATS:  # C++ adds in integer arithmetic, then narrows modulo 2**bits
        offsets = np.arange(count, dtype=np.uint64) * np.uint64(delta % 2**64)
        return (np.uint64(start % 2**64) + offsets).astype(f"<u{dtype.itemsize}").view(dtype)
    with np.errstate(over="ignore"):
        if data_type != T.FLOAT16:
            steps = np.full(count, delta, dtype)
            steps[:1] = start
            return np.cumsum(steps, dtype=dtype)  # sequential adds in the element type
        value, step = float16_truncated([start, delta])  # half + half is computed in float, then truncated
        result = np.empty(count, np.float16)
        for i in range(count):
            result[i] = value
            value = float16_truncated(np.float32(value) + np.float32(step))
        return result


def _from_file(resource: Node, source: Node, data_type: T, base_dir: Path) -> tuple[bytes, T]:
    """``{sourcePath}``: a .npy file (typed by its header) or raw bytes (typed by initialValuesDataType)."""
    path = _input_path(base_dir, source.string())
    suffix = path.suffix.lower()
    if suffix in (".jpg", ".png"):
        raise source.error(f"image initializers ({suffix}) are not supported by opendml; use a .npy file")
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise source.error(f"cannot read {str(path)!r}: {error.strerror}") from None
    if suffix != ".npy":
        _known_type(resource, data_type, "raw file")
        return raw, data_type
    array = _read_npy(source, path, raw)
    try:
        file_type = data_type_of(array.dtype)
    except InvalidArgumentError as error:
        raise source.error(f"{str(path)!r}: {error}") from None
    if data_type not in (T.UNKNOWN, file_type):
        raise source.error(f"{str(path)!r} holds {file_type.name} data, but initialValuesDataType is {data_type.name}")
    return array.tobytes(), file_type


def _read_npy(source: Node, path: Path, raw: bytes) -> np.ndarray:
    try:
        array = np.load(io.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise source.error(f"{str(path)!r} is not a valid .npy file: {error}") from None
    if not isinstance(array, np.ndarray):
        raise source.error(f"{str(path)!r} is an .npz archive, not a .npy array")
    if not array.flags.c_contiguous:
        raise source.error(f"{str(path)!r} is stored in Fortran order; write it in C order")
    return array


def _input_path(base_dir: Path, source: str) -> Path:
    """As DxDispatch resolves input files: next to the model if it exists there, else from the current folder."""
    beside_model = base_dir / source
    return beside_model if beside_model.exists() else Path(source).absolute()
