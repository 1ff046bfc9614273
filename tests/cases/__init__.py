"""Each operator's test case, written once (in ``cases/<family>.py``) and read by every generic test.

A :class:`Case` says what only a person reading the operator's doc page can say: the C struct's members in
header order (transcribed independently of the declaration), how to pick its non-tensor fields for a shape,
an independent reference (float64 or exact integer arithmetic, plain loops, nothing from ``opendml.kernels``),
the accuracy it is held to, its doc examples and, where one coincides, its ONNX operator. Everything else (which
data types and ranks to try, which feature levels to walk, how outputs are shaped) comes from the declaration.

The generic tests (``test_cases_*.py``) build descriptors and data with :func:`make_desc` and :func:`make_inputs`
and run every operator through each kernel backend.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from reference import numpy_dtype

import opendml as dml
from opendml.schema import OperatorSchema, SupportRow

__all__ = [
    "Case",
    "Example",
    "CASES",
    "register",
    "make_desc",
    "make_inputs",
    "types_for",
    "rng_for",
    "random_shape",
    "random_values",
    "schema",
    "FromTypes",
]

T = dml.TensorDataType


@dataclass(frozen=True)
class Example:
    """A doc page example: descriptor fields beyond the tensors, inputs, and the expected outputs."""

    name: str
    inputs: tuple[np.ndarray, ...]
    expected: tuple[np.ndarray, ...]
    params: dict[str, Any] = field(default_factory=dict)
    output_types: dict[str, Any] = field(default_factory=dict)  # output C name -> TensorDataType, when not the input's
    #: 0: the outputs must equal ``expected`` exactly; else the relative tolerance of values printed on the page.
    rtol: float = 0.0
    atol: float = 0.0


@dataclass(frozen=True)
class Case:
    """One operator's test case (see the module docstring)."""

    operator_type: dml.OperatorType
    #: The C struct's members in directml.h order, counts included (``InputTensor, OutputTensor, AxisCount, Axes``).
    header_fields: tuple[str, ...]
    #: ``reference(desc, inputs) -> outputs``: independent, in float64 (floats) or exact integers.
    reference: Callable[[Any, list[np.ndarray]], list[np.ndarray]]
    #: ``check(got, expected, desc, inputs)``: assert ``got`` (one output) is within the stated bound of ``expected``.
    check: Callable[[np.ndarray, np.ndarray, Any, list[np.ndarray]], None]
    #: ``params(rank, rng) -> {field name: value}`` for the non-tensor fields (axes, alpha, ...).
    params: Callable[[int, np.random.Generator], dict[str, Any]] = lambda rank, rng: {}
    #: ``values(c_name, dtype, shape, rng) -> array``: input data; default :func:`random_values`.
    values: Callable[[str, np.dtype, tuple[int, ...], np.random.Generator], np.ndarray] | None = None
    examples: tuple[Example, ...] = ()
    #: Largest element count the reference can afford (it loops in Python).
    max_elements: int = 200
    #: ``input_sizes(c_name, sizes) -> sizes`` of an input that is not the operation's shape (a per-tensor scale).
    input_sizes: Callable[[str, tuple[int, ...]], tuple[int, ...]] | None = None
    #: ``types(types) -> types``: the data types :func:`types_for` picked, made to obey a rule between them that
    #: the row's lists cannot say (QUANTIZE_LINEAR: an INT32 input takes a FLOAT32 scale).
    types: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: ``shape(sizes) -> sizes``: a proposed input shape made one the operator accepts (e.g. leading sizes set to 1
    #: for an effective-rank limit); applied by :func:`make_desc`.
    shape: Callable[[tuple[int, ...]], tuple[int, ...]] = lambda sizes: sizes


CASES: dict[dml.OperatorType, Case] = {}


@dataclass(frozen=True)
class FromTypes:
    """A field value that depends on the tensor data types chosen (C name -> TensorDataType), such as CLIP1's
    MinMaxDataType, which must be the output's: ``params`` may return one, :func:`make_desc` resolves it."""

    resolve: Callable[[dict[str, Any]], Any]


def register(*cases: Case) -> None:
    for case in cases:
        if case.operator_type in CASES:
            raise ValueError(f"{case.operator_type.name} has two cases")
        CASES[case.operator_type] = case


def schema(case: Case) -> OperatorSchema:
    return dml.REGISTRY[case.operator_type]


def rng_for(*key: Any) -> np.random.Generator:
    """A generator seeded by the test's own parameters, so every test is deterministic."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def types_for(row: SupportRow, i: int, case: Case | None = None) -> dict[str, dml.TensorDataType]:
    """Data types for every tensor from one support row: the ``i``-th type of each tensor's list (the last one
    when the list is shorter), so tensors that must agree (they share a list) get the same type; then the
    case's ``types`` rule, if it has one."""
    types = {name: cell.data_types[min(i, len(cell.data_types) - 1)] for name, cell in row.tensors.items()}
    return case.types(types) if case is not None and case.types else types


def random_shape(rng: np.random.Generator, rank: int, max_elements: int) -> tuple[int, ...]:
    sizes = [int(s) for s in rng.integers(1, 4, size=rank)]
    while math.prod(sizes) > max_elements:
        sizes[sizes.index(max(sizes))] -= 1
    if rank and math.prod(sizes) == 1:
        sizes[int(rng.integers(rank))] = 2
    return tuple(sizes)


def make_desc(
    case: Case,
    sizes: Sequence[int],
    types: dict[str, dml.TensorDataType],
    rng: np.random.Generator,
    params: dict[str, Any] | None = None,
    strides: dict[str, tuple[int, ...]] | None = None,
) -> Any:
    """A descriptor of ``case``'s operator: inputs of ``sizes``, outputs shaped by its output rule, tensors of
    ``types`` (C name -> type), non-tensor fields from ``case.params`` (or ``params``), optional ``strides``."""
    s = schema(case)
    sizes = case.shape(tuple(sizes))
    params = case.params(len(sizes), rng) if params is None else params
    strides = strides or {}
    tensors: dict[str, Any] = {}
    inputs = {}
    for spec in s.input_fields:
        if spec.kind.optional and not spec.nullable_when_fused and spec.name not in params:
            continue
        own = case.input_sizes(spec.c_name, tuple(sizes)) if case.input_sizes else tuple(sizes)
        desc = dml.BufferTensorDesc(types[spec.c_name], own, strides.get(spec.c_name))
        inputs[spec.c_name] = desc
        tensors[spec.name] = desc
    fields = {k: v.resolve(types) if isinstance(v, FromTypes) else v for k, v in params.items()
              if not any(k == f.name for f in s.tensor_fields)}  # fmt: skip
    normalised = {
        spec.name: spec.kind.normalise(fields[spec.name], spec.c_name) for spec in s.fields if spec.name in fields
    }
    for spec in s.output_fields:
        shaped = s.output_rule.output(s, inputs, normalised, types[spec.c_name])
        tensors[spec.name] = dml.BufferTensorDesc(types[spec.c_name], shaped.sizes, strides.get(spec.c_name))
    return s.desc_class(**tensors, **fields)


def random_values(c_name: str, dtype: np.dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Data that finds bugs: small integers with ties half the time, else values spread over the type."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if rng.random() < 0.5:
            low = -3 if info.min < 0 else 0
            return rng.integers(low, low + 7, size=shape).astype(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if rng.random() < 0.3:
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return (rng.standard_normal(shape) * 2).astype(dtype)


def make_inputs(case: Case, desc: Any, rng: np.random.Generator) -> list[np.ndarray | None]:
    """One array per input tensor field of ``desc`` (None for an absent optional tensor), packed."""
    values = case.values or random_values
    arrays = []
    for spec in schema(case).input_fields:
        tensor = getattr(desc, spec.name)
        if tensor is None:
            arrays.append(None)
            continue
        arrays.append(values(spec.c_name, numpy_dtype(tensor.data_type), tensor.sizes, rng))
    return arrays


def execute(desc: Any, inputs: list, kernels: str = "reference") -> list[np.ndarray]:
    device = dml.Device(kernels=kernels)
    return [np.asarray(out) for out in device.compile_operator(device.create_operator(desc)).execute(inputs)]


# The families' cases register themselves on import.
from . import activation, element_wise, element_wise_logical, reduction  # noqa: E402, F401
