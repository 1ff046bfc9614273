"""Reductions over several axes without copying more than needed."""

from __future__ import annotations

import numpy as np


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


def first_argmax_last_axis(grouped: np.ndarray, last: bool) -> np.ndarray:
    """Index of the maximum along the last axis: the first one, or the last one when ``last``.

    NaN counts as greater than every number (NumPy's argmax rule), so the first (last) NaN wins.
    """
    if not last:
        return grouped.argmax(axis=-1)
    n = grouped.shape[-1]
    return (n - 1) - grouped[..., ::-1].argmax(axis=-1)
