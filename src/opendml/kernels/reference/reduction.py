"""Reduction kernels: ARGMAX."""

from __future__ import annotations

import numpy as np

from ...enums import AxisDirection, OperatorType
from .. import register
from ._axes import first_argmax_last_axis, group_reduced_last


@register(OperatorType.ARGMAX)
def argmax(desc, inputs, outputs) -> None:
    """Row-major index over ``desc.axes`` of the first (INCREASING) or last (DECREASING) maximum."""
    (x,), (out,) = inputs, outputs
    grouped, _ = group_reduced_last(x, desc.axes)
    index = first_argmax_last_axis(grouped, last=desc.axis_direction == AxisDirection.DECREASING)
    np.copyto(out, index.reshape(out.shape), casting="unsafe")  # validation proved every index fits
