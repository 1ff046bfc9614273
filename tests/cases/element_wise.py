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


# ELEMENT_WISE_ADD1 (issue 10): the first host of a fused activation. Its case fuses a random fusable activation
# half the time; the reference and the bound are then the activation's own, applied to the rounded sum.

import math  # noqa: E402

from . import CASES  # noqa: E402
from .activation import activation_values  # noqa: E402


def add1_params(rank, rng):
    if rng.random() < 0.5:
        return {}
    fusable = [s for s in dml.REGISTRY.values() if s.fusable]
    chosen = fusable[int(rng.integers(len(fusable)))]
    return {"fused_activation": chosen.desc_class(**CASES[chosen.operator_type].params(rank, rng))}


def rounded_sum(inputs) -> np.ndarray:
    a, b = inputs
    with np.errstate(all="ignore"):  # inf + -inf is NaN, as it should be
        return (a.astype(np.float64) + b.astype(np.float64)).astype(a.dtype)  # exact sum, rounded once


def add1_reference(desc, inputs):
    total = rounded_sum(inputs)
    if desc.fused_activation is None:
        return [total.astype(np.float64)]
    return CASES[desc.fused_activation.operator_type].reference(desc.fused_activation, [total])


def add1_check(got, expected, desc, inputs):
    if desc.fused_activation is None:
        bits_equal(got, expected, desc, inputs)
    else:
        CASES[desc.fused_activation.operator_type].check(got, expected, desc.fused_activation, [rounded_sum(inputs)])


register(
    Case(
        OT.ELEMENT_WISE_ADD1,
        ("ATensor", "BTensor", "OutputTensor", "FusedActivation"),
        reference=add1_reference,
        check=add1_check,
        params=add1_params,
        values=activation_values,
        examples=(
            Example(
                "DxDispatch's dml_element_wise_add1.json: a fused ELU of Alpha 0.5",
                (np.array([1, 2, 3], np.float32), np.array([5, 8, -5], np.float32)),
                (np.array([6, 10, 0.5 * math.expm1(-2)], np.float32),),
                {"fused_activation": dml.ActivationEluOperatorDesc(alpha=0.5)},
            ),
        ),
    ),
)
