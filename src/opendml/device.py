"""The DirectML object model: a device at a feature level creates operators and compiles them for execution."""

from __future__ import annotations

import os
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import kernels
from .binding import Bound, BufferBinding, TensorPlan, check_hazards, empty_output
from .enums import CreateDeviceFlags, ExecutionFlags, FeatureLevel
from .errors import InvalidArgumentError, UnsupportedError
from .schema import OperatorDesc, schema_of
from .tensor import as_enum
from .validation import operator_problems

try:
    from ._core import _native
except ImportError:  # a pure-Python install: the NumPy kernels, and execute's Python paths
    _native = None

__all__ = ["Device", "Operator", "CompiledOperator"]


class Device:
    """``IDMLDevice``, behaving as a DirectML runtime whose highest feature level is ``feature_level``.

    ``Device()`` is at the highest level opendml implements (:attr:`MAX_FEATURE_LEVEL`);
    ``Device(feature_level=FeatureLevel.FL_3_0)`` refuses, as such a runtime would, every operator, data type
    or dimension count that arrived later.
    """

    MAX_FEATURE_LEVEL = FeatureLevel.FL_6_4

    def __init__(
        self,
        feature_level: FeatureLevel = MAX_FEATURE_LEVEL,
        flags: CreateDeviceFlags = CreateDeviceFlags.NONE,
        *,
        kernels: str | None = None,
    ):
        numeric = isinstance(feature_level, (int, np.integer)) and not isinstance(feature_level, bool)
        if numeric and int(feature_level) > self.MAX_FEATURE_LEVEL:
            raise UnsupportedError(
                f"DMLCreateDevice1: feature level {int(feature_level):#x} is above the highest opendml "
                f"implements ({self.MAX_FEATURE_LEVEL.c_name})"
            )
        self._feature_level = as_enum(FeatureLevel, feature_level, "DMLCreateDevice1: MinimumFeatureLevel")
        self._flags = as_enum(CreateDeviceFlags, flags, "DMLCreateDevice1: Flags")
        self._kernels = _kernel_backend(kernels)

    @property
    def kernels(self) -> str:
        """The kernel backend asked for: ``auto``, ``reference`` or ``compiled`` (see :mod:`opendml.kernels`)."""
        return self._kernels

    @property
    def feature_level(self) -> FeatureLevel:
        return self._feature_level

    def __repr__(self) -> str:
        return f"Device(feature_level=FeatureLevel.{self._feature_level.name})"

    def validate(self, desc: OperatorDesc) -> list[str]:
        """Every problem ``create_operator(desc)`` would report, without raising; empty when valid."""
        if not isinstance(desc, OperatorDesc):
            return [f"IDMLDevice::CreateOperator takes an operator descriptor, not {type(desc).__name__}"]
        schema_of(desc.operator_type)
        return operator_problems(desc, self._feature_level)

    def create_operator(self, desc: OperatorDesc) -> Operator:
        """``IDMLDevice::CreateOperator``: validate ``desc``; raise InvalidArgumentError naming every problem."""
        problems = self.validate(desc)
        if problems:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise InvalidArgumentError(problems[0] + more, tuple(problems))
        return Operator(self, desc)

    def compile_operator(self, op: Operator, flags: ExecutionFlags = ExecutionFlags.NONE) -> CompiledOperator:
        """``IDMLDevice::CompileOperator``. Every execution flag is accepted; none lowers opendml's precision."""
        if not isinstance(op, Operator) or op.device is not self:
            raise InvalidArgumentError("IDMLDevice::CompileOperator: the operator was not created by this device")
        flags = as_enum(ExecutionFlags, flags, "IDMLDevice::CompileOperator: Flags")
        return CompiledOperator(op, flags)


class Operator:
    """``IDMLOperator``: a validated descriptor, owned by the device that created it."""

    def __init__(self, device: Device, desc: OperatorDesc):
        self.device = device
        self.desc = desc

    def __repr__(self) -> str:
        return f"Operator({self.desc!r})"


class CompiledOperator:
    """``IDMLCompiledOperator``: executes the operator on bound inputs and outputs.

    Inputs and outputs are bound in the order of the descriptor's tensor fields, as DirectML binds them
    (ELEMENT_WISE_IF: condition, A, B). Each binding is a NumPy array of exactly the tensor's dtype and sizes
    (packed descriptors) or a :class:`~opendml.BufferBinding` (any descriptor). An output left as ``None`` is
    allocated. ``execute`` returns one array per output: the bound array, a view of the bound buffer through
    the output's strides, or the allocated array.
    """

    def __init__(self, op: Operator, flags: ExecutionFlags):
        self.operator = op
        self.flags = flags
        self._schema = schema = op.desc.schema
        #: Per tensor field (by C name): how a binding of it becomes the view a kernel reads or writes.
        #: An optional tensor left NULL in the descriptor has no plan and is bound as None (DML_BINDING_TYPE_NONE).
        self.plans = {
            f.c_name: TensorPlan(schema.c_name, f.c_name, getattr(op.desc, f.name), f.is_output)
            for f in schema.tensor_fields
            if getattr(op.desc, f.name) is not None
        }
        #: The backend whose kernel runs this operator, chosen once here.
        self.backend, kernel = kernels.kernel_for(schema.operator_type, op.device.kernels)
        self._run = kernels.prepared(kernel, op.desc)  # (run(inputs, outputs): the descriptor's part done)
        # Inputs reach a NumPy kernel as read-only views, so a kernel bug cannot write them; the C kernels take
        # their inputs as const memory and are held to it by the guard-byte fuzz.
        self._guard_inputs = self.backend == "reference"
        self._inputs = [(f.c_name, self.plans.get(f.c_name)) for f in schema.input_fields]
        self._outputs = [(f.c_name, self.plans[f.c_name]) for f in schema.output_fields]
        # The common binding, checked in a few hundred nanoseconds (see _direct_views): every tensor present, each
        # output packed and bound to an exact C-contiguous array, each input so or bound to a plain BufferBinding.
        present = all(plan is not None for _, plan in self._inputs)
        packed = present and all(plan.desc.is_packed for _, plan in self._outputs)
        # (a packed tensor's byte strides are a fresh C-contiguous array's: one tuple compare checks contiguity)
        self._direct = [_DirectInput(plan) for _, plan in self._inputs] if packed else None
        self._direct_out = [(p.dtype, p.shape, p.byte_strides) for _, p in self._outputs] if packed else None
        # Quicker still for the compiled kernels: one C call tests the arrays (_native.exact); inputs of strided
        # tensors (`_loose`) must then be BufferBindings, whose kept views it tests.
        self._spec = self._loose = None
        if self._direct is not None and _native is not None and not self._guard_inputs:
            tensors = [(p.dtype, p.shape, p.byte_strides) for _, p in self._inputs + self._outputs]
            self._spec = _native.binding_spec(tuple(tensors), len(self._outputs))
            self._loose = [k for k, expected in enumerate(self._direct) if not expected.packed]
        self._name = schema.c_name

    @property
    def desc(self) -> OperatorDesc:
        return self.operator.desc

    def execute(self, inputs: Sequence[Any], outputs: Sequence[Any] | None = None) -> list[np.ndarray]:
        if self._spec is not None and outputs is None and type(inputs) in (list, tuple):
            # fresh outputs take the quick test too (2 us of the 5 that a (8, 64, 64) call took through the views)
            outputs = [empty_output(shape, dtype) for dtype, shape, _ in self._direct_out]
        if self._spec is not None and type(outputs) in (list, tuple) and type(inputs) in (list, tuple):
            arrays = self._loose_views(inputs, outputs) if self._loose else inputs
            if arrays is not None:
                arrays, outputs = tuple(arrays), tuple(outputs)  # (what is tested is what runs)
                if _native.exact(self._spec, arrays, outputs):
                    self._run(arrays, outputs)
                    return list(outputs)
        direct = self._direct_views(inputs, outputs)
        if direct is not None:
            self._run(*direct)
            return list(direct[1])
        name = self._name
        outputs = [None] * len(self._outputs) if outputs is None else outputs
        for kind, given, plans in (("input", inputs, self._inputs), ("output", outputs, self._outputs)):
            if isinstance(given, (np.ndarray, str, bytes)) or not isinstance(given, Sequence):
                raise InvalidArgumentError(f"{name}: {kind}s must be a list, one binding per {kind} tensor")
            if len(given) != len(plans):
                expected = ", ".join(c_name for c_name, _ in plans)
                raise InvalidArgumentError(
                    f"{name}: expected {len(plans)} {kind} binding(s) ({expected}), but {len(given)} were provided"
                )
        bound_in = [self._bind(entry, value) for entry, value in zip(self._inputs, inputs)]
        bound_out = [self._bind(entry, value) for entry, value in zip(self._outputs, outputs)]
        self.check_hazards(bound_in, bound_out)
        views_in, views_out = tuple(b and b.view for b in bound_in), tuple(b.view for b in bound_out)
        if any(_reversed(a) for a in views_in + views_out):
            _run_unreversed(self._run, views_in, views_out)
        else:
            self._run(views_in, views_out)
        return [b.view for b in bound_out]

    def _loose_views(self, inputs: list | tuple, outputs: list | tuple) -> list | None:
        """The inputs with the BufferBindings of the strided tensors replaced by their views (see _DirectInput),
        or None unless each is such a binding of an array that owns its memory and every output is another array
        owning its own (a binding's range runs to the end of its buffer: the C test sees only the view)."""
        if len(inputs) != len(self._direct):
            return None
        arrays, owners = list(inputs), []
        for k in self._loose:
            binding = arrays[k]
            kept = self._direct[k].view_of(binding) if type(binding) is BufferBinding else None
            if kept is None or kept[1] is None:
                return None
            arrays[k] = kept[0]
            owners.append(kept[1])
        for output in outputs:
            if type(output) is not np.ndarray or not output.flags.owndata or any(output is o for o in owners):
                return None
        return arrays

    def _direct_views(self, inputs: Any, outputs: Any) -> tuple[tuple, tuple] | None:
        """The views for the kernel when every binding is an exact, C-contiguous array of a packed tensor (outputs
        also writable) and no output shares memory with another binding; None sends the call down the full path,
        which binds anything valid and explains anything invalid."""
        expected_in, expected_out = self._direct, self._direct_out
        if expected_in is None or type(inputs) not in (list, tuple) or len(inputs) != len(expected_in):
            return None
        if outputs is None:
            outputs = (None,) * len(expected_out)
        elif type(outputs) not in (list, tuple) or len(outputs) != len(expected_out):
            return None
        ndarray, shares_memory = np.ndarray, np.shares_memory
        # Outputs must not share memory with other bindings. An array that owns its memory is an allocation of its
        # own, so it shares nothing with the views of other such arrays (`owners`); `unknown` views take the test.
        views, owners, unknown = [], [], []
        for array, expected in zip(inputs, expected_in):
            if type(array) is ndarray:
                if (
                    not expected.packed
                    or array.shape != expected.shape
                    or array.strides != expected.strides
                    or array.dtype != expected.dtype
                ):
                    return None
                (owners if array.flags.owndata else unknown).append(array)
            elif type(array) is BufferBinding:
                kept = expected.view_of(array)
                if kept is None:
                    return None
                array, owner, region = kept
                if owner is None:
                    unknown.append(region)  # (the bound range, to the end of the buffer: more than the view)
                else:
                    owners.append(owner)
            else:
                return None
            views.append(array)
        results = []
        for array, (dtype, shape, strides) in zip(outputs, expected_out):
            if array is None:
                array = empty_output(shape, dtype)
            elif (
                type(array) is not ndarray
                or array.shape != shape
                or array.strides != strides
                or array.dtype != dtype
                or not array.flags.writeable
            ):
                return None
            if array.flags.owndata:
                for other in owners:
                    if other is array:
                        return None  # in place: the full path decides whether the operator allows it
                for other in unknown:
                    if shares_memory(array, other):
                        return None  # in place, or a hazard: the full path decides which
                owners.append(array)
            else:
                for other in (*owners, *unknown):
                    if shares_memory(array, other):
                        return None
                unknown.append(array)
            views.append(array)
            results.append(array)
        inputs = views[: len(expected_in)]
        if self._guard_inputs:
            inputs = tuple(map(_read_only, inputs))
        return tuple(inputs), tuple(results)

    def _bind(self, entry: tuple[str, TensorPlan | None], value: Any) -> Bound | None:
        c_name, plan = entry
        if plan is not None:
            return plan.bind(value)
        if value is not None:
            raise InvalidArgumentError(
                f"{self._schema.c_name}: {c_name} is NULL in the descriptor, so its binding must be None"
            )
        return None

    def check_hazards(self, inputs: list[Bound | None], outputs: list[Bound]) -> None:
        """DirectML's binding-hazard rules for this operator (see :func:`opendml.binding.check_hazards`)."""
        present = [b for b in inputs if b is not None]
        check_hazards(self._schema.c_name, present, outputs, self._schema.in_place)


class _DirectInput:
    """An input plan's facts for the direct path (see CompiledOperator._direct_views)."""

    __slots__ = ("_last", "alignment", "dtype", "packed", "shape", "strides", "total")

    def __init__(self, plan: TensorPlan):
        self.dtype, self.shape, self.strides = plan.dtype, plan.shape, plan.byte_strides
        self.packed, self.total = plan.desc.is_packed, plan.desc.total_tensor_size_in_bytes
        self.alignment = plan.alignment
        self._last: tuple[weakref.ref, tuple[np.ndarray, np.ndarray | None, np.ndarray]] | None = None

    def view_of(self, binding: BufferBinding) -> tuple[np.ndarray, np.ndarray | None, np.ndarray] | None:
        """The tensor's view of a BufferBinding of a plain C-contiguous array with an aligned offset, its size left
        to the rest of the array, which holds TotalTensorSizeInBytes; that array if it owns its memory; and the
        bound range as bytes (offset to the end). None for anything else (the full path).
        The view of the last binding is kept while that binding lives (a binding is frozen, so its view stays
        right): a scale or zero point bound once and executed many times costs no new view."""
        last = self._last
        if last is not None and last[0]() is binding:
            return last[1]
        buffer, offset = binding.buffer, binding.offset
        if (
            type(buffer) is not np.ndarray
            or binding.size_in_bytes is not None
            or type(offset) is not int
            or offset < 0
            or offset % self.alignment
            or buffer.dtype.kind not in "biuf"
            or not buffer.flags.c_contiguous
            or buffer.nbytes - offset < self.total
        ):
            return None
        view = np.ndarray(self.shape, self.dtype, buffer=buffer, offset=offset, strides=self.strides)
        kept = (view, buffer if buffer.flags.owndata else None, np.frombuffer(buffer, np.uint8)[offset:])
        self._last = (weakref.ref(binding, self._forget), kept)
        return kept

    def _forget(self, ref: weakref.ref) -> None:
        """The kept binding died: let its buffer go."""
        last = self._last
        if last is not None and last[0] is ref:
            self._last = None


def _reversed(array: np.ndarray | None) -> bool:
    """A NumPy view walking some dimension backwards (x[::-1]): no DirectML tensor has such strides."""
    return array is not None and any(s < 0 for s in array.strides)


def _run_unreversed(run, inputs: tuple, outputs: tuple) -> None:
    """``run`` (a prepared kernel) on reversed views (see _reversed) made forward: such an input is copied, element
    by element of the tensor but for its broadcast (zero-stride) dimensions, which stay unmaterialised (a reversed
    view whose other dimensions overlap in memory, as a sliding window's do, is copied at its full size: the kernels
    cannot walk memory backwards); such an output is computed into a packed array and then copied into the view."""
    inputs = tuple(_forward_copy(a) if _reversed(a) else a for a in inputs)
    staged = tuple(empty_output(a.shape, a.dtype) if _reversed(a) else a for a in outputs)
    run(inputs, staged)
    for view, result in zip(outputs, staged):
        if result is not view:
            np.copyto(view, result)


def _forward_copy(array: np.ndarray) -> np.ndarray:
    own = array[tuple(slice(0, 1) if s == 0 else slice(None) for s in array.strides)]
    return _read_only(np.broadcast_to(np.ascontiguousarray(own), array.shape))


def _read_only(array: np.ndarray) -> np.ndarray:
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False  # DirectML never writes an input; neither may a kernel
    return array


def _kernel_backend(requested: str | None) -> str:
    """``Device(kernels=...)``, else the environment's ``OPENDML_KERNELS``, else ``auto``."""
    source = "Device: kernels"
    if requested is None:
        requested, source = os.environ.get("OPENDML_KERNELS") or "auto", "OPENDML_KERNELS"
    choices = ("auto", *kernels.BACKENDS)
    if requested not in choices:
        raise InvalidArgumentError(f"{source} is {requested!r}; expected one of {', '.join(choices)}")
    return requested
