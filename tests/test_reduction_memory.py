"""Reductions over broadcast inputs use memory of the order of their output, not of their (virtual) input.

A (32768, 32768) FLOAT32 tensor with strides (0, 1) reads one 128 KiB row 32768 times: 4 GiB of elements. The
cases run in a child process whose address space is capped (RLIMIT_AS), for each execution, at what it holds
(its output allocated) plus a small margin, so a kernel that materialises the input fails with MemoryError instead
of taking the machine's memory. The values are checked against the formulas.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import opendml as dml

CHILD = textwrap.dedent(
    """
    import pickle, resource, sys
    import numpy as np
    import opendml as dml

    T = dml.TensorDataType
    row = np.arange(32768, dtype=np.float32)  # the 128 KiB buffer: every row of x is 0, 1, ..., 32767
    schemas = {s.operator_type.name: s for s in dml.REGISTRY.values()}
    results = {}
    for (name, backend), (op, rows, axes, extra, margin) in eval(sys.stdin.read()).items():
        x = dml.BufferTensorDesc(T.FLOAT32, (rows, 32768), strides=(0, 1))
        schema = schemas[op]
        index_output = op.startswith("ARG") or extra.get("function") in (dml.ReduceFunction.ARGMAX,)
        sizes = tuple(1 if d in axes else s for d, s in enumerate(x.sizes))
        sizes = sizes if schema.output_rule.reduced_by else x.sizes
        out = dml.BufferTensorDesc(T.UINT32 if index_output else T.FLOAT32, sizes)
        if any(spec.c_name == "Axes" for spec in schema.fields):
            extra["axes"] = axes
        device = dml.Device(kernels=backend)
        desc = schema.desc_class(input_tensor=x, output_tensor=out, **extra)
        compiled = device.compile_operator(device.create_operator(desc))
        output = np.zeros(out.sizes, np.uint32 if index_output else np.float32)
        vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize"))
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (vm + margin, hard))  # the soft limit: it can be raised back
        try:
            compiled.execute([dml.BufferBinding(row)], [output])
            results[name, backend] = (output[:2, :2].copy(), output[-1:, -2:].copy())
        except MemoryError as error:
            results[name, backend] = f"MemoryError: {error}"
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        del output
    pickle.dump(results, sys.stdout.buffer)
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


def _backends(op: str) -> list[str]:
    """The reference kernel (the semantics of record), and the compiled one where the operator has it."""
    from opendml import kernels

    return [b for b in ("reference", "compiled") if b in kernels.KERNELS[getattr(dml.OperatorType, op)]]


@pytest.fixture(scope="module")
def broadcast_results():
    """Every case in one child process (one start-up), each under its own cap: name -> (head, tail) or an error."""
    import pickle

    cases = {
        (name, backend): (op, rows, axes, extra, MARGIN)
        for name, (op, rows, axes, extra, _) in CASES.items()
        for backend in _backends(op)
    }
    text = "{" + ", ".join(f"{key!r}: {_literal(v)}" for key, v in cases.items()) + "}"
    done = subprocess.run([sys.executable, "-c", CHILD], input=text.encode(), capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return pickle.loads(done.stdout)


def _literal(case) -> str:
    op, rows, axes, extra, margin = case
    fields = "{" + ", ".join(f"{k!r}: {v}" for k, v in extra.items()) + "}"
    return f"({op!r}, {rows}, {axes!r}, {fields}, {margin})"


@pytest.mark.parametrize("name", CASES)
def test_broadcast_reduction_runs_in_output_sized_memory(name, broadcast_results):
    op, rows, _, _, expected = CASES[name]
    for backend in _backends(op):
        result = broadcast_results[name, backend]
        assert not isinstance(result, str), (backend, result)
        _check(op, rows, expected, *result)


def _check(op, rows, expected, head, tail) -> None:
    import numpy as np

    if op == "ACTIVATION_LOG_SOFTMAX1":
        first, last = _log_softmax_all(rows)
        np.testing.assert_allclose([head[0, 0], tail[0, -1]], [first, last], rtol=2**-23)
        return
    want_head, want_tail = expected
    np.testing.assert_array_equal(head, np.array(want_head, head.dtype))
    if want_tail is not None:
        np.testing.assert_array_equal(tail, np.array(want_tail, tail.dtype))


PACKED_CHILD = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    import opendml as dml

    function = sys.argv[1]
    x = np.random.default_rng(0).standard_normal((64, 1024, 1024), dtype=np.float32)  # 256 MiB, packed
    x[63, 7, 1023] = 100  # the maximum of group 7, the last of its row-major order
    out_type = dml.TensorDataType.UINT32 if function == "ARGMAX" else dml.TensorDataType.FLOAT32
    reduce = dml.ReduceOperatorDesc(
        function=getattr(dml.ReduceFunction, function), input_tensor=dml.BufferTensorDesc.like(x),
        output_tensor=dml.BufferTensorDesc(out_type, (1, 1024, 1)), axes=(2, 0),
    )
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(reduce))
    vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (vm + (64 << 20), hard))
    (out,) = compiled.execute([x])
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    print(out.ravel()[7])
    """
)


@pytest.mark.parametrize("function, expected", [("ARGMAX", 63 * 1024 + 1023), ("MAX", 100.0)])
def test_reductions_over_axes_that_do_not_merge_stream_their_input(function, expected):
    """Axes (0, 2) of a packed (64, 1024, 1024) tensor cannot be viewed as one axis: a kernel that copied the
    256 MiB input to group them would fail under a cap of 64 MiB beyond what the process holds."""
    done = subprocess.run([sys.executable, "-c", PACKED_CHILD, function], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert float(done.stdout) == expected
