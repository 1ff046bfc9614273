"""The README's generated blocks match the code, and its quick start runs."""

import pathlib
import re

import numpy as np
import pytest

import opendml as dml
from opendml._docs import render

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_generated_blocks_are_current():
    text = README.read_text()
    assert render(text) == text, "run: python tools/render_readme.py"
    assert "| DML_OPERATOR_ELEMENT_WISE_IF | 2_0 | 5_0+ |" in text


def test_quick_start_block_runs():
    text = README.read_text()
    block = re.search(r"## Quick start\n\n```python\n(.*?)```", text, re.S).group(1)
    code, _, _ = block.partition("old = ")
    namespace = {}
    exec(code, namespace)
    np.testing.assert_array_equal(namespace["out"], [[7]])
    assert namespace["out"].dtype == np.uint32
    x = namespace["x"]
    with pytest.raises(dml.InvalidArgumentError) as raised:
        dml.Device(feature_level=dml.FeatureLevel.FL_3_0).create_operator(
            dml.ActivationHardmax1OperatorDesc(input_tensor=x, output_tensor=x, axes=(1,))
        )
    message = str(raised.value)
    assert message == (
        "DML_OPERATOR_ACTIVATION_HARDMAX1: the operator was introduced in DML_FEATURE_LEVEL_5_1, but the "
        "device's feature level is DML_FEATURE_LEVEL_3_0"
    )
    assert " ".join(block.split("# InvalidArgumentError: ")[1].replace("# ", "").split()) == message


def test_memory_model_block_runs_and_prints_what_it_says(capsys):
    text = README.read_text()
    block = re.search(r"## Memory model.*?```python\n(.*?)```", text, re.S).group(1)
    exec(block, {})
    printed = capsys.readouterr().out
    assert " ".join(printed.split()) == "[[1. 1. 1.] [1. 1. 1.]] [[ 1. 2. 3.] [-3. -4. -5.]]"


def test_main_job_prints_what_the_readme_shows(capsys):
    from opendml import cli

    text = README.read_text()
    command, shown = re.search(r"## The two commands.*?```sh\n(.*?)\n```.*?```\n(.*?)```", text, re.S).groups()
    model = command.split("opendml run ")[1].strip()
    assert cli.main(["run", str(README.parent / model)]) == 0
    assert capsys.readouterr().out == shown
