"""Reductions over broadcast inputs use memory of the order of their output, not of their (virtual) input.

A (32768, 32768) FLOAT32 tensor with strides (0, 1) reads one 128 KiB row 32768 times: 4 GiB of elements. Each
case runs in a child process whose address space is capped (RLIMIT_AS) at what it had after importing opendml
(its output allocated) plus a small margin, so a kernel that materialises the input fails with MemoryError instead of
taking the machine's memory. The child also checks the values, computed here from the formulas.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    import opendml as dml

    op, rows, margin = sys.argv[1], int(sys.argv[2]), int(sys.argv[5])
    axes, extra = eval(sys.argv[3]), eval(sys.argv[4])
    T = dml.TensorDataType
    x = dml.BufferTensorDesc(T.FLOAT32, (rows, 32768), strides=(0, 1))
    row = np.arange(32768, dtype=np.float32)  # the 128 KiB buffer: every row of x is 0, 1, ..., 32767
    reduced = tuple(1 if d in axes else s for d, s in enumerate((rows, 32768)))
    schema = {s.operator_type.name: s for s in dml.REGISTRY.values()}[op]
    index_output = op.startswith("ARG") or extra.get("function") in (dml.ReduceFunction.ARGMAX,)
    if schema.output_rule.reduced_by:
        out = dml.BufferTensorDesc(T.UINT32 if index_output else T.FLOAT32, reduced)
    else:
        out = dml.BufferTensorDesc(T.FLOAT32, (rows, 32768))
    if any(spec.c_name == "Axes" for spec in schema.fields):
        extra["axes"] = axes
    desc = schema.desc_class(input_tensor=x, output_tensor=out, **extra)
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    output = np.zeros(out.sizes, np.uint32 if index_output else np.float32)
    vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (vm + margin, hard))  # the soft limit: it can be raised back
    compiled.execute([dml.BufferBinding(row)], [output])
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    np.save(sys.stdout.buffer, output[:2, :2])
    np.save(sys.stdout.buffer, output[-1:, -2:])
    """
)

MARGIN = 256 << 20  # working buffers: the distinct row and per-block float64 sums are far smaller
INC, DEC = "dml.AxisDirection.INCREASING", "dml.AxisDirection.DECREASING"
LAST = 32767
ROW_SUM = LAST * 32768 // 2  # 0 + 1 + ... + 32767


def _log_softmax_all(rows: int) -> tuple[float, float]:
    """LOG_SOFTMAX over both axes of ``rows`` copies of 0..32767: x - 32767 - log(rows * sum(exp(k - 32767)))."""
    import math

    log_sum = math.log(rows) - math.log1p(-math.exp(-1.0)) + math.log1p(-math.exp(-32768.0))
    return -LAST - log_sum, -log_sum


# (operator, rows, axes, extra fields, (top-left block, bottom-right pair)): 32768 rows (4 GiB of input elements) for
# reductions, 4096 for the activations, whose output is then 512 MiB.
CASES = {
    "ARGMAX-both-increasing": ("ARGMAX", 32768, (0, 1), {"axis_direction": INC}, ([[LAST]], [[LAST]])),
    "ARGMAX-both-decreasing": ("ARGMAX", 32768, (0, 1), {"axis_direction": DEC}, ([[LAST * 32768 + LAST]], None)),
    "ARGMAX-rows": ("ARGMAX", 32768, (0,), {"axis_direction": INC}, ([[0, 0]], [[0, 0]])),
    "ARGMAX-rows-decreasing": ("ARGMAX", 32768, (0,), {"axis_direction": DEC}, ([[LAST, LAST]], [[LAST, LAST]])),
    "ARGMAX-columns": ("ARGMAX", 32768, (1,), {"axis_direction": INC}, ([[LAST], [LAST]], [[LAST]])),
    "ARGMIN-rows-decreasing": ("ARGMIN", 32768, (0,), {"axis_direction": DEC}, ([[LAST, LAST]], [[LAST, LAST]])),
    "REDUCE-SUM-both": ("REDUCE", 32768, (0, 1), {"function": "dml.ReduceFunction.SUM"}, ([[ROW_SUM * 32768]], None)),
    "REDUCE-SUM-rows": ("REDUCE", 32768, (0,), {"function": "dml.ReduceFunction.SUM"}, ([[0, 32768]], None)),
    "REDUCE-SUM-columns": (
        "REDUCE",
        32768,
        (1,),
        {"function": "dml.ReduceFunction.SUM"},
        ([[ROW_SUM], [ROW_SUM]], None),
    ),
    "REDUCE-MAX-both": ("REDUCE", 32768, (0, 1), {"function": "dml.ReduceFunction.MAX"}, ([[LAST]], None)),
    "REDUCE-AVERAGE-rows": ("REDUCE", 32768, (0,), {"function": "dml.ReduceFunction.AVERAGE"}, ([[0, 1]], None)),
    "REDUCE-ARGMAX-both": ("REDUCE", 32768, (0, 1), {"function": "dml.ReduceFunction.ARGMAX"}, ([[LAST]], None)),
    "HARDMAX1-columns": ("ACTIVATION_HARDMAX1", 4096, (1,), {}, ([[0, 0], [0, 0]], [[0, 1]])),
    "HARDMAX1-rows": ("ACTIVATION_HARDMAX1", 4096, (0,), {}, ([[1, 1], [0, 0]], [[0, 0]])),
    "HARDMAX-rows": ("ACTIVATION_HARDMAX", 4096, (1,), {}, ([[0, 0], [0, 0]], [[0, 1]])),
    "LOG_SOFTMAX1-both": ("ACTIVATION_LOG_SOFTMAX1", 4096, (0, 1), {}, None),
    "SOFTMAX1-rows": ("ACTIVATION_SOFTMAX1", 4096, (0,), {}, ([[1 / 4096, 1 / 4096]] * 2, [[1 / 4096] * 2])),
}


@pytest.mark.parametrize("name", CASES)
def test_broadcast_reduction_runs_in_output_sized_memory(name, tmp_path):
    import io

    import numpy as np

    op, rows, axes, extra, expected = CASES[name]
    extra_text = "{" + ", ".join(f"{k!r}: {v}" for k, v in extra.items()) + "}"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, op, str(rows), repr(axes), extra_text, str(MARGIN)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    stream = io.BytesIO(done.stdout)
    head, tail = np.load(stream), np.load(stream)
    if op == "ACTIVATION_LOG_SOFTMAX1":
        first, last = _log_softmax_all(rows)
        np.testing.assert_allclose([head[0, 0], tail[0, -1]], [first, last], rtol=2**-23)
        return
    want_head, want_tail = expected
    np.testing.assert_array_equal(head, np.array(want_head, head.dtype))
    if want_tail is not None:
        np.testing.assert_array_equal(tail, np.array(want_tail, tail.dtype))
