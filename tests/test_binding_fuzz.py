"""Hypothesis fuzz of the memory model: random descriptors and bindings against guarded buffers.

Each example draws an operator (HARD_SIGMOID, ELEMENT_WISE_IF, ARGMAX, HARDMAX1), sizes (1-4 per dimension,
rank 1-4) and, per tensor, a data type, strides (none, packed, permuted, padded, random, zero, huge, rarely
negative), a TotalTensorSizeInBytes, a GuaranteedBaseOffsetAlignment, and a binding: a BufferBinding with an
offset and size into a slice of one shared "arena" (bound as a memoryview, a uint8 array, a uint64 array or a
read-only memoryview), a plain array, or (outputs) nothing. Sometimes the output is bound into input 0's slice,
or to exactly input 0's range (in place), and ELEMENT_WISE_IF's B sometimes shares A's slice.

Every slice is surrounded by guard bytes inside the arena. An independent oracle (written from the contract,
not from opendml's code) decides whether the example is valid. Then:

* a valid example must execute, and its output (read back by explicit index arithmetic) must be bit-identical to
  the operator run on packed copies of the inputs (gathered from the arena by explicit index arithmetic), which
  must in turn agree with a NumPy one-liner;
* an invalid example must raise ``dml.InvalidArgumentError`` (and nothing else) naming the operator;
* always: no byte of the arena other than the output's own elements changes (guards, padding, inputs).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opendml as dml

T = dml.TensorDataType
DEVICE = dml.Device()

FUZZ = settings(
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=3000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

UINT32_MAX = 2**32 - 1
SLICE_CAP = 16384  # a buffer never gets more than this many bytes; bigger tensors are simply bound too small

ITEMSIZE = {
    T.FLOAT64: 8, T.FLOAT32: 4, T.FLOAT16: 2, T.INT64: 8, T.INT32: 4, T.INT16: 2, T.INT8: 1,
    T.UINT64: 8, T.UINT32: 4, T.UINT16: 2, T.UINT8: 1,
}  # fmt: skip
NUMPY = {
    T.FLOAT64: "<f8", T.FLOAT32: "<f4", T.FLOAT16: "<f2", T.INT64: "<i8", T.INT32: "<i4", T.INT16: "<i2", T.INT8: "i1",
    T.UINT64: "<u8", T.UINT32: "<u4", T.UINT16: "<u2", T.UINT8: "u1",
}  # fmt: skip
FLOATS = (T.FLOAT32, T.FLOAT16)
ALL_VALUE_TYPES = tuple(ITEMSIZE)

# What each operator accepts at the device's feature level (FL 6.4), per tensor role.
VALID_TYPES = {
    "hard_sigmoid": {"in": FLOATS, "out": FLOATS},
    "hardmax1": {"in": FLOATS, "out": FLOATS},
    "argmax": {
        "in": (T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8),
        "out": (T.INT64, T.INT32, T.UINT64, T.UINT32),
    },
    "if": {"cond": (T.UINT8,), "in": ALL_VALUE_TYPES, "out": ALL_VALUE_TYPES},
}
C_NAMES = {
    "hard_sigmoid": "DML_OPERATOR_ACTIVATION_HARD_SIGMOID",
    "hardmax1": "DML_OPERATOR_ACTIVATION_HARDMAX1",
    "argmax": "DML_OPERATOR_ARGMAX",
    "if": "DML_OPERATOR_ELEMENT_WISE_IF",
}


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


def numpy_argmax(x: np.ndarray, axes, decreasing: bool) -> np.ndarray:
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = x.transpose(kept + sorted(axes))
    grouped = moved.reshape(moved.shape[: len(kept)] + (-1,))
    index = grouped.shape[-1] - 1 - grouped[..., ::-1].argmax(axis=-1) if decreasing else grouped.argmax(axis=-1)
    return index.reshape(tuple(1 if d in axes else s for d, s in enumerate(x.shape)))


def numpy_reference(op: str, arrays, axes, decreasing, out_dtype) -> np.ndarray:
    if op == "if":
        cond, a, b = arrays
        bits = np.dtype(f"u{a.itemsize}")
        return np.where(cond != 0, a.view(bits), b.view(bits)).view(a.dtype)
    (x,) = arrays
    if op == "hard_sigmoid":
        with np.errstate(all="ignore"):
            y = x.astype(np.float32) * np.float32(0.3) + np.float32(0.45)
            return np.clip(y, np.float32(0), np.float32(1)).astype(out_dtype)
    if op == "argmax":
        return numpy_argmax(x, axes, decreasing).astype(out_dtype)
    # hardmax1: 1 where the row-major index over the reduced axes equals the first argmax
    index = numpy_argmax(x, axes, False)
    coords = np.indices(x.shape)
    flat = np.zeros(x.shape, dtype=np.int64)
    for d in sorted(axes):
        flat = flat * x.shape[d] + coords[d]
    return (flat == index).astype(out_dtype)


# ----------------------------------------------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class TensorPlan:
    role: str  # "cond", "in" or "out"
    data_type: T
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None
    total: int | None
    alignment: int
    bind: str  # "buffer", "array", "none" (outputs), "alias" (output in input 0's slice), "same" (input 0's binding)
    buffer_kind: str
    offset: int
    size_mode: str
    slack: int
    # filled in while building
    slice_start: int = 0
    slice_len: int = 0
    region: tuple[int, int] = (0, 0)
    extras: dict = field(default_factory=dict)

    @property
    def itemsize(self) -> int:
        return ITEMSIZE[self.data_type]

    @property
    def effective_strides(self) -> tuple[int, ...]:
        return row_major(self.sizes) if self.strides is None else self.strides

    @property
    def packed(self) -> bool:
        return self.strides is None or tuple(self.strides) == row_major(self.sizes)


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
    if kind == "zero":
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
def tensor_plan(draw, role, data_type, sizes, allow_none=False, allow_alias=False):
    # A "sane" tensor draws only values the rules allow (except strides, which may still alias an output);
    # the others draw from everything, so that every rule is broken now and then.
    sane = draw(st.integers(0, 6)) != 3  # (not 0: Hypothesis favours small values)
    strides = draw(strides_for(sizes, sane))
    itemsize = ITEMSIZE[data_type]
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
    binds = ["buffer"] * 6 + ["array"]
    if allow_none:
        binds += ["none"]
    if allow_alias:
        binds += ["alias", "same", "same"]
    return TensorPlan(
        role=role,
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
    )


@st.composite
def example(draw, op):
    rank = draw(st.integers(1, 4))
    sizes = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axes: tuple[int, ...] = ()
    if op in ("argmax", "hardmax1"):
        axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
        if draw(st.integers(0, 19)) == 11:
            axes = axes + (rank,)  # out of range: invalid
        draw(st.permutations(axes))  # listed order does not matter; keep the draw for shrinking variety
    decreasing = draw(st.booleans()) if op == "argmax" else False
    valid = VALID_TYPES[op]
    mismatch = draw(st.integers(0, 24)) == 13  # rarely: a type the operator does not accept
    if op == "if":
        value_type = draw(st.sampled_from(ALL_VALUE_TYPES))
        cond_type = T.INT8 if mismatch and draw(st.booleans()) else T.UINT8
        b_type = draw(st.sampled_from(ALL_VALUE_TYPES)) if mismatch else value_type
        plans = [
            draw(tensor_plan("cond", cond_type, sizes)),
            draw(tensor_plan("in", value_type, sizes)),
            draw(tensor_plan("in", b_type, sizes)),
        ]
        out_type = value_type
        out_sizes = sizes
        b_shares_a = draw(st.booleans())
    else:
        in_type = draw(st.sampled_from((T.FLOAT64, T.INT32) if mismatch else valid["in"]))
        plans = [draw(tensor_plan("in", in_type, sizes))]
        if op == "argmax":
            out_type = draw(st.sampled_from((T.FLOAT32,) if mismatch and draw(st.booleans()) else valid["out"]))
            out_sizes = tuple(1 if d in axes else n for d, n in enumerate(sizes))
        else:
            out_type = in_type
            out_sizes = sizes
        b_shares_a = False
    plans.append(draw(tensor_plan("out", out_type, out_sizes, allow_none=True, allow_alias=True)))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(op=op, sizes=sizes, axes=axes, decreasing=decreasing, plans=plans, b_shares_a=b_shares_a, seed=seed)


# ----------------------------------------------------------------------------------------------------------------
# The oracle
# ----------------------------------------------------------------------------------------------------------------


def descriptor_valid(plan: TensorPlan, op: str) -> bool:
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
    if plan.data_type not in VALID_TYPES[op][plan.role]:
        return False
    if plan.role == "out":
        offsets = element_positions(plan.sizes, strides)
        if len(set(offsets)) != len(offsets):
            return False  # two output elements would share memory
    return True


def required_total(plan: TensorPlan) -> int:
    return minimum_size(plan.itemsize, plan.sizes, plan.strides) if plan.total is None else plan.total


def binding_valid(plan: TensorPlan) -> bool:
    if plan.bind == "none":
        return plan.packed
    if plan.bind == "array":
        if not plan.packed:
            return False
        # A packed array is "exactly the tensor"; whether it must also cover a TotalTensorSizeInBytes larger
        # than the tensor is not settled by the contract, so either answer is accepted (None).
        return True if required_total(plan) <= plan.slice_len else None
    if plan.role == "out" and plan.buffer_kind == "readonly":
        return False
    if plan.offset > plan.slice_len:
        return False
    size = plan.extras["size"]
    if plan.offset + size > plan.slice_len:
        return False
    if plan.offset % max(plan.alignment, 16):  # the 16-byte minimum holds whatever is promised
        return False
    return size >= required_total(plan)


def hazards_valid(op: str, inputs: list[TensorPlan], out: TensorPlan) -> bool:
    if out.bind == "none":
        return True
    a0, a1 = out.region
    for plan in inputs:
        b0, b1 = plan.region
        if a0 < b1 and b0 < a1 and ((a0, a1) != (b0, b1) or op != "hard_sigmoid"):
            return False
    return True


# ----------------------------------------------------------------------------------------------------------------
# Running one example
# ----------------------------------------------------------------------------------------------------------------


def fill_values(rng, data_type: T, count: int) -> np.ndarray:
    dtype = np.dtype(NUMPY[data_type])
    if dtype.kind == "f":
        values = (rng.standard_normal(count) * 3).astype(dtype)
        special = rng.random(count) < 0.05
        values[special] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dtype), special.sum())
        return values
    if data_type == T.UINT8:
        return rng.integers(0, 3, count).astype(dtype)  # conditions: 0, 1 and 2
    low = -3 if dtype.kind == "i" else 0
    return rng.integers(low, 4, count).astype(dtype)  # few distinct values: ties


def build_descriptor(op, plans, axes, decreasing):
    descs = [dml.BufferTensorDesc(p.data_type, p.sizes, p.strides, p.total, p.alignment) for p in plans]
    *ins, out = descs
    if op == "hard_sigmoid":
        return dml.ActivationHardSigmoidOperatorDesc(input_tensor=ins[0], output_tensor=out, alpha=0.3, beta=0.45)
    if op == "hardmax1":
        return dml.ActivationHardmax1OperatorDesc(input_tensor=ins[0], output_tensor=out, axes=axes)
    if op == "argmax":
        direction = dml.AxisDirection.DECREASING if decreasing else dml.AxisDirection.INCREASING
        return dml.ArgmaxOperatorDesc(input_tensor=ins[0], output_tensor=out, axes=axes, axis_direction=direction)
    return dml.ElementWiseIfOperatorDesc(condition_tensor=ins[0], a_tensor=ins[1], b_tensor=ins[2], output_tensor=out)


def packed_descriptor(op, plans, axes, decreasing):
    packed = [TensorPlan(p.role, p.data_type, p.sizes, None, None, 0, "array", "uint8", 0, "rest", 0) for p in plans]
    return build_descriptor(op, packed, axes, decreasing)


def run_example(ex) -> str:
    op, plans, axes = ex["op"], ex["plans"], ex["axes"]
    *inputs, out = plans
    rng = np.random.default_rng(ex["seed"])

    # Descriptors that cannot even be written down (negative strides) fail at construction.
    if any(p.strides is not None and min(p.strides) < 0 for p in plans):
        try:
            build_descriptor(op, plans, axes, ex["decreasing"])
        except dml.InvalidArgumentError as error:
            assert "is -1, but it is unsigned" in str(error)
            return "bad-desc"
        raise AssertionError("a negative stride was accepted")

    # Lay the slices out in one arena, each surrounded by guard bytes.
    cursor = 0
    for i, plan in enumerate(plans):
        if plan.bind in ("none", "alias", "same") or (
            i == 2 and op == "if" and ex["b_shares_a"] and plan.bind == "buffer" and plans[1].bind == "buffer"
        ):
            continue
        cursor += 16 + 8 * int(rng.integers(0, 6))  # guard before
        if plan.bind == "array":
            plan.slice_len = math.prod(plan.sizes) * plan.itemsize
        else:
            needed = min(
                max(required_total(plan), minimum_size(plan.itemsize, plan.sizes, plan.effective_strides)), SLICE_CAP
            )
            plan.slice_len = max(plan.offset + needed + plan.slack, 0)
        plan.slice_start = cursor
        cursor += -(-plan.slice_len // 8) * 8
    if op == "if" and ex["b_shares_a"] and plans[2].bind == "buffer" and plans[1].bind == "buffer":
        plans[2].slice_start, plans[2].slice_len = plans[1].slice_start, plans[1].slice_len
        plans[2].buffer_kind = plans[1].buffer_kind
    if out.bind in ("alias", "same"):
        if inputs[0].bind != "buffer":
            out.bind = "buffer"  # nothing to alias: give it its own slice
            cursor += 24
            needed = min(required_total(out), SLICE_CAP)
            out.slice_start, out.slice_len = cursor, max(out.offset + needed + out.slack, 0)
            cursor += -(-out.slice_len // 8) * 8
        else:
            out.slice_start, out.slice_len = inputs[0].slice_start, inputs[0].slice_len
            out.buffer_kind = "memoryview" if inputs[0].buffer_kind == "readonly" else inputs[0].buffer_kind
            if out.bind == "same":
                out.offset, out.size_mode, out.extras["same_size"] = inputs[0].offset, "same", None
            out.bind = "buffer"
    cursor += 32  # guard after the last slice
    arena = rng.integers(0, 256, cursor, dtype=np.uint8)  # the pattern every unwritten byte must keep

    # Element values at every input element's position (inside its slice).
    for plan in inputs:
        if plan.bind == "none":
            continue
        strides = plan.effective_strides if plan.bind == "buffer" else row_major(plan.sizes)
        offset = plan.offset if plan.bind == "buffer" else 0
        positions = element_positions(plan.sizes, strides)
        values = fill_values(rng, plan.data_type, len(positions)).view(np.uint8).reshape(len(positions), -1)
        for p, v in zip(positions, values):
            at = offset + p * plan.itemsize
            if at + plan.itemsize <= plan.slice_len:
                arena[plan.slice_start + at : plan.slice_start + at + plan.itemsize] = v

    # Bindings.
    bindings = []
    for plan in plans:
        if plan.bind == "none":
            bindings.append(None)
            continue
        window = arena[plan.slice_start : plan.slice_start + plan.slice_len]
        if plan.bind == "array":
            array = window.view(NUMPY[plan.data_type]).reshape(plan.sizes)
            if plan.role != "out":
                array.flags.writeable = False  # an input may arrive read-only
            plan.region = (plan.slice_start, plan.slice_start + plan.slice_len)
            bindings.append(array)
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
            "same": inputs[0].extras.get("size_arg"),
        }[plan.size_mode]
        plan.extras["size_arg"] = size
        plan.extras["size"] = rest if size is None else size
        start = plan.slice_start + plan.offset
        plan.region = (start, start + plan.extras["size"])
        bindings.append(dml.BufferBinding(buffer, plan.offset, size))

    verdicts = [
        op != "if" or plans[1].data_type == plans[2].data_type == out.data_type,
        all(a < len(ex["sizes"]) for a in axes),
        *(descriptor_valid(p, op) for p in plans),
        *(binding_valid(p) for p in plans),
        hazards_valid(op, inputs, out),
    ]
    valid = False if False in verdicts else (None if None in verdicts else True)
    before = arena.copy()

    error = None
    try:
        compiled = DEVICE.compile_operator(DEVICE.create_operator(build_descriptor(op, plans, axes, ex["decreasing"])))
        (result,) = compiled.execute(bindings[:-1], bindings[-1:])
    except dml.InvalidArgumentError as caught:  # any other exception type fails the test
        error = caught

    # Which bytes may have changed: only the output's elements, and only after a successful execution.
    writable = np.zeros(arena.size, dtype=bool)
    if error is None and out.bind != "none":
        base = out.slice_start + (out.offset if out.bind == "buffer" else 0)
        for p in element_positions(out.sizes, out.effective_strides if out.bind == "buffer" else row_major(out.sizes)):
            writable[base + p * out.itemsize : base + (p + 1) * out.itemsize] = True
    changed = np.flatnonzero((arena != before) & ~writable)
    assert changed.size == 0, f"bytes outside the output's elements changed: {changed[:16].tolist()} ({error!r})"

    if error is not None:
        assert valid is not True, f"a valid example was refused: {error}\n{ex}"
        assert str(error).startswith(C_NAMES[op] + ":"), str(error)
        return "invalid"
    assert valid is not False, f"an invalid example executed: {ex}"

    # Correctness: the packed run on gathered inputs, and NumPy, agree with what was written.
    gathered = []
    for plan in inputs:
        strides = plan.effective_strides if plan.bind == "buffer" else row_major(plan.sizes)
        offset = plan.offset if plan.bind == "buffer" else 0
        gathered.append(gather(before, plan.slice_start + offset, NUMPY[plan.data_type], plan.sizes, strides))
    packed = DEVICE.compile_operator(DEVICE.create_operator(packed_descriptor(op, plans, axes, ex["decreasing"])))
    (expected,) = packed.execute(gathered)
    out_dtype = np.dtype(NUMPY[out.data_type])
    assert same_bits(expected, numpy_reference(op, gathered, axes, ex["decreasing"], out_dtype)), (expected, gathered)
    if out.bind == "none":
        got = result
    else:
        strides = out.effective_strides if out.bind == "buffer" else row_major(out.sizes)
        offset = out.offset if out.bind == "buffer" else 0
        got = gather(arena, out.slice_start + offset, out_dtype, out.sizes, strides)
    assert same_bits(got, expected), f"got {got!r}, expected {expected!r}"
    assert same_bits(np.ascontiguousarray(result), expected)
    in_place = out.bind == "buffer" and inputs[0].bind == "buffer" and out.region == inputs[0].region
    return "in-place" if in_place else "valid"


# ----------------------------------------------------------------------------------------------------------------
# The fuzz tests
# ----------------------------------------------------------------------------------------------------------------

OUTCOMES: dict[str, dict[str, int]] = {}


def _record(op: str, outcome: str) -> None:
    counts = OUTCOMES.setdefault(op, {})
    counts[outcome] = counts.get(outcome, 0) + 1


@FUZZ
@given(example("hard_sigmoid"))
def test_fuzz_hard_sigmoid(ex):
    _record("hard_sigmoid", run_example(ex))


@FUZZ
@given(example("if"))
def test_fuzz_element_wise_if(ex):
    _record("if", run_example(ex))


@FUZZ
@given(example("argmax"))
def test_fuzz_argmax(ex):
    _record("argmax", run_example(ex))


@FUZZ
@given(example("hardmax1"))
def test_fuzz_hardmax1(ex):
    _record("hardmax1", run_example(ex))


def test_fuzz_reached_every_outcome():
    """The generators are worth something only if they produce valid, invalid and in-place examples."""
    if set(OUTCOMES) != set(C_NAMES):
        pytest.skip("run together with the fuzz tests")
    for op, counts in OUTCOMES.items():
        assert counts.get("valid", 0) >= 50, (op, counts)
        assert counts.get("invalid", 0) >= 50, (op, counts)
    assert OUTCOMES["hard_sigmoid"].get("in-place", 0) >= 5, OUTCOMES["hard_sigmoid"]


# ----------------------------------------------------------------------------------------------------------------
# DMLCalcBufferTensorSize against an independent 32-bit model, over the whole UINT32 range
# ----------------------------------------------------------------------------------------------------------------

uint32 = st.one_of(st.integers(0, 16), st.integers(0, UINT32_MAX), st.sampled_from([2**31, 2**32 - 1, 2**30, 2**16]))


@FUZZ
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
