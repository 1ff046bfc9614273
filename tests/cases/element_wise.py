"""Cases of the ELEMENT_WISE_* family."""

from __future__ import annotations

import numpy as np
import reference as ref

import opendml as dml

from . import Case, Example, random_values, register
from .activation import bits_equal

OT = dml.OperatorType


def condition_values(c_name, dtype, shape, rng):
    """Conditions are any UINT8: 0 is false, every other value true."""
    if c_name == "ConditionTensor":
        return rng.choice(np.array([0, 0, 1, 7, 255], np.uint8), size=shape)
    return random_values(c_name, dtype, shape, rng)


register(
    Case(
        OT.ELEMENT_WISE_IF,
        ("ConditionTensor", "ATensor", "BTensor", "OutputTensor"),
        reference=lambda desc, inputs: [ref.element_wise_if(*inputs)],
        check=bits_equal,
        values=condition_values,
        examples=(
            Example(
                "page example",
                (
                    np.array([[1, 0], [1, 1]], np.uint8),
                    np.array([[1, 2], [3, 4]], np.float32),
                    np.array([[9, 8], [7, 6]], np.float32),
                ),
                (np.array([[1, 8], [3, 4]], np.float32),),
            ),  # fmt: skip
        ),
    ),
)
