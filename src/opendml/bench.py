"""Benchmark: ``python -m opendml.bench [--quick] [--ops ...] [--shapes ...] [--json PATH]``.

Times every operator x {float32, float16} x {one axis (the last); two axes: the last two, and the first and last (a
far-strided axis with a contiguous one); where the operator
reduces} at each shape, on 1 and 2 threads (opendml's ``set_num_threads``), against, in the same run:

* the bound: max(a NumPy copy of as many bytes as the operator reads and writes, a NumPy read of its input);
* onnxruntime (skipped when not installed, or when its CPU provider has no kernel for the dtype): one thread
  (``intra_op_num_threads=1``) for the 1-thread rows, its default for the 2-thread rows, its workers told not
  to spin between runs (they would take the cores the interleaved samples of the others need); IO binding into
  preallocated outputs; ONNX's single-axis operators take other axes through Transpose and several through Reshape;
* PyTorch (when installed; ``torch.set_num_threads``) and the plain NumPy one-liner.

opendml runs ``CompiledOperator.execute`` into a preallocated output. Samples of all contenders are interleaved,
in an order shuffled each round (seeded), and the table reports medians. A sample depends on the one before it,
which a fixed order would make the same every round: on the Intel development machine (480 MiB of L3), the one
after onnxruntime found their shared input in L3 (REDUCE MAX float32 over the last axis of (64, 512, 512): 2.55
ms, 4.2 after 60 ms of waiting), and float16 LOG_SOFTMAX1 over (1, 2) took 8.1 ms right after onnxruntime's
float16 LogSoftmax, 5.1 back to back and 5.9-6.0 after 60 ms of waiting. So every sample of a case of FLUSH_MIN
bytes or more (input and output) starts from memory: a read of 1.5x the last-level cache (``flush_bytes``) goes
before it, for every contender and the bound alike; a smaller case's sample is a burst of about SAMPLE_MIN of
back-to-back calls, its time divided among them (a few microseconds timed one call at a time were mostly the
timer's and the scheduler's noise: REDUCE SUM float32 over the last axis of (8, 64, 64) came out 1.32x
onnxruntime in one full run and 0.75-1.00x in reruns, 0.94x back to back). It then times the per-call overhead
at (1,16) and (8,64,64): ``execute`` into a preallocated output vs onnxruntime's IO binding, and the cached
``functional`` call vs ``InferenceSession.run``. Prints Markdown; ``--json PATH`` also writes every figure.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import random
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

import opendml as dml
from opendml import functional as F

T = dml.TensorDataType
DTYPES = {"float32": (np.float32, T.FLOAT32), "float16": (np.float16, T.FLOAT16)}


@dataclass(frozen=True)
class ElementWise:
    """An element-wise member of issues 10 and 11: ``desc(x_desc, b_desc) -> descriptor`` over the inputs ``x``
    (standard normal) and, for binary members, ``b``; ``extra`` are further inputs bound as buffers (a broadcast
    scale); ``numpy(inputs, out)`` the NumPy one-liner; ``onnx`` the operator with its constant inputs
    (name -> value) and opset; ``out`` the output dtype (default: the input's)."""

    desc: object
    numpy: object
    onnx: str
    binary: bool = False
    constants: dict = field(default_factory=dict)
    opset: int = 17
    out: object = None
    extra: tuple = ()


def _unary(cls, **fields):
    return lambda x, b, out: cls(input_tensor=x, output_tensor=out, **fields)


def _binary(cls):
    return lambda a, b, out: cls(a_tensor=a, b_tensor=b, output_tensor=out)


def _quantize(x, b, out):
    broadcast = {"strides": (0,) * len(x.sizes)}
    return dml.ElementWiseQuantizeLinearOperatorDesc(
        input_tensor=x, scale_tensor=dml.BufferTensorDesc(x.data_type, x.sizes, **broadcast),
        zero_point_tensor=dml.BufferTensorDesc(T.UINT8, x.sizes, **broadcast), output_tensor=out,
    )  # fmt: skip


def _np_quantize(inputs, out):
    np.copyto(out, np.clip(np.rint(inputs[0] / inputs[0].dtype.type(0.05)) + 128, 0, 255), casting="unsafe")


ELEMENTWISE = {
    "relu": ElementWise(_unary(dml.ActivationReluOperatorDesc), lambda i, o: np.maximum(i[0], 0, out=o), "Relu"),
    "sigmoid": ElementWise(
        _unary(dml.ActivationSigmoidOperatorDesc), lambda i, o: np.divide(1, 1 + np.exp(-i[0]), out=o), "Sigmoid"
    ),
    "tanh": ElementWise(_unary(dml.ActivationTanhOperatorDesc), lambda i, o: np.tanh(i[0], out=o), "Tanh"),
    "gelu": ElementWise(
        _unary(dml.ActivationGeluOperatorDesc),
        lambda i, o: np.multiply(i[0], 0.5 * (1 + np.tanh(i[0])), out=o),
        "Gelu",
        opset=20,
    ),  # (numpy has no erf: a tanh stand-in of the same cost class)
    "add": ElementWise(_binary(dml.ElementWiseAddOperatorDesc), lambda i, o: np.add(*i, out=o), "Add", binary=True),
    "multiply": ElementWise(
        _binary(dml.ElementWiseMultiplyOperatorDesc), lambda i, o: np.multiply(*i, out=o), "Mul", binary=True
    ),
    "clip": ElementWise(
        _unary(dml.ElementWiseClipOperatorDesc, min=-1.0, max=1.0),
        lambda i, o: np.clip(i[0], -1, 1, out=o),
        "Clip",
        constants={"min": -1.0, "max": 1.0},
    ),
    "exp": ElementWise(_unary(dml.ElementWiseExpOperatorDesc), lambda i, o: np.exp(i[0], out=o), "Exp"),
    "quantize_linear": ElementWise(
        _quantize,
        _np_quantize,
        "QuantizeLinear",
        constants={"scale": 0.05, "zero_point": np.uint8(128)},
        out=np.uint8,
        extra=(0.05, np.uint8(128)),
    ),
    "less_than": ElementWise(
        _binary(dml.ElementWiseLogicalLessThanOperatorDesc),
        lambda i, o: np.less(*i, out=o.view(np.bool_)),
        "Less",
        binary=True,
        out=np.uint8,
    ),
}
OPS = ("hard_sigmoid", "if", "argmax", "hardmax", "log_softmax", "softmax", "reduce_sum", "reduce_max", *ELEMENTWISE)
ONNX = {
    "hard_sigmoid": "HardSigmoid",
    "if": "Where",
    "argmax": "ArgMax",
    "hardmax": "Hardmax",
    "log_softmax": "LogSoftmax",
    "softmax": "Softmax",
    "reduce_sum": "ReduceSum",
    "reduce_max": "ReduceMax",
}
ONNX.update({op: member.onnx for op, member in ELEMENTWISE.items()})
#: Operators whose output has the input's shape over ``axes`` (ONNX's single-axis forms take two axes via Reshape).
SOFTMAX_FAMILY = {
    "hardmax": dml.ActivationHardmax1OperatorDesc,
    "log_softmax": dml.ActivationLogSoftmax1OperatorDesc,
    "softmax": dml.ActivationSoftmax1OperatorDesc,
}
#: The REDUCE rows: the function, and NumPy's and PyTorch's one-liners (keepdims).
REDUCE = {"reduce_sum": (dml.ReduceFunction.SUM, np.sum, "sum"), "reduce_max": (dml.ReduceFunction.MAX, np.max, "amax")}


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@dataclass
class Case:
    op: str
    dtype: str
    shape: tuple
    axes: tuple
    inputs: list
    output: np.ndarray
    bytes_read: int
    bytes_written: int
    contenders: dict = field(default_factory=dict)  # name -> callable


def make_case(op, dtype_name, shape, axes, rng) -> Case:
    dtype = DTYPES[dtype_name][0]
    x = rng.standard_normal(shape).astype(dtype)
    desc_x = dml.BufferTensorDesc.like(x)
    device = dml.Device()
    if op in ELEMENTWISE:
        member = ELEMENTWISE[op]
        inputs = [x, rng.standard_normal(shape).astype(dtype)] if member.binary else [x]
        out = np.empty(shape, member.out or dtype)
        desc = member.desc(desc_x, desc_x, dml.BufferTensorDesc.like(out))
        # (a broadcast tensor still takes TotalTensorSizeInBytes, at least 4 bytes)
        extra = [np.asarray(v, dtype if isinstance(v, float) else None) for v in member.extra]  # float: x's type
        bound = [*inputs, *(dml.BufferBinding(np.full(4 // v.itemsize or 1, v)) for v in extra)]
        compiled = device.compile_operator(device.create_operator(desc))
        case = Case(op, dtype_name, shape, axes, inputs, out, sum(a.nbytes for a in inputs), out.nbytes)
        case.contenders["opendml"] = lambda: compiled.execute(bound, [out])
        case.contenders["numpy"] = lambda: member.numpy(inputs, out)
        return case
    if op == "hard_sigmoid":
        inputs, out = [x], np.empty_like(x)
        desc = dml.ActivationHardSigmoidOperatorDesc(input_tensor=desc_x, output_tensor=desc_x, alpha=0.2, beta=0.5)
    elif op == "if":
        cond = (rng.random(shape) < 0.5).astype(np.uint8)
        b = rng.standard_normal(shape).astype(dtype)
        inputs, out = [cond, x, b], np.empty_like(x)
        desc = dml.ElementWiseIfOperatorDesc(
            condition_tensor=dml.BufferTensorDesc.like(cond), a_tensor=desc_x, b_tensor=desc_x, output_tensor=desc_x
        )
    elif op == "argmax":
        out_shape = tuple(1 if d in axes else s for d, s in enumerate(shape))
        inputs, out = [x], np.empty(out_shape, np.int64)
        desc = dml.ArgmaxOperatorDesc(
            input_tensor=desc_x, output_tensor=dml.BufferTensorDesc(T.INT64, out_shape), axes=axes,
            axis_direction=dml.AxisDirection.INCREASING,
        )  # fmt: skip
    elif op in REDUCE:
        out_shape = tuple(1 if d in axes else s for d, s in enumerate(shape))
        inputs, out = [x], np.empty(out_shape, dtype)
        desc = dml.ReduceOperatorDesc(
            input_tensor=desc_x, output_tensor=dml.BufferTensorDesc(desc_x.data_type, out_shape), axes=axes,
            function=REDUCE[op][0],
        )  # fmt: skip
    else:
        inputs, out = [x], np.empty_like(x)
        desc = SOFTMAX_FAMILY[op](input_tensor=desc_x, output_tensor=desc_x, axes=axes)
    compiled = device.compile_operator(device.create_operator(desc))
    case = Case(op, dtype_name, shape, axes, inputs, out, sum(a.nbytes for a in inputs), out.nbytes)
    case.contenders["opendml"] = lambda: compiled.execute(inputs, [out])
    case.contenders["numpy"] = numpy_baseline(case)
    return case


def numpy_baseline(case: Case):
    x, out, axes = case.inputs[-1] if case.op != "if" else case.inputs[1], case.output, case.axes
    if case.op == "hard_sigmoid":
        a, b = x.dtype.type(0.2), x.dtype.type(0.5)
        return lambda: np.clip(x * a + b, 0, 1, out=out)
    if case.op == "if":
        c, a, b = case.inputs
        return lambda: np.copyto(out, np.where(c != 0, a, b))
    if case.op in REDUCE:
        return lambda: REDUCE[case.op][1](x, axis=axes, keepdims=True, out=out)
    kept = [d for d in range(x.ndim) if d not in axes]
    grouped_shape = tuple(x.shape[d] for d in kept) + (-1,)

    def argmax_flat():  # the reduced axes moved last and merged
        return x.transpose(kept + list(axes)).reshape(grouped_shape).argmax(-1)

    if case.op == "argmax":
        return lambda: np.copyto(out, argmax_flat().reshape(out.shape))
    if case.op == "hardmax":
        n, moved = int(np.prod([x.shape[d] for d in axes])), tuple(x.shape[d] for d in kept + list(axes))
        back = np.argsort(kept + list(axes))
        return lambda: np.copyto(out, (np.arange(n) == argmax_flat()[..., None]).reshape(moved).transpose(back))

    def log_softmax():
        shifted = x - x.max(axis=axes, keepdims=True)
        np.subtract(shifted, np.log(np.exp(shifted).sum(axis=axes, keepdims=True)), out=out)

    def softmax():
        e = np.exp(x - x.max(axis=axes, keepdims=True))
        np.divide(e, e.sum(axis=axes, keepdims=True), out=out)

    return softmax if case.op == "softmax" else log_softmax


def add_bound(case: Case):
    """The same-run memory bound: a copy of (read + written) / 2 bytes each way, and a read of the input."""
    moved = (case.bytes_read + case.bytes_written) // 2
    src, dst = np.ones(moved, np.uint8), np.empty(moved, np.uint8)
    x = case.inputs[-1].reshape(-1).view(np.uint8)
    words = x[: x.size - x.size % 8].view(np.uint64)
    case.contenders["copy"] = lambda: np.copyto(dst, src)
    case.contenders["read"] = lambda: np.bitwise_or.reduce(words)


def add_onnxruntime(case: Case, threads: int):
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return
    np_to_onnx = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}
    elem = np_to_onnx[DTYPES[case.dtype][0]]
    shape, axes = list(case.shape), case.axes
    nodes, inits = [], []
    x_name = "x"
    opset, out_elem = 17, TensorProto.INT64 if case.op == "argmax" else elem
    if case.op in ELEMENTWISE:
        member = ELEMENTWISE[case.op]
        names = ["x", "b"][: len(case.inputs)]
        inputs = [helper.make_tensor_value_info(n, elem, shape) for n in names]
        feeds = dict(zip(names, case.inputs))
        for name, value in member.constants.items():
            kind = TensorProto.UINT8 if isinstance(value, np.uint8) else elem
            inits.append(helper.make_tensor(name, kind, [], [value]))
        nodes.append(helper.make_node(member.onnx, [*names, *member.constants], ["y"]))
        opset = member.opset
        if member.out is not None:  # QuantizeLinear's UINT8, Less's BOOL
            out_elem = TensorProto.UINT8 if case.op == "quantize_linear" else TensorProto.BOOL
    elif case.op == "if":
        inputs = [
            helper.make_tensor_value_info("c", TensorProto.BOOL, shape),
            helper.make_tensor_value_info("a", elem, shape),
            helper.make_tensor_value_info("b", elem, shape),
        ]
        nodes.append(helper.make_node("Where", ["c", "a", "b"], ["y"]))
        feeds = {"c": case.inputs[0].view(np.bool_), "a": case.inputs[1], "b": case.inputs[2]}
    else:
        inputs = [helper.make_tensor_value_info("x", elem, shape)]
        feeds = {"x": case.inputs[0]}
        attrs = {"alpha": 0.2, "beta": 0.5} if case.op == "hard_sigmoid" else {}
        if case.op in REDUCE:  # ReduceSum takes its axes as an input (opset 13), ReduceMax as an attribute (< 18)
            attrs["keepdims"] = 1
            if case.op == "reduce_sum":
                inits.append(helper.make_tensor("axes", TensorProto.INT64, [len(axes)], list(axes)))
            else:
                attrs["axes"] = list(axes)
        elif case.op != "hard_sigmoid":
            attrs["axis"] = len(shape) - 1
            perm = [d for d in range(len(shape)) if d not in axes] + list(axes)
            if perm != sorted(perm):  # reduced axes moved last (Transpose), as an ONNX user would
                nodes.append(helper.make_node("Transpose", ["x"], ["xt"], perm=perm))
                x_name = "xt"
            if len(axes) > 1:  # the reduced axes (now trailing) merged into one through Reshape
                merged = [shape[d] for d in perm[: len(shape) - len(axes)]] + [-1]
                inits.append(helper.make_tensor("s", TensorProto.INT64, [len(merged)], merged))
                nodes.append(helper.make_node("Reshape", [x_name, "s"], ["xr"]))
                x_name, attrs["axis"] = "xr", len(merged) - 1
        if case.op == "argmax":
            attrs["keepdims"] = 1
        y_name = "yr" if x_name == "xr" else "y"
        node_inputs = [x_name, "axes"] if case.op == "reduce_sum" else [x_name]
        nodes.append(helper.make_node(ONNX[case.op], node_inputs, [y_name], **attrs))
        if x_name == "xr":
            back = case.op != "argmax" and perm != sorted(perm)  # a full-shape output goes back through Transpose
            out_shape = [shape[d] for d in perm] if back else list(case.output.shape)
            inits.append(helper.make_tensor("o", TensorProto.INT64, [len(out_shape)], out_shape))
            nodes.append(helper.make_node("Reshape", ["yr", "o"], ["yt" if back else "y"]))
            if back:
                nodes.append(helper.make_node("Transpose", ["yt"], ["y"], perm=list(np.argsort(perm))))
    graph = helper.make_graph(
        nodes, "g", inputs, [helper.make_tensor_value_info("y", out_elem, list(case.output.shape))], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 18 else 9
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1 if threads == 1 else 0
    # Its idle workers spin after each run, on the cores the interleaved contenders then need: no spinning.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        binding = session.io_binding()
        for name, value in feeds.items():
            binding.bind_cpu_input(name, value)
        out = case.output.view(np.bool_) if out_elem == TensorProto.BOOL else case.output
        binding.bind_output("y", "cpu", 0, out.dtype, out.shape, out.ctypes.data)
        session.run_with_iobinding(binding)
    except Exception:  # no CPU kernel for this dtype (onnxruntime has few float16 CPU kernels)
        return
    case.contenders["onnxruntime"] = lambda: session.run_with_iobinding(binding)


def add_torch(case: Case, threads: int):
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)
    xs = [torch.from_numpy(a) for a in case.inputs]
    out = torch.from_numpy(case.output)
    dims = list(case.axes)
    try:
        if case.op == "hard_sigmoid":
            fn = lambda: torch.clamp(xs[0] * 0.2 + 0.5, 0, 1, out=out)  # noqa: E731
        elif case.op == "if":
            fn = lambda: torch.where(xs[0].bool(), xs[1], xs[2], out=out)  # noqa: E731
        elif case.op == "log_softmax" and len(dims) == 1:
            fn = lambda: torch.log_softmax(xs[0], dims[0], out=out)  # noqa: E731
        elif case.op == "log_softmax":
            fn = lambda: out.copy_(xs[0] - torch.logsumexp(xs[0], dims, keepdim=True))  # noqa: E731
        elif case.op == "softmax":
            fn = lambda: out.copy_(torch.softmax(xs[0], dims[0]) if len(dims) == 1 else  # noqa: E731
                                   torch.exp(xs[0] - torch.logsumexp(xs[0], dims, keepdim=True)))  # fmt: skip
        elif case.op in REDUCE:
            fn = lambda: getattr(torch, REDUCE[case.op][2])(xs[0], dims, keepdim=True, out=out)  # noqa: E731
        elif case.op == "argmax" and len(dims) == 1:
            fn = lambda: out.copy_(torch.argmax(xs[0], dims[0], keepdim=True))  # noqa: E731
        else:
            return
        fn()
    except Exception:
        return
    case.contenders["torch"] = fn


FLUSH_MIN = 16 << 20  # bytes: a case this large is timed from memory (see the module's doc)


def flush_bytes() -> int:
    """1.5x the largest cache of CPU 0 (Linux sysfs; 64 MiB when unknown), at least 64 MiB."""
    largest = 0
    for size in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            with open(size) as handle:
                text = handle.read().strip()
            largest = max(largest, int(text.rstrip("KMG")) << {"K": 10, "M": 20, "G": 30}.get(text[-1:], 0))
        except (OSError, ValueError):
            continue
    return max(largest * 3 // 2, 64 << 20)


SAMPLE_MIN = 1e-3  # seconds: an in-cache sample is a burst of calls this long (see measure)


def calls_per_sample(fn) -> int:
    """How many back-to-back calls of fn make an in-cache sample last SAMPLE_MIN (at least one, at most 10,000:
    calls under 100 ns make shorter samples; warms fn up)."""
    fn()
    start = time.perf_counter()
    for _ in range(3):
        fn()
    per_call = (time.perf_counter() - start) / 3
    return max(1, min(10_000, int(SAMPLE_MIN / max(per_call, 1e-9))))


def measure(case: Case, samples: int, flush=None) -> dict[str, float]:
    """Median seconds per call per contender, samples interleaved in an order shuffled each round. With `flush`,
    a sample is one call after `flush()` (see the module's doc); without, a burst of back-to-back calls
    (calls_per_sample), timed as a whole: one call of a few microseconds timed alone is mostly the timer's and the
    scheduler's noise."""
    if flush:
        for fn in case.contenders.values():
            fn()  # warm up
    reps = {name: 1 if flush else calls_per_sample(fn) for name, fn in case.contenders.items()}
    times = {name: [] for name in case.contenders}
    order = list(case.contenders.items())
    shuffle = random.Random(0).shuffle
    for _ in range(samples):
        shuffle(order)
        for name, fn in order:
            if flush:
                flush()
            n = reps[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            times[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(ts) for name, ts in times.items()}


def overhead(shape, samples: int) -> dict[str, float]:
    """Per-call seconds at a tiny shape: execute vs IO binding, functional vs session.run (HARD_SIGMOID f32)."""
    rng = np.random.default_rng(0)
    case = make_case("hard_sigmoid", "float32", shape, (), rng)
    x = case.inputs[0]
    F.activation_hard_sigmoid(x)
    result = {"opendml execute": case.contenders["opendml"], "opendml functional": lambda: F.activation_hard_sigmoid(x)}
    add_onnxruntime(case, 1)
    if "onnxruntime" in case.contenders:
        result["onnxruntime io_binding"] = case.contenders["onnxruntime"]
        import onnxruntime as ort
        from onnx import TensorProto, helper

        graph = helper.make_graph(
            [helper.make_node("HardSigmoid", ["x"], ["y"], alpha=0.2, beta=0.5)],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        plain = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        result["onnxruntime session.run"] = lambda: plain.run(None, {"x": x})
    reps = 200
    per_call = {name: [] for name in result}
    for fn in result.values():
        fn()
    for _ in range(samples):
        for name, fn in result.items():
            start = time.perf_counter()
            for _ in range(reps):
                fn()
            per_call[name].append((time.perf_counter() - start) / reps)
    return {name: statistics.median(ts) for name, ts in per_call.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m opendml.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 samples, only (8,64,64) unless --shapes is given")
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS))
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES))
    parser.add_argument("--shapes", nargs="+", default=None, help="e.g. 64x512x512 8x64x64")
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--samples", type=int, default=None)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    shapes = [tuple(int(n) for n in s.split("x")) for s in args.shapes] if args.shapes else (
        [(8, 64, 64)] if args.quick else [(64, 512, 512), (8, 64, 64)]
    )  # fmt: skip
    samples = args.samples or (3 if args.quick else 11)
    info = dml.runtime_info()
    threads_before = dml.get_num_threads()
    try:
        import onnxruntime

        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = None
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    header = (
        f"{cpu_name()}, {os.cpu_count()} cores; opendml ISA {info.get('isa', 'none')}; NumPy {np.__version__}; "
        f"onnxruntime {ort_version or 'not installed'}; Python {platform.python_version()}; "
        f"medians of {samples} interleaved samples (cases of {FLUSH_MIN >> 20} MiB or more from memory: a "
        f"{flush_bytes() >> 20} MiB read before each sample; smaller ones: bursts of about "
        f"{SAMPLE_MIN * 1e3:g} ms of calls, timed per call); load average at start {load:.1f}"
    )
    print(header + "\n")
    print("| operator | dtype | shape | axes | threads | opendml ms | bound ms | onnxruntime ms | torch ms | numpy ms "
          "| opendml/bound | opendml/best peer |")  # fmt: skip
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    rng = np.random.default_rng(0)
    junk = []  # (allocated at the first case that needs it)

    def flush():
        if not junk:
            junk.append(np.ones(flush_bytes() // 8, np.uint64))
        np.bitwise_or.reduce(junk[0])

    for shape in shapes:
        for op in args.ops:
            last = len(shape) - 1
            # the last axis, the last two, the first and last (the same two at rank 2: once)
            axis_sets = list(dict.fromkeys([(last,), (last - 1, last), (0, last)]))
            if op in ("hard_sigmoid", "if", *ELEMENTWISE):
                axis_sets = [()]
            for dtype in args.dtypes:
                for axes in axis_sets:
                    for threads in args.threads:
                        dml.set_num_threads(threads)
                        case = make_case(op, dtype, shape, axes, rng)
                        add_bound(case)
                        add_onnxruntime(case, threads)
                        add_torch(case, threads)
                        big = case.bytes_read + case.bytes_written >= FLUSH_MIN
                        t = measure(case, samples, flush if big else None)
                        bound = max(t.pop("copy"), t.pop("read"))
                        peers = {k: v for k, v in t.items() if k != "opendml"}
                        best = min(peers.values())
                        row = dict(op=op, dtype=dtype, shape=list(shape), axes=list(axes), threads=threads,
                                   bound=bound, **t, vs_bound=t["opendml"] / bound, vs_best_peer=t["opendml"] / best,
                                   best_peer=min(peers, key=peers.get))  # fmt: skip
                        rows.append(row)

                        figures = dict(t, bound=bound)

                        def ms(name, figures=figures):  # (4 significant digits: (8, 64, 64) takes microseconds)
                            return f"{figures[name] * 1e3:.4g}" if name in figures else "n/a"

                        print(
                            f"| {op} | {dtype} | {'x'.join(map(str, shape))} | {','.join(map(str, axes)) or '-'} "
                            f"| {threads} | {ms('opendml')} | {ms('bound')} | {ms('onnxruntime')} | {ms('torch')} "
                            f"| {ms('numpy')} | {row['vs_bound']:.2f} "
                            f"| {row['vs_best_peer']:.2f} ({row['best_peer']}) |",
                            flush=True,
                        )
                        del case
    dml.set_num_threads(threads_before)
    print("\nPer-call overhead (HARD_SIGMOID float32, one thread), microseconds:\n")
    overheads = {}
    dml.set_num_threads(1)
    for shape in ((1, 16), (8, 64, 64)):
        o = overhead(shape, max(samples, 5))
        overheads["x".join(map(str, shape))] = o
        print(f"- {shape}: " + ", ".join(f"{k} {v * 1e6:.1f}" for k, v in o.items()))
    dml.set_num_threads(threads_before)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": header, "rows": rows, "overhead_seconds": overheads}, handle, indent=1)


if __name__ == "__main__":
    main()
