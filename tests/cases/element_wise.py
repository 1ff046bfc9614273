"""Cases of the ELEMENT_WISE_* family."""

from __future__ import annotations

import math

import numpy as np
import reference as ref
import reference_element_wise as ew

import opendml as dml

from . import CASES, Case, Example, FromTypes, random_values, register
from .activation import activation_values, bits_equal

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


# ----------------------------------------------------------------------------------------------------------------
# Arithmetic and transcendental members: an element function each, applied by the naive loop of
# reference_element_wise to the (scaled) input. None of their pages prints an example; the examples below pin
# opendml's decisions where the pages are silent (README "Semantics and decisions").
# ----------------------------------------------------------------------------------------------------------------


T = dml.TensorDataType
UNARY = ("InputTensor", "OutputTensor")
SCALED = (*UNARY, "ScaleBias")
BINARY = ("ATensor", "BTensor", "OutputTensor")
CLIP_GRAD_TENSORS = ("InputTensor", "InputGradientTensor", "OutputGradientTensor")
F32 = np.dtype(np.float32)


def _out_dtype(desc) -> np.dtype:
    output = getattr(desc, "output_tensor", None) or desc.output_gradient_tensor
    return ref.numpy_dtype(output.data_type)


def _ordered(array: np.ndarray) -> np.ndarray:
    """Float bits as integers ordered like the values (+0 and -0 both 0; infinity next after the largest)."""
    bits = array.view(np.dtype(f"u{array.itemsize}")).astype(np.int64)
    sign = 1 << (8 * array.itemsize - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


def within_ulps(bound: int | tuple[int, int]):
    """The check of a computed member: NaN exactly where the reference is NaN, elsewhere within ``bound`` units
    in the last place of the reference rounded to the output type (0: the same value, bit for bit); a pair is
    (float32, float16) bounds."""

    def check(got, expected, desc, inputs) -> None:
        if got.dtype.kind != "f":
            np.testing.assert_array_equal(got, expected.astype(got.dtype))
            return
        ulps = bound if isinstance(bound, int) else bound[got.dtype == np.float16]
        with np.errstate(over="ignore"):
            rounded = expected.astype(got.dtype)
        nan = np.isnan(rounded)
        np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"NaN positions differ: {got} vs {rounded}")
        if ulps == 0:
            ref.assert_bits_equal(np.where(nan, 0, got).astype(got.dtype), np.where(nan, 0, rounded).astype(got.dtype))
            return
        distance = np.abs(_ordered(got) - _ordered(rounded))[~nan]
        assert distance.size == 0 or distance.max() <= ulps, (
            f"{int(distance.max())} ulps from the reference: got {got}, expected {rounded}")  # fmt: skip

    return check


exact = within_ulps(0)


def scale_bias_params(rank: int, rng: np.random.Generator) -> dict:
    """ScaleBias half the time (absent the other half, as a NULL pointer)."""
    if rng.random() < 0.5:
        return {}
    return {"scale_bias": dml.ScaleBias(scale=float(rng.choice([0.5, 2.0, -1.0, 1.25])),
                                        bias=float(rng.choice([0.0, 1.0, -0.75])))}  # fmt: skip


def domain(low: float, high: float):
    """Float inputs spread over [low, high] (a function's domain, a little beyond); integers as usual."""

    def values(c_name, dtype, shape, rng):
        if np.issubdtype(dtype, np.integer):
            return random_values(c_name, dtype, shape, rng)
        return rng.uniform(low, high, size=shape).astype(dtype)

    return values


def unary(op, element, *, header=SCALED, ulps=0, params=scale_bias_params, values=None, examples=()):
    """A unary member: ``element(desc, dtype)`` gives the function of one (scaled) element."""

    def reference(desc, inputs):
        dtype = _out_dtype(desc)
        function = element(desc, dtype)
        return [ew.elementwise(lambda x: function(ew.scaled(x, desc, dtype)), dtype, inputs[0])]

    return Case(op, header, reference=reference, check=within_ulps(ulps), params=params, values=values,
                examples=examples)  # fmt: skip


def simple(function):
    """A unary element function that needs neither the descriptor nor the type."""
    return lambda desc, dtype: function


def same(function):
    """A binary element function for every type."""
    return lambda dtype: function


def binary(op, element, *, ulps=0, values=None, examples=()):
    """A binary member: ``element(dtype)`` gives the function of one pair of elements."""

    def reference(desc, inputs):
        dtype = _out_dtype(desc)
        return [ew.elementwise(element(dtype), dtype, *inputs)]

    return Case(op, BINARY, reference=reference, check=within_ulps(ulps), values=values, examples=examples)


def by_kind(floats, integers):
    return lambda dtype: floats if dtype.kind == "f" else integers


def difference_square(dtype):
    if dtype.kind != "f":
        return lambda a, b: (a - b) ** 2
    return lambda a, b: ew.float_in(ew.float_in(a - b, dtype) ** 2, dtype)  # each operation rounds in the type


def pow_element(desc, dtype):
    def element(x, e):
        if dtype.kind == "f":
            return ew.power(x, float(e))
        if isinstance(e, int):
            return ew.integer_power(x, e, dtype)
        return ew.to_integer(ew.power(float(x), e), dtype)

    return element


def pow_reference(desc, inputs):
    dtype = _out_dtype(desc)
    element = pow_element(desc, dtype)
    return [ew.elementwise(lambda x, e: element(ew.scaled(x, desc, dtype), e), dtype, *inputs)]


def clip_params(rank, rng):
    low, high = sorted(rng.uniform(-3, 3, size=2))
    if rng.random() < 0.2:
        low, high = high, low  # Min > Max: the formula's order decides
    return {**scale_bias_params(rank, rng), "min": float(low), "max": float(high)}


def union_bounds(rng, output: str) -> dict:
    """MinMaxDataType, Min and Max for CLIP1 / CLIP_GRAD1: the output's type, values of that type."""
    u = rng.uniform(-3, 3, size=2)

    def bound(i):
        def resolve(types):
            dtype = ref.numpy_dtype(types[output])
            value = float(u[i]) if dtype.kind == "f" else int(np.rint(u[i]))
            return abs(value) if dtype.kind == "u" else value

        return FromTypes(resolve)

    return {"min_max_data_type": FromTypes(lambda types: types[output]), "min": bound(0), "max": bound(1)}


def clip_element(desc, dtype):
    low, high = ew.clip_bound(desc.min, dtype), ew.clip_bound(desc.max, dtype)
    return lambda x: ew.ieee_min(high, ew.ieee_max(low, x))


def clip1_element(desc, dtype):
    low, high = (ew.union_value(v, desc.min_max_data_type) for v in (desc.min, desc.max))
    return lambda x: ew.ieee_max(low, ew.ieee_min(x, high))


def clip_grad_reference(bounds):
    def reference(desc, inputs):
        dtype = _out_dtype(desc)
        low, high = bounds(desc, dtype)
        return [ew.elementwise(lambda x, g: ew.clip_grad(x, g, low, high), dtype, *inputs)]

    return reference


f32 = lambda values: np.array(values, np.float32)  # noqa: E731
i32 = lambda values: np.array(values, np.int32)  # noqa: E731
NAN, INF = float("nan"), float("inf")
ROUNDING = dml.RoundingMode

ARITHMETIC_CASES = (
    unary(OT.ELEMENT_WISE_IDENTITY, simple(lambda x: x), examples=(
        Example("ScaleBias 2, 1", (f32([-1, 0, 2.5]),), (f32([-1, 1, 6]),),
                {"scale_bias": dml.ScaleBias(scale=2, bias=1)}),)),
    unary(OT.ELEMENT_WISE_ABS, simple(abs), examples=(
        Example("abs(INT_MIN) wraps", (i32([-(2**31), -3, 0]),), (i32([-(2**31), 3, 0]),)),)),
    unary(OT.ELEMENT_WISE_NEGATE, simple(lambda x: -x), header=UNARY, params=lambda rank, rng: {}, examples=(
        Example("0 -> -0, -INT_MIN wraps", (f32([0, -0.0, 1]),), (f32([-0.0, 0, -1]),)),)),
    unary(OT.ELEMENT_WISE_RECIP, simple(ew.recip)),
    unary(OT.ELEMENT_WISE_SQRT, simple(ew.TRANSCENDENTAL["SQRT"]), values=domain(-0.5, 20)),
    unary(OT.ELEMENT_WISE_CEIL, simple(ew.ceil)),
    unary(OT.ELEMENT_WISE_FLOOR, simple(ew.floor)),
    unary(OT.ELEMENT_WISE_SIGN, simple(ew.sign), header=UNARY, params=lambda rank, rng: {}, examples=(
        Example("the page's 0 otherwise: -0 and NaN give 0", (f32([-2, -0.0, 0, NAN, 3, -INF]),),
                (f32([-1, 0, 0, 0, 1, -1]),)),)),
    unary(OT.ELEMENT_WISE_ROUND, lambda desc, dtype: ew.ROUNDING[int(desc.rounding_mode)],
          header=(*UNARY, "RoundingMode"), params=lambda rank, rng: {"rounding_mode": ROUNDING(int(rng.integers(3)))},
          values=lambda c, dtype, shape, rng: (rng.integers(-8, 8, size=shape) / 2).astype(dtype), examples=(
        Example("halves to nearest even", (f32([0.5, 1.5, 2.5, -0.5, -2.5, 2.4]),), (f32([0, 2, 2, -0.0, -2, 2]),),
                {"rounding_mode": ROUNDING.HALVES_TO_NEAREST_EVEN}),
        Example("toward zero", (f32([0.5, 1.5, -1.7, -0.5]),), (f32([0, 1, -1, -0.0]),),
                {"rounding_mode": ROUNDING.TOWARD_ZERO}),
        Example("halves away from zero", (f32([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997]),), (f32([1, 2, 3, -1, -3, 0]),),
                {"rounding_mode": ROUNDING.TOWARD_INFINITY}))),
    unary(OT.ELEMENT_WISE_CONSTANT_POW, lambda desc, dtype: lambda x: ew.power(x, ew.float_in(desc.exponent, F32)),
          header=(*SCALED, "Exponent"), ulps=1, params=lambda rank, rng: {
              **scale_bias_params(rank, rng), "exponent": float(rng.choice([2, 3, 0.5, -1, 1.5, -2, 0]))}),
    unary(OT.ELEMENT_WISE_THRESHOLD, lambda desc, dtype: (lambda low: lambda x: ew.ieee_max(x, low))(
        ew.clip_bound(desc.min, dtype)), header=(*SCALED, "Min"),
        params=lambda rank, rng: {**scale_bias_params(rank, rng), "min": float(rng.uniform(-2, 2))}),
    unary(OT.ELEMENT_WISE_CLIP, clip_element, header=(*SCALED, "Min", "Max"), params=clip_params, examples=(
        Example("Min > Max gives Max; NaN stays", (f32([-5, 0, 5, NAN]),), (f32([-1, -1, -1, NAN]),),
                {"min": 1.0, "max": -1.0}),
        Example("integer bounds toward zero", (i32([-5, -2, 0, 2, 5]),), (i32([-2, -2, 0, 2, 2]),),
                {"min": -2.5, "max": 2.5}))),
    unary(OT.ELEMENT_WISE_CLIP1, clip1_element, header=(*SCALED, "MinMaxDataType", "Min", "Max"),
          params=lambda rank, rng: {**scale_bias_params(rank, rng), **union_bounds(rng, "OutputTensor")}, examples=(
        Example("Min > Max gives Min", (i32([-5, 0, 5]),), (i32([1, 1, 1]),),
                {"min_max_data_type": T.INT32, "min": 1, "max": -1}),)),
    # The compiled float32 EXP (issue 11) is within 2 ulp (README, accuracy table); float16 within 1.
    *(unary(getattr(OT, f"ELEMENT_WISE_{name}"), simple(ew.TRANSCENDENTAL[name]), ulps=(2, 1) if name == "EXP" else 1,
            values=values)
      for name, values in {
          "EXP": None, "LOG": domain(-0.5, 30), "SIN": domain(-10, 10), "COS": domain(-10, 10), "TAN": None,
          "ASIN": domain(-1.1, 1.1), "ACOS": domain(-1.1, 1.1), "ATAN": domain(-20, 20), "SINH": None,
          "COSH": None, "TANH": None, "ASINH": domain(-20, 20), "ACOSH": domain(0.5, 20),
          "ATANH": domain(-1.1, 1.1), "ERF": domain(-5, 5)}.items()),
    binary(OT.ELEMENT_WISE_ADD, same(lambda a, b: a + b)),
    binary(OT.ELEMENT_WISE_SUBTRACT, same(lambda a, b: a - b)),
    binary(OT.ELEMENT_WISE_MULTIPLY, same(lambda a, b: a * b)),
    binary(OT.ELEMENT_WISE_DIVIDE, lambda dtype: ew.divide if dtype.kind == "f" else (
        lambda a, b: ew.integer_divide(a, b, dtype)), examples=(
        Example("integers toward zero, by 0 all bits set", (i32([7, -7, 7, 5, -(2**31)]), i32([2, 2, -2, 0, -1])),
                (i32([3, -3, -3, -1, -(2**31)]),)),)),
    binary(OT.ELEMENT_WISE_MAX, same(ew.ieee_max), examples=(
        Example("NaN propagates, +0 above -0", (f32([NAN, 1, -0.0]), f32([1, NAN, 0])), (f32([NAN, NAN, 0]),)),)),
    binary(OT.ELEMENT_WISE_MIN, same(ew.ieee_min), examples=(
        Example("NaN propagates, -0 below +0", (f32([NAN, 1, 0]), f32([1, NAN, -0.0])), (f32([NAN, NAN, -0.0]),)),)),
    binary(OT.ELEMENT_WISE_MEAN, same(ew.mean), examples=(
        Example("integers: exact sum, halved toward zero", (i32([2**31 - 1, -3, 3]), i32([2**31 - 1, 0, 0])),
                (i32([2**31 - 1, -1, 1]),)),)),
    binary(OT.ELEMENT_WISE_DIFFERENCE_SQUARE, difference_square),
    binary(OT.ELEMENT_WISE_MODULUS_TRUNCATE, by_kind(ew.fmod, lambda a, b: ew.integer_modulus(a, b, floor=False)),
           examples=(Example("sign of the dividend; by 0 gives a", (i32([7, -7, 7, 5]), i32([3, 3, -3, 0])),
                             (i32([1, -1, 1, 5]),)),)),
    binary(OT.ELEMENT_WISE_MODULUS_FLOOR, by_kind(ew.floor_mod, lambda a, b: ew.integer_modulus(a, b, floor=True)),
           examples=(Example("sign of the divisor; by 0 gives a", (i32([7, -7, 7, 5]), i32([3, 3, -3, 0])),
                             (i32([1, 2, -2, 5]),)),
                     Example("floats as Python's %", (f32([7.5, -7.5, 7.5, -0.0]), f32([2, 2, -2, 3])),
                             (f32([1.5, 0.5, -0.5, 0]),)))),
    binary(OT.ELEMENT_WISE_ATAN_YX, same(math.atan2), ulps=1),
    Case(OT.ELEMENT_WISE_POW, ("InputTensor", "ExponentTensor", "OutputTensor", "ScaleBias"),
         reference=pow_reference, check=within_ulps(1), params=scale_bias_params, examples=(
             Example("negative bases with integral exponents", (f32([-2, -2, -8, 0]), f32([3, 0.5, 1 / 3, -1])),
                     (f32([-8, NAN, NAN, INF]),), rtol=1e-7),
             Example("integers exact; 0 to a negative power all bits set", (i32([3, -2, 0, 2]), i32([4, 3, -1, -1])),
                     (i32([81, -8, -1, 0]),)))),
    Case(OT.ELEMENT_WISE_CLIP_GRAD, (*CLIP_GRAD_TENSORS, "Min", "Max"),
         reference=clip_grad_reference(lambda desc, dtype: (ew.clip_bound(desc.min, dtype),
                                                            ew.clip_bound(desc.max, dtype))),
         check=exact, params=lambda rank, rng: {k: v for k, v in clip_params(rank, rng).items() if k != "scale_bias"},
         examples=(Example("0 at and beyond the bounds", (f32([-2, -1, 0, 1, 2, NAN]), f32([5, 5, 5, 5, 5, 5])),
                           (f32([0, 0, 5, 0, 0, 5]),), {"min": -1.0, "max": 1.0}),)),
    Case(OT.ELEMENT_WISE_CLIP_GRAD1, (*CLIP_GRAD_TENSORS, "MinMaxDataType", "Min", "Max"),
         reference=clip_grad_reference(lambda desc, dtype: tuple(
             ew.union_value(v, desc.min_max_data_type) for v in (desc.min, desc.max))),
         check=exact, params=lambda rank, rng: union_bounds(rng, "OutputGradientTensor")),
)  # fmt: skip
register(*ARITHMETIC_CASES)
ARITHMETIC = tuple(case.operator_type for case in ARITHMETIC_CASES)  # this block's members
