"""Resources: byte buffers and their initial values, made as DxDispatch makes them.

A resource is raw little-endian bytes. ``initialValuesDataType`` says how the initial values are encoded and how
``print`` decodes the buffer; it does not say how an operator reads it (the tensor desc does). The initializer
forms are a list, a constant ``{value, valueCount}``, a sequence ``{valueStart, valueDelta, valueCount}``
accumulated step by step in the element type, a file ``{sourcePath}`` (``.npy`` or raw bytes, relative to the
model's folder, else to the current directory) and ``"deferred"``. The buffer is the initial bytes rounded up to
a multiple of 4, or exactly ``sizeInBytes``.

The resources of a model hold at most :data:`MAX_RESOURCE_BYTES` (4 GiB) in all. Each size is checked before
anything is allocated (``valueCount`` x the element size, ``sizeInBytes``, the size of a source file), so a typo
such as ``"valueCount": 4000000000`` is an error at that member, not gigabytes of memory.

FLOAT16 values are converted as DxDispatch converts them: the JSON number (a double) becomes a float, then a
half by truncation toward zero (half.hpp 1.12 with its default rounding style), not by NumPy's
round-to-nearest-even: 0.7 is stored as 0x3999, not 0x399A, and 65520 as 65504, not infinity.
"""

from __future__ import annotations

import io
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..enums import TensorDataType
from ..errors import InvalidArgumentError
from ..tensor import data_type_of, element_bits, numpy_dtype
from .descs import read_enum
from .jsonc import Node

__all__ = ["Resource", "read_resource", "float16_truncated", "sequence", "pack", "MAX_RESOURCE_BYTES"]

#: The bytes the resources of one model may hold in all (4 GiB). DirectML's tensors hold at most 2^32 - 1
#: elements; a NumPy model runner needs no more, and a mistyped size must not exhaust the machine's memory.
MAX_RESOURCE_BYTES = 2**32

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


def read_resource(name: str, node: Node, base_dir: Path, room: int = MAX_RESOURCE_BYTES) -> Resource:
    """The resource ``node``; ``room`` is how many bytes the model's resources read before it leave."""
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
    explicit = node.optional("sizeInBytes", lambda n: _fits(n, n.uint(64), room, "sizeInBytes is"), None)
    data, data_type = _initial_values(node, values, data_type, base_dir, room)
    if not data:
        raise values.error("the initial values are empty; a resource needs at least one value")
    return Resource(name, data_type, data, _size_in_bytes(node, len(data), explicit, room), node)


def _fits(node: Node, size: int, room: int, what: str) -> int:
    """``size`` when it fits in ``room``, the bytes the model's resources have left (checked before allocating)."""
    if size > room:
        left = f"the {room} bytes left of " if room < MAX_RESOURCE_BYTES else ""
        raise node.error(
            f"{what} {size} bytes, more than {left}the 4 GiB ({MAX_RESOURCE_BYTES} bytes) that the resources of a "
            "model may hold in all"
        )
    return size


def _initial_values(resource: Node, values: Node, data_type: T, base_dir: Path, room: int) -> tuple[bytes, T]:
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
        count = _value_count(resource, values, data_type, "constant", room)
        return pack([read_scalar(values.require("value"), data_type)], data_type) * count, data_type
    if values.get("valueStart") is not None:
        count = _value_count(resource, values, data_type, "sequence", room)
        start, delta = (read_scalar(values.require(k), data_type) for k in ("valueStart", "valueDelta"))
        return sequence(start, delta, count, data_type).tobytes(), data_type
    if values.get("sourcePath") is not None:
        return _from_file(resource, values.require("sourcePath"), data_type, base_dir, room)
    raise values.error(f"unknown initializer: expected {_INITIALIZER_FORMS}")


def _known_type(resource: Node, data_type: T, form: str) -> None:
    if data_type == T.UNKNOWN:
        raise resource.require("initialValuesDataType").error(
            f"a {form} initializer needs a data type other than UNKNOWN"
        )


def _value_count(resource: Node, values: Node, data_type: T, form: str, room: int) -> int:
    """``valueCount`` of a constant or a sequence, whose bytes must fit in ``room``."""
    _known_type(resource, data_type, form)
    node = values.require("valueCount")
    count = node.uint()
    _fits(node, count * (element_bits(data_type) // 8), room, f"{count} values of {data_type.name} take")
    return count


def _size_in_bytes(resource: Node, data_size: int, explicit: int | None, room: int) -> int:
    """``sizeInBytes`` as given, else the data size rounded up to 4; the initial values must fit."""
    size = explicit
    if size is None:
        size = _fits(resource.require("initialValues"), (data_size + 3) & ~3, room, "the initial values take")
    offset_node = resource.get("initialValuesOffsetInBytes")
    offset = 0 if offset_node is None else offset_node.uint(64)
    if data_size + offset > size:
        raise (resource.get("sizeInBytes") or offset_node).error(
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
    if data_type == T.FLOAT16:
        return _float16_sequence(start, delta, count)
    if data_type in _FLOATS:
        with np.errstate(over="ignore", invalid="ignore"):
            steps = np.full(count, delta, dtype)
            steps[:1] = start
            return np.cumsum(steps, out=steps)  # sequential adds in the element type
    # C++ adds in integer arithmetic, then narrows modulo 2**bits: the values repeat every 2**bits.
    unsigned = np.dtype(f"<u{dtype.itemsize}")
    modulus = 2 ** (8 * dtype.itemsize)
    period = np.arange(min(count, modulus), dtype=unsigned)
    period *= unsigned.type(delta % modulus)  # wraps, as unsigned arrays do
    period += unsigned.type(start % modulus)
    return _looped(period, 0, count).view(dtype)


def _float16_sequence(start: float, delta: float, count: int) -> np.ndarray:
    """Half + half is computed in float, then truncated (half.hpp). Each value depends only on the one before and
    a half has 65536 values, so the sequence repeats within 65536 steps: follow it until a value comes back,
    then repeat the cycle it closed."""
    first, step = float16_truncated([start, delta])
    with np.errstate(over="ignore", invalid="ignore"):
        every_half = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32)
        following = float16_truncated(every_half + np.float32(step)).view(np.uint16).tolist()
    bits, seen = [], {}  # the values so far (as bits), and where each first appears
    value = int(first.view(np.uint16))
    while len(bits) < count and value not in seen:
        seen[value] = len(bits)
        bits.append(value)
        value = following[value]
    loop_start = seen.get(value, 0)  # where the cycle closed by ``value`` starts, if the values came back to it
    return _looped(np.array(bits, np.uint16), loop_start, count).view(np.float16)


def _looped(head: np.ndarray, loop_start: int, count: int) -> np.ndarray:
    """``count`` values of a sequence that, after ``head``, repeats ``head[loop_start:]`` again and again."""
    if len(head) == count:
        return head
    result = np.empty(count, head.dtype)
    result[: len(head)] = head
    loop, rest = head[loop_start:], result[len(head) :]
    laps = len(rest) // len(loop)
    rest[: laps * len(loop)].reshape(laps, len(loop))[:] = loop
    rest[laps * len(loop) :] = loop[: len(rest) - laps * len(loop)]
    return result


def _from_file(resource: Node, source: Node, data_type: T, base_dir: Path, room: int) -> tuple[bytes, T]:
    """``{sourcePath}``: a .npy file (typed by its header) or raw bytes (typed by initialValuesDataType)."""
    path = _input_path(base_dir, source.file_path())
    suffix = path.suffix.lower()
    if suffix in (".jpg", ".png"):
        raise source.error(f"image initializers ({suffix}) are not supported by opendml; use a .npy file")
    raw = _read_file(source, path, room)
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


def _read_file(source: Node, path: Path, room: int) -> bytes:
    """The bytes of a regular file that fits in ``room`` (a FIFO could block, a device such as /dev/zero never end)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise source.error(f"{str(path)!r} is not a regular file")
        _fits(source, info.st_size, room, f"{str(path)!r} holds")
        return path.read_bytes()
    except OSError as error:
        raise source.error(f"cannot read {str(path)!r}: {error.strerror}") from None


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
