"""Cases of the reductions (ARGMAX; REDUCE, ARGMIN and the softmax family join here)."""

from __future__ import annotations

import numpy as np
import reference as ref

import opendml as dml

from . import Case, Example, register
from .activation import bits_equal, random_axes

OT = dml.OperatorType
T = dml.TensorDataType


def argmax_params(rank: int, rng: np.random.Generator) -> dict:
    return {**random_axes(rank, rng), "axis_direction": dml.AxisDirection(int(rng.integers(2)))}


ARGMAX_PAGE = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)
u32 = lambda values: np.array(values, np.uint32)  # noqa: E731
INCREASING, DECREASING = dml.AxisDirection.INCREASING, dml.AxisDirection.DECREASING

register(
    Case(
        OT.ARGMAX,
        ("InputTensor", "OutputTensor", "AxisCount", "Axes", "AxisDirection"),
        reference=lambda desc, inputs: [ref.argmax(inputs[0], desc.axes, int(desc.axis_direction))],
        check=bits_equal,
        params=argmax_params,
        examples=(
            Example(
                "axes 0",
                (ARGMAX_PAGE,),
                (u32([[1, 2, 1]]),),
                {"axes": (0,), "axis_direction": INCREASING},
                {"OutputTensor": T.UINT32},
            ),
            Example(
                "axes 1",
                (ARGMAX_PAGE,),
                (u32([[2], [2], [1]]),),
                {"axes": (1,), "axis_direction": INCREASING},
                {"OutputTensor": T.UINT32},
            ),
            Example(
                "axes 0 1",
                (ARGMAX_PAGE,),
                (u32([[7]]),),
                {"axes": (0, 1), "axis_direction": INCREASING},
                {"OutputTensor": T.UINT32},
            ),
            Example(
                "increasing",
                (np.array([3, 2, 1, 2, 3], np.float32),),
                (u32([0]),),
                {"axes": (0,), "axis_direction": INCREASING},
                {"OutputTensor": T.UINT32},
            ),
            Example(
                "decreasing",
                (np.array([3, 2, 1, 2, 3], np.float32),),
                (u32([4]),),
                {"axes": (0,), "axis_direction": DECREASING},
                {"OutputTensor": T.UINT32},
            ),
        ),  # fmt: skip
    ),
)
