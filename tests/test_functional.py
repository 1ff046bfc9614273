"""The functional layer: descriptors built from arrays, DirectMLX defaults, a cache that never mixes operators."""

import numpy as np
import pytest

import opendml as dml
from opendml import functional as F

T = dml.TensorDataType


def fresh(desc, *inputs):
    device = dml.Device()
    (out,) = device.compile_operator(device.create_operator(desc)).execute(list(inputs))
    return out


def test_defaults_follow_directmlx():
    x = np.array([-3.0, 0.0, 1.0], np.float32)
    np.testing.assert_allclose(F.activation_hard_sigmoid(x), [0.0, 0.5, 0.7], rtol=1e-7)
    index = F.argmax(np.array([[1, 5, 2]], np.int16), axes=(1,))
    assert index.dtype == np.uint32 and index.tolist() == [[1]]


def test_cache_tells_negative_zero_from_zero():
    x = np.array([-0.0, 0.0], np.float32)
    for beta in (0.0, -0.0, 0.0):
        got = F.activation_hard_sigmoid(x, alpha=1.0, beta=beta)
        desc = dml.ActivationHardSigmoidOperatorDesc(
            input_tensor=dml.BufferTensorDesc.like(x), output_tensor=dml.BufferTensorDesc.like(x), alpha=1.0, beta=beta
        )
        np.testing.assert_array_equal(got.view(np.uint32), fresh(desc, x).view(np.uint32))


def test_argmax_builds_the_reduced_output():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = F.argmax(x, axes=(2, 0), axis_direction=dml.AxisDirection.DECREASING, output_data_type=T.INT64)
    assert out.shape == (1, 3, 1) and out.dtype == np.int64
    assert out.ravel().tolist() == [7, 7, 7]  # the last of each (d0, d2) group: d0=1, d2=3 -> 1*4 + 3


@pytest.mark.parametrize("axes", [0, None, "01", (0.0,)])
def test_bad_axes_are_typed_errors(axes):
    x = np.zeros((2, 2), np.float32)
    with pytest.raises(dml.InvalidArgumentError, match="Axes"):
        F.argmax(x, axes=axes)
    with pytest.raises(dml.InvalidArgumentError, match="Axes"):
        F.activation_hardmax1(x, axes=axes)


def test_inputs_must_be_arrays_of_a_directml_type():
    with pytest.raises(dml.InvalidArgumentError, match="x must be a numpy.ndarray, not list"):
        F.activation_log_softmax1([1.0, 2.0], axes=(0,))
    with pytest.raises(dml.InvalidArgumentError, match="NumPy dtype <c8 has no DirectML tensor data type"):
        F.activation_hardmax1(np.zeros(2, np.complex64), axes=(0,))
    with pytest.raises(dml.InvalidArgumentError, match="InputTensor.DataType FLOAT64 is not supported"):
        F.activation_hardmax1(np.zeros(2, np.float64), axes=(0,))


def test_element_wise_if_takes_a_uint8_condition():
    a, b = np.array([1, 2], np.int8), np.array([-1, -2], np.int8)
    assert F.element_wise_if(np.array([0, 7], np.uint8), a, b).tolist() == [-1, 2]
    with pytest.raises(dml.InvalidArgumentError, match="ConditionTensor.DataType INT8 is not supported"):
        F.element_wise_if(np.array([0, 1], np.int8), a, b)


def test_device_argument_caps_the_feature_level():
    old = dml.Device(feature_level=dml.FeatureLevel.FL_5_0)
    with pytest.raises(dml.InvalidArgumentError, match="introduced in DML_FEATURE_LEVEL_5_1"):
        F.activation_hardmax1(np.zeros((1, 2), np.float32), axes=(1,), device=old)
