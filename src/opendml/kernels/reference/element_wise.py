"""ELEMENT_WISE_* kernels."""

from __future__ import annotations

import numpy as np

from ...enums import OperatorType
from .. import register


@register(OperatorType.ELEMENT_WISE_IF)
def element_wise_if(desc, inputs, outputs) -> None:
    """``a if condition != 0 else b``, selected as raw bits (NaN payloads and -0.0 survive).

    A bitwise select, ``b ^ ((a ^ b) & mask)``, runs several times faster in NumPy than a masked copy.
    The output never aliases ``a`` or ``b`` (IF does not run in place; binding refuses it).
    """
    (condition, a, b), (out,) = inputs, outputs
    bits = np.dtype(f"u{out.itemsize}")
    mask = (condition != 0).astype(bits)
    np.negative(mask, out=mask)  # 1 -> all bits set
    raw, b_raw = out.view(bits), b.view(bits)
    np.bitwise_xor(a.view(bits), b_raw, out=raw)
    np.bitwise_and(raw, mask, out=raw)
    np.bitwise_xor(raw, b_raw, out=raw)


from .. import apply_fused_activation  # noqa: E402


@register(OperatorType.ELEMENT_WISE_ADD1)
def element_wise_add1(desc, inputs, outputs) -> None:
    """``FusedActivation(a + b)``: the IEEE sum in the tensors' type, correctly rounded (NumPy adds FLOAT16 in
    float32, whose 24 bits make that double rounding innocuous), then the fused activation, on the output in
    place."""
    (a, b), (out,) = inputs, outputs
    with np.errstate(all="ignore"):  # inf + -inf is NaN and an overflow is inf: results, not warnings
        np.add(a, b, out=out)
    apply_fused_activation(desc, outputs)
