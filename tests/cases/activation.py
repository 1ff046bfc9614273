"""Cases of the ACTIVATION_* family."""

from __future__ import annotations

import math

import activation_reference as act
import numpy as np
import reference as ref

import opendml as dml
from opendml.kernels import kernel_for

from . import Case, Example, random_values, register

OT = dml.OperatorType

#: FLOAT32 bounds of the softmaxes in ulps of the exact value, per kernel backend (README "Speed"): the reference
#: kernels round the float64 value once; the compiled LOG_SOFTMAX1 forms its usual outputs in float32 (about 1.6
#: ulp at worst), the compiled SOFTMAX1 computes in float32. FLOAT16: 1 ulp on both.
FLOAT32_ULPS = {"reference": {"log_softmax": 1, "softmax": 1}, "compiled": {"log_softmax": 2, "softmax": 3}}


def float32_ulps(op: str, device: dml.Device) -> int:
    """FLOAT32_ULPS[op] of the backend that ``device`` runs ACTIVATION_LOG_SOFTMAX1 / SOFTMAX1 on."""
    operator = {"log_softmax": OT.ACTIVATION_LOG_SOFTMAX1, "softmax": OT.ACTIVATION_SOFTMAX1}[op]
    return FLOAT32_ULPS[kernel_for(operator, device.kernels)[0]][op]


UNARY = ("InputTensor", "OutputTensor")
AXES = ("InputTensor", "OutputTensor", "AxisCount", "Axes")


def random_axes(rank: int, rng: np.random.Generator) -> dict:
    """A non-empty subset of the axes, listed in random order (the order must never matter)."""
    count = int(rng.integers(1, rank + 1))
    return {"axes": tuple(int(a) for a in rng.permutation(rank)[:count])}


def bits_equal(got, expected, desc, inputs) -> None:
    ref.assert_bits_equal(got, expected.astype(got.dtype))


def log_softmax_bound(got, expected, desc, inputs) -> None:
    """LOG_SOFTMAX1, LOG_SOFTMAX: within the compiled kernel's bounds (the looser: FLOAT32_ULPS)."""
    ref.assert_log_softmax_close(got, expected, float32_ulps=FLOAT32_ULPS["compiled"]["log_softmax"])


def softmax_bound(got, expected, desc, inputs) -> None:
    """SOFTMAX1, SOFTMAX: within the compiled kernel's bounds (the looser: FLOAT32_ULPS)."""
    ref.assert_log_softmax_close(got, expected, float32_ulps=FLOAT32_ULPS["compiled"]["softmax"])


def effective_rank_2(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Leading sizes set to 1 so that at most the last two dimensions count (an effective rank of at most 2)."""
    return tuple(1 if d < len(sizes) - 2 else size for d, size in enumerate(sizes))


def axes_case(op, reference, check, examples=()) -> Case:
    """An operator over ``Axes`` whose output has the input's shape (HARDMAX1, LOG_SOFTMAX1, SOFTMAX1)."""
    return Case(
        op,
        AXES,
        reference=lambda desc, inputs: [reference(inputs[0], desc.axes)],
        check=check,
        params=random_axes,
        examples=examples,
    )


# The page input of HARDMAX1 (and, by erratum, of LOG_SOFTMAX1).
PAGE = np.array([[[12, 0], [-101, 11]], [[3, 234], [0, -101]]], np.float32)
f32 = lambda values: np.array(values, np.float32)  # noqa: E731

register(
    axes_case(
        OT.ACTIVATION_HARDMAX1,
        ref.hardmax1,
        bits_equal,
        examples=(
            Example("axes 1", (PAGE,), (f32([[[1, 0], [0, 1]], [[1, 1], [0, 0]]]),), {"axes": (1,)}),
            Example("axes 0", (PAGE,), (f32([[[1, 0], [0, 1]], [[0, 1], [1, 0]]]),), {"axes": (0,)}),
            Example("axes 0 2", (PAGE,), (f32([[[0, 0], [0, 1]], [[0, 1], [0, 0]]]),), {"axes": (0, 2)}),
        ),
    ),
    axes_case(
        OT.ACTIVATION_LOG_SOFTMAX1,
        ref.log_softmax1,
        log_softmax_bound,
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
    axes_case(OT.ACTIVATION_SOFTMAX1, ref.softmax1, softmax_bound),
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
            (OT.ACTIVATION_LOG_SOFTMAX, ref.log_softmax1, log_softmax_bound),
            (OT.ACTIVATION_SOFTMAX, ref.softmax1, softmax_bound),
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


# ----------------------------------------------------------------------------------------------------------------
# The element-wise activations (issue 10). None of their pages prints an example; the references are the plain
# Python loops of tests/activation_reference.py, the bounds those of the README's accuracy table.
# ----------------------------------------------------------------------------------------------------------------


_SPECIALS = (np.nan, np.inf, -np.inf, -0.0, 0.0, 30.0, -30.0, 100.0, -100.0, 1e-3)


def activation_values(c_name, dtype, shape, rng):
    """random_values, with NaN, infinities, signed zeros and large magnitudes sprinkled in half the time."""
    values = random_values(c_name, dtype, shape, rng)
    if dtype.kind == "f" and values.size and rng.random() < 0.5:
        flat = values.reshape(-1)
        where = rng.choice(flat.size, size=max(1, flat.size // 4), replace=False)
        flat[where] = rng.choice(np.array(_SPECIALS, dtype), size=where.size)
    return values


def floats(*names, low=-2.0, high=2.0, zero=True):
    """params(): each named FLOAT uniform in [low, high], and exactly 0 now and then (the limits' decisions)."""

    def params(rank, rng):
        return {name: 0.0 if zero and rng.random() < 0.15 else float(rng.uniform(low, high)) for name in names}

    return params


def unary(op, header_extra, element, check, params=lambda rank, rng: {}):
    """The case of an activation of InputTensor into OutputTensor with FLOAT fields ``header_extra``."""
    names = [ref_name(n) for n in header_extra]

    def reference(desc, inputs):
        values = act.params32(desc, *names)
        return [act.elementwise(lambda v: element(v, *values), inputs[0])]

    return Case(op, UNARY + header_extra, reference=reference, check=check, params=params, values=activation_values)


def ref_name(c_name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in c_name).lstrip("_")


def shrink_reference(desc, inputs):
    x = inputs[0]
    bias, threshold = act.params32(desc, "bias", "threshold")
    if x.dtype.kind == "f":
        return [act.elementwise(lambda v: act.shrink(v, bias, threshold), x)]
    info = np.iinfo(x.dtype)
    return [act.elementwise(lambda v: act.shrink(v, bias, threshold, int(info.min), int(info.max)), x)]


def prelu_reference(desc, inputs):
    x, slope = inputs
    bits = None if x.dtype.kind == "f" else 8 * x.dtype.itemsize
    return [act.elementwise(lambda v, s: act.parameterized_relu(v, s, bits), x, slope)]


EXACT, ONE_ULP = bits_equal, act.check_ulps(1)
#: The compiled float32 SIGMOID, TANH and GELU (issue 10) are within 2 ulp (README, accuracy table); float16 within 1.
COMPILED_ULPS = act.check_ulps(2, 1)

register(
    unary(OT.ACTIVATION_ELU, ("Alpha",), act.elu, ONE_ULP, floats("alpha")),
    unary(OT.ACTIVATION_IDENTITY, (), lambda v: v, EXACT),
    unary(OT.ACTIVATION_LEAKY_RELU, ("Alpha",), act.leaky_relu, EXACT, floats("alpha")),
    unary(OT.ACTIVATION_LINEAR, ("Alpha", "Beta"), act.linear, ONE_ULP, floats("alpha", "beta")),
    Case(
        OT.ACTIVATION_PARAMETERIZED_RELU,
        ("InputTensor", "SlopeTensor", "OutputTensor"),
        reference=prelu_reference,
        check=EXACT,
        values=activation_values,
    ),
    unary(
        OT.ACTIVATION_PARAMETRIC_SOFTPLUS, ("Alpha", "Beta"), act.parametric_softplus, ONE_ULP, floats("alpha", "beta")
    ),
    unary(OT.ACTIVATION_RELU, (), act.relu, EXACT),
    unary(OT.ACTIVATION_SCALED_ELU, ("Alpha", "Gamma"), act.scaled_elu, ONE_ULP, floats("alpha", "gamma")),
    unary(OT.ACTIVATION_SCALED_TANH, ("Alpha", "Beta"), act.scaled_tanh, ONE_ULP, floats("alpha", "beta")),
    unary(OT.ACTIVATION_SIGMOID, (), act.sigmoid, COMPILED_ULPS),
    unary(
        OT.ACTIVATION_SOFTPLUS,
        ("Steepness",),
        act.softplus_steepness,
        ONE_ULP,
        floats("steepness", low=1, high=4, zero=False),
    ),
    unary(OT.ACTIVATION_SOFTSIGN, (), act.softsign, ONE_ULP),
    unary(OT.ACTIVATION_TANH, (), math.tanh, COMPILED_ULPS),
    unary(OT.ACTIVATION_THRESHOLDED_RELU, ("Alpha",), act.thresholded_relu, EXACT, floats("alpha")),
    Case(
        OT.ACTIVATION_SHRINK,
        ("InputTensor", "OutputTensor", "Bias", "Threshold"),
        reference=shrink_reference,
        check=EXACT,
        params=floats("bias", "threshold", low=-3, high=3),
        values=activation_values,
    ),
    unary(OT.ACTIVATION_CELU, ("Alpha",), act.celu, ONE_ULP, floats("alpha")),
    Case(
        OT.ACTIVATION_RELU_GRAD,
        ("InputTensor", "InputGradientTensor", "OutputGradientTensor"),
        reference=lambda desc, inputs: [act.elementwise(act.relu_grad, *inputs)],
        check=EXACT,
        values=activation_values,
    ),
    unary(OT.ACTIVATION_GELU, (), act.gelu, COMPILED_ULPS),
    unary(OT.ACTIVATION_SWISH, ("SigmoidInputScale",), act.swish, ONE_ULP, floats("sigmoid_input_scale")),
    unary(OT.ACTIVATION_HARD_SWISH, ("Alpha", "Beta"), act.hard_swish, ONE_ULP, floats("alpha", "beta")),
)
