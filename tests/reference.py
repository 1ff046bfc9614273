"""An independent, deliberately naive reference for the five opendml operators.

Everything here is written as plain Python loops over output coordinates and reduction groups
(``itertools.product``), with Python ``float`` (IEEE double) / ``int`` arithmetic on elements taken out of the
arrays one at a time. Nothing is shared with ``opendml.kernels``: no ``argmax``, no ``reshape``/``transpose``
grouping trick, no vectorised formula. It is meant for tiny tensors only (a few hundred elements).

The semantics implemented (the contract the tests hold opendml to):

* HARDMAX1: 1 at the first maximum of each group (row-major order over the reduced coordinates, taken in
  ascending axis order whatever order the axes are listed in), 0 elsewhere. NaN is greater than every number;
  of several NaNs the first wins.
* LOG_SOFTMAX1: ``x - max - log(sum(exp(x - max)))`` over the group, computed accurately in double precision
  (``log1p`` for the terms next to 1). A NaN or +inf anywhere in the group, or a group of only -inf, makes the
  whole group NaN; otherwise a -inf entry gives -inf.
* ELEMENT_WISE_IF: the element of ``a`` where ``condition != 0``, else the element of ``b``, byte for byte.
* ARGMAX: index of the first (INCREASING) or last (DECREASING) maximum, counted row-major over the reduced
  coordinates in ascending axis order. NaN is greater than every number (first / last NaN wins).
* HARD_SIGMOID: ``max(0, min(alpha * x + beta, 1))`` with alpha and beta first rounded to float32 (C FLOAT);
  NaN propagates.
* ARGMIN: ARGMAX's mirror; NaN is smaller than every number (the first / last NaN wins, as it does for ARGMAX).
* SOFTMAX1: ``exp(x - max) / sum(exp(x - max))`` with ``math.fsum``; NaN for a group holding a NaN or a +inf, or
  only -inf; a -inf entry gives 0.
* REDUCE: each function from its formula over the group: ``math.fsum`` (correctly rounded double) for sums,
  exact ``Fraction`` products, exact Python integers wrapped to the tensor's width for integer types; MAX/MIN
  the element ARGMAX/ARGMIN select.

The module also holds the comparison helpers (bit-exact and the error bounds of the contract).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from itertools import product

import numpy as np

INCREASING = 0
DECREASING = 1


# The NumPy dtype of each DirectML data type, written out here rather than taken from opendml.
NUMPY_DTYPES = {
    "FLOAT64": "<f8", "FLOAT32": "<f4", "FLOAT16": "<f2",
    "INT64": "<i8", "INT32": "<i4", "INT16": "<i2", "INT8": "i1",
    "UINT64": "<u8", "UINT32": "<u4", "UINT16": "<u2", "UINT8": "u1",
}  # fmt: skip


def numpy_dtype(data_type) -> np.dtype:
    """The NumPy dtype for a TensorDataType (looked up by member name)."""
    return np.dtype(NUMPY_DTYPES[data_type.name])


__all__ = [
    "INCREASING",
    "DECREASING",
    "groups",
    "hardmax1",
    "log_softmax1",
    "element_wise_if",
    "argmax",
    "hard_sigmoid",
    "argmin",
    "softmax1",
    "reduce",
    "float32_value",
    "assert_bits_equal",
    "assert_log_softmax_close",
    "assert_hard_sigmoid_close",
    "numpy_dtype",
]


# --------------------------------------------------------------------------------------------------------------
# Groups of a reduction
# --------------------------------------------------------------------------------------------------------------


def groups(shape: Sequence[int], axes: Sequence[int]) -> Iterator[tuple[tuple[int, ...], list[tuple[int, ...]]]]:
    """Yield ``(output_coordinate, member_coordinates)`` for every reduction group.

    ``output_coordinate`` is the coordinate of the group in the reduced-rank-kept output (reduced dimensions 0).
    ``member_coordinates`` lists the full input coordinates of the group, in row-major order over the reduced
    dimensions taken in ascending axis order (the order the index of ARGMAX counts in).
    """
    shape = tuple(int(s) for s in shape)
    reduced = sorted(set(int(a) for a in axes))
    kept = [d for d in range(len(shape)) if d not in reduced]
    for kept_values in product(*(range(shape[d]) for d in kept)):
        base = [0] * len(shape)
        for d, v in zip(kept, kept_values):
            base[d] = v
        members = []
        for reduced_values in product(*(range(shape[d]) for d in reduced)):
            coordinate = list(base)
            for d, v in zip(reduced, reduced_values):
                coordinate[d] = v
            members.append(tuple(coordinate))
        yield tuple(base), members


def _element(x: np.ndarray, coordinate: tuple[int, ...]):
    """One element as an exact Python number (float for floating types, int for integer types)."""
    return x[coordinate].item()


def _is_nan(v) -> bool:
    return isinstance(v, float) and v != v


def _greater(a, b) -> bool:
    """``a > b`` with NaN greater than every number (and NaN not greater than NaN)."""
    if _is_nan(b):
        return False
    if _is_nan(a):
        return True
    return a > b


def _position_of_max(values: list, last: bool) -> int:
    """Position of the first (or last) maximum in ``values``, scanning one element at a time."""
    best = 0
    for i in range(1, len(values)):
        if _greater(values[i], values[best]):
            best = i
        elif last and not _greater(values[best], values[i]):
            best = i  # equal (or both NaN): the later one wins when scanning for the last maximum
    return best


# --------------------------------------------------------------------------------------------------------------
# Operators
# --------------------------------------------------------------------------------------------------------------


def hardmax1(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """ACTIVATION_HARDMAX1: an array of ``x.dtype`` with 1 at the first maximum of each group, 0 elsewhere."""
    out = np.zeros(x.shape, dtype=x.dtype)
    for _, members in groups(x.shape, axes):
        values = [_element(x, c) for c in members]
        out[members[_position_of_max(values, last=False)]] = 1
    return out


def log_softmax1(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """ACTIVATION_LOG_SOFTMAX1 in float64, accurate to a few float64 ulps (far below a float32 ulp)."""
    out = np.zeros(x.shape, dtype=np.float64)
    for _, members in groups(x.shape, axes):
        values = [float(_element(x, c)) for c in members]
        if any(math.isnan(v) for v in values) or any(v == math.inf for v in values):
            for c in members:
                out[c] = math.nan
            continue
        finite = [v for v in values if v != -math.inf]
        if not finite:
            for c in members:
                out[c] = math.nan
            continue
        top = max(finite)
        # sum(exp(v - top)) = count_of_top + rest; log of it = log(count_of_top) + log1p(rest / count_of_top).
        count_of_top = sum(1 for v in finite if v == top)
        rest = math.fsum(math.exp(v - top) for v in finite if v != top)
        log_sum = math.log(count_of_top) + math.log1p(rest / count_of_top)
        for c, v in zip(members, values):
            out[c] = -math.inf if v == -math.inf else (v - top) - log_sum
    return out


def element_wise_if(condition: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ELEMENT_WISE_IF, assembled byte string by byte string (so NaN payloads and -0.0 are kept exactly)."""
    assert condition.shape == a.shape == b.shape and a.dtype == b.dtype
    width = a.dtype.itemsize
    a_bytes = np.ascontiguousarray(a).tobytes()
    b_bytes = np.ascontiguousarray(b).tobytes()
    flags = [int(v) for v in np.ascontiguousarray(condition).reshape(-1).tolist()]
    pieces = []
    for i, flag in enumerate(flags):
        source = a_bytes if flag != 0 else b_bytes
        pieces.append(source[i * width : (i + 1) * width])
    return np.frombuffer(b"".join(pieces), dtype=a.dtype).reshape(a.shape).copy()


def argmax(x: np.ndarray, axes: Sequence[int], direction: int = INCREASING) -> np.ndarray:
    """ARGMAX: Python ints in an int64 array of x's rank, reduced dimensions of size 1."""
    reduced = set(int(a) for a in axes)
    out_shape = tuple(1 if d in reduced else s for d, s in enumerate(x.shape))
    out = np.zeros(out_shape, dtype=np.int64)
    for where, members in groups(x.shape, axes):
        values = [_element(x, c) for c in members]
        out[where] = _position_of_max(values, last=int(direction) == DECREASING)
    return out


def _smaller(a, b) -> bool:
    """``a < b`` with NaN smaller than every number (ARGMIN's mirror of :func:`_greater`)."""
    if _is_nan(b):
        return False
    if _is_nan(a):
        return True
    return a < b


def _position_of_min(values: list, last: bool) -> int:
    best = 0
    for i in range(1, len(values)):
        if _smaller(values[i], values[best]) or (last and not _smaller(values[best], values[i])):
            best = i
    return best


def argmin(x: np.ndarray, axes: Sequence[int], direction: int = INCREASING) -> np.ndarray:
    """ARGMIN: Python ints in an int64 array of x's rank, reduced dimensions of size 1."""
    reduced = set(int(a) for a in axes)
    out = np.zeros(tuple(1 if d in reduced else s for d, s in enumerate(x.shape)), dtype=np.int64)
    for where, members in groups(x.shape, axes):
        out[where] = _position_of_min([_element(x, c) for c in members], last=int(direction) == DECREASING)
    return out


def softmax1(x: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """ACTIVATION_SOFTMAX1 in float64."""
    out = np.zeros(x.shape, dtype=np.float64)
    for _, members in groups(x.shape, axes):
        values = [float(_element(x, c)) for c in members]
        if any(math.isnan(v) or v == math.inf for v in values) or all(v == -math.inf for v in values):
            for c in members:
                out[c] = math.nan
            continue
        top = max(values)
        total = math.fsum(math.exp(v - top) for v in values)
        for c, v in zip(members, values):
            out[c] = math.exp(v - top) / total
    return out


def _wrap(value: int, dtype: np.dtype) -> int:
    """An exact integer reduced modulo 2**bits and read as the dtype reads it (two's complement if signed)."""
    bits = 8 * dtype.itemsize
    value %= 1 << bits
    return value - (1 << bits) if np.issubdtype(dtype, np.signedinteger) and value >> (bits - 1) else value


def _float_of(value: Fraction) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, value)


def _log_sum_exp(values: list[float]) -> float:
    if any(math.isnan(v) for v in values):
        return math.nan
    top = max(values)
    if math.isinf(top):
        return top  # a +inf dominates; only -inf values sum to 0, whose log is -inf
    return top + math.log(_fsum(math.exp(v - top) for v in values))


def _log(v: float) -> float:
    if math.isnan(v) or v < 0:
        return math.nan
    return -math.inf if v == 0 else (math.inf if v == math.inf else math.log(v))


def _fsum(values) -> float:
    """The correctly rounded sum; with infinities or NaN, IEEE's (inf - inf is NaN, which math.fsum refuses)."""
    values = list(values)
    return math.fsum(values) if all(math.isfinite(v) for v in values) else sum(values)


def _product(values: list[float]) -> float:
    """The exact product rounded once; with infinities or NaN, IEEE's (0 * inf is NaN)."""
    if all(math.isfinite(v) for v in values):
        return _float_of(math.prod((Fraction(v) for v in values), start=Fraction(1)))
    return math.prod(values)


# Float functions of a group's values (Python floats), each the page's formula.
_FLOAT_FUNCTIONS = {
    "AVERAGE": lambda vs: _fsum(vs) / len(vs),
    "L1": lambda vs: _fsum(abs(v) for v in vs),
    "L2": lambda vs: math.sqrt(_fsum(v * v for v in vs)),  # v * v is exact for float32 and float16 values
    "LOG_SUM": lambda vs: _log(_fsum(vs)),
    "LOG_SUM_EXP": _log_sum_exp,
    "MULTIPLY": _product,
    "SUM": _fsum,
    "SUM_SQUARE": lambda vs: _fsum(v * v for v in vs),
}
_INTEGER_FUNCTIONS = {
    "L1": lambda vs: sum(abs(v) for v in vs),
    "MULTIPLY": math.prod,
    "SUM": sum,
    "SUM_SQUARE": lambda vs: sum(v * v for v in vs),
}


def reduce(x: np.ndarray, function: str, axes: Sequence[int]) -> np.ndarray:
    """REDUCE with ``function`` (a DML_REDUCE_FUNCTION name): indices (int64) for ARGMAX/ARGMIN, the selected
    element (x's dtype) for MAX/MIN, exact wrapped integers (x's dtype) for integer types, float64 otherwise."""
    if function in ("ARGMAX", "ARGMIN"):
        return (argmax if function == "ARGMAX" else argmin)(x, axes, INCREASING)
    reduced = set(int(a) for a in axes)
    integer = np.issubdtype(x.dtype, np.integer)
    dtype = x.dtype if integer or function in ("MAX", "MIN") else np.float64
    out = np.zeros(tuple(1 if d in reduced else s for d, s in enumerate(x.shape)), dtype=dtype)
    for where, members in groups(x.shape, axes):
        values = [_element(x, c) for c in members]
        if function in ("MAX", "MIN"):
            pick = _position_of_max(values, last=False) if function == "MAX" else _position_of_min(values, last=False)
            out[where] = x[members[pick]]
        elif integer:
            out[where] = _wrap(_INTEGER_FUNCTIONS[function](values), x.dtype)
        else:
            out[where] = _FLOAT_FUNCTIONS[function]([float(v) for v in values])
    return out


def float32_value(v: float) -> float:
    """``v`` rounded to a C FLOAT (float32), back as a Python float."""
    return float(np.float32(v))


def hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """ACTIVATION_HARD_SIGMOID in float64 from float32-rounded alpha and beta."""
    a, b = float32_value(alpha), float32_value(beta)
    out = np.zeros(x.shape, dtype=np.float64)
    for coordinate in product(*(range(s) for s in x.shape)):
        v = float(_element(x, coordinate))
        if math.isnan(v):
            out[coordinate] = math.nan
            continue
        y = a * v + b  # IEEE double: 0 * inf is NaN (left out of the tests: the contract does not define it)
        if y != y:
            out[coordinate] = math.nan
        elif y <= 0:
            out[coordinate] = 0.0
        elif y >= 1:
            out[coordinate] = 1.0
        else:
            out[coordinate] = y
    return out


# --------------------------------------------------------------------------------------------------------------
# Comparisons
# --------------------------------------------------------------------------------------------------------------


def _bits(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    return array.view(np.dtype(f"u{array.dtype.itemsize}"))


def assert_bits_equal(got: np.ndarray, expected: np.ndarray, context: str = "") -> None:
    """Same dtype, same shape, same bits in every element."""
    assert got.dtype == expected.dtype, f"{context}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{context}: shape {got.shape} != {expected.shape}"
    different = _bits(got) != _bits(expected)
    if different.any():
        where = np.argwhere(different)[:5].tolist()
        raise AssertionError(
            f"{context}: {int(different.sum())} element(s) differ, e.g. at {where}: "
            f"got {[got[tuple(w)] for w in where]}, expected {[expected[tuple(w)] for w in where]}\n"
            f"got={got!r}\nexpected={expected!r}"
        )


def _check_specials(got: np.ndarray, ref: np.ndarray, context: str) -> np.ndarray:
    """Assert NaN and infinities match exactly; return the mask of finite reference values left to compare."""
    got64 = got.astype(np.float64)
    nan_ref = np.isnan(ref)
    assert np.array_equal(np.isnan(got64), nan_ref), f"{context}: NaN mismatch\ngot={got!r}\nref={ref!r}"
    inf_ref = np.isinf(ref)
    assert np.array_equal(got64[inf_ref], ref[inf_ref]), f"{context}: infinity mismatch\ngot={got!r}\nref={ref!r}"
    return ~nan_ref & ~inf_ref


def assert_log_softmax_close(got: np.ndarray, ref: np.ndarray, context: str = "", float32_ulps: int = 1) -> None:
    """FLOAT32 within ``float32_ulps`` (the backends' bounds: cases.activation.FLOAT32_ULPS), FLOAT16 within 1 ulp
    of the exact value (ulp taken at |ref|)."""
    assert got.shape == ref.shape, f"{context}: shape {got.shape} != {ref.shape}"
    check = _check_specials(got, ref, context)
    got64 = got.astype(np.float64)
    if got.dtype == np.float32:
        with np.errstate(all="ignore"):  # NaN / inf entries are already checked and masked out
            allowed = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64) * float32_ulps
    elif got.dtype == np.float16:
        with np.errstate(all="ignore"):
            rounded = np.abs(ref).astype(np.float16)
            allowed = np.spacing(rounded).astype(np.float64)
        overflow = check & np.isinf(rounded)  # |ref| beyond float16: the only right answer is the rounded inf
        assert np.array_equal(got64[overflow], ref[overflow].astype(np.float16).astype(np.float64)), context
        check = check & ~overflow
    else:
        raise AssertionError(f"{context}: unexpected dtype {got.dtype}")
    _assert_within(got64, ref, check, allowed, context)


def assert_hard_sigmoid_close(
    got: np.ndarray, ref: np.ndarray, x: np.ndarray, alpha: float, beta: float, context: str = ""
) -> None:
    """FLOAT32: |got - exact| <= 2**-23 * (|alpha*x| + |beta|) (two float32 roundings) plus one subnormal step;
    FLOAT16: within 1 float16 ulp."""
    assert got.shape == ref.shape, f"{context}: shape {got.shape} != {ref.shape}"
    check = _check_specials(got, ref, context)
    got64 = got.astype(np.float64)
    if got.dtype == np.float32:
        a, b = float32_value(alpha), float32_value(beta)
        with np.errstate(all="ignore"):
            allowed = 2.0**-23 * (np.abs(a * x.astype(np.float64)) + abs(b)) + 2.0**-149
    elif got.dtype == np.float16:
        with np.errstate(all="ignore"):
            allowed = np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64)
    else:
        raise AssertionError(f"{context}: unexpected dtype {got.dtype}")
    _assert_within(got64, ref, check, allowed, f"{context} (x={x!r})")


def assert_float_close(got: np.ndarray, ref: np.ndarray, slack=0.0, context: str = "") -> None:
    """Within 1 ulp of the output type at |ref|, plus ``slack`` (absolute, per element); a reference beyond the
    output type's range must give the infinity it rounds to."""
    assert got.shape == ref.shape, f"{context}: shape {got.shape} != {ref.shape}"
    with np.errstate(all="ignore"):
        rounded = ref.astype(got.dtype)
    overflow = np.isfinite(ref) & np.isinf(rounded)
    assert np.array_equal(got[overflow], rounded[overflow]), f"{context}: overflow\ngot={got!r}\nref={ref!r}"
    ref = np.where(overflow, rounded.astype(np.float64), ref)
    check = _check_specials(got, ref, context)
    with np.errstate(all="ignore"):
        allowed = np.spacing(np.abs(ref).astype(got.dtype)).astype(np.float64) + slack
    _assert_within(got.astype(np.float64), ref, check, allowed, context)


def _assert_within(got64: np.ndarray, ref: np.ndarray, check: np.ndarray, allowed: np.ndarray, context: str) -> None:
    """Assert |got - ref| <= allowed wherever ``check`` holds, reporting the first offenders."""
    with np.errstate(all="ignore"):
        error = np.abs(got64 - ref)
    bad = check & ~(error <= allowed)
    if bad.any():
        where = np.argwhere(bad)[:5].tolist()
        raise AssertionError(
            f"{context}: {int(bad.sum())} element(s) beyond the bound, e.g. at {where}: "
            f"got {[got64[tuple(w)] for w in where]}, exact {[ref[tuple(w)] for w in where]}, "
            f"error {[error[tuple(w)] for w in where]}, allowed {[allowed[tuple(w)] for w in where]}"
        )
