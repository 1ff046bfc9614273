"""Hypothesis fuzz of the memory model, generic over the operator registry: random descriptors and bindings
against guarded buffers, for every declared operator, on every kernel backend.

Operators are grouped by their *binding shape*, read from the declaration: ``unary``, ``binary``, ``ternary``
(one output, sized like the inputs) and ``reduction`` (the output rule reduces over an axes field); any other
count of tensors gets a shape of its own (``4-in-1-out``), so no operator is ever left out. Each example draws
an operator of the shape, a rank (within its top support row, at most 4) and sizes (1-4 per dimension), its
non-tensor fields and input values from its test case (``case.params``, ``make_inputs``; plus a few NaNs,
infinities and zeros), data types from its top support row (``types_for``), and per tensor: strides (none,
packed, permuted, padded, random, zero, huge, rarely negative), a TotalTensorSizeInBytes, a
GuaranteedBaseOffsetAlignment and a binding: a BufferBinding with an offset and size into a slice of one shared
"arena" (bound as a memoryview, a uint8 array, a uint64 array or a read-only memoryview), a plain array, or
(outputs) nothing. An input sometimes shares an earlier input's slice; an output sometimes lies in an input's
slice or is bound to exactly an input's range (in place). Rarely, a data type outside the support row, a data
type breaking a declared Same(DataType) rule, or an axis out of range makes the descriptor invalid.

Every slice is surrounded by guard bytes inside the arena. An independent oracle (written from the contract,
not from opendml's code; of the declaration it reads only the support row, the Same(DataType) and ValidAxes
rules and the in_place flag) decides whether the example is valid. Then:

* a valid example must execute, and its outputs (read back by explicit index arithmetic) must be bit-identical
  to the same operator, on the same backend, run on packed copies of the inputs' element values (gathered from
  the arena by explicit index arithmetic): no per-operator reference is needed, and a layout must never change
  a result;
* an invalid example must raise ``dml.InvalidArgumentError`` (and nothing else) naming the operator;
* always: no byte of the arena other than the outputs' own elements changes (guards, padding, inputs).

The example budget is fixed for the whole fuzz, whatever the number of operators (see :data:`BUDGET`); so that
no operator depends on its luck in the draws, each also runs one fixed broadcast, padded and (where declared)
in-place example.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from cases import CASES, make_desc, make_inputs, types_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import NUMPY_DTYPES, numpy_dtype

import opendml as dml
from opendml import kernels
from opendml.constraints import Same, ValidAxes
from opendml.schema import Array, OperatorSchema, SupportBy, SupportRow

T = dml.TensorDataType

FUZZ = settings(
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=3000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

UINT32_MAX = 2**32 - 1
SLICE_CAP = 16384  # a buffer never gets more than this many bytes; bigger tensors are simply bound too small
VALUE_TYPES = tuple(T[name] for name in NUMPY_DTYPES)  # every byte-addressable data type

BACKENDS = [b for b in kernels.BACKENDS if any(b in per_op for per_op in kernels.KERNELS.values())]
DEVICES = {backend: dml.Device(kernels=backend) for backend in BACKENDS}


# ----------------------------------------------------------------------------------------------------------------
# Binding shapes and the example budget
# ----------------------------------------------------------------------------------------------------------------


def binding_shape(s: OperatorSchema) -> str:
    """How an operator binds memory, from its declaration alone."""
    inputs, outputs = len(s.input_fields), len(s.output_fields)
    if s.output_rule.reduced_by:
        return "reduction"
    if outputs == 1 and inputs in (1, 2, 3):
        return ("unary", "binary", "ternary")[inputs - 1]
    return f"{inputs}-in-{outputs}-out"


OPERATORS: dict[str, list[dml.OperatorType]] = {}
for _op in dml.REGISTRY:
    OPERATORS.setdefault(binding_shape(dml.REGISTRY[_op]), []).append(_op)

#: Examples in the whole fuzz, whatever the number of operators: each shape gets FLOOR, the rest is shared in
#: proportion to the shape's operators (so every operator gets about the same), and each shape's share is split
#: evenly between the kernel backends.
BUDGET = 2500
FLOOR = 250


def examples_per_run(shape: str) -> int:
    """max_examples of one (shape, backend) run."""
    floor = min(FLOOR, BUDGET // len(OPERATORS))
    share = floor + (BUDGET - floor * len(OPERATORS)) * len(OPERATORS[shape]) / len(dml.REGISTRY)
    return max(int(share / len(BACKENDS)), 1)


# ----------------------------------------------------------------------------------------------------------------
# Independent arithmetic (no opendml code)
# ----------------------------------------------------------------------------------------------------------------


def row_major(extents) -> tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(tuple(extents)):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def element_positions(sizes, strides) -> list[int]:
    """dot(i, strides) for every coordinate i, in row-major order, with Python ints."""
    return [sum(i * s for i, s in zip(index, strides)) for index in itertools.product(*(range(n) for n in sizes))]


def minimum_size(itemsize: int, sizes, strides) -> int:
    """DMLCalcBufferTensorSize for a descriptor whose last index fits 32 bits (no wrap possible then)."""
    count = math.prod(sizes) if strides is None else sum((n - 1) * s for n, s in zip(sizes, strides)) + 1
    return (count * itemsize + 3) // 4 * 4


def gather(memory: np.ndarray, start: int, dtype, sizes, strides) -> np.ndarray:
    """The tensor at byte ``start`` of ``memory`` (uint8), read element by element through ``strides``."""
    dtype = np.dtype(dtype)
    out = bytearray()
    for p in element_positions(sizes, strides):
        at = start + p * dtype.itemsize
        out += memory[at : at + dtype.itemsize].tobytes()
    return np.frombuffer(bytes(out), dtype=dtype).reshape(tuple(sizes))


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical, except that any two NaNs count as equal (payloads may differ between NumPy loops)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.tobytes() == b.tobytes():
        return True
    if a.dtype.kind != "f":
        return False
    bits = np.dtype(f"u{a.itemsize}")
    equal = np.ascontiguousarray(a).view(bits) == np.ascontiguousarray(b).view(bits)
    return bool(np.all(equal | (np.isnan(a) & np.isnan(b))))


def overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


# ----------------------------------------------------------------------------------------------------------------
# What the declaration says (data transcribed from the doc pages, read without opendml's validation)
# ----------------------------------------------------------------------------------------------------------------


def top_rows(s: OperatorSchema) -> list[SupportRow]:
    """The top support row, or one per group of rows that depend on a field (REDUCE's Function)."""
    return [rows[0] for rows in s.support.groups.values()] if isinstance(s.support, SupportBy) else [s.support[0]]


def top_row(s: OperatorSchema, params: dict[str, Any]) -> SupportRow:
    if not isinstance(s.support, SupportBy):
        return s.support[0]
    value = params[s.field(s.support.field).name]
    return next(rows[0] for values, rows in s.support.groups.items() if value in values)


def rank_range(s: OperatorSchema) -> tuple[int, int]:
    """Dimension counts every tensor accepts in every top row, at most 4 (unless more are required)."""
    cells = [cell for r in top_rows(s) for cell in r.tensors.values()]
    low = max(cell.min_dims for cell in cells)
    return low, max(low, min(4, *(cell.max_dims for cell in cells)))


def type_choices(row: SupportRow, case) -> list[int]:
    """The ``types_for`` indices whose types are all byte-addressable."""
    longest = max(len(cell.data_types) for cell in row.tensors.values())
    return [i for i in range(longest) if all(t in VALUE_TYPES for t in types_for(row, i, case).values())]


def wrong_types(s: OperatorSchema, row: SupportRow, types: dict[str, T], present: set[str]) -> list[tuple[str, T]]:
    """(tensor, data type) changes that make a valid ``types`` invalid: a type outside a present tensor's support
    cell, or another type of its cell for a tensor that a Same(DataType) rule ties to another present one."""
    wrong = [(name, t) for name in present for t in VALUE_TYPES if t not in row.tensors[name].data_types]
    for rule in s.constraints:
        tied = [name for name in getattr(rule, "tensors", ()) if name in present]
        if isinstance(rule, Same) and rule.attribute == "DataType" and len(tied) > 1:
            wrong += [(name, t) for name in tied for t in row.tensors[name].data_types if t != types[name]]
    return wrong


def axes_fields(s: OperatorSchema, params: dict[str, Any]) -> list[str]:
    """The axes lists (field names) that a ValidAxes rule bounds by the rank, which all tensors share here."""
    specs = [s.field(rule.axes) for rule in s.constraints if isinstance(rule, ValidAxes)]
    return [spec.name for spec in specs if isinstance(spec.kind, Array) and spec.name in params]


# ----------------------------------------------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class TensorPlan:
    c_name: str
    is_output: bool
    data_type: T
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None
    total: int | None
    alignment: int
    bind: str  # "buffer", "array", "none" (outputs), "alias" (output in input `target`'s slice), "same" (its binding)
    buffer_kind: str
    offset: int
    size_mode: str
    slack: int
    target: int  # the input an output aliases, or the earlier input whose slice an input shares (-1: none)
    # filled in while building
    slice_start: int = 0
    slice_len: int = 0
    region: tuple[int, int] = (0, 0)
    extras: dict = field(default_factory=dict)

    @property
    def itemsize(self) -> int:
        return numpy_dtype(self.data_type).itemsize

    @property
    def effective_strides(self) -> tuple[int, ...]:
        return row_major(self.sizes) if self.strides is None else self.strides

    @property
    def packed(self) -> bool:
        return self.strides is None or tuple(self.strides) == row_major(self.sizes)

    def desc(self) -> dml.BufferTensorDesc:
        return dml.BufferTensorDesc(self.data_type, self.sizes, self.strides, self.total, self.alignment)

    def layout(self) -> tuple[int, tuple[int, ...]]:
        """Byte offset in its slice and element strides: how the tensor's elements lie in the slice."""
        if self.bind == "buffer":
            return self.offset, self.effective_strides
        return 0, row_major(self.sizes)  # an array is bound by value: packed


@dataclass
class Example:
    op: dml.OperatorType
    packed: Any  # the operator's descriptor with packed tensors: the oracle's run
    plans: list[TensorPlan]  # one per present tensor, inputs first
    valid_fields: bool  # False when a data type or an axis was made invalid on purpose
    seed: int

    def __repr__(self) -> str:  # what Hypothesis prints for a failing example
        return f"Example({self.op.name}, {self.packed}, valid_fields={self.valid_fields}, seed={self.seed},\n" + (
            "\n".join(f"  {p}" for p in self.plans) + ")"
        )


@st.composite
def strides_for(draw, sizes, sane):
    rank = len(sizes)
    kinds = ["none"] * 4 + ["packed", "permuted", "permuted", "padded", "padded", "random", "random", "zero", "zero"]
    if not sane:
        kinds += ["huge", "huge", "negative"]
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "packed":
        return row_major(sizes)
    if kind in ("permuted", "padded"):
        order = draw(st.permutations(range(rank))) if kind == "permuted" else list(range(rank))
        pads = draw(st.lists(st.integers(0, 2), min_size=rank, max_size=rank))
        strides, step = [0] * rank, 1
        for d in reversed(order):
            strides[d] = step
            step *= sizes[d] + pads[d]
        return tuple(strides)
    if kind == "random":
        return tuple(draw(st.lists(st.integers(0, 8), min_size=rank, max_size=rank)))
    if kind == "zero":  # broadcasting, on inputs; an overlapping output, on outputs
        packed = row_major(sizes)
        zeros = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
        return tuple(0 if z else s for z, s in zip(zeros, packed))
    if kind == "huge":
        strides = list(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
        strides[draw(st.integers(0, rank - 1))] = draw(st.sampled_from([2**12, 2**20, 2**30 + 1, 2**31, 2**32 - 1]))
        return tuple(strides)
    strides = list(row_major(sizes))
    strides[draw(st.integers(0, rank - 1))] = -1
    return tuple(strides)


@st.composite
def tensor_plan(draw, c_name, is_output, data_type, sizes, inputs_before, tensors=3):
    """One tensor's layout and binding; ``inputs_before``: how many inputs precede it (all of them, for outputs);
    ``tensors``: how many the example binds (with many, each is broken less often, so valid examples stay common)."""
    # A "sane" tensor draws only values the rules allow (except strides, which may still alias an output);
    # the others draw from everything, so that every rule is broken now and then.
    rarer = max(1, tensors // 3)
    sane = draw(st.integers(0, 7 * rarer - 1)) != 3  # (not 0: Hypothesis favours small values)
    strides = draw(strides_for(sizes, sane))
    itemsize = numpy_dtype(data_type).itemsize
    base = None
    if strides is None or min(strides) >= 0:
        last = sum((n - 1) * s for n, s in zip(sizes, strides or row_major(sizes)))
        base = (((last + 1) if strides is not None else math.prod(sizes)) * itemsize + 3) // 4 * 4
    total_modes = ["default"] * 6 + ["exact", "bigger"] + ([] if sane else ["odd", "smaller", "huge"] * 2)
    total_mode = draw(st.sampled_from(total_modes))
    if base is None or total_mode == "default":
        total = None
    elif total_mode == "exact":
        total = base
    elif total_mode == "bigger":
        total = base + 4 * draw(st.integers(1, 8))
    elif total_mode == "odd":
        total = base + draw(st.integers(1, 3))
    elif total_mode == "smaller":
        total = max(base - 4 * draw(st.integers(1, 2)), 0)
    else:
        total = 2**33
    if sane:
        alignment = draw(st.sampled_from([0] * 4 + [a for a in (1, 2, 4, 8, 16, 32, 64) if a >= itemsize]))
        offset = max(alignment, 16) * draw(st.sampled_from([0, 0, 1, 2, 3]))
    else:
        alignment = draw(st.sampled_from([0] * 4 + [1, 2, 4, 8, 16, 32, 64, 3, 12, 24]))
        offset = draw(st.sampled_from([0] * 2 + [16, 32, 48, 64, 128, 1, 2, 4, 8, 24, 40]))
    binds = ["buffer"] * 6 * rarer + ["array"]
    target = -1
    if is_output:
        binds += ["none", "alias", "same", "same"]
        target = draw(st.integers(0, inputs_before - 1))
    elif inputs_before and (draw(st.booleans()) if rarer == 1 else draw(st.integers(0, 4 * rarer)) == 0):
        target = draw(st.integers(0, inputs_before - 1))  # share that input's slice (when both are buffers)
    return TensorPlan(
        c_name=c_name,
        is_output=is_output,
        data_type=data_type,
        sizes=tuple(sizes),
        strides=strides,
        total=total,
        alignment=alignment,
        bind=draw(st.sampled_from(binds)),
        buffer_kind=draw(st.sampled_from(["memoryview", "uint8", "uint64"] + ([] if sane else ["readonly"] * 2))),
        offset=offset,
        size_mode=draw(st.sampled_from(["rest"] * 4 + ["exact", "plus"] + ([] if sane else ["minus"] * 2))),
        slack=draw(st.sampled_from([0, 0, 4, 8, 16, 64] + ([] if sane else [-4, -8]))),
        target=target,
    )


def present_tensors(desc) -> list:
    """The tensor fields set in ``desc`` (an optional one may be None), inputs first: outputs refer to them."""
    specs = sorted(desc.schema.tensor_fields, key=lambda spec: spec.is_output)
    return [spec for spec in specs if getattr(desc, spec.name) is not None]


@st.composite
def example(draw, shape: str):
    """Any operator of ``shape``: fields and data types from its case and top support row, random layouts."""
    op = draw(st.sampled_from(OPERATORS[shape]))
    case, s = CASES[op], dml.REGISTRY[op]
    rank = draw(st.integers(*rank_range(s)))
    sizes = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    seed = draw(st.integers(0, 2**32 - 1))
    params = case.params(rank, np.random.default_rng(seed))
    row = top_row(s, params)
    types = types_for(row, draw(st.sampled_from(type_choices(row, case))), case)
    packed = make_desc(case, sizes, types, np.random.default_rng(seed), params=params)
    present = present_tensors(packed)
    valid_fields = True
    wrong = wrong_types(s, row, types, {spec.c_name for spec in present})
    if wrong and draw(st.integers(0, 24)) == 13:  # rarely: a data type the declaration refuses
        name, data_type = draw(st.sampled_from(wrong))
        types, valid_fields = {**types, name: data_type}, False
    axes = axes_fields(s, params)
    if axes and draw(st.integers(0, 19)) == 11:  # rarely: an axis out of range
        name = draw(st.sampled_from(axes))
        params, valid_fields = {**params, name: (*params[name], rank)}, False
    if not valid_fields:
        packed = make_desc(case, sizes, types, np.random.default_rng(seed), params=params)
    plans: list[TensorPlan] = []
    for spec in present:
        tensor = getattr(packed, spec.name)
        inputs_before = len(plans) if spec.is_input else sum(spec.is_input for spec in present)
        plan = tensor_plan(spec.c_name, spec.is_output, tensor.data_type, tensor.sizes, inputs_before, len(present))
        plans.append(draw(plan))
    return Example(op, packed, plans, valid_fields, seed)


# ----------------------------------------------------------------------------------------------------------------
# The oracle
# ----------------------------------------------------------------------------------------------------------------


def descriptor_valid(plan: TensorPlan) -> bool:
    if plan.strides is not None and min(plan.strides) < 0:
        return False
    strides = plan.effective_strides
    last = sum((n - 1) * s for n, s in zip(plan.sizes, strides))
    if last > UINT32_MAX:
        return False
    minimum = minimum_size(plan.itemsize, plan.sizes, plan.strides)
    total = minimum if plan.total is None else plan.total
    if total < minimum or total % 4:
        return False
    a = plan.alignment
    if a and (a & (a - 1) or a < plan.itemsize):
        return False
    if plan.is_output:
        offsets = element_positions(plan.sizes, strides)
        if len(set(offsets)) != len(offsets):
            return False  # two output elements would share memory
    return True


def required_total(plan: TensorPlan) -> int:
    return minimum_size(plan.itemsize, plan.sizes, plan.strides) if plan.total is None else plan.total


def binding_valid(plan: TensorPlan) -> bool | None:
    if plan.bind == "none":
        return plan.packed
    if plan.bind == "array":
        if not plan.packed:
            return False
        # A packed array is "exactly the tensor"; whether it must also cover a TotalTensorSizeInBytes larger
        # than the tensor is not settled by the contract, so either answer is accepted (None).
        return True if required_total(plan) <= plan.slice_len else None
    if plan.is_output and plan.buffer_kind == "readonly":
        return False
    if plan.offset > plan.slice_len:
        return False
    size = plan.extras["size"]
    if plan.offset + size > plan.slice_len:
        return False
    if plan.offset % max(plan.alignment, 16):  # the 16-byte minimum holds whatever is promised
        return False
    return size >= required_total(plan)


def hazards_valid(in_place: bool | tuple[str, ...], inputs: list[TensorPlan], outputs: list[TensorPlan]) -> bool:
    """Inputs may overlap freely; an output may overlap no other output, and an input only when both bound
    ranges are identical and the operator runs in place over that input (``in_place``: True for any input, or
    the C names of those the output may alias)."""
    bound = [out for out in outputs if out.bind != "none"]
    for i, out in enumerate(bound):
        if any(overlap(out.region, other.region) for other in bound[i + 1 :]):
            return False
        for plan in inputs:
            aliasable = in_place is True or (bool(in_place) and plan.c_name in in_place)
            if overlap(out.region, plan.region) and (out.region != plan.region or not aliasable):
                return False
    return True


# ----------------------------------------------------------------------------------------------------------------
# Running one example
# ----------------------------------------------------------------------------------------------------------------


def with_specials(values: np.ndarray, rng) -> np.ndarray:
    """A few NaNs, infinities and zeros among float values."""
    values = values.ravel().copy()
    if values.dtype.kind == "f":
        special = rng.random(values.size) < 0.05
        values[special] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], values.dtype), special.sum())
    return values


def run_example(ex: Example, device: dml.Device) -> str:
    s, case = dml.REGISTRY[ex.op], CASES[ex.op]
    plans = ex.plans
    inputs = [p for p in plans if not p.is_output]
    outputs = [p for p in plans if p.is_output]
    rng = np.random.default_rng(ex.seed)

    # Descriptors that cannot even be written down (negative strides) fail at construction.
    if any(p.strides is not None and min(p.strides) < 0 for p in plans):
        with pytest.raises(dml.InvalidArgumentError, match="is -1, but it is unsigned"):
            [p.desc() for p in plans]
        return "bad-desc"
    desc = dataclasses.replace(ex.packed, **{s.field(p.c_name).name: p.desc() for p in plans})

    # Lay the slices out in one arena, each surrounded by guard bytes.
    cursor = 0

    def new_slice(plan: TensorPlan, length: int) -> None:
        nonlocal cursor
        cursor += 16 + 8 * int(rng.integers(0, 6))  # guard before
        plan.slice_start, plan.slice_len = cursor, max(length, 0)
        cursor += -(-plan.slice_len // 8) * 8

    def buffer_length(plan: TensorPlan) -> int:
        needed = max(required_total(plan), minimum_size(plan.itemsize, plan.sizes, plan.effective_strides))
        return plan.offset + min(needed, SLICE_CAP) + plan.slack

    for plan in inputs + outputs:  # an output's slice may be an input's
        if plan.bind == "none":
            continue
        source = inputs[plan.target] if plan.target >= 0 else None
        if plan.bind == "array":
            new_slice(plan, math.prod(plan.sizes) * plan.itemsize)
        elif plan.bind in ("alias", "same") and source.bind != "buffer":
            plan.bind = "buffer"  # nothing to alias: give it its own slice
            new_slice(plan, buffer_length(plan))
        elif plan.bind in ("alias", "same") or (not plan.is_output and source and source.bind == "buffer"):
            plan.slice_start, plan.slice_len = source.slice_start, source.slice_len  # in an input's slice
            writable = plan.is_output and source.buffer_kind == "readonly"
            plan.buffer_kind = "memoryview" if writable else source.buffer_kind
            if plan.bind == "same":
                plan.offset, plan.size_mode = source.offset, "same"
            plan.bind = "buffer"
        else:
            new_slice(plan, buffer_length(plan))
    cursor += 32  # guard after the last slice
    arena = rng.integers(0, 256, cursor, dtype=np.uint8)  # the pattern every unwritten byte must keep

    # The case's values (conditions, ties...) at every input element's position (inside its slice).
    arrays = dict(zip((spec.c_name for spec in s.input_fields), make_inputs(case, ex.packed, rng)))
    for plan in inputs:
        offset, strides = plan.layout()
        positions = element_positions(plan.sizes, strides)
        values = with_specials(arrays[plan.c_name], rng).view(np.uint8).reshape(len(positions), -1)
        for p, v in zip(positions, values):
            at = offset + p * plan.itemsize
            if at + plan.itemsize <= plan.slice_len:
                arena[plan.slice_start + at : plan.slice_start + at + plan.itemsize] = v

    # Bindings.
    bindings = {}
    for plan in inputs + outputs:
        if plan.bind == "none":
            bindings[plan.c_name] = None
            continue
        window = arena[plan.slice_start : plan.slice_start + plan.slice_len]
        if plan.bind == "array":
            array = window.view(numpy_dtype(plan.data_type)).reshape(plan.sizes)
            if not plan.is_output:
                array.flags.writeable = False  # an input may arrive read-only
            plan.region = (plan.slice_start, plan.slice_start + plan.slice_len)
            bindings[plan.c_name] = array
            continue
        if plan.buffer_kind == "uint64" and plan.slice_len % 8 == 0:
            buffer = window.view(np.uint64)
        elif plan.buffer_kind == "readonly":
            buffer = memoryview(window).toreadonly()
        elif plan.buffer_kind == "uint8":
            buffer = window
        else:
            buffer = memoryview(window)
        rest = max(plan.slice_len - plan.offset, 0)
        total = required_total(plan)
        size = {
            "rest": None,
            "exact": total,
            "minus": max(total - 4, 0),
            "plus": total + 8,
            "same": inputs[plan.target].extras.get("size_arg"),
        }[plan.size_mode]
        plan.extras["size_arg"] = size
        plan.extras["size"] = rest if size is None else size
        start = plan.slice_start + plan.offset
        plan.region = (start, start + plan.extras["size"])
        bindings[plan.c_name] = dml.BufferBinding(buffer, plan.offset, size)

    verdicts = [
        ex.valid_fields,
        *(descriptor_valid(p) for p in plans),
        *(binding_valid(p) for p in plans),
        hazards_valid(s.in_place, inputs, outputs),
    ]
    valid = False if False in verdicts else (None if None in verdicts else True)
    before = arena.copy()

    error = None
    try:
        compiled = device.compile_operator(device.create_operator(desc))
        results = compiled.execute(
            [bindings.get(f.c_name) for f in s.input_fields], [bindings[f.c_name] for f in s.output_fields]
        )
    except dml.InvalidArgumentError as caught:  # any other exception type fails the test
        error = caught

    # Which bytes may have changed: only the outputs' elements, and only after a successful execution.
    writable = np.zeros(arena.size, dtype=bool)
    for out in outputs:
        if error is None and out.bind != "none":
            offset, strides = out.layout()
            for p in element_positions(out.sizes, strides):
                at = out.slice_start + offset + p * out.itemsize
                writable[at : at + out.itemsize] = True
    changed = np.flatnonzero((arena != before) & ~writable)
    assert changed.size == 0, f"bytes outside the outputs' elements changed: {changed[:16].tolist()} ({error!r})"

    if error is not None:
        assert valid is not True, f"a valid example was refused: {error}\n{ex}"
        assert str(error).startswith(s.c_name + ":"), str(error)
        return "invalid"
    assert valid is not False, f"an invalid example executed: {ex}"

    # Correctness: the same backend on packed copies of the element values gives the same bits.
    gathered = {}
    for plan in inputs:
        offset, strides = plan.layout()
        dtype = numpy_dtype(plan.data_type)
        gathered[plan.c_name] = gather(before, plan.slice_start + offset, dtype, plan.sizes, strides)
    packed = device.compile_operator(device.create_operator(ex.packed))
    expected = packed.execute([gathered.get(f.c_name) for f in s.input_fields])
    for out, result, want in zip(outputs, results, expected):
        offset, strides = out.layout()
        got = result if out.bind == "none" else gather(arena, out.slice_start + offset, want.dtype, out.sizes, strides)
        assert same_bits(got, want), f"{out.c_name}: got {got!r}, expected {want!r}\n{ex}"
        assert same_bits(np.ascontiguousarray(result), want)
    in_place = any(out.bind == "buffer" and out.region == p.region for out in outputs for p in inputs)
    return "in-place" if in_place else "valid"


# ----------------------------------------------------------------------------------------------------------------
# The fuzz tests
# ----------------------------------------------------------------------------------------------------------------


def test_every_operator_has_a_binding_shape():
    """Shapes come from declarations, so every operator is fuzzed; these three anchor what the shapes mean."""
    assert sorted(op for ops in OPERATORS.values() for op in ops) == sorted(dml.REGISTRY) == sorted(CASES)
    OT = dml.OperatorType
    expected = {OT.ACTIVATION_HARD_SIGMOID: "unary", OT.ELEMENT_WISE_IF: "ternary", OT.ARGMAX: "reduction"}
    assert {op: binding_shape(dml.REGISTRY[op]) for op in expected} == expected
    for op, s in dml.REGISTRY.items():
        assert all(type_choices(row, CASES[op]) for row in top_rows(s)), f"{op.name}: no byte-addressable data types"
    assert sum(examples_per_run(shape) for shape in OPERATORS) * len(BACKENDS) <= BUDGET


@pytest.mark.parametrize("shape, backend", [(shape, backend) for shape in OPERATORS for backend in BACKENDS])
def test_fuzz_memory_model(shape, backend):
    """The fuzz of one binding shape on one backend, then a check that its generator was worth something:
    it produced valid and invalid examples, and in-place ones exactly when an operator of the shape runs in place."""
    outcomes: Counter[str] = Counter()

    @settings(FUZZ, max_examples=examples_per_run(shape))
    @given(example(shape))
    def fuzz(ex):
        outcomes[run_example(ex, DEVICES[backend])] += 1

    fuzz()
    runs = sum(outcomes.values())
    assert outcomes["valid"] + outcomes["in-place"] >= runs // 10, outcomes
    assert outcomes["invalid"] + outcomes["bad-desc"] >= runs // 10, outcomes
    in_place = any(dml.REGISTRY[op].in_place for op in OPERATORS[shape])
    assert (outcomes["in-place"] > 0) == in_place, outcomes


def fixed_example(op: dml.OperatorType, in_place: bool) -> Example:
    """A valid example of ``op`` that the fuzz's draws might miss: padded strides and an offset for every tensor,
    input 0 broadcast along its first dimension (a zero stride); or, ``in_place``, the output bound to exactly
    the range of an input (of its own data type, when there is one)."""
    case, s = CASES[op], dml.REGISTRY[op]
    low, high = rank_range(s)
    rank = max(low, min(3, high))
    sizes = tuple((2, 3)[d % 2] for d in range(rank))
    params = case.params(rank, np.random.default_rng(0))
    packed = make_desc(case, sizes, types_for(top_row(s, params), 0, case), np.random.default_rng(0), params=params)
    plans: list[TensorPlan] = []
    for spec in present_tensors(packed):
        tensor = getattr(packed, spec.name)
        padded = row_major([n + 1 for n in tensor.sizes])
        plan = TensorPlan(spec.c_name, spec.is_output, tensor.data_type, tensor.sizes, padded, None, 0, "buffer",
                          "memoryview", 32, "rest", 8, target=-1)  # fmt: skip
        if spec.is_output and in_place:
            plan.target = next((i for i, p in enumerate(plans) if p.data_type == plan.data_type), 0)
            plan.bind, plan.strides = "same", plans[plan.target].strides
        elif not plans and not in_place:
            plan.strides = (0, *padded[1:])
        plans.append(plan)
    return Example(op, packed, plans, valid_fields=True, seed=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", list(dml.REGISTRY), ids=lambda op: op.name)
def test_every_operator_runs_strided_as_packed(op, backend):
    """Whatever the fuzz draws, every operator runs once broadcast and padded, and in place where declared."""
    assert run_example(fixed_example(op, in_place=False), DEVICES[backend]) == "valid"
    if dml.REGISTRY[op].in_place:
        assert run_example(fixed_example(op, in_place=True), DEVICES[backend]) == "in-place"


# ----------------------------------------------------------------------------------------------------------------
# DMLCalcBufferTensorSize against an independent 32-bit model, over the whole UINT32 range
# ----------------------------------------------------------------------------------------------------------------

uint32 = st.one_of(st.integers(0, 16), st.integers(0, UINT32_MAX), st.sampled_from([2**31, 2**32 - 1, 2**30, 2**16]))


@settings(FUZZ, max_examples=1000)
@given(
    st.sampled_from([T.FLOAT32, T.FLOAT16, T.UINT8, T.INT64, T.UINT4]),
    st.lists(st.tuples(st.integers(1, UINT32_MAX) | st.integers(1, 8), uint32), min_size=1, max_size=8),
    st.booleans(),
)
def test_fuzz_calc_buffer_tensor_size(data_type, dims, packed):
    sizes = [s for s, _ in dims]
    strides = None if packed else [t for _, t in dims]
    bits = {T.FLOAT32: 32, T.FLOAT16: 16, T.UINT8: 8, T.INT64: 64, T.UINT4: 4}[data_type]
    # DirectMLX's CalculateBufferTensorSize: UINT64 bits (packed: prod(sizes) * bits, wrapping modulo 2^64;
    # strided: (UINT32 index of the last element, wrapping modulo 2^32, + 1) * bits), then bytes, then a 4-byte
    # round-up. Products that wrap the UINT64 are checked in test_memory_model.py; here they are skipped.
    if packed:
        size_in_bits = math.prod(sizes) * bits
        if size_in_bits >= 2**64:
            return
    else:
        index = 0
        for s, t in zip(sizes, strides):
            index = (index + (s - 1) * t) % 2**32  # C: UINT arithmetic wraps modulo 2^32
        size_in_bits = (index + 1) * bits
    expected = ((size_in_bits + 7) // 8 + 3) // 4 * 4
    assert dml.calc_buffer_tensor_size(data_type, sizes, strides) == expected
