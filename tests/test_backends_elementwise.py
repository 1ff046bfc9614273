"""Issues 10 and 11's compiled element-wise members against the reference kernels, on every ISA variant.

Exact members (ADD, SUBTRACT, MULTIPLY on every type, LOGICAL_LESS_THAN, CLIP with and without ScaleBias, RELU,
QUANTIZE_LINEAR) match bit for bit, padding included, over random layouts (padded, permuted, zero strides),
NaN/inf/-0.0 and integer extremes (wrapping). EXP, SIGMOID, TANH and GELU (float32 approximations) are within
2 ulp of the reference for float32 and 1 ulp for float16; where the reference gives NaN, an infinity or a zero
they give its bits.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_backends import NP, Buffer, assert_same_bits, fill, isa, random_sizes, random_strides, run_both  # noqa: F401

import opendml as dml

pytestmark = pytest.mark.skipif(not dml.COMPILED_AVAILABLE, reason="the compiled extension is not built")

T = dml.TensorDataType
FLOATS = (T.FLOAT32, T.FLOAT16)
NUMBERS = (*FLOATS, T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32, T.UINT64)


def _binary(cls, types, out=None):
    def pick(rng):
        t = rng.choice(types)
        return (t, t), out or t

    return pick, lambda rng, ins, y: cls(a_tensor=ins[0], b_tensor=ins[1], output_tensor=y)


def _unary(cls, fields=lambda rng: {}):
    def pick(rng):
        t = rng.choice(FLOATS)
        return (t,), t

    return pick, lambda rng, ins, y: cls(input_tensor=ins[0], output_tensor=y, **fields(rng))


def _clip_fields(rng):
    bounds = [-1.5, -0.0, 0.0, 0.25, 3.0, -np.inf, np.inf]
    scale_bias = dml.ScaleBias(scale=-1.25, bias=0.5) if rng.random() < 0.3 else None  # the reference's fallback
    return {"min": float(rng.choice(bounds)), "max": float(rng.choice(bounds)), "scale_bias": scale_bias}


def _quantize_types(rng):
    x, out = rng.choice(FLOATS), rng.choice([T.UINT8, T.INT8])
    return (x, x, out), out


def _quantize_desc(rng, ins, y):
    return dml.ElementWiseQuantizeLinearOperatorDesc(
        input_tensor=ins[0], scale_tensor=ins[1], zero_point_tensor=ins[2], output_tensor=y
    )


EXACT = {
    "add": _binary(dml.ElementWiseAddOperatorDesc, NUMBERS),
    "subtract": _binary(dml.ElementWiseSubtractOperatorDesc, NUMBERS),
    "multiply": _binary(dml.ElementWiseMultiplyOperatorDesc, NUMBERS),
    "less_than": _binary(dml.ElementWiseLogicalLessThanOperatorDesc, NUMBERS, T.UINT8),
    "clip": _unary(dml.ElementWiseClipOperatorDesc, _clip_fields),
    "relu": _unary(dml.ActivationReluOperatorDesc),
    "quantize_linear": (_quantize_types, _quantize_desc),
}
APPROXIMATE = {  # name: (case, float32 ulps, float16 ulps)
    "exp": (_unary(dml.ElementWiseExpOperatorDesc), 2, 1),
    "sigmoid": (_unary(dml.ActivationSigmoidOperatorDesc), 2, 1),
    "tanh": (_unary(dml.ActivationTanhOperatorDesc), 2, 1),
    "gelu": (_unary(dml.ActivationGeluOperatorDesc), 2, 1),
}


def make_case(rng, rank, specials, member):
    pick, build = member
    in_types, out_type = pick(rng)
    sizes = random_sizes(rng, rank, big=True)
    strides = [random_strides(rng, sizes, True) for _ in in_types] + [random_strides(rng, sizes, False)]
    seed = int(rng.integers(2**32))

    def make():
        r = np.random.default_rng(seed)
        inputs = []
        for t, s in zip(in_types, strides):
            inputs.append(Buffer(r, t, sizes, s))
            fill(r, inputs[-1], t, specials)
        return inputs, Buffer(r, out_type, sizes, strides[-1])

    inputs, y = make()
    return build(rng, [b.desc for b in inputs], y.desc), make


@pytest.mark.parametrize("op", sorted(EXACT))
def test_exact_members_match_bit_for_bit(op, isa):  # noqa: F811 (the fixture of test_backends)
    rng = np.random.default_rng([ord(ch) for ch in op + isa])
    for i in range(40):
        desc, make = make_case(rng, 1 + i % 8, i % 3 == 0, EXACT[op])
        compiled, reference = run_both(desc, make)
        assert_same_bits(compiled, reference)


def _ordered(a: np.ndarray) -> np.ndarray:
    bits = a.view(np.dtype(f"u{a.itemsize}")).astype(np.int64)
    sign = 1 << (8 * a.itemsize - 1)
    return np.where(bits & sign, -(bits & (sign - 1)), bits)


@pytest.mark.parametrize("op", sorted(APPROXIMATE))
def test_transcendental_members_within_their_bound(op, isa):  # noqa: F811
    member, f32_ulps, f16_ulps = APPROXIMATE[op]
    rng = np.random.default_rng([ord(ch) for ch in op + isa])
    for i in range(40):
        desc, make = make_case(rng, 1 + i % 8, i % 2 == 0, member)
        compiled, reference = run_both(desc, make)
        got, want = np.ascontiguousarray(compiled.view), np.ascontiguousarray(reference.view)
        special = np.isnan(want) | np.isinf(want) | (want == 0)
        assert got[special].tobytes() == want[special].tobytes(), "NaN, infinity or zero differs"
        bound = f32_ulps if got.dtype == np.float32 else f16_ulps
        assert np.abs(_ordered(got) - _ordered(want)).max(initial=0) <= bound


def test_quantize_linear_rules():
    """One float32 division, ties to even, plus the zero point, saturated; NaN gives the type's minimum."""
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 1000.0, -1000.0, np.nan, np.inf, -np.inf, 0.3, 7.0, 1e-45, -0.0] * 3,
                 np.float32)  # fmt: skip
    for out_dtype, zero in ((np.uint8, 3), (np.int8, -2)):
        scale = np.array([1.0], np.float32)
        zp = np.array([zero], out_dtype)
        got = dml.functional.element_wise_quantize_linear(
            x, np.broadcast_to(scale, x.shape), np.broadcast_to(zp, x.shape)
        )
        info = np.iinfo(out_dtype)
        want = [min(max(v + zero, info.min), info.max) for v in (0, 2, 2, 0, -2, 1000, -1000)]
        want += [info.min, info.max, info.min, 0 + zero, 7 + zero, zero, zero]
        assert got[:14].tolist() == want


def test_wrapping_integer_arithmetic():
    a = np.array([127, -128, 100, -1] * 5, np.int8)
    b = np.array([1, -1, 100, -128] * 5, np.int8)
    assert dml.functional.element_wise_add(a, b).tolist()[:4] == [-128, 127, -56, 127]
    assert dml.functional.element_wise_multiply(a, b).tolist()[:4] == [127, -128, 16, -128]
    u = np.array([250, 3] * 9, np.uint8)
    assert dml.functional.element_wise_subtract(u[::-1].copy(), u).tolist()[:2] == [(3 - 250) % 256, 247]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shift", [0, 1, 7])
def test_large_outputs_stream_from_any_start(isa, dtype, shift):  # noqa: F811
    """Runs of 1 MiB or more are written with non-temporal stores from the first aligned element on (an element
    prologue before it, plain stores after the last whole vector): every element lands, none beyond."""
    n = (1 << 20) // np.dtype(dtype).itemsize + 37
    rng = np.random.default_rng(shift)
    a, b = (rng.standard_normal(n + 8).astype(dtype)[shift : shift + n] for _ in range(2))
    out = np.full(n + 16, 7, dtype)
    view = out[shift : shift + n]
    for op, expected in (("add", a + b), ("multiply", a * b)):
        desc_cls = {"add": dml.ElementWiseAddOperatorDesc, "multiply": dml.ElementWiseMultiplyOperatorDesc}[op]
        d = dml.BufferTensorDesc.like(a)
        device = dml.Device(kernels="compiled")
        compiled = device.compile_operator(device.create_operator(desc_cls(a_tensor=d, b_tensor=d, output_tensor=d)))
        compiled.execute([a, b], [view])
        np.testing.assert_array_equal(view, expected)
        assert (out[:shift] == 7).all() and (out[shift + n :] == 7).all()
    flags = np.full(n + 32, 7, np.uint8)  # LESS_THAN's UINT8 output: 16-byte streamed vectors
    d, u = dml.BufferTensorDesc.like(a), dml.BufferTensorDesc(dml.TensorDataType.UINT8, (n,))
    device = dml.Device(kernels="compiled")
    less = dml.ElementWiseLogicalLessThanOperatorDesc(a_tensor=d, b_tensor=d, output_tensor=u)
    device.compile_operator(device.create_operator(less)).execute([a, b], [flags[shift : shift + n]])
    np.testing.assert_array_equal(flags[shift : shift + n], a < b)
    assert (flags[:shift] == 7).all() and (flags[shift + n :] == 7).all()
