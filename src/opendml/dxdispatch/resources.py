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
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..enums import TensorDataType
from ..errors import InvalidArgumentError
from ..tensor import data_type_of, element_bits, numpy_dtype
from .descs import read_enum
from .files import open_regular
from .jsonc import Node

__all__ = ["Resource", "Initial", "read_resource", "float16_truncated", "fill_sequence", "pack", "MAX_RESOURCE_BYTES"]

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
_CHUNK = 2**20  # elements a sequence is computed in at a time: its scratch memory stays small


@dataclass(frozen=True)
class Initial:
    """A resource's initial bytes, written on demand into each buffer made for it: a constant or a sequence of
    gigabytes never exists twice in memory (once as its values, once as the buffer)."""

    size: int  # in bytes
    fill: Callable[[np.ndarray], None]  # writes them into a uint8 array of ``size`` bytes

    @classmethod
    def of(cls, data: bytes | memoryview) -> Initial:
        """Bytes already in memory (a list, a file)."""
        return cls(len(data), lambda out: np.copyto(out, np.frombuffer(data, np.uint8)))


@dataclass(frozen=True, eq=False)
class Resource:
    """A buffer of the model: its initial bytes, its size and the type its values are printed as."""

    name: str
    data_type: TensorDataType  # initialValuesDataType; UNKNOWN for a mixed list or a deferred resource
    initial: Initial
    size_in_bytes: int
    node: Node

    @property
    def element_size(self) -> int | None:
        """Bytes per element of ``data_type``; None when it is UNKNOWN."""
        return None if self.data_type == T.UNKNOWN else element_bits(self.data_type) // 8

    @property
    def element_count(self) -> int:
        """The number of initial elements: what ``print`` shows (padding and rounding are not shown)."""
        return self.initial.size // self.element_size

    @property
    def initial_values(self) -> bytes:
        """The initial bytes (made anew at each call)."""
        return bytes(self.allocate()[: self.initial.size])

    def allocate(self) -> bytearray:
        """A fresh buffer holding the initial values at offset 0 and zeros after them."""
        buffer = bytearray(self.size_in_bytes)
        self.initial.fill(np.frombuffer(buffer, np.uint8, self.initial.size))
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
        return Resource(name, data_type, Initial.of(b""), 0, node)  # an ONNX output: no storage, as in DxDispatch
    explicit = node.optional("sizeInBytes", lambda n: _fits(n, n.uint(64), room, "sizeInBytes is"), None)
    initial, data_type = _initial_values(node, values, data_type, base_dir, room)
    if not initial.size:
        raise values.error("the initial values are empty; a resource needs at least one value")
    return Resource(name, data_type, initial, _size_in_bytes(node, initial.size, explicit, room), node)


def _fits(node: Node, size: int, room: int, what: str) -> int:
    """``size`` when it fits in ``room``, the bytes the model's resources have left (checked before allocating)."""
    if size > room:
        left = f"the {room} bytes left of " if room < MAX_RESOURCE_BYTES else ""
        raise node.error(
            f"{what} {size} bytes, more than {left}the 4 GiB ({MAX_RESOURCE_BYTES} bytes) that the resources of a "
            "model may hold in all"
        )
    return size


def _initial_values(resource: Node, values: Node, data_type: T, base_dir: Path, room: int) -> tuple[Initial, T]:
    """The initial bytes, and the data type (a .npy file brings its own)."""
    if isinstance(values.value, list):
        if data_type == T.UNKNOWN:
            return Initial.of(b"".join(map(_mixed_element, values.elements()))), data_type
        return Initial.of(pack(_list_values(values, data_type), data_type)), data_type
    if not isinstance(values.value, dict):
        raise values.expected(f'an array of values, an initializer object {_INITIALIZER_FORMS} or "deferred"')
    values.warn_unknown(("value", "valueCount", "valueStart", "valueDelta", "sourcePath"), "an initializer")
    if values.get("value") is not None:
        if values.first("valueStart", "sourcePath") is not None:
            raise values.error("value, valueStart and sourcePath are mutually exclusive")
        count = _value_count(resource, values, data_type, "constant", room)
        bits = int.from_bytes(pack([read_scalar(values.require("value"), data_type)], data_type), "little")
        fill = lambda out: out.view(_bits_dtype(data_type)).fill(bits)  # noqa: E731
        return Initial(count * _element_size(data_type), fill), data_type
    if values.get("valueStart") is not None:
        count = _value_count(resource, values, data_type, "sequence", room)
        start, delta = (read_scalar(values.require(k), data_type) for k in ("valueStart", "valueDelta"))
        fill = lambda out: fill_sequence(out.view(numpy_dtype(data_type)), start, delta, data_type)  # noqa: E731
        return Initial(count * _element_size(data_type), fill), data_type
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
    _fits(node, count * _element_size(data_type), room, f"{count} values of {data_type.name} take")
    return count


def _element_size(data_type: T) -> int:
    return element_bits(data_type) // 8


def _bits_dtype(data_type: T) -> np.dtype:
    """The unsigned little-endian dtype of ``data_type``'s size: its values as raw bits."""
    return np.dtype(f"<u{_element_size(data_type)}")


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


def _list_values(values: Node, data_type: T) -> np.ndarray:
    """The values of a list initializer, converted at once (a model may hold millions). Only the elements that are
    not plain numbers are read one by one; an error is raised at the first bad element, located."""
    items = values.value
    plain = {int, float} if data_type in _FLOATS else {int}  # bool is not int here: true is not a number
    if not set(map(type, items)) <= plain:
        items = [v if type(v) in plain else read_scalar(values.element(i), data_type) for i, v in enumerate(items)]
    if data_type in _FLOATS:
        return np.array(items, np.float64)  # as float(int) rounds; the parser has refused numbers beyond a double
    bits = element_bits(data_type)
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if data_type in _SIGNED else (0, 2**bits - 1)
    if items and not (low <= min(items) and max(items) <= high):
        read_scalar(values.element(next(i for i, v in enumerate(items) if not low <= v <= high)), data_type)
    return np.array(items, numpy_dtype(data_type))


def _mixed_element(element: Node) -> bytes:
    """One ``{"type": T, "value": v}`` of a mixed list (DxDispatch packs HLSL constants this way)."""
    type_node = element.require("type")
    data_type = read_enum(type_node, T)
    if data_type == T.FLOAT16 or element_bits(data_type) % 8 or data_type == T.UNKNOWN:
        raise type_node.error(f"{data_type.c_name} is not supported in a mixed list")
    return pack([read_scalar(element.require("value"), data_type)], data_type)


def pack(values: Sequence[int | float] | np.ndarray, data_type: T) -> bytes:
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


def fill_sequence(out: np.ndarray, start: int | float, delta: int | float, data_type: T) -> None:
    """``x = start; for each element of out: store x; x += delta``, every addition done in the element type.

    ``out`` is written in place, with scratch memory of a few megabytes whatever its size.
    """
    if data_type == T.FLOAT16:
        _float16_sequence(out, start, delta)
    elif data_type in _FLOATS:
        x, step = out.dtype.type(start), out.dtype.type(delta)
        with np.errstate(over="ignore", invalid="ignore"):
            for begin in range(0, len(out), _CHUNK):
                chunk = out[begin : begin + _CHUNK]
                chunk.fill(step)
                chunk[0] = x
                np.cumsum(chunk, out=chunk)  # sequential adds in the element type
                x = chunk[-1] + step
    else:
        # C++ adds in integer arithmetic, then narrows modulo 2**bits: x[i] = start + i * delta, wrapped. Unsigned
        # arrays wrap, so each doubling is one vectorized add: x[n + i] = x[i] + n * delta.
        bits = out.view(_bits_dtype(data_type))
        modulus = 2 ** (8 * bits.itemsize)
        first = min(len(bits), _CHUNK)
        bits[:first] = np.arange(first, dtype=np.uint64) * np.uint64(delta % modulus) + np.uint64(start % modulus)
        done = first
        while done < len(bits):
            n = min(done, len(bits) - done)
            np.add(bits[:n], bits.dtype.type(done * delta % modulus), out=bits[done : done + n])
            done += n


def _float16_sequence(out: np.ndarray, start: float, delta: float) -> None:
    """Half + half is computed in float, then truncated (half.hpp). Each value depends only on the one before and
    a half has 65536 values, so the sequence repeats within 65536 steps: follow it until a value comes back,
    then repeat the cycle it closed."""
    first, step = float16_truncated([start, delta])
    with np.errstate(over="ignore", invalid="ignore"):
        every_half = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32)
        following = float16_truncated(every_half + np.float32(step)).view(np.uint16).tolist()
    bits, seen = [], {}  # the values so far (as bits), and where each first appears
    value = int(first.view(np.uint16))
    while len(bits) < len(out) and value not in seen:
        seen[value] = len(bits)
        bits.append(value)
        value = following[value]
    loop_start = seen.get(value, 0)  # where the cycle closed by ``value`` starts, if the values came back to it
    _repeat_into(out.view(np.uint16), np.array(bits, np.uint16), loop_start)


def _repeat_into(out: np.ndarray, head: np.ndarray, loop_start: int) -> None:
    """Fill ``out`` with ``head``, then ``head[loop_start:]`` again and again."""
    out[: len(head)] = head
    loop, rest = head[loop_start:], out[len(head) :]
    laps = len(rest) // len(loop) if len(rest) else 0
    rest[: laps * len(loop)].reshape(laps, len(loop))[:] = loop
    rest[laps * len(loop) :] = loop[: len(rest) - laps * len(loop)]


def _from_file(resource: Node, source: Node, data_type: T, base_dir: Path, room: int) -> tuple[Initial, T]:
    """``{sourcePath}``: a .npy file (typed by its header) or raw bytes (typed by initialValuesDataType)."""
    written = source.file_path()
    suffix = Path(written).suffix.lower()
    if suffix in (".jpg", ".png"):
        raise source.error(f"image initializers ({suffix}) are not supported by opendml; use a .npy file")
    path, raw = _read_file(source, base_dir, written, room)
    if suffix != ".npy":
        _known_type(resource, data_type, "raw file")
        return Initial.of(raw), data_type
    data, file_type = _npy_data(source, path, raw)
    if data_type not in (T.UNKNOWN, file_type):
        raise source.error(f"{str(path)!r} holds {file_type.name} data, but initialValuesDataType is {data_type.name}")
    return Initial.of(data), file_type


def _read_file(source: Node, base_dir: Path, written: str, room: int) -> tuple[Path, bytes]:
    """The path and bytes of a regular file that fits in ``room`` (a FIFO could block, a device such as /dev/zero
    never end). Every OSError is this source's problem (a name too long, a folder that cannot be read...)."""
    path = Path(written)
    try:
        path = _input_path(base_dir, written)
        with open_regular(path) as file:
            size = os.fstat(file.fileno()).st_size
            _fits(source, size, room, f"{str(path)!r} holds")
            return path, file.read(size)
    except OSError as error:
        raise source.error(f"cannot read {str(path)!r}: {error.strerror}") from None


_NPY_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def _npy_data(source: Node, path: Path, raw: bytes) -> tuple[memoryview, T]:
    """The data bytes of a .npy file and their type. The header is checked against the file's size before any
    array is made: a header can claim any shape, which ``np.load`` would allocate before noticing."""
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        if version not in _NPY_HEADER_READERS:
            raise ValueError(f"format version {version[0]}.{version[1]} is not supported (1.0 and 2.0 are)")
        shape, fortran_order, dtype = _NPY_HEADER_READERS[version](stream)
    except (ValueError, OSError, EOFError) as error:
        raise source.error(f"{str(path)!r} is not a valid .npy file: {error}") from None
    try:
        file_type = data_type_of(dtype)
    except InvalidArgumentError as error:
        raise source.error(f"{str(path)!r}: {error}") from None
    if fortran_order and sum(size > 1 for size in shape) > 1:
        raise source.error(f"{str(path)!r} is stored in Fortran order; write it in C order")
    data = memoryview(raw)[stream.tell() :]
    declared = math.prod(shape) * dtype.itemsize
    if declared != len(data):
        raise source.error(
            f"{str(path)!r} is not a valid .npy file: its header declares shape {shape} of {dtype.str}, "
            f"{declared} bytes, but {len(data)} bytes follow the header; write the file again with numpy.save"
        )
    return data, file_type


def _input_path(base_dir: Path, source: str) -> Path:
    """As DxDispatch resolves input files: next to the model if it exists there, else from the current folder."""
    beside_model = base_dir / source
    try:
        found = beside_model.exists()
    except OSError:  # a name too long, a folder that cannot be searched: opening the file says why
        found = False
    return beside_model if found else Path(source).absolute()
