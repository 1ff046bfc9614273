"""What strides cost: opendml operators on packed, padded and NHWC (permuted) tensors, against NumPy baselines.

Run:  python benchmarks/bench_strided.py [--repeats 9] [--shape 8 64 128 128]

Every operator runs on a FLOAT32 NCHW tensor (default 8x64x128x128 = 32 MiB) in three layouts, the same
layout for inputs and output:

* packed:  row-major NCHW, bound as NumPy arrays;
* padded:  NCHW rows padded to W+16 elements and H+1 rows per plane, bound with BufferBinding;
* nhwc:    sizes NCHW, strides NHWC {H*W*C, 1, W*C, C}, bound with BufferBinding.

Baselines are measured in the same run, on the same buffers and layouts (NumPy views built with as_strided):
``np.copyto`` of the operator's input bytes into the output (the memory-bandwidth roof of a one-pass
operator), and the NumPy one-liner that computes the same result (np.clip, np.where, np.argmax, ...). Times are
the best of ``--repeats`` runs with time.perf_counter. GB/s counts the bytes of the tensors' elements read and
written once (padding not counted). The table is printed in Markdown.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from numpy.lib.stride_tricks import as_strided

import opendml as dml
from opendml.bench import cpu_name

T = dml.TensorDataType
DEVICE = dml.Device()
LAYOUTS = ("packed", "padded", "nhwc")
DTYPES = {T.FLOAT32: np.float32, T.UINT8: np.uint8, T.UINT32: np.uint32}


def layout_strides(sizes, layout):
    _, c, h, w = sizes
    if layout == "packed":
        return None
    if layout == "padded":
        return ((c * (h + 1) * (w + 16)), (h + 1) * (w + 16), w + 16, 1)
    return (h * w * c, 1, w * c, c)  # nhwc


class Tensor:
    """One tensor in one layout: its descriptor, its buffer, the binding and a NumPy view of it."""

    def __init__(self, data_type, sizes, layout, is_output=False):
        self.dtype = np.dtype(DTYPES[data_type])
        strides = layout_strides(sizes, layout)
        self.desc = dml.BufferTensorDesc(data_type, tuple(sizes), strides)
        self.buffer = np.zeros(self.desc.total_tensor_size_in_bytes, np.uint8)
        element_strides = self.desc.effective_strides
        whole = self.buffer[: self.buffer.size - self.buffer.size % self.dtype.itemsize].view(self.dtype)
        self.view = as_strided(
            whole,
            shape=tuple(sizes),
            strides=tuple(s * self.dtype.itemsize for s in element_strides),
            writeable=True,
        )
        self.packed = layout == "packed"
        self.binding = self.view if self.packed else dml.BufferBinding(self.buffer)
        self.nbytes = int(np.prod(sizes)) * self.dtype.itemsize


def best_of(repeats, fn):
    fn()  # warm up (first-touch page faults, compile caches)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def hard_sigmoid_case(shape, layout, rng):
    x = Tensor(T.FLOAT32, shape, layout)
    x.view[...] = rng.standard_normal(shape, dtype=np.float32) * 4
    y = Tensor(T.FLOAT32, shape, layout, is_output=True)
    desc = dml.ActivationHardSigmoidOperatorDesc(input_tensor=x.desc, output_tensor=y.desc, alpha=0.2, beta=0.5)
    a, b = np.float32(0.2), np.float32(0.5)
    return desc, [x], y, lambda: np.clip(x.view * a + b, 0, 1, out=y.view)


def if_case(shape, layout, rng):
    cond = Tensor(T.UINT8, shape, layout)
    cond.view[...] = rng.integers(0, 2, shape, dtype=np.uint8)
    a, b = Tensor(T.FLOAT32, shape, layout), Tensor(T.FLOAT32, shape, layout)
    a.view[...] = rng.standard_normal(shape, dtype=np.float32)
    b.view[...] = rng.standard_normal(shape, dtype=np.float32)
    y = Tensor(T.FLOAT32, shape, layout, is_output=True)
    desc = dml.ElementWiseIfOperatorDesc(
        condition_tensor=cond.desc, a_tensor=a.desc, b_tensor=b.desc, output_tensor=y.desc
    )
    return desc, [cond, a, b], y, lambda: np.copyto(y.view, np.where(cond.view != 0, a.view, b.view))


def argmax_case(shape, layout, rng):
    x = Tensor(T.FLOAT32, shape, layout)
    x.view[...] = rng.standard_normal(shape, dtype=np.float32)
    out_shape = (shape[0], 1, shape[2], shape[3])
    y = Tensor(T.UINT32, out_shape, layout, is_output=True)
    desc = dml.ArgmaxOperatorDesc(
        input_tensor=x.desc, output_tensor=y.desc, axes=(1,), axis_direction=dml.AxisDirection.INCREASING
    )
    return desc, [x], y, lambda: np.copyto(y.view, np.argmax(x.view, axis=1, keepdims=True), casting="unsafe")


def hardmax1_case(shape, layout, rng):
    x = Tensor(T.FLOAT32, shape, layout)
    x.view[...] = rng.standard_normal(shape, dtype=np.float32)
    y = Tensor(T.FLOAT32, shape, layout, is_output=True)
    desc = dml.ActivationHardmax1OperatorDesc(input_tensor=x.desc, output_tensor=y.desc, axes=(1,))
    channel = np.arange(shape[1]).reshape(1, -1, 1, 1)
    return desc, [x], y, lambda: np.copyto(y.view, channel == np.argmax(x.view, axis=1, keepdims=True))


def log_softmax1_case(shape, layout, rng):
    x = Tensor(T.FLOAT32, shape, layout)
    x.view[...] = rng.standard_normal(shape, dtype=np.float32)
    y = Tensor(T.FLOAT32, shape, layout, is_output=True)
    desc = dml.ActivationLogSoftmax1OperatorDesc(input_tensor=x.desc, output_tensor=y.desc, axes=(1,))

    def numpy_log_softmax():
        shifted = x.view - x.view.max(axis=1, keepdims=True)
        np.subtract(shifted, np.log(np.exp(shifted).sum(axis=1, keepdims=True)), out=y.view)

    return desc, [x], y, numpy_log_softmax


CASES = {
    "ACTIVATION_HARD_SIGMOID": (hard_sigmoid_case, "np.clip(x*a+b, 0, 1)"),
    "ELEMENT_WISE_IF": (if_case, "np.where(c, a, b)"),
    "ARGMAX (axis 1)": (argmax_case, "np.argmax(x, 1)"),
    "ACTIVATION_HARDMAX1 (axis 1)": (hardmax1_case, "arange == argmax"),
    "ACTIVATION_LOG_SOFTMAX1 (axis 1)": (log_softmax1_case, "x-max-log(sum(exp))"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--shape", type=int, nargs=4, default=(8, 64, 128, 128), metavar=("N", "C", "H", "W"))
    args = parser.parse_args()
    shape = tuple(args.shape)
    started = time.perf_counter()

    rows = []
    for name, (make, baseline_name) in CASES.items():
        packed_time = None
        packed_result = None
        for layout in LAYOUTS:
            desc, inputs, output, baseline = make(shape, layout, np.random.default_rng(0))  # same data per layout
            compiled = DEVICE.compile_operator(DEVICE.create_operator(desc))
            bindings = [t.binding for t in inputs]
            out_binding = [output.binding] if not output.packed else [output.view]
            seconds = best_of(args.repeats, lambda c=compiled, i=bindings, o=out_binding: c.execute(i, o))
            result = np.array(output.view)  # the layout-independent values, for a sanity check across layouts
            if packed_result is None:
                packed_result = result
            elif not (
                np.array_equal(result, packed_result, equal_nan=True)
                # LOG_SOFTMAX1 is within 1 ulp, not bit-exact: layouts may sum a group in other orders
                or (name.startswith("ACTIVATION_LOG_SOFTMAX1") and np.allclose(result, packed_result, rtol=2.4e-7))
            ):
                raise SystemExit(f"{name}: the {layout} result differs from the packed one")
            baseline_seconds = best_of(args.repeats, baseline)
            moved = sum(t.nbytes for t in inputs) + output.nbytes
            source = inputs[-1]
            if source.dtype == output.dtype and source.view.shape == output.view.shape:
                pair, copied = (output.view, source.view), 2 * source.nbytes  # read + write
            else:  # ARGMAX: the output is smaller than the input; copy the input's bytes into a like buffer
                pair, copied = (np.empty_like(source.buffer), source.buffer), 2 * source.buffer.nbytes
            copy_seconds = best_of(args.repeats, lambda p=pair: np.copyto(*p))
            if layout == "packed":
                packed_time = seconds
            rows.append(
                (
                    name,
                    layout,
                    seconds * 1e3,
                    seconds / packed_time,
                    baseline_name,
                    baseline_seconds * 1e3,
                    seconds / baseline_seconds,
                    copied / copy_seconds / 1e9,
                    moved / seconds / 1e9,
                )
            )
            del inputs, output, bindings, out_binding, compiled

    tensor_mib = np.prod(shape) * 4 / 2**20
    print(
        f"Shape {shape} FLOAT32 ({tensor_mib:.0f} MiB per tensor), best of {args.repeats}; NumPy {np.__version__}, "
        f"Python {platform.python_version()}, {cpu_name()}.\n"
    )
    print(
        "| operator | layout | opendml ms | strided / packed | NumPy baseline | baseline ms | opendml / baseline "
        "| np.copyto GB/s | opendml GB/s |"
    )
    print("|---|---|---:|---:|---|---:|---:|---:|---:|")
    for name, layout, ms, ratio, base_name, base_ms, vs_base, copy_gbps, gbps in rows:
        print(
            f"| {name} | {layout} | {ms:.1f} | {ratio:.2f} | `{base_name}` | {base_ms:.1f} | {vs_base:.2f} "
            f"| {copy_gbps:.2f} | {gbps:.2f} |"
        )
    print(f"\nTotal benchmark time {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
