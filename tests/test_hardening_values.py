"""Careless or hostile values in the Python API: a clear InvalidArgumentError naming the field, in bounded time and
memory (the heavy cases run in a child process with an address-space limit, so a regression fails cleanly)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import opendml as dml
from opendml import functional as F

T = dml.TensorDataType
X = dml.BufferTensorDesc(T.FLOAT32, (2, 3))


@pytest.mark.parametrize(
    "alpha, shown",
    [(10**400, "an integer of 1329 bits"), (np.longdouble("1e4000"), "1e+4000"), (1e39, "1e+39"), (-(2**200), None)],
    ids=["10**400", "longdouble 1e4000", "1e39", "-2**200"],
)
def test_floats_beyond_the_float_range_are_refused_naming_the_field(alpha, shown):
    if np.longdouble is np.float64 and isinstance(alpha, np.longdouble):
        shown = "inf"  # no extended precision on this platform: NumPy already made it infinite
    with pytest.raises(dml.InvalidArgumentError, match="Alpha is .*beyond the range of a 32-bit FLOAT") as caught:
        dml.ActivationHardSigmoidOperatorDesc(input_tensor=X, output_tensor=X, alpha=alpha, beta=0)
    if shown:
        assert f"Alpha is {shown}," in str(caught.value)


def test_an_iterator_of_axes_is_read_once_and_used():
    x = np.array([[1, 9, 2], [3, 1, 8]], np.float32)
    assert F.argmax(x, axes=(a for a in [1])).ravel().tolist() == [1, 2]
    np.testing.assert_array_equal(F.activation_hardmax1(x, axes=iter([1])), [[0, 1, 0], [0, 0, 1]])
    desc = dml.ActivationHardmax1OperatorDesc(input_tensor=X, output_tensor=X, axes=(a for a in [1, 0]))
    assert desc.axes == (1, 0)


def _run_limited(code: str, memory_bytes: int = 1_500_000_000, seconds: float = 30) -> str:
    """Run ``code`` in a child with an address-space limit and a time limit; return its stdout."""
    prelude = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({memory_bytes}, {memory_bytes}))\n"
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, timeout=seconds
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_ten_million_axes_are_refused_by_their_count_in_bounded_time_and_memory():
    out = _run_limited(
        """
        import opendml as dml
        x = dml.BufferTensorDesc(dml.TensorDataType.FLOAT32, (2, 3))
        desc = dml.ActivationHardmax1OperatorDesc(input_tensor=x, output_tensor=x, axes=list(range(10_000_000)))
        print("\\n".join(dml.Device().validate(desc)))
        """
    )
    assert out.splitlines() == [
        "DML_OPERATOR_ACTIVATION_HARDMAX1: AxisCount is 10000000, but a tensor has at most 8 dimensions "
        "(DML_TENSOR_DIMENSION_COUNT_MAX1) and each may be listed once in Axes"
    ]


def test_four_million_zero_sizes_give_one_problem_in_bounded_time_and_memory():
    out = _run_limited(
        """
        import opendml as dml
        z = dml.BufferTensorDesc(dml.TensorDataType.FLOAT32, (0,) * 4_000_000)
        desc = dml.ActivationHardmax1OperatorDesc(input_tensor=z, output_tensor=z, axes=[0])
        print("\\n".join(dml.Device().validate(desc)))
        """
    )
    assert out.splitlines() == [
        f"DML_OPERATOR_ACTIVATION_HARDMAX1: {name}.DimensionCount is 4000000, but it must be 1 to 8 "
        "(DML_TENSOR_DIMENSION_COUNT_MAX1)"
        for name in ("InputTensor", "OutputTensor")
    ]
