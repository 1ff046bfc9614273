"""The ``opendml`` command as a user runs it: ``python -m opendml`` and the installed console script."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from dxdispatch_support import DML_REDUCE, buffer, model, prints, run, sigmoid_model, write

import opendml as dml
from opendml.dxdispatch import bundled_models, models_dir

MODELS = {path.stem: path for path in bundled_models()}


def opendml(*argv, cwd=None):
    """Run ``python -m opendml *argv`` in a fresh process: (exit status, stdout bytes, stderr text)."""
    done = subprocess.run([sys.executable, "-m", "opendml", *map(str, argv)], capture_output=True, cwd=cwd)
    return done.returncode, done.stdout, done.stderr.decode()


def test_run_a_bundled_model():
    assert opendml("run", MODELS["hard_sigmoid"]) == (
        0,
        b"Resource 'input': -3, -2.5, -1, 0, 1, 2.5, 3\nResource 'output': 0, 0, 0.3, 0.5, 0.7, 1, 1\n",
        "",
    )


def test_the_console_script_is_installed():
    script = Path(sys.executable).parent / "opendml"
    done = subprocess.run([script, "validate", MODELS["argmax_axes_0"]], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.endswith(
        "argmax_axes_0.json: valid at DML_FEATURE_LEVEL_6_4 (2 resources, 1 dispatchable, 3 commands)\n"
    )


def test_bytes_print_raw_as_dxdispatch_prints_them(tmp_path):
    """UINT8/INT8 values are characters: 200 is the byte 0xC8 (not UTF-8 text), 0 a NUL."""
    path = write(tmp_path, model({"b": buffer("UINT8", [200, 65, 0]), "i": buffer("INT8", [-1])}, {}, prints("b", "i")))
    assert opendml("run", path) == (0, b"Resource 'b': \xc8, A, \x00\nResource 'i': \xff\n", "")
    assert opendml("run", path, "--print-format", "numbers") == (0, b"Resource 'b': 200, 65, 0\nResource 'i': -1\n", "")


def test_examples_show_each_bundled_model_with_its_input_and_output(capsys):
    status, out, err = run(capsys, "examples")
    assert (status, err) == (0, "")
    expected = ""
    for name, path in MODELS.items():
        description = json.loads(path.read_text())["description"]
        expected += f"# {name}.json: {description}\n{run(capsys, 'run', path, '--print-format', 'numbers')[1]}\n"
    assert out == expected


def test_a_reader_that_stops_reading_ends_the_command_quietly():
    """``opendml examples | head -1``: stdout is a pipe nobody reads; exit 141 as SIGPIPE would, no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "wb") as stdout:
        done = subprocess.run([sys.executable, "-m", "opendml", "examples"], stdout=stdout, stderr=subprocess.PIPE)
    assert (done.returncode, done.stderr) == (141, b"")


def test_when_stderr_loses_its_reader_stdout_keeps_its_output(tmp_path):
    path = write(tmp_path, sigmoid_model(sizeInByte=12))  # a misspelt member: a warning on stderr
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "wb") as stderr:
        done = subprocess.run([sys.executable, "-m", "opendml", "run", path], stdout=subprocess.PIPE, stderr=stderr)
    assert (done.returncode, done.stdout) == (141, b"Resource 'x': -1, 0, 1\nResource 'y': 0.3, 0.5, 0.7\n")


@pytest.mark.parametrize(
    "name, encoding, line",
    [
        ("\ud800", "utf-8", b"Resource '\\ud800': 1\n"),  # a lone surrogate, which no encoding writes
        ("\u00e9", "ascii", b"Resource '\\xe9': 1\n"),
        ("\u00e9", "utf-8", b"Resource '\xc3\xa9': 1\n"),  # what the stream encodes is written as it is
    ],
)
def test_names_the_output_cannot_encode_are_escaped(tmp_path, name, encoding, line):
    path = write(tmp_path, model({name: buffer("UINT8", [1])}, {}, prints(name)))  # JSON escapes: "\\ud800"
    env = os.environ | {"PYTHONIOENCODING": encoding}
    done = subprocess.run([sys.executable, "-m", "opendml", "run", path, "--print-format", "numbers"],
                          capture_output=True, env=env)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, line, b"")


def test_examples_print_bytes_as_numbers():
    assert opendml("examples", "element_wise_if") == (
        0,
        b"# element_wise_if.json: ELEMENT_WISE_IF: a where condition is non-zero, else b, element by element\n"
        b"Resource 'condition': 1, 0, 1, 1\n"
        b"Resource 'a': 1, 2, 3, 4\n"
        b"Resource 'b': 9, 8, 7, 6\n"
        b"Resource 'output': 1, 8, 3, 4\n\n",
        "",
    )


def test_examples_dir_and_unknown_names(capsys):
    assert run(capsys, "examples", "--dir") == (0, f"{models_dir()}\n", "")
    status, out, err = run(capsys, "examples", "hardmax")
    assert (status, out) == (2, "")
    assert err.startswith("opendml: error: no bundled model 'hardmax' (bundled: argmax_all_axes, argmax_axes_0, ")


def test_dxdispatch_dml_reduce_prints_what_dxdispatch_documents(tmp_path):
    """DxDispatch's own dml_reduce.json (written from its documented content): REDUCE SUM prints 6, 15, 24."""
    write(tmp_path, DML_REDUCE, "dml_reduce.json")
    assert opendml("run", "dml_reduce.json", cwd=tmp_path) == (
        0,
        b"Resource 'input': 1, 2, 3, 4, 5, 6, 7, 8, 9\nResource 'output': 6, 15, 24\n",
        "",
    )


def test_an_operator_not_implemented_is_named_without_a_traceback(tmp_path):
    write(tmp_path, DML_REDUCE.replace("DML_OPERATOR_REDUCE", "DML_OPERATOR_CONVOLUTION"), "conv.json")
    status, out, err = opendml("run", "conv.json", cwd=tmp_path)
    assert (status, out) == (1, b"")
    assert err.startswith(
        "opendml: error: conv.json:9:21: dispatchables.sum.type: DML_OPERATOR_CONVOLUTION is a DirectML operator "
        "not implemented by opendml yet (implemented: "
    )
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv, last_line",
    [
        ([], "opendml: error: the following arguments are required: COMMAND"),
        (
            ["compile", "m.json"],
            "opendml: error: argument COMMAND: invalid choice: 'compile' "
            "(choose from 'run', 'validate', 'examples', 'info')",
        ),
        (["run"], "opendml run: error: the following arguments are required: MODEL.json"),
        (
            ["run", "m.json", "--print-format", "hex"],
            "opendml run: error: argument --print-format: invalid choice: 'hex' (choose from 'dxdispatch', 'numbers')",
        ),
    ],
)  # fmt: skip
def test_usage_errors_exit_with_2(capsys, argv, last_line):
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == last_line


def test_help_exits_with_0(capsys):
    status, out, _ = run(capsys, "run", "--help")
    assert status == 0
    assert "--feature-level LEVEL" in out and "--print-format {dxdispatch,numbers}" in out


DOC = Path(__file__).resolve().parent.parent / "README.md"


def console_blocks(text):
    """Each ```console block of the doc as (command line, expected output)."""
    blocks = re.findall(r"```console\n\$ (.*?)\n(.*?)```", text, re.S)
    return [(command.split(), output) for command, output in blocks]


def test_the_json_runner_doc_shows_true_commands_and_outputs(capsys, tmp_path, monkeypatch):
    """The README's JSON runner model, its two edits and dml_reduce.json print what the README says."""
    text = DOC.read_text()
    model_text = re.search(r"```jsonc\n(.*?)```", text, re.S).group(1)
    files = [
        model_text,
        model_text.replace('"Alpha": 0.2', '"Alpha": "0.2"'),
        model_text.replace("[1, 1, 1, 7]", "[1, 1, 7]"),
        DML_REDUCE,
    ]
    monkeypatch.chdir(tmp_path)
    blocks = console_blocks(text)
    assert len(blocks) == len(files)
    for content, (command, output) in zip(files, blocks):
        write(tmp_path, content, command[2])
        status, out, err = run(capsys, *command[1:])
        assert out + err == output
        assert status == (0 if out else 1)


def test_info_reports_backends_isa_and_threads(capsys):
    status, out, err = run(capsys, "info")
    assert (status, err) == (0, "")
    assert out.startswith("backends: reference")
    info = dml.runtime_info()
    if info["compiled"]:
        assert f"compiled ISA: {info['isa']}" in out and f"threads: {info['threads']}" in out
