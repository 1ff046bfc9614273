"""Structs of scalars that descriptors hold: ``DML_SCALE_BIAS``, ``DML_SIZE_2D`` (mirrored mechanically)."""

from __future__ import annotations

from .schema import float_field, struct, uint_field

__all__ = ["ScaleBias", "Size2D"]


@struct("DML_SCALE_BIAS")
class ScaleBias:
    """``DML_SCALE_BIAS``: an element-wise operator computes ``f(x * scale + bias)`` when it is given."""

    scale: float = float_field()
    bias: float = float_field()


@struct("DML_SIZE_2D")
class Size2D:
    """``DML_SIZE_2D``."""

    width: int = uint_field()
    height: int = uint_field()
