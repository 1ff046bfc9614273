"""``opendml`` against hostile inputs and environments (issue 12): lying .npy headers, full disks, long names,
FIFOs, gigabyte initializers and 16 MiB models. Each case runs in a child process under a memory limit and a
timeout, so that a regression fails cleanly instead of exhausting or hanging the machine."""

import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pytest
from dxdispatch_support import buffer, model, prints, sigmoid_model, write

GiB = 2**30
NOT_REGULAR = "it is not a regular file (a FIFO, a device or a folder)"


def opendml(*argv, cwd, memory=GiB, timeout=30, stdout=subprocess.PIPE):
    """``python -m opendml *argv`` with at most ``memory`` bytes of address space: (status, stdout, stderr)."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    env = os.environ | {"OPENBLAS_NUM_THREADS": "1"}  # BLAS threads reserve address space of their own
    done = subprocess.run([sys.executable, "-m", "opendml", *map(str, argv)], cwd=cwd, stdout=stdout,
                          stderr=subprocess.PIPE, preexec_fn=limit, env=env, timeout=timeout)  # fmt: skip
    return done.returncode, done.stdout, done.stderr.decode()


def position(text, member):
    """``line:column`` of the value of the first ``"member":`` in ``text``."""
    offset = text.index(f'"{member}":') + len(member) + 4
    line = text.count("\n", 0, offset) + 1
    return f"{line}:{offset - text.rfind(chr(10), 0, offset)}"


# Item 1: a .npy header may claim any shape; it is checked against the file's size before anything is allocated.


@pytest.mark.parametrize("shape", [(2**40,), (2**34,), (3,)])
def test_an_npy_header_that_does_not_match_the_file_is_located_not_allocated(tmp_path, shape):
    with open(tmp_path / "x.npy", "wb") as file:
        np.lib.format.write_array_header_1_0(file, {"descr": "<f4", "fortran_order": False, "shape": shape})
        file.write(bytes(16))
    text = json.dumps(model({"x": {"initialValues": {"sourcePath": "x.npy"}}}, {}, prints("x")), indent=1)
    (tmp_path / "m.json").write_text(text)
    status, out, err = opendml("run", "m.json", cwd=tmp_path, memory=GiB)
    assert (status, out) == (1, b"")
    assert err == (
        f"opendml: error: m.json:{position(text, 'sourcePath')}: resources.x.initialValues.sourcePath: "
        f"'x.npy' is not a valid .npy file: its header declares shape {shape} of <f4, "
        f"{np.prod(shape) * 4} bytes, but 16 bytes follow the header; write the file again with numpy.save\n"
    )


# Item 2: a full stdout is one line on stderr (a reader that went away still exits 141 quietly: test_cli.py).


@pytest.mark.parametrize("argv", [["run", "m.json"], ["validate", "m.json"], ["examples"]])
def test_a_full_stdout_is_one_line_on_stderr(tmp_path, argv):
    write(tmp_path, sigmoid_model(), "m.json")
    with open("/dev/full", "wb") as full:
        status, _, err = opendml(*argv, cwd=tmp_path, stdout=full)
    assert (status, err) == (1, "opendml: error: cannot write the output: No space left on device\n")


# Item 3: any OSError reading a source file is located at its sourcePath.


def test_a_source_name_too_long_is_located_at_its_source_path(tmp_path):
    name = "x" * 300 + ".bin"
    text = json.dumps(model({"x": buffer("UINT8", {"sourcePath": name})}, {}, prints("x")), indent=1)
    (tmp_path / "m.json").write_text(text)
    status, out, err = opendml("run", "m.json", cwd=tmp_path)
    assert (status, out) == (1, b"")
    assert err == (
        f"opendml: error: m.json:{position(text, 'sourcePath')}: resources.x.initialValues.sourcePath: "
        f"cannot read '{tmp_path / name}': File name too long\n"
    )


# Item 8: FIFOs and devices are refused before anything blocks on them.


@pytest.mark.parametrize("path", ["fifo.json", "/dev/zero", "."])
def test_a_model_that_is_not_a_regular_file_is_a_usage_error(tmp_path, path):
    os.mkfifo(tmp_path / "fifo.json")  # no writer: opening it to read would wait forever
    status, out, err = opendml("run", path, cwd=tmp_path, timeout=20)
    assert (status, out, err) == (2, b"", f"opendml: error: cannot read the model {path!r}: {NOT_REGULAR}\n")


def test_writing_to_a_fifo_is_reported_and_the_run_goes_on(tmp_path):
    os.mkfifo(tmp_path / "out.bin")  # no reader: opening it to write would wait forever
    content = sigmoid_model()
    content["commands"] = [{"type": "writeFile", "resource": "x", "targetPath": "out.bin"}, *prints("x")]
    text = json.dumps(content, indent=1)
    (tmp_path / "m.json").write_text(text)
    status, out, err = opendml("run", "m.json", cwd=tmp_path, timeout=20)
    assert (status, out) == (1, b"Resource 'x': -1, 0, 1\n")
    line = text[: text.index('"writeFile"')].count("\n")  # the command object opens on the line before
    assert err == f"opendml: error: m.json:{line}:3: commands[0]: cannot write 'out.bin': {NOT_REGULAR}\n"


# Item 4: constants and sequences are written straight into the run's buffers: memory is about their size.


def test_gigabyte_constants_and_sequences_take_about_their_size_and_seconds(tmp_path):
    resources = {
        "constant": buffer("UINT8", {"valueCount": GiB, "value": 7}),
        "sequence": buffer("FLOAT32", {"valueCount": GiB // 16, "valueStart": 0, "valueDelta": 0.5}),
        "small": buffer("UINT16", {"valueCount": 3, "valueStart": 65534, "valueDelta": 1}),
    }
    write(tmp_path, model(resources, {}, prints("small")), "m.json")
    start = time.monotonic()
    status, out, err = opendml("run", "m.json", cwd=tmp_path, memory=GiB + 1024 * 2**20, timeout=60)
    assert (status, out, err) == (0, b"Resource 'small': 65534, 65535, 0\n", "")
    assert time.monotonic() - start < 30


# Item 6: a 16 MiB model parses in seconds and a few times its size in memory, errors still located exactly.


def test_a_16_mib_list_of_numbers_parses_fast_and_its_bad_element_is_located(tmp_path):
    values = ",".join(map(str, range(2_000_000, 3_999_999))) + f",{2**32}"  # 7 digits and a comma each
    text = f'{{"resources": {{"x": {{"initialValuesDataType": "UINT32", "initialValues": [{values}]}}}},\n' \
           '"dispatchables": {}, "commands": []}'  # fmt: skip
    (tmp_path / "m.json").write_text(text)
    assert 15 * 2**20 < len(text) <= 16 * 2**20
    start = time.monotonic()
    status, out, err = opendml("validate", "m.json", cwd=tmp_path, memory=GiB)
    assert (status, out) == (1, b"")
    assert err == (
        f"opendml: error: m.json:1:{text.index(str(2**32)) + 1}: resources.x.initialValues[1999999]: expected an "
        "unsigned 32-bit integer (0 to 4294967295), found 4294967296, which is out of range\n"
    )
    assert time.monotonic() - start < 10


def test_16_mib_of_a_member_the_runner_ignores_parses_fast(tmp_path):
    junk = "[], [],\n" * (16 * 2**20 // 8 - 20)
    text = f'{{"ignored": [{junk}], // trailing commas and comments\n "resources": {{}}, "dispatchables": {{}}, ' \
           '"commands": [],}'  # fmt: skip
    (tmp_path / "m.json").write_text(text)
    start = time.monotonic()
    status, out, err = opendml("validate", "m.json", cwd=tmp_path, memory=GiB)
    assert (status, err) == (0, "")
    assert out == b"m.json: valid at DML_FEATURE_LEVEL_6_4 (0 resources, 0 dispatchables, 0 commands)\n"
    assert time.monotonic() - start < 10
