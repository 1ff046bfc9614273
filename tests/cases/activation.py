"""Cases of the ACTIVATION_* family."""

from __future__ import annotations

import numpy as np
import reference as ref

import opendml as dml

from . import Case, Example, register

OT = dml.OperatorType
UNARY = ("InputTensor", "OutputTensor")
AXES = ("InputTensor", "OutputTensor", "AxisCount", "Axes")


def random_axes(rank: int, rng: np.random.Generator) -> dict:
    """A non-empty subset of the axes, listed in random order (the order must never matter)."""
    count = int(rng.integers(1, rank + 1))
    return {"axes": tuple(int(a) for a in rng.permutation(rank)[:count])}


def bits_equal(got, expected, desc, inputs) -> None:
    ref.assert_bits_equal(got, expected.astype(got.dtype))


def within_1_ulp(got, expected, desc, inputs) -> None:
    ref.assert_log_softmax_close(got, expected)


def effective_rank_2(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Leading sizes set to 1 so that at most the last two dimensions count (an effective rank of at most 2)."""
    return tuple(1 if d < len(sizes) - 2 else size for d, size in enumerate(sizes))


# The page input of HARDMAX1 (and, by erratum, of LOG_SOFTMAX1).
PAGE = np.array([[[12, 0], [-101, 11]], [[3, 234], [0, -101]]], np.float32)
f32 = lambda values: np.array(values, np.float32)  # noqa: E731

register(
    Case(
        OT.ACTIVATION_HARDMAX1,
        AXES,
        reference=lambda desc, inputs: [ref.hardmax1(inputs[0], desc.axes)],
        check=bits_equal,
        params=random_axes,
        examples=(
            Example("axes 1", (PAGE,), (f32([[[1, 0], [0, 1]], [[1, 1], [0, 0]]]),), {"axes": (1,)}),
            Example("axes 0", (PAGE,), (f32([[[1, 0], [0, 1]], [[0, 1], [1, 0]]]),), {"axes": (0,)}),
            Example("axes 0 2", (PAGE,), (f32([[[0, 0], [0, 1]], [[0, 1], [0, 0]]]),), {"axes": (0, 2)}),
        ),
    ),
    Case(
        OT.ACTIVATION_LOG_SOFTMAX1,
        AXES,
        reference=lambda desc, inputs: [ref.log_softmax1(inputs[0], desc.axes)],
        check=within_1_ulp,
        params=random_axes,
        # The page shows HARDMAX1's outputs (erratum): these are the true values, printed to 7 digits.
        examples=(
            Example(
                "axes 1 (true values)",
                (PAGE,),
                (f32([[[0, -11.00002], [-113, -1.670156e-05]], [[-0.04858735, 0], [-3.048587, -335]]]),),
                {"axes": (1,)},
                rtol=5e-7,
                atol=1.5e-44,
            ),
            Example(
                "axes 0 2 (true values)",
                (PAGE,),
                (f32([[[-222, -234], [-112, -1.670156e-05]], [[-231, 0], [-11.00002, -112]]]),),
                {"axes": (0, 2)},
                rtol=5e-7,
                atol=1.5e-44,
            ),
        ),  # fmt: skip
    ),
    # The softmax family: SOFTMAX1 over any axes; the v0 operators over the last axis of an input of effective
    # rank at most 2 (their pages have no examples; the equivalences with the *1 operators are tested separately).
    Case(
        OT.ACTIVATION_SOFTMAX1,
        AXES,
        reference=lambda desc, inputs: [ref.softmax1(inputs[0], desc.axes)],
        check=within_1_ulp,
        params=random_axes,
    ),
    *(
        Case(
            op,
            UNARY,
            reference=lambda desc, inputs, one=one: [one(inputs[0], (inputs[0].ndim - 1,))],
            check=check,
            shape=effective_rank_2,
        )
        for op, one, check in (
            (OT.ACTIVATION_HARDMAX, ref.hardmax1, bits_equal),
            (OT.ACTIVATION_LOG_SOFTMAX, ref.log_softmax1, within_1_ulp),
            (OT.ACTIVATION_SOFTMAX, ref.softmax1, within_1_ulp),
        )
    ),
    Case(
        OT.ACTIVATION_HARD_SIGMOID,
        ("InputTensor", "OutputTensor", "Alpha", "Beta"),
        reference=lambda desc, inputs: [ref.hard_sigmoid(inputs[0], desc.alpha, desc.beta)],
        check=lambda got, expected, desc, inputs: ref.assert_hard_sigmoid_close(
            got, expected, inputs[0], desc.alpha, desc.beta
        ),
        params=lambda rank, rng: {"alpha": float(rng.uniform(-2, 2)), "beta": float(rng.uniform(-1, 1))},
        examples=(
            Example(
                "typical defaults",
                (f32([-3.0, -2.5, -1.0, 0.0, 1.0, 2.5, 3.0]).reshape(1, 1, 1, 7),),
                (f32([0, 0, 0.3, 0.5, 0.7, 1, 1]).reshape(1, 1, 1, 7),),
                {"alpha": 0.2, "beta": 0.5},
                rtol=1e-7,
                atol=1e-7,
            ),
        ),
    ),
)
