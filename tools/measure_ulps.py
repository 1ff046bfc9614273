"""Measure the compiled transcendental kernels' error in ulps: ``python tools/measure_ulps.py [--step N] [--isa X]``.

FLOAT16: every value. FLOAT32: every ``step``-th bit pattern (1: all 2^32). The exact value is NumPy's float64
function rounded to the type (the reference kernel's formula); the distance counts representable values between.
Also checks that NaN, infinities and signed zeros come out as the reference kernel's, bit for bit.
"""

from __future__ import annotations

import argparse

import numpy as np

from opendml import _core
from opendml._core import _native
from opendml.enums import OperatorType as OT
from opendml.kernels import KERNELS
from opendml.kernels.reference._special import erfc

EXACT = {
    "EXP": (_native.OP_EXP, np.exp, OT.ELEMENT_WISE_EXP),
    "SIGMOID": (_native.OP_SIGMOID, lambda x: 1.0 / (1.0 + np.exp(-x)), OT.ACTIVATION_SIGMOID),
    "TANH": (_native.OP_TANH, np.tanh, OT.ACTIVATION_TANH),
    "GELU": (
        _native.OP_GELU,
        lambda x: np.where(x == -np.inf, -0.0, x * 0.5 * erfc(x * -(0.5**0.5))),
        OT.ACTIVATION_GELU,
    ),
}


def ordered(a: np.ndarray) -> np.ndarray:
    bits = a.view(np.dtype(f"u{a.itemsize}")).astype(np.int64)
    sign = 1 << (8 * a.itemsize - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


def worst(op: int, function, x: np.ndarray) -> tuple[int, float]:
    got = np.empty_like(x)
    _native.elementwise(op, (x,), got)
    with np.errstate(all="ignore"):
        exact = function(x.astype(np.float64)).astype(x.dtype)
    finite = np.isfinite(exact) | np.isfinite(got)
    distance = np.abs(ordered(got) - ordered(exact))
    distance = np.where(np.isnan(exact) & np.isnan(got), 0, distance)
    i = int(np.argmax(np.where(finite, distance, 0)))
    return int(distance[i]), float(x[i])


def specials(name: str, op: int, reference, dtype) -> None:
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 100.0, -100.0, 20.0, -20.0], dtype)
    got, want = np.empty_like(x), np.empty_like(x)
    _native.elementwise(op, (x,), got)
    reference(None, (x,), (want,))
    assert got.tobytes() == want.tobytes(), f"{name} {np.dtype(dtype).name}: specials {got} != reference {want}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--step", type=int, default=97)
    parser.add_argument("--isa", default=None)
    parser.add_argument("--ops", nargs="+", default=list(EXACT))
    args = parser.parse_args()
    if args.isa:
        _core.set_isa(args.isa)
    print(f"ISA {_core.isa()}; float32 every {args.step}th bit pattern")
    for name in args.ops:
        op, function, operator_type = EXACT[name]
        reference = KERNELS[operator_type]["reference"]
        for dtype in (np.float32, np.float16):
            specials(name, op, reference, dtype)
        halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
        f16 = worst(op, function, halves)
        f32 = (0, 0.0)
        chunk = 1 << 24
        for start in range(0, 1 << 32, chunk * args.step):
            bits = np.arange(start, min(start + chunk * args.step, 1 << 32), args.step, dtype=np.uint64)
            f32 = max(f32, worst(op, function, bits.astype(np.uint32).view(np.float32)))
        print(f"{name}: float32 max {f32[0]} ulp (at {f32[1]!r}), float16 max {f16[0]} ulp (at {f16[1]!r})")


if __name__ == "__main__":
    main()
