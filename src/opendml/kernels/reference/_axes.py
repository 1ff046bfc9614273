"""Reductions over several axes without copying more than needed.

Two ideas keep every reduction's memory of the order of its output:

* a **broadcast** dimension (stride 0, size > 1) holds one value repeated: :func:`distinct` cuts it to size 1,
  and the kernel accounts for the copies (a sum over ``n`` copies is ``n`` times the sum, an index picks the
  first or last copy), then writes its result back broadcast;
* sums and products are **streamed** in blocks (:func:`blocks`) so that no float64 copy of the input is made.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

#: Elements per block of a streamed reduction: the float64 working buffer is at most 8 times this in bytes.
BLOCK_ELEMENTS = 1 << 18


def distinct(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, int]:
    """``x`` with every broadcast dimension cut to its first element, and the number of copies of each element
    of that view a reduction group over ``axes`` holds (the product of the sizes of the reduced broadcast axes)."""
    broadcast = [d for d in range(x.ndim) if x.strides[d] == 0 and x.shape[d] > 1]
    cut = tuple(slice(0, 1) if d in broadcast else slice(None) for d in range(x.ndim))
    return x[cut], math.prod(x.shape[d] for d in broadcast if d in axes)


def group_reduced_last(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """View ``x`` with the reduced axes flattened, in row-major order, into one last axis.

    Returns the grouped array (kept axes..., prod(reduced sizes)) and the permutation applied to ``x``.
    The listed order of ``axes`` does not matter: reduced coordinates are flattened in ascending axis order,
    which is how DirectML numbers them (ARGMAX example 3). NumPy copies only when the reduced axes cannot be
    merged into one strided axis.
    """
    reduced = sorted(axes)
    kept = [d for d in range(x.ndim) if d not in reduced]
    permutation = tuple(kept + reduced)
    moved = x.transpose(permutation)
    return moved.reshape(moved.shape[: len(kept)] + (-1,)), permutation


def ungroup(grouped: np.ndarray, like_shape: tuple[int, ...], permutation: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`group_reduced_last` for an array of the grouped shape: back to ``like_shape``."""
    moved_shape = tuple(like_shape[d] for d in permutation)
    return grouped.reshape(moved_shape).transpose(np.argsort(permutation))


def first_argmax_last_axis(grouped: np.ndarray, last: bool, minimum: bool = False) -> np.ndarray:
    """Index of the maximum (``minimum``: the minimum) along the last axis: the first one, or the last one when
    ``last``. NaN wins either comparison (NumPy's rule), so the first (last) NaN is chosen."""
    pick = np.argmin if minimum else np.argmax
    if not last:
        return pick(grouped, axis=-1)
    n = grouped.shape[-1]
    return (n - 1) - pick(grouped[..., ::-1], axis=-1)


def kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with the reduced axes set to 1 (a reduction's output shape)."""
    return tuple(1 if d in axes else size for d, size in enumerate(shape))


def arg_index(x: np.ndarray, axes: tuple[int, ...], last: bool, minimum: bool = False) -> np.ndarray:
    """ARGMAX/ARGMIN: for each group, the row-major index over the reduced axes of ``x`` of its first (``last``:
    last) maximum (``minimum``: minimum), shaped as the output with size 1 where ``x`` broadcasts.

    Computed on the distinct elements: of the copies along a broadcast reduced axis the first wins (coordinate 0),
    or the last (coordinate n - 1) when ``last``; row-major order over the other coordinates is unchanged.
    """
    d, _ = distinct(x, axes)
    index, _ = streamed_arg(d, axes, last, minimum)
    reduced = sorted(axes)
    d_sizes, x_sizes = [d.shape[a] for a in reduced], [x.shape[a] for a in reduced]
    if d_sizes != x_sizes:  # back from the distinct grid to the full one
        coordinates = np.unravel_index(index, d_sizes)
        coordinates = [
            c if n == m else np.full_like(c, m - 1 if last else 0) for c, n, m in zip(coordinates, d_sizes, x_sizes)
        ]
        index = np.ravel_multi_index(coordinates, x_sizes)
    return index.reshape(kept_shape(d.shape, axes))


def streamed_arg(x: np.ndarray, axes: tuple[int, ...], last: bool, minimum: bool) -> tuple[np.ndarray, Callable]:
    """The row-major index over the reduced axes of each group's first (``last``: last) maximum (``minimum``:
    minimum), and a function giving that element itself, both shaped as the kept axes of ``x``; NaN wins every
    comparison.

    When the reduced axes cannot be viewed as one, blocks (:func:`blocks`) are grouped one at a time, in
    row-major order, so a group meets its elements in increasing index order: a later block's candidate replaces
    the best so far when it is better, or (``last``) equal.
    """
    reduced = sorted(axes)
    kept = [d for d in range(x.ndim) if d not in reduced]
    moved = x.transpose(kept + reduced)
    try:  # the reduced axes merge into one strided axis: one pass over a view
        grouped = moved.reshape((*moved.shape[: len(kept)], -1), copy=False)
    except ValueError:
        grouped = None
    if grouped is not None:
        index = first_argmax_last_axis(grouped, last, minimum)
        return index, (lambda: np.take_along_axis(grouped, index[..., None], axis=-1)[..., 0])
    best_index = np.zeros([x.shape[d] for d in kept], np.int64)
    best = np.zeros([x.shape[d] for d in kept], x.dtype)
    for block in blocks(x.shape):
        part = x[block]
        grouped, _ = group_reduced_last(part, axes)  # a copy of at most one block
        local = first_argmax_last_axis(grouped, last, minimum)
        value = np.take_along_axis(grouped, local[..., None], axis=-1)[..., 0]
        starts = [block[a].indices(x.shape[a])[0] for a in reduced]
        coordinates = np.unravel_index(local, [part.shape[a] for a in reduced])
        index = np.ravel_multi_index([c + s for c, s in zip(coordinates, starts)], [x.shape[a] for a in reduced])
        at = tuple(block[d] for d in kept)
        if not any(starts):  # the first block of these groups: nothing to compare with yet
            best_index[at], best[at] = index, value
            continue
        replace = _better(value, best[at], minimum)
        if last:
            replace |= _equal(value, best[at])
        best_index[at] = np.where(replace, index, best_index[at])
        best[at] = np.where(replace, value, best[at])
    return best_index, (lambda: best)


def _better(new: np.ndarray, old: np.ndarray, minimum: bool) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        strictly = new < old if minimum else new > old
    if new.dtype.kind != "f":
        return strictly
    return strictly | (np.isnan(new) & ~np.isnan(old))


def _equal(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    if new.dtype.kind != "f":
        return new == old
    return (new == old) | (np.isnan(new) & np.isnan(old))


def blocks(shape: tuple[int, ...], budget: int | None = None) -> Iterator[tuple[slice, ...]]:
    """Row-major blocks of at most about ``budget`` (default BLOCK_ELEMENTS) elements covering ``shape``, as
    tuples of slices."""
    budget = budget or BLOCK_ELEMENTS
    ndim, inner, k = len(shape), 1, len(shape)
    while k > 0 and inner * shape[k - 1] <= budget:
        k -= 1
        inner *= shape[k]
    if k == 0:
        yield (slice(None),) * ndim
        return
    step = max(1, budget // inner)  # axis k - 1 is cut into runs of ``step``; the axes after it are whole
    for outer in np.ndindex(*shape[: k - 1]):
        for start in range(0, shape[k - 1], step):
            yield (*(slice(i, i + 1) for i in outer), slice(start, start + step), *(slice(None),) * (ndim - k))


def streamed(x: np.ndarray, axes: tuple[int, ...], term, combine: np.ufunc, dtype: np.dtype) -> np.ndarray:
    """``combine.reduce`` of ``term(block)`` over ``axes``, block by block, accumulated in ``dtype``.

    ``term(values, at)`` maps a block of ``x`` (converted to ``dtype``) to the values to combine (None: the values
    themselves); ``at`` indexes the block's groups in the result, which has the shape of ``x`` with the reduced
    axes of size 1.
    """
    accumulator = np.full(kept_shape(x.shape, axes), combine.identity, dtype)
    for block in blocks(x.shape):
        target = tuple(slice(None) if d in axes else s for d, s in enumerate(block))
        values = x[block].astype(dtype)
        values = values if term is None else term(values, target)
        combine(accumulator[target], combine.reduce(values, axis=axes, keepdims=True), out=accumulator[target])
    return accumulator
