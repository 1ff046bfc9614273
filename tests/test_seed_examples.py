"""The seed pages' examples run from their cases (tests/cases, read by tests/test_cases.py); here, what the
LOG_SOFTMAX1 erratum needs beyond them: the page shows HARDMAX1's outputs, and one printed 0 is really the float32
subnormal -log1p(exp(-101)) = -1.4e-44, which opendml keeps."""

import numpy as np
from cases.activation import PAGE

import opendml as dml

T = dml.TensorDataType


def run(desc, *inputs):
    device = dml.Device()
    (out,) = device.compile_operator(device.create_operator(desc)).execute(list(inputs))
    return out


def test_log_softmax1_keeps_the_subnormal_the_page_prints_as_zero_and_is_not_hardmax():
    x = dml.BufferTensorDesc(T.FLOAT32, (2, 2, 2))
    out = run(dml.ActivationLogSoftmax1OperatorDesc(input_tensor=x, output_tensor=x, axes=(0,)), PAGE)
    assert out[1, 1, 0] == -np.float32(1.4e-44)
    hardmax = run(dml.ActivationHardmax1OperatorDesc(input_tensor=x, output_tensor=x, axes=(0,)), PAGE)
    assert not np.array_equal(out, hardmax)
