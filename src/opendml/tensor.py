"""DirectML's tensor model: ``DML_BUFFER_TENSOR_DESC`` and ``DMLCalcBufferTensorSize``.

A buffer tensor is a view of bytes: a data type, sizes and strides *in elements* (0 broadcasts, larger than
packed pads or permutes), and the size in bytes of the buffer range it may touch. This module holds that
description and the rules that need no operator to check; :mod:`opendml.binding` reads and writes buffers
through it.
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .enums import TENSOR_DIMENSION_COUNT_MAX1, TensorDataType, TensorFlags
from .errors import InvalidArgumentError

__all__ = [
    "BufferTensorDesc",
    "calc_buffer_tensor_size",
    "packed_strides",
    "element_bits",
    "numpy_dtype",
    "data_type_of",
]

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1

# Element width in bits and the NumPy dtype (always little-endian, as DirectML buffers are).
_DATA_TYPES: dict[TensorDataType, tuple[int, str | None]] = {
    TensorDataType.UNKNOWN: (0, None),
    TensorDataType.FLOAT32: (32, "<f4"),
    TensorDataType.FLOAT16: (16, "<f2"),
    TensorDataType.UINT32: (32, "<u4"),
    TensorDataType.UINT16: (16, "<u2"),
    TensorDataType.UINT8: (8, "u1"),
    TensorDataType.INT32: (32, "<i4"),
    TensorDataType.INT16: (16, "<i2"),
    TensorDataType.INT8: (8, "i1"),
    TensorDataType.FLOAT64: (64, "<f8"),
    TensorDataType.UINT64: (64, "<u8"),
    TensorDataType.INT64: (64, "<i8"),
    TensorDataType.UINT4: (4, None),  # no NumPy dtype: packed two to a byte
    TensorDataType.INT4: (4, None),
}
_BY_NUMPY = {np.dtype(d): t for t, (_, d) in _DATA_TYPES.items() if d is not None}


def element_bits(data_type: TensorDataType) -> int:
    """Width of one element in bits; 0 for UNKNOWN."""
    return _DATA_TYPES[data_type][0]


def numpy_dtype(data_type: TensorDataType) -> np.dtype:
    """The NumPy dtype that holds ``data_type`` bit for bit (little-endian)."""
    name = _DATA_TYPES[data_type][1]
    if name is None:
        raise InvalidArgumentError(f"{data_type.c_name} has no NumPy equivalent")
    return np.dtype(name)


def data_type_of(dtype: np.dtype) -> TensorDataType:
    """The DirectML data type of a NumPy dtype (native or little-endian byte order only)."""
    dtype = np.dtype(dtype)
    if dtype.byteorder == ">" or dtype not in _BY_NUMPY:
        supported = ", ".join(sorted({str(d) for d in _BY_NUMPY}))
        raise InvalidArgumentError(f"NumPy dtype {dtype.str} has no DirectML tensor data type (supported: {supported})")
    return _BY_NUMPY[dtype]


def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements: each dimension's stride is the product of the sizes after it."""
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def calc_buffer_tensor_size(
    data_type: TensorDataType, sizes: Sequence[int], strides: Sequence[int] | None = None
) -> int:
    """``DMLCalcBufferTensorSize``, exactly as DirectMLX computes it.

    Packed: ``prod(sizes) * element size``. Strided: ``(dot(sizes - 1, strides) + 1) * element size``, with the
    dot product accumulated in a 32-bit UINT as DirectMLX does (it wraps; validation rejects descriptors whose
    last element lies beyond 2**32 - 1, so a valid descriptor never sees the wrap). Sizes are counted in bits,
    then rounded up to bytes and to a multiple of 4 ("all bound buffers must have a DWORD-aligned size").
    An unknown data type gives 0.
    """
    bits = element_bits(TensorDataType(data_type))
    if bits == 0:
        return 0
    if strides is None:
        count = 1
        for size in sizes:  # wrap as the UINT64 product does (and never build a huge integer)
            count = (count * size) & UINT64_MAX
    else:
        index_of_last = 0
        for size, stride in zip(sizes, strides):
            index_of_last = (index_of_last + ((size - 1) & UINT32_MAX) * stride) & UINT32_MAX
        count = index_of_last + 1
    size_in_bits = (count * bits) & UINT64_MAX  # DirectMLX's UINT64 arithmetic wraps at every step
    size_in_bytes = ((size_in_bits + 7) & UINT64_MAX) // 8
    return ((size_in_bytes + 3) & UINT64_MAX) & ~3


def as_uint(value: object, what: str, limit: int) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"{what} must be an integer, not the bool {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise InvalidArgumentError(f"{what} must be an integer, not {type(value).__name__} {value!r}") from None
    if number < 0:
        raise InvalidArgumentError(f"{what} is {number}, but it is unsigned (at least 0)")
    if number > limit:
        raise InvalidArgumentError(f"{what} is {number}, more than its C type holds ({limit})")
    return number


def as_uint_tuple(values: object, what: str) -> tuple[int, ...]:
    """A sequence (or any iterable, read once) of UINTs as a tuple; long integer arrays are checked at once."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidArgumentError(f"{what} must be a sequence of integers, not {type(values).__name__} {values!r}")
    if not isinstance(values, (list, tuple, np.ndarray)):
        values = list(values)  # an iterator is read once, here
    if len(values) > 64:  # a fast path for long arrays; elements one by one only to name a bad one
        array = np.asarray(values) if not isinstance(values, np.ndarray) else values
        if (
            array.ndim == 1
            and array.dtype.kind in "iu"
            and (array.size == 0 or (array.min() >= 0 and array.max() <= UINT32_MAX))
        ):
            return tuple(array.tolist())
    return tuple(as_uint(v, f"{what}[{i}]", UINT32_MAX) for i, v in enumerate(values))


def as_enum(enum_type: type, value: object, what: str):
    """``enum_type(value)``, or an InvalidArgumentError naming ``what`` and the valid members."""
    if isinstance(value, enum_type):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidArgumentError(f"{what} must be a {enum_type.__name__}, not {type(value).__name__} {value!r}")
    try:
        member = enum_type(int(value))
        if isinstance(member, enum.Flag) and int(value) & ~sum(enum_type):
            raise ValueError(value)  # IntFlag keeps unknown bits; DirectML rejects them
        return member
    except ValueError:
        valid = ", ".join(f"{m.name} ({m.value})" for m in enum_type)
        raise InvalidArgumentError(f"{what} is {value}, which is not a {enum_type.__name__} ({valid})") from None


@dataclass(frozen=True)
class BufferTensorDesc:
    """``DML_BUFFER_TENSOR_DESC``: how an operator reads or writes one tensor in a buffer.

    ``strides=None`` means packed row-major. ``total_tensor_size_in_bytes=None`` is filled with
    :func:`calc_buffer_tensor_size`. ``DimensionCount`` is ``len(sizes)``. Construction checks only what the C
    struct could not hold (negative or non-integer values, strides of another length); the DirectML rules
    (no zero sizes, at most 8 dimensions, a large enough total size...) are checked by
    ``Device.create_operator``, where the operator and the feature level are known.
    """

    data_type: TensorDataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    total_tensor_size_in_bytes: int = field(default=None)  # type: ignore[assignment]
    guaranteed_base_offset_alignment: int = 0
    flags: TensorFlags = TensorFlags.NONE

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "data_type", as_enum(TensorDataType, self.data_type, "BufferTensorDesc.DataType"))
        set_(self, "flags", as_enum(TensorFlags, self.flags, "BufferTensorDesc.Flags"))
        sizes = as_uint_tuple(self.sizes, "BufferTensorDesc.Sizes")
        set_(self, "sizes", sizes)
        if self.strides is not None:
            strides = as_uint_tuple(self.strides, "BufferTensorDesc.Strides")
            if len(strides) != len(sizes):
                raise InvalidArgumentError(
                    f"BufferTensorDesc.Strides has {len(strides)} entries but Sizes has {len(sizes)}; "
                    "both are DimensionCount long"
                )
            set_(self, "strides", strides)
        if self.total_tensor_size_in_bytes is None:
            set_(self, "total_tensor_size_in_bytes", calc_buffer_tensor_size(self.data_type, sizes, self.strides))
        else:
            total = as_uint(self.total_tensor_size_in_bytes, "BufferTensorDesc.TotalTensorSizeInBytes", UINT64_MAX)
            set_(self, "total_tensor_size_in_bytes", total)
        alignment = as_uint(
            self.guaranteed_base_offset_alignment, "BufferTensorDesc.GuaranteedBaseOffsetAlignment", UINT32_MAX
        )
        set_(self, "guaranteed_base_offset_alignment", alignment)

    @property
    def dimension_count(self) -> int:
        return len(self.sizes)

    @property
    def element_count(self) -> int:
        return math.prod(self.sizes)

    @property
    def effective_strides(self) -> tuple[int, ...]:
        """The strides in elements, packed ones when ``strides`` is None."""
        return packed_strides(self.sizes) if self.strides is None else self.strides

    @property
    def is_packed(self) -> bool:
        """True when the tensor is laid out row-major without gaps (strides None or equal to packed)."""
        return self.strides is None or self.strides == packed_strides(self.sizes)

    @classmethod
    def like(cls, array: np.ndarray) -> BufferTensorDesc:
        """A packed descriptor for ``array``'s dtype and shape."""
        return cls(data_type_of(array.dtype), tuple(array.shape))


def tensor_desc_problems(desc: BufferTensorDesc) -> list[tuple[str, str | None, int | None]]:
    """The rules of DML_BUFFER_TENSOR_DESC that hold for every operator: ``(text, member, index)`` per problem.

    ``text`` starts with the C member it is about (``Sizes[1] ...``) or, for the tensor as a whole, with a verb
    (``has ...``); the caller prefixes the operator and tensor.
    """
    problems: list[tuple[str, str | None, int | None]] = []
    bits = element_bits(desc.data_type)
    if desc.data_type == TensorDataType.UNKNOWN:
        problems.append(
            ("DataType is DML_TENSOR_DATA_TYPE_UNKNOWN; a tensor needs a known data type", "DataType", None)
        )
    if not 1 <= desc.dimension_count <= TENSOR_DIMENSION_COUNT_MAX1:
        problems.append((
            f"DimensionCount is {desc.dimension_count}, but it must be 1 to "
            f"{TENSOR_DIMENSION_COUNT_MAX1} (DML_TENSOR_DIMENSION_COUNT_MAX1)", "DimensionCount", None))  # fmt: skip
        return problems  # DirectML reads no further than the count: neither do the per-size rules
    for i, size in enumerate(desc.sizes):
        if size == 0:
            problems.append((f"Sizes[{i}] is 0; a size of zero in any dimension is invalid", "Sizes", i))
    if problems:
        return problems  # the size rules below assume a well-formed shape
    if desc.element_count > UINT32_MAX:
        problems.append(
            (f"has {desc.element_count} elements; a tensor may hold at most 2^32-1 (4294967295)", None, None)
        )
    index_of_last = sum((s - 1) * t for s, t in zip(desc.sizes, desc.effective_strides))
    if index_of_last > UINT32_MAX:
        problems.append((
            f"Strides place the last element at index {index_of_last}, beyond the 32-bit element index "
            "DirectML computes sizes with (2^32-1)", "Strides", None))  # fmt: skip
        return problems
    minimum = calc_buffer_tensor_size(desc.data_type, desc.sizes, desc.strides)
    total = desc.total_tensor_size_in_bytes
    if total < minimum:
        problems.append((
            f"TotalTensorSizeInBytes is {total}, below the {minimum} bytes that "
            "DMLCalcBufferTensorSize gives for these Sizes and Strides", "TotalTensorSizeInBytes", None))  # fmt: skip
    elif total % 4:
        problems.append((
            f"TotalTensorSizeInBytes is {total}; it must be a multiple of 4 "
            "(DirectML requires DWORD-aligned buffer sizes)", "TotalTensorSizeInBytes", None))  # fmt: skip
    alignment = desc.guaranteed_base_offset_alignment
    if alignment and (alignment & (alignment - 1) or alignment * 8 < bits):
        problems.append((
            f"GuaranteedBaseOffsetAlignment is {alignment}; it must be 0 or a power of two at least the element "
            f"size ({max(bits // 8, 1)} bytes)", "GuaranteedBaseOffsetAlignment", None))  # fmt: skip
    return problems


def scalar_union_problem(value: int | float, data_type: TensorDataType) -> str | None:
    """Why ``value`` cannot be held by a DML_SCALAR_UNION read as ``data_type`` (None when it can).

    An integer type holds integers of its range exactly (``3.0`` is the integer 3; ``2.5`` is refused). A float
    type holds any number, rounded to nearest as C's assignment to ``.Float32`` rounds, NaN and infinities
    included; a finite value that would round to infinity is refused.
    """
    if _DATA_TYPES[data_type][1] is None:  # UNKNOWN, INT4, UINT4
        return f"cannot be read: its data type is {TensorDataType(data_type).c_name}"
    dtype = numpy_dtype(data_type)
    if dtype.kind == "f":
        if isinstance(value, float) and not math.isfinite(value):
            return None
        try:
            with np.errstate(over="ignore"):
                rounded = np.array(float(value), np.float64).astype(dtype)
        except OverflowError:  # an int beyond double's range
            rounded = np.inf
        if np.isinf(rounded):
            return f"is {value}, beyond the range of {data_type.name} (largest finite {float(np.finfo(dtype).max):g})"
        return None
    info = np.iinfo(dtype)
    if isinstance(value, float) and not value.is_integer():
        return f"is {value}, which {data_type.name} cannot hold exactly (an integer type)"
    if not info.min <= value <= info.max:
        return f"is {value}, outside the range of {data_type.name} [{info.min}, {info.max}]"
    return None


def scalar_union_value(value: int | float, data_type: TensorDataType) -> np.generic:
    """The scalar a valid DML_SCALAR_UNION holds, as a NumPy scalar of ``data_type`` (floats rounded to nearest)."""
    dtype = numpy_dtype(data_type)
    if dtype.kind == "f":
        return np.array(float(value), np.float64).astype(dtype)[()]
    return np.array(int(value), dtype)[()]


def overlap_problem(sizes: Sequence[int], strides: Sequence[int]) -> str | None:
    """A message when two elements of a tensor with these sizes and strides (in elements) share memory."""
    dims = sorted((t, s) for s, t in zip(sizes, strides) if s > 1)
    extent = 0  # elements spanned by the dimensions checked so far, minus one
    for stride, size in dims:
        if stride == 0:
            return f"Strides give dimension of size {size} a stride of 0, so its elements would share memory"
        if stride <= extent:
            break
        extent += (size - 1) * stride
    else:
        return None
    # Strides interleave: decide exactly by listing every element's offset (bounded by the element cap).
    if math.prod(sizes) <= 1 << 22:
        offsets = np.zeros(1, dtype=np.int64)
        for size, stride in zip(sizes, strides):
            offsets = (offsets[:, None] + np.arange(size, dtype=np.int64) * stride).ravel()
        if np.unique(offsets).size == offsets.size:
            return None
        return f"Strides {tuple(strides)} map two elements of Sizes {tuple(sizes)} to the same memory"
    return (
        f"Strides {tuple(strides)} interleave dimensions of Sizes {tuple(sizes)}; opendml cannot prove that "
        "no two output elements share memory for a tensor this large"
    )


def output_overlap_problem(desc: BufferTensorDesc) -> str | None:
    """A message when two elements of ``desc`` share memory (invalid for an output), else None."""
    return overlap_problem(desc.sizes, desc.effective_strides)
