"""The ELEMENT_WISE arithmetic and transcendental members on the values where the pages are silent: NaN (both
signs), infinities, signed zeros, subnormals, the largest finite values, and for integers the extremes of each
type (INT_MIN / -1, division and modulus by 0, abs(INT_MIN)). Every unary member takes every special value;
every binary member every pair of them. Each result is held to its case's reference and bound (test_cases.py
holds the same on random data)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import reference_element_wise as ew
from cases import CASES, execute, make_desc, rng_for, schema
from cases.element_wise import ARITHMETIC

import opendml as dml

T = dml.TensorDataType
FAMILY = ARITHMETIC


def float_specials(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    values = [
        np.nan,
        -np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.5,
        -2.5,
        3.0,
        1e-3,
        float(info.smallest_subnormal),
        -float(info.smallest_subnormal),
        float(info.max),
        -float(info.max),
        float(info.tiny),
        0.99951171875,
        88.7,
        -103.9,
        11.1,
        1.5707963,
    ]
    with np.errstate(over="ignore"):
        return np.array(values, np.float64).astype(dtype)


def integer_specials(dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    values = {int(info.min), int(info.min) + 1, int(info.max), int(info.max) - 1, 0, 1, 2, 3, 7, -1, -2, -3, -7}
    return np.array(sorted(v for v in values if info.min <= v <= info.max), dtype)


def specials(data_type) -> np.ndarray:
    dtype = ew.numpy_dtype(data_type)
    return float_specials(dtype) if dtype.kind == "f" else integer_specials(dtype)


def _params():
    for op in FAMILY:
        top = schema(CASES[op]).support_rows()[0]
        for data_type in top.tensors[schema(CASES[op]).input_fields[0].c_name].data_types:
            yield pytest.param(op, data_type, id=f"{op.name}-{data_type.name}")


@pytest.mark.parametrize("op, data_type", list(_params()))
def test_special_values(op, data_type):
    case, s = CASES[op], schema(CASES[op])
    values = specials(data_type)
    n_inputs = len(s.input_fields)
    columns = [np.array(c, values.dtype) for c in zip(*itertools.product(values, repeat=n_inputs))]
    types = {spec.c_name: data_type for spec in s.tensor_fields}
    for seed in range(3):  # with and without ScaleBias, and several bounds / rounding modes
        rng = rng_for("specials", op.name, data_type.name, seed)
        desc = make_desc(case, columns[0].shape, types, rng, params=case.params(1, rng))
        (got,) = execute(desc, columns)
        (expected,) = case.reference(desc, columns)
        case.check(got, expected, desc, columns)


def test_erf_is_accurate_in_float64():
    """opendml's float64 erf (NumPy has none; shared with ACTIVATION_GELU) against math.erf."""
    import math

    from opendml.kernels.reference._special import erf

    x = np.concatenate(
        [np.linspace(-7, 7, 20001), [0.0, -0.0, 1e-300, -5e-324, 2.9999999, 3.0, 3.0000001, np.inf, -np.inf]]
    )
    got = erf(x)
    expected = np.array([math.erf(v) for v in x])
    # within 16 double ulps (exp(-x*x) inherits the rounding of x*x): 2^-48 relative, far below a float32 ulp
    assert np.all(np.abs(got - expected) <= 16 * np.spacing(np.abs(expected))), np.max(np.abs(got - expected))
    assert math.copysign(1, erf(np.array([-0.0]))[0]) == -1 and np.isnan(erf(np.array([np.nan]))[0])
