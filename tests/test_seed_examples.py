"""Every example of the five seed doc pages, run through the full Device -> execute path.

The LOG_SOFTMAX1 page shows HARDMAX1's outputs by mistake (doc erratum); its tests use the true values for the
page's input, computed in float64 (directml-notes §6) and printed to 7 significant digits there.
"""

import numpy as np
import pytest

import opendml as dml

T = dml.TensorDataType
PAGE_INPUT = np.array([[[12, 0], [-101, 11]], [[3, 234], [0, -101]]], dtype=np.float32)


def run(desc, *inputs):
    device = dml.Device()
    (out,) = device.compile_operator(device.create_operator(desc)).execute(list(inputs))
    return out


@pytest.mark.parametrize(
    "axes, expected",
    [
        ((1,), [[[1, 0], [0, 1]], [[1, 1], [0, 0]]]),
        ((0,), [[[1, 0], [0, 1]], [[0, 1], [1, 0]]]),
        ((0, 2), [[[0, 0], [0, 1]], [[0, 1], [0, 0]]]),
    ],
)
def test_hardmax1_page_examples(axes, expected):
    x = dml.BufferTensorDesc(T.FLOAT32, (2, 2, 2))
    out = run(dml.ActivationHardmax1OperatorDesc(input_tensor=x, output_tensor=x, axes=axes), PAGE_INPUT)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array(expected, dtype=np.float32))


@pytest.mark.parametrize(
    "axes, expected",
    [
        ((1,), [[[0, -11.00002], [-113, -1.670156e-05]], [[-0.04858735, 0], [-3.048587, -335]]]),
        ((0,), [[[-1.234022e-04, -234], [-101, 0]], [[-9.000123, 0], [0, -112]]]),
        ((0, 2), [[[-222, -234], [-112, -1.670156e-05]], [[-231, 0], [-11.00002, -112]]]),
    ],
)
def test_log_softmax1_page_input_true_values(axes, expected):
    x = dml.BufferTensorDesc(T.FLOAT32, (2, 2, 2))
    out = run(dml.ActivationLogSoftmax1OperatorDesc(input_tensor=x, output_tensor=x, axes=axes), PAGE_INPUT)
    # The expected values are printed to 7 significant digits. One printed 0 is really -log1p(exp(-101)), the
    # float32 subnormal -1.4e-44, which opendml keeps: hence an absolute slack of one subnormal step.
    np.testing.assert_allclose(out, np.array(expected, dtype=np.float32), rtol=5e-7, atol=1.5e-44)
    if axes == (0,):
        assert out[1, 1, 0] == -np.float32(1.4e-44)
    assert not np.array_equal(
        out, run(dml.ActivationHardmax1OperatorDesc(input_tensor=x, output_tensor=x, axes=axes), PAGE_INPUT)
    )


def test_element_wise_if_page_example():
    t = dml.BufferTensorDesc(T.FLOAT32, (2, 2))
    c = dml.BufferTensorDesc(T.UINT8, (2, 2))
    desc = dml.ElementWiseIfOperatorDesc(condition_tensor=c, a_tensor=t, b_tensor=t, output_tensor=t)
    out = run(
        desc,
        np.array([[1, 0], [1, 1]], np.uint8),
        np.array([[1, 2], [3, 4]], np.float32),
        np.array([[9, 8], [7, 6]], np.float32),
    )
    np.testing.assert_array_equal(out, [[1, 8], [3, 4]])


ARGMAX_INPUT = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)


@pytest.mark.parametrize(
    "axes, out_sizes, expected",
    [((0,), (1, 3), [[1, 2, 1]]), ((1,), (3, 1), [[2], [2], [1]]), ((0, 1), (1, 1), [[7]])],
)
def test_argmax_page_examples(axes, out_sizes, expected):
    desc = dml.ArgmaxOperatorDesc(
        input_tensor=dml.BufferTensorDesc(T.FLOAT32, (3, 3)),
        output_tensor=dml.BufferTensorDesc(T.UINT32, out_sizes),
        axes=axes,
        axis_direction=dml.AxisDirection.INCREASING,
    )
    out = run(desc, ARGMAX_INPUT)
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("direction, expected", [(dml.AxisDirection.INCREASING, 0), (dml.AxisDirection.DECREASING, 4)])
def test_argmax_axis_direction_page_examples(direction, expected):
    desc = dml.ArgmaxOperatorDesc(
        input_tensor=dml.BufferTensorDesc(T.FLOAT32, (5,)),
        output_tensor=dml.BufferTensorDesc(T.UINT32, (1,)),
        axes=(0,),
        axis_direction=direction,
    )
    assert run(desc, np.array([3, 2, 1, 2, 3], np.float32)).tolist() == [expected]


def test_hard_sigmoid_page_formula_with_typical_defaults():
    x = np.array([-3.0, -2.5, -1.0, 0.0, 1.0, 2.5, 3.0], np.float32).reshape(1, 1, 1, 7)
    t = dml.BufferTensorDesc(T.FLOAT32, x.shape)
    out = run(dml.ActivationHardSigmoidOperatorDesc(input_tensor=t, output_tensor=t, alpha=0.2, beta=0.5), x)
    # max(0, min(0.2x + 0.5, 1)): clamps at x <= -2.5 and x >= 2.5.
    np.testing.assert_allclose(out.ravel(), [0, 0, 0.3, 0.5, 0.7, 1, 1], rtol=1e-7, atol=1e-7)
