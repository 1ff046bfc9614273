"""Helpers for the tests of the DxDispatch JSON runner: build a model, write it, run ``opendml`` on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opendml import cli

# DxDispatch's own dml_reduce.json, as described in its README: REDUCE SUM of 1..9 over the last axis.
DML_REDUCE = """{
    "resources": {
        "input": {"initialValuesDataType": "FLOAT32",
                  "initialValues": {"valueCount": 9, "valueStart": 1, "valueDelta": 1}},
        "output": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 3, "value": 0}}
    },
    "dispatchables": {
        "sum": {
            "type": "DML_OPERATOR_REDUCE",
            "desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 1]},
                "Function": "DML_REDUCE_FUNCTION_SUM",
                "AxisCount": 1,
                "Axes": [3]
            }
        }
    },
    "commands": [
        {"type": "dispatch", "dispatchable": "sum", "bindings": {"InputTensor": "input", "OutputTensor": "output"}},
        {"type": "print", "resource": "input"},
        {"type": "print", "resource": "output"}
    ]
}
"""


def tensor(data_type: str, sizes: list[int], strides: list[int] | None = None) -> dict[str, Any]:
    """A collapsed DML_TENSOR_DESC."""
    return {"DataType": data_type, "Sizes": sizes} | ({"Strides": strides} if strides else {})


def buffer(data_type: str, values: Any, **members: Any) -> dict[str, Any]:
    """A resource with its initial values."""
    return {"initialValuesDataType": data_type, "initialValues": values, **members}


def hard_sigmoid(sizes: list[int] = [3], data_type: str = "FLOAT32", **desc: Any) -> dict[str, Any]:  # noqa: B006
    """An ACTIVATION_HARD_SIGMOID dispatchable (Alpha 0.2, Beta 0.5 unless ``desc`` says otherwise)."""
    fields = {"InputTensor": tensor(data_type, sizes), "OutputTensor": tensor(data_type, sizes), "Alpha": 0.2,
              "Beta": 0.5}  # fmt: skip
    return {"type": "DML_OPERATOR_ACTIVATION_HARD_SIGMOID", "desc": fields | desc}


def dispatch(name: str, **bindings: Any) -> dict[str, Any]:
    return {"type": "dispatch", "dispatchable": name, "bindings": bindings}


def prints(*names: str, **members: Any) -> list[dict[str, Any]]:
    return [{"type": "print", "resource": name, **members} for name in names]


def model(resources: dict, dispatchables: dict, commands: list, **members: Any) -> dict[str, Any]:
    return {"resources": resources, "dispatchables": dispatchables, "commands": commands, **members}


def sigmoid_model(x: Any = [-1, 0, 1], data_type: str = "FLOAT32", **out_members: Any) -> dict[str, Any]:  # noqa: B006
    """HARD_SIGMOID of ``x`` (a list or an initializer object) into ``y``, then print both."""
    count = len(x) if isinstance(x, list) else x["valueCount"]
    return model(
        {"x": buffer(data_type, x), "y": buffer(data_type, {"valueCount": count, "value": 0}, **out_members)},
        {"hs": hard_sigmoid([count], data_type)},
        [dispatch("hs", InputTensor="x", OutputTensor="y"), *prints("x", "y")],
    )


def write(directory: Path, content: dict | str, name: str = "model.json") -> Path:
    """Write a model (a dict as JSON, a string as it is) and return its path."""
    path = directory / name
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    return path


def run(capsys, *argv: Any) -> tuple[int, str, str]:
    """``opendml *argv`` in this process: (exit status, stdout, stderr)."""
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def run_model(capsys, directory: Path, content: dict | str, *options: Any) -> tuple[int, str, str]:
    """Write the model as ``model.json`` in ``directory`` (the current folder) and ``opendml run`` it."""
    write(directory, content)
    return run(capsys, "run", "model.json", *options)
