"""Cases of the reductions: ARGMAX, ARGMIN, REDUCE (the softmax family is in activation.py)."""

from __future__ import annotations

import numpy as np
import reference as ref

import opendml as dml

from . import Case, Example, register
from .activation import bits_equal, random_axes

OT = dml.OperatorType
T = dml.TensorDataType
RF = dml.ReduceFunction


def argmax_params(rank: int, rng: np.random.Generator) -> dict:
    return {**random_axes(rank, rng), "axis_direction": dml.AxisDirection(int(rng.integers(2)))}


ARGMAX_PAGE = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)
u32 = lambda values: np.array(values, np.uint32)  # noqa: E731
INCREASING, DECREASING = dml.AxisDirection.INCREASING, dml.AxisDirection.DECREASING


def index_example(name, expected, axes, direction=INCREASING, x=ARGMAX_PAGE):
    """A page example of ARGMAX or ARGMIN: UINT32 indices."""
    return Example(
        name, (x,), (u32(expected),), {"axes": axes, "axis_direction": direction}, {"OutputTensor": T.UINT32}
    )


def index_case(op, reference, examples):
    """ARGMAX and ARGMIN: mirrored pages, one shape of case."""
    return Case(
        op,
        ("InputTensor", "OutputTensor", "AxisCount", "Axes", "AxisDirection"),
        reference=lambda desc, inputs: [reference(inputs[0], desc.axes, int(desc.axis_direction))],
        check=bits_equal,
        params=argmax_params,
        examples=examples,
    )


TIES_MAX, TIES_MIN = np.array([3, 2, 1, 2, 3], np.float32), np.array([1, 2, 3, 2, 1], np.float32)
register(
    index_case(
        OT.ARGMAX,
        ref.argmax,
        (
            index_example("axes 0", [[1, 2, 1]], (0,)),
            index_example("axes 1", [[2], [2], [1]], (1,)),
            index_example("axes 0 1", [[7]], (0, 1)),
            index_example("increasing", [0], (0,), x=TIES_MAX),
            index_example("decreasing", [4], (0,), DECREASING, x=TIES_MAX),
        ),
    ),
    index_case(
        OT.ARGMIN,
        ref.argmin,
        (
            index_example("axes 0", [[0, 1, 2]], (0,)),
            index_example("axes 1", [[0], [1], [0]], (1,)),
            index_example("axes 0 1", [[4]], (0, 1)),
            index_example("increasing", [0], (0,), x=TIES_MIN),
            index_example("decreasing", [4], (0,), DECREASING, x=TIES_MIN),
        ),
    ),
)

# REDUCE's page example input (the third row is [2, 4, 2], unlike ARGMAX's [2, 5, 2]).
REDUCE_PAGE = np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], np.float32)
_EXACT = (RF.ARGMAX, RF.ARGMIN, RF.MAX, RF.MIN)


def reduce_check(got, expected, desc, inputs) -> None:
    """Indices, MAX/MIN and integer results are exact; float results within the README's bounds: 1 ulp of the
    output type, plus what float64 accumulation of n terms may lose where a sum cancels (n 2^-52 of the sum of
    magnitudes; for LOG_SUM that over the sum, for LOG_SUM_EXP 2^-50 of the result's parts)."""
    if desc.function in _EXACT or not np.issubdtype(got.dtype, np.floating):
        return bits_equal(got, expected, desc, inputs)
    x = inputs[0].astype(np.float64)
    n = x.size // expected.size
    with np.errstate(all="ignore"):
        magnitudes = np.abs(x).sum(axis=tuple(desc.axes), keepdims=True)
        slack = {
            RF.SUM: n * 2.0**-52 * magnitudes,
            RF.AVERAGE: 2.0**-52 * magnitudes,
            RF.LOG_SUM: n * 2.0**-52 * magnitudes / np.abs(np.exp(expected)),
            RF.LOG_SUM_EXP: 2.0**-50 * (np.abs(x).max(axis=tuple(desc.axes), keepdims=True) + np.log(n)),
        }.get(desc.function, 0.0)
        ref.assert_float_close(got, expected, np.nan_to_num(slack, nan=0.0, posinf=0.0), str(desc.function))


def reduce_example(name, function, axes, expected, x=REDUCE_PAGE, output=None):
    output_types = {"OutputTensor": output} if output else {}
    return Example(name, (x,), (expected,), {"function": function, "axes": axes}, output_types)


f32 = lambda values: np.array(values, np.float32)  # noqa: E731

register(
    Case(
        OT.REDUCE,
        ("Function", "InputTensor", "OutputTensor", "AxisCount", "Axes"),
        reference=lambda desc, inputs: [ref.reduce(inputs[0], desc.function.name, desc.axes)],
        check=reduce_check,
        params=lambda rank, rng: {**random_axes(rank, rng), "function": RF(int(rng.integers(len(RF))))},
        examples=(
            reduce_example("sum axes 0", RF.SUM, (0,), f32([[6, 6, 9]])),
            reduce_example("sum axes 1", RF.SUM, (1,), f32([[6], [7], [8]])),
            reduce_example("sum axes 0 1", RF.SUM, (0, 1), f32([[21]])),
            # DxDispatch's dml_reduce.json: 1..9 as {1,1,3,3}, summed over axis 3.
            reduce_example(
                "dml_reduce.json",
                RF.SUM,
                (3,),
                f32([6, 15, 24]).reshape(1, 1, 3, 1),
                x=np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3),
            ),
            reduce_example("argmax axes 0 1 (as ARGMAX)", RF.ARGMAX, (0, 1), u32([[7]]), ARGMAX_PAGE, T.UINT32),
            reduce_example("argmin axes 0 1 (as ARGMIN)", RF.ARGMIN, (0, 1), u32([[4]]), ARGMAX_PAGE, T.UINT32),
        ),
    ),
)
