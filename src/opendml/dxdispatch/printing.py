"""How resources leave a run: DxDispatch's ``print`` lines, and ``writeFile`` files.

``print`` decodes a buffer with the resource's ``initialValuesDataType`` (whatever an operator wrote into it)
and shows as many elements as there were initial values, each as C++'s ``ostream <<`` shows it: ``%g`` with six
significant digits for floats (libstdc++ spells a NaN with its sign bit set ``-nan``), decimal for integers,
and for INT8/UINT8 the raw byte as a character. The ``numbers`` format prints INT8/UINT8 as numbers instead.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..enums import TensorDataType
from ..tensor import numpy_dtype
from .files import open_regular
from .resources import Resource

__all__ = ["PrintFormat", "print_text", "format_value", "write_file"]

_FLOATS = (TensorDataType.FLOAT16, TensorDataType.FLOAT32, TensorDataType.FLOAT64)
_BYTES = (TensorDataType.UINT8, TensorDataType.INT8)
_VALUES_PER_PIECE = 4096  # print_text formats this many values at a time: a resource may hold a billion


class PrintFormat(enum.Enum):
    DXDISPATCH = "dxdispatch"  # DxDispatch's exact text: INT8/UINT8 values are raw characters
    NUMBERS = "numbers"  # the same, with INT8/UINT8 values as numbers


def format_value(value: np.generic, data_type: TensorDataType, print_format: PrintFormat) -> str:
    """One element as DxDispatch prints it (or as a number, for bytes in the ``numbers`` format)."""
    if data_type in _FLOATS:
        number = float(value)
        if math.isnan(number):
            return "-nan" if math.copysign(1.0, number) < 0 else "nan"
        return format(number, "g")
    if data_type in _BYTES and print_format is PrintFormat.DXDISPATCH:
        # The byte itself; bytes that are not ASCII are surrogate-escaped, so a stream opened with
        # errors="surrogateescape" writes them back unchanged.
        return bytes([int(value) & 0xFF]).decode("utf-8", "surrogateescape")
    return str(int(value))


def print_text(resource: Resource, buffer: bytearray, verbose: bool, print_format: PrintFormat) -> Iterator[str]:
    """The output of a ``print`` command, newline included, in pieces (to write one by one).

    Verbose: a header line, then ``[<index>] <value> (0x<raw bits>)`` per element (index right-aligned to the
    width of the element count, hex upper-case and space-padded to two digits per byte), then an empty line.
    """
    dtype = numpy_dtype(resource.data_type)
    values = np.frombuffer(buffer, dtype, count=resource.element_count)
    raw = values.view(f"<u{dtype.itemsize}")
    width, digits = len(str(len(values))), 2 * dtype.itemsize
    yield f"Resource '{resource.name}':" + ("\n" if verbose else " ")
    for start in range(0, len(values), _VALUES_PER_PIECE):
        piece = slice(start, start + _VALUES_PER_PIECE)
        texts = [format_value(v, resource.data_type, print_format) for v in values[piece]]
        if verbose:
            yield "".join(
                f"[{i:>{width}}] {text} (0x{int(bits):>{digits}X})\n"
                for i, text, bits in zip(range(start, len(values)), texts, raw[piece])
            )
        else:
            yield (", " if start else "") + ", ".join(texts)
    yield "\n"


def write_file(resource: Resource, buffer: bytearray, target: Path, dimensions: tuple[int, ...] | None) -> Path:
    """Write the whole buffer to ``target`` (parent folders created) and return its absolute path.

    ``.npy``: a header of the resource's data type and ``dimensions`` (default: the buffer size over the element
    size), then the buffer; any other name: the raw bytes. Both include the padding, as in DxDispatch.
    """
    path = target.absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_regular(path, "wb") as file:
        if path.suffix.lower() == ".npy":
            shape = dimensions or (resource.size_in_bytes // resource.element_size,)
            header = {"descr": numpy_dtype(resource.data_type).str, "fortran_order": False, "shape": tuple(shape)}
            np.lib.format.write_array_header_1_0(file, header)
        file.write(buffer)
    return path
