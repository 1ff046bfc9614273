"""DirectML's memory model: bind byte ranges, read and write tensors through their strides, refuse hazards.

An operator never sees an array: it sees a range of bytes (``DML_BUFFER_BINDING``) and a buffer tensor
description that says how to read it. :class:`TensorPlan` holds what a compiled operator needs per tensor
and turns a binding into a NumPy view, after proving that every element lies inside the bound range; the view
is built by NumPy's own bounds-checked constructor, never by unchecked pointer arithmetic.
"""

from __future__ import annotations

import contextlib
import math
import mmap
from dataclasses import dataclass
from typing import Any

import numpy as np

from .enums import MINIMUM_BUFFER_TENSOR_ALIGNMENT
from .errors import InvalidArgumentError
from .tensor import UINT64_MAX, BufferTensorDesc, as_uint, numpy_dtype, overlap_problem

__all__ = ["BufferBinding", "TensorPlan", "check_hazards"]

#: The ndarray subclasses whose meaning is all in their memory, bound as the plain ndarray they view (no copy):
#: a memmap is a file's pages; a matrix is a 2-D array whose indexing and operators differ from an ndarray's,
#: which kernels must not meet. Any other subclass may carry what its buffer does not hold (a masked array's
#: mask, a quantity's units), which opendml cannot honour, so it is refused.
PLAIN_SUBCLASSES = (np.memmap, np.matrix)


@dataclass(frozen=True, eq=False)
class BufferBinding:
    """``DML_BUFFER_BINDING``: ``size_in_bytes`` bytes of ``buffer`` from ``offset`` (default: the rest).

    ``buffer`` is any C-contiguous object with the buffer protocol: a NumPy array of any dtype (read as bytes),
    a ``bytearray``, a ``memoryview``; outputs need a writable one.
    """

    buffer: Any
    offset: int = 0
    size_in_bytes: int | None = None


@dataclass(frozen=True)
class Bound:
    """A tensor bound for one execution: the view the kernel uses and the byte region it was bound to."""

    view: np.ndarray
    region: tuple[int, int]  # absolute addresses [start, end) of the bound range
    name: str


class TensorPlan:
    """What executing needs to know about one tensor field of a compiled operator."""

    def __init__(self, operator_name: str, c_name: str, desc: BufferTensorDesc, is_output: bool):
        self.where = f"{operator_name}: {c_name}"
        self.c_name = c_name
        self.desc = desc
        self.is_output = is_output
        self.dtype = numpy_dtype(desc.data_type)
        self.shape = desc.sizes
        self.byte_strides = tuple(s * self.dtype.itemsize for s in desc.effective_strides)
        # Buffer tensors are at least 16-byte aligned; GuaranteedBaseOffsetAlignment can only promise more.
        self.alignment = max(desc.guaranteed_base_offset_alignment, MINIMUM_BUFFER_TENSOR_ALIGNMENT)

    def allocate(self) -> Bound:
        """A fresh array for an output the caller left unbound (packed descriptors only)."""
        if not self.desc.is_packed:
            raise InvalidArgumentError(
                f"{self.where} has Strides {self.desc.strides}, so opendml cannot choose its memory: "
                "bind the output buffer with a BufferBinding"
            )
        return self._bound_array(empty_output(self.shape, self.dtype))

    def bind(self, value: Any) -> Bound:
        if value is None and self.is_output:
            return self.allocate()
        if isinstance(value, BufferBinding):
            return self._bind_buffer(value)
        if isinstance(value, np.ndarray):
            return self._bind_array(self._plain(value))
        raise InvalidArgumentError(
            f"{self.where} must be bound to a numpy.ndarray or a BufferBinding, not {type(value).__name__}"
        )

    def _bind_array(self, array: np.ndarray) -> Bound:
        """An array is bound by value: it must be exactly the tensor (dtype, shape; a packed descriptor)."""
        if not self.desc.is_packed:
            raise InvalidArgumentError(
                f"{self.where} has Strides {self.desc.strides}: an array has no strides in DirectML's sense; "
                "bind the buffer that holds the tensor with BufferBinding(buffer, offset)"
            )
        if array.dtype != self.dtype:
            raise InvalidArgumentError(
                f"{self.where} is {self.desc.data_type.name}, so it takes a {self.dtype.str} array, "
                f"not {array.dtype.str} (opendml never casts)"
            )
        if array.shape != self.shape:
            raise InvalidArgumentError(f"{self.where} has Sizes {self.shape}, but the array's shape is {array.shape}")
        if self.is_output:
            if not array.flags.writeable:
                raise InvalidArgumentError(f"{self.where}: the output array is read-only")
            if not (array.flags.c_contiguous or array.flags.f_contiguous):
                problem = _array_overlap_problem(array)
                if problem:
                    raise InvalidArgumentError(f"{self.where}: the output array's {problem}")
        return self._bound_array(array)

    def _bound_array(self, array: np.ndarray) -> Bound:
        start, end = np.lib.array_utils.byte_bounds(array)
        return Bound(self._guard(array), (start, end), self.c_name)

    def _plain(self, array: np.ndarray) -> np.ndarray:
        """``array`` as a plain ndarray viewing the same memory; a subclass outside PLAIN_SUBCLASSES is refused."""
        if type(array) is np.ndarray:
            return array
        if isinstance(array, PLAIN_SUBCLASSES):
            return array.view(np.ndarray)
        kind = f"{type(array).__module__}.{type(array).__qualname__}"
        raise InvalidArgumentError(
            f"{self.where}: a {kind} may mean more than its memory holds (a mask, units), and opendml reads only "
            "memory; bind a plain numpy.ndarray (a masked array's x.filled(value), or np.asarray(x) to ignore what "
            "the subclass adds)"
        )

    def _bind_buffer(self, binding: BufferBinding) -> Bound:
        buffer = self._plain(binding.buffer) if isinstance(binding.buffer, np.ndarray) else binding.buffer
        try:
            memory = memoryview(buffer)
        except TypeError:
            raise InvalidArgumentError(
                f"{self.where}: BufferBinding.buffer must support the buffer protocol (a NumPy array, bytearray, "
                f"memoryview), not {type(binding.buffer).__name__}"
            ) from None
        except ValueError as error:  # e.g. a datetime64 array, which NumPy cannot export as memory
            raise InvalidArgumentError(
                f"{self.where}: BufferBinding.buffer cannot be read as memory: {error}"
            ) from None
        if "O" in memory.format:  # Python object pointers: reading them as numbers, or writing them, is unsafe
            raise InvalidArgumentError(f"{self.where}: BufferBinding.buffer holds Python objects, not plain memory")
        if not memory.c_contiguous:
            raise InvalidArgumentError(f"{self.where}: BufferBinding.buffer must be C-contiguous memory")
        if self.is_output and memory.readonly:
            raise InvalidArgumentError(f"{self.where}: an output must be bound to a writable buffer")
        memory = memory.cast("B") if memory.ndim != 1 or memory.format != "B" else memory
        offset = as_uint(binding.offset, f"{self.where}: BufferBinding.Offset", UINT64_MAX)
        if offset > memory.nbytes:
            raise InvalidArgumentError(
                f"{self.where}: BufferBinding.Offset {offset} lies beyond the {memory.nbytes}-byte buffer"
            )
        size = memory.nbytes - offset if binding.size_in_bytes is None else binding.size_in_bytes
        size = as_uint(size, f"{self.where}: BufferBinding.SizeInBytes", UINT64_MAX)
        if offset + size > memory.nbytes:
            raise InvalidArgumentError(
                f"{self.where}: the bound range [{offset}, {offset + size}) runs past the end of the "
                f"{memory.nbytes}-byte buffer"
            )
        if offset % self.alignment:
            rule = (
                f"GuaranteedBaseOffsetAlignment ({self.alignment})"
                if self.alignment > MINIMUM_BUFFER_TENSOR_ALIGNMENT
                else f"DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT ({MINIMUM_BUFFER_TENSOR_ALIGNMENT})"
            )
            raise InvalidArgumentError(f"{self.where}: BufferBinding.Offset {offset} is not a multiple of {rule}")
        if size < self.desc.total_tensor_size_in_bytes:
            raise InvalidArgumentError(
                f"{self.where}: the binding's SizeInBytes is too small: {size} was provided, but "
                f"TotalTensorSizeInBytes is {self.desc.total_tensor_size_in_bytes}"
            )
        window = memory[offset : offset + size]
        # NumPy's constructor re-checks that every strided element lies inside the window.
        view = np.ndarray(self.shape, self.dtype, buffer=window, strides=self.byte_strides)
        start = np.frombuffer(memory, np.uint8).ctypes.data + offset
        return Bound(self._guard(view), (start, start + size), self.c_name)

    def _guard(self, view: np.ndarray) -> np.ndarray:
        if not self.is_output and view.flags.writeable:
            view = view.view()
            view.flags.writeable = False  # DirectML never writes an input; neither may a kernel
        return view


def check_hazards(
    operator_name: str, inputs: list[Bound], outputs: list[Bound], in_place: bool | tuple[str, ...]
) -> None:
    """DirectML's binding-hazard rules (BindInputs, DirectML 1.7+).

    Inputs may overlap each other freely. An output may overlap an input only when the two bound ranges are
    identical and the operator supports in-place execution (``in_place``: True for any input, or the C names of
    the inputs the output may alias); any other overlap with an output is invalid.
    """

    def overlaps(a: Bound, b: Bound) -> bool:
        return a.region[0] < b.region[1] and b.region[0] < a.region[1]

    for i, out in enumerate(outputs):
        for other in outputs[i + 1 :]:
            if overlaps(out, other):
                raise InvalidArgumentError(f"{operator_name}: outputs {out.name} and {other.name} overlap in memory")
        for source in inputs:
            if not overlaps(out, source):
                continue
            if out.region != source.region:
                raise InvalidArgumentError(
                    f"{operator_name}: {out.name} partially overlaps {source.name}; an input and an output may "
                    "share memory only when their bound ranges are identical"
                )
            if not in_place:
                raise InvalidArgumentError(
                    f"{operator_name}: {out.name} is bound to the same memory as {source.name}, but the operator "
                    "does not support in-place execution"
                )
            if in_place is not True and source.name not in in_place:
                raise InvalidArgumentError(
                    f"{operator_name}: {out.name} is bound to the same memory as {source.name}, but the operator "
                    f"runs in place only over {' or '.join(in_place)}"
                )


HUGE_PAGE = 2 << 20
#: Fresh outputs larger than this get memory that transparent huge pages can back. Smaller ones come from
#: np.empty: glibc serves them from freed heap memory, already faulted in, which no fresh page beats; above
#: glibc's largest mmap threshold (32 MiB) every np.empty is a fresh mapping faulted 4 KiB at a time. Measured on
#: the 2-core machine, 64 MiB output + copy: 18-22 ms here against 24-31 ms with np.empty (a loaded machine).
HUGE_PAGE_MIN_BYTES = 32 << 20


def empty_output(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """``np.empty``, except that large arrays start on a 2 MiB boundary of an anonymous mapping advised
    MADV_HUGEPAGE, so that the kernel can fault them in 2 MiB at a time (where THP is enabled or "madvise")."""
    nbytes = math.prod(shape) * dtype.itemsize  # (math.prod: np.prod costs microseconds on a tiny shape)
    advise = getattr(mmap, "MADV_HUGEPAGE", None)
    if nbytes <= HUGE_PAGE_MIN_BYTES or advise is None:
        return np.empty(shape, dtype)
    memory = mmap.mmap(-1, nbytes + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # (shared is tmpfs: slow)
    raw = np.frombuffer(memory, np.uint8)
    start = -raw.ctypes.data % HUGE_PAGE
    with contextlib.suppress(OSError):  # a kernel without THP: plain pages
        memory.madvise(advise, start, nbytes - nbytes % HUGE_PAGE or HUGE_PAGE)
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def _array_overlap_problem(array: np.ndarray) -> str | None:
    """Why two elements of a (non-contiguous) output array share memory, or None."""
    if any(stride % array.itemsize for stride in array.strides):
        return f"strides {array.strides} are not multiples of its item size ({array.itemsize} bytes)"
    return overlap_problem(array.shape, [abs(stride) // array.itemsize for stride in array.strides])
