"""Broken models: each is rejected with exit status 1 and messages that say file:line:column, JSON path, what."""

import pytest
from dxdispatch_support import DML_REDUCE, run, write

import opendml as dml
from opendml.dxdispatch.resources import Resource

SIGMOID = """{
    "resources": {
        "x": {"initialValuesDataType": "FLOAT32", "initialValues": [-1, 0, 1]},
        "y": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 3, "value": 0}}
    },
    "dispatchables": {
        "hs": {
            "type": "DML_OPERATOR_ACTIVATION_HARD_SIGMOID",
            "desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [3]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [3]},
                "Alpha": 0.2,
                "Beta": 0.5
            }
        }
    },
    "commands": [
        {"type": "dispatch", "dispatchable": "hs", "bindings": {"InputTensor": "x", "OutputTensor": "y"}},
        {"type": "print", "resource": "y"}
    ]
}
"""

HARDMAX = """{
    "resources": {
        "input": {"initialValuesDataType": "FLOAT32", "initialValues": [12, 0, -101, 11, 3, 234, 0, -101]},
        "output": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 8, "value": 0}}
    },
    "dispatchables": {
        "hm": {
            "type": "ACTIVATION_HARDMAX1",
            "desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2, 2]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [2, 2, 2]},
                "AxisCount": 2,
                "Axes": [0, 2]
            }
        }
    },
    "commands": [
        {"type": "dispatch", "dispatchable": "hm", "bindings": {"InputTensor": "input", "OutputTensor": "output"}},
        {"type": "print", "resource": "output"}
    ]
}
"""

ARGMAX = """{
    "resources": {
        "input": {"initialValuesDataType": "FLOAT32", "initialValues": [1, 2, 3, 3, 0, 4, 2, 5, 2]},
        "output": {"initialValuesDataType": "UINT32", "initialValues": {"valueCount": 3, "value": 0}}
    },
    "dispatchables": {
        "am": {
            "type": "ARGMAX",
            "desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [3, 3]},
                "OutputTensor": {"DataType": "UINT32", "Sizes": [3, 1]},
                "AxisCount": 1,
                "Axes": [1],
                "AxisDirection": "INCREASING"
            }
        }
    },
    "commands": [
        {"type": "dispatch", "dispatchable": "am", "bindings": {"InputTensor": "input", "OutputTensor": "output"}},
        {"type": "print", "resource": "output"}
    ]
}
"""


def edit(base, *replacements):
    text = base
    for old, new in zip(replacements[::2], replacements[1::2]):
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


BROKEN = {
    "bad JSON: a missing comma": (
        edit(SIGMOID, "[-1, 0, 1]},", "[-1, 0, 1]}"),
        ["model.json:4:9: invalid JSON: expected ',' or '}' after an object member, found '\"'"],
    ),
    "bad JSON: a NaN literal": (
        edit(SIGMOID, '"Alpha": 0.2', '"Alpha": NaN'),
        ['model.json:12:26: invalid JSON: NaN is not a JSON value; write the string "nan", "inf" or "-inf" instead'],
    ),
    "not a model": (
        "[1, 2, 3]",
        ["model.json:1:1: expected a JSON object with resources, dispatchables and commands, found an array"],
    ),
    "a missing section": (
        edit(SIGMOID, '"commands"', '"command"'),
        ["model.json:1:1: commands: required field is missing"],
    ),
    "unknown field value: a data type": (
        edit(SIGMOID, '"DataType": "FLOAT32", "Sizes": [3]}', '"DataType": "FLOAT33", "Sizes": [3]}'),
        [
            "model.json:10:45: dispatchables.hs.desc.InputTensor.DataType: 'FLOAT33' is not a DML_TENSOR_DATA_TYPE "
            "value; expected one of UNKNOWN, FLOAT32, FLOAT16, UINT32, UINT16, UINT8, INT32, INT16, INT8, FLOAT64, "
            "UINT64, INT64, UINT4, INT4 (the prefix DML_TENSOR_DATA_TYPE_ is optional)"
        ],
    ),
    "unknown field value: an operator type": (
        edit(SIGMOID, "DML_OPERATOR_ACTIVATION_HARD_SIGMOID", "ACTIVATION_HARD_SIGMIOD"),
        [
            "model.json:8:21: dispatchables.hs.type: 'ACTIVATION_HARD_SIGMIOD' is not a DML_OPERATOR_TYPE value; "
            "did you mean ACTIVATION_HARD_SIGMOID?"
        ],
    ),
    "enum values are case-sensitive": (
        edit(HARDMAX, '"type": "ACTIVATION_HARDMAX1"', '"type": "activation_hardmax1"'),
        [
            "model.json:8:21: dispatchables.hm.type: 'activation_hardmax1' is not a DML_OPERATOR_TYPE value; "
            "values are case-sensitive: did you mean ACTIVATION_HARDMAX1?"
        ],
    ),
    "a required field is missing": (
        edit(SIGMOID, '"Alpha": 0.2,', ""),
        ["model.json:9:21: dispatchables.hs.desc.Alpha: required field is missing"],
    ),
    "an axis that is not an unsigned integer": (
        edit(HARDMAX, '"Axes": [0, 2]', '"Axes": [0, "2"]'),
        ['model.json:13:29: dispatchables.hm.desc.Axes[1]: expected an unsigned 32-bit integer, found the string "2"'],
    ),
    "a FLOAT beyond the range of float": (
        edit(SIGMOID, '"Alpha": 0.2', '"Alpha": 1e40'),
        [
            "model.json:12:26: dispatchables.hs.desc.Alpha: DML_OPERATOR_ACTIVATION_HARD_SIGMOID: Alpha is 1e+40, "
            "beyond the range of a 32-bit FLOAT"
        ],
    ),
    "AxisCount disagrees with Axes": (
        edit(HARDMAX, '"AxisCount": 2', '"AxisCount": 3'),
        [
            "model.json:12:30: dispatchables.hm.desc.AxisCount: AxisCount is 3, but Axes has 2 elements; "
            "DirectML reads AxisCount elements from Axes"
        ],
    ),
    "an axis out of range, found by the operator's validation": (
        edit(HARDMAX, '"Axes": [0, 2]', '"Axes": [0, 5]'),
        [
            "model.json:13:29: dispatchables.hm.desc.Axes[1]: DML_OPERATOR_ACTIVATION_HARDMAX1: Axes[1] is 5, "
            "outside [0, 2] (InputTensor.DimensionCount is 3)"
        ],
    ),
    "tensors that disagree": (
        edit(
            SIGMOID,
            '"OutputTensor": {"DataType": "FLOAT32", "Sizes": [3]}',
            '"OutputTensor": {"DataType": "FLOAT16", "Sizes": [3]}',
        ),
        [
            "model.json:11:46: dispatchables.hs.desc.OutputTensor.DataType: DML_OPERATOR_ACTIVATION_HARD_SIGMOID: "
            "InputTensor and "
            "OutputTensor must have the same DataType, but InputTensor has FLOAT32 and OutputTensor has FLOAT16"
        ],
    ),
    "an unsupported data type": (
        edit(
            SIGMOID,
            '"DataType": "FLOAT32", "Sizes": [3]},\n',
            '"DataType": "INT32", "Sizes": [3]},\n',
            '"DataType": "FLOAT32", "Sizes": [3]},\n',
            '"DataType": "INT32", "Sizes": [3]},\n',
        ),
        [
            "model.json:10:45: dispatchables.hs.desc.InputTensor.DataType: DML_OPERATOR_ACTIVATION_HARD_SIGMOID: "
            "InputTensor.DataType INT32 is not supported at DML_FEATURE_LEVEL_6_4 (supported: FLOAT32, FLOAT16)",
            "model.json:11:46: dispatchables.hs.desc.OutputTensor.DataType: DML_OPERATOR_ACTIVATION_HARD_SIGMOID: "
            "OutputTensor.DataType INT32 is not supported at DML_FEATURE_LEVEL_6_4 (supported: FLOAT32, FLOAT16)",
        ],
    ),
    "a missing binding": (
        edit(SIGMOID, ', "OutputTensor": "y"}', "}"),
        [
            "model.json:18:64: commands[0].bindings.OutputTensor: OutputTensor is not bound; "
            "DML_OPERATOR_ACTIVATION_HARD_SIGMOID needs every tensor of its descriptor"
        ],
    ),
    "two resources for one tensor": (
        edit(SIGMOID, '"OutputTensor": "y"', '"OutputTensor": ["y", "x"]'),
        [
            "model.json:18:101: commands[0].bindings.OutputTensor: Bind point 'OutputTensor' requires 1 resource, "
            "but 2 were bound"
        ],
    ),
    "an unknown resource": (
        edit(SIGMOID, '"OutputTensor": "y"', '"OutputTensor": "Y"'),
        [
            "model.json:18:101: commands[0].bindings.OutputTensor: Command attempts to bind resource 'Y', which does "
            "not exist in the model; did you mean 'y'?"
        ],
    ),
    "an unknown dispatchable": (
        edit(SIGMOID, '"dispatchable": "hs"', '"dispatchable": "hard_sigmoid"'),
        [
            "model.json:18:46: commands[0].dispatchable: Command attempts to dispatch 'hard_sigmoid', which does not "
            "exist in the model"
        ],
    ),
    "a wrong buffer size": (
        edit(SIGMOID, '{"valueCount": 3, "value": 0}', '{"valueCount": 2, "value": 0}'),
        [
            "model.json:18:101: commands[0].bindings.OutputTensor: DML_OPERATOR_ACTIVATION_HARD_SIGMOID: OutputTensor: "
            "the binding's SizeInBytes is too small: 8 was provided, but TotalTensorSizeInBytes is 12"
        ],
    ),
    "an offset that is not 16-byte aligned": (
        edit(
            SIGMOID,
            '"valueCount": 3, "value": 0',
            '"valueCount": 8, "value": 0',
            '"OutputTensor": "y"',
            '"OutputTensor": {"name": "y", "elementOffset": 2}',
        ),
        [
            "model.json:18:101: commands[0].bindings.OutputTensor: DML_OPERATOR_ACTIVATION_HARD_SIGMOID: OutputTensor: "
            "BufferBinding.Offset 8 is not a multiple of DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT (16)"
        ],
    ),
    "an offset past the end of the resource": (
        edit(SIGMOID, '"OutputTensor": "y"', '"OutputTensor": {"name": "y", "elementOffset": 4}'),
        [
            "model.json:18:101: commands[0].bindings.OutputTensor: elementOffset 4 is byte 16, beyond the end of "
            "resource 'y' (12 bytes)"
        ],
    ),
    "in place, for an operator that cannot run in place": (
        edit(HARDMAX, '"OutputTensor": "output"', '"OutputTensor": "input"'),
        [
            "model.json:18:64: commands[0].bindings: DML_OPERATOR_ACTIVATION_HARDMAX1: OutputTensor is bound to the "
            "same memory as InputTensor, but the operator does not support in-place execution"
        ],
    ),
    "an initial value out of range": (
        edit(
            SIGMOID,
            '"initialValuesDataType": "FLOAT32", "initialValues": [-1, 0, 1]',
            '"initialValuesDataType": "UINT8", "initialValues": [1, 256, 3]',
        ),
        [
            "model.json:3:70: resources.x.initialValues[1]: expected an unsigned 8-bit integer (0 to 255), found 256, "
            "which is out of range"
        ],
    ),
    "an unknown command": (
        edit(SIGMOID, '"type": "print"', '"type": "show"'),
        ["model.json:19:18: commands[1].type: unrecognized command type 'show'; expected dispatch, print or writeFile"],
    ),
    "an HLSL dispatchable": (
        edit(SIGMOID, '"type": "DML_OPERATOR_ACTIVATION_HARD_SIGMOID"', '"type": "hlsl", "sourcePath": "add.hlsl"'),
        [
            "model.json:8:21: dispatchables.hs.type: 'hlsl' dispatchables are not supported by opendml, which runs "
            "DirectML operators only"
        ],
    ),
    "an OWNED_BY_DML tensor": (
        edit(
            SIGMOID,
            '"InputTensor": {"DataType": "FLOAT32", "Sizes": [3]}',
            '"InputTensor": {"DataType": "FLOAT32", "Sizes": [3], "Flags": "OWNED_BY_DML"}',
        ),
        [
            "model.json:10:79: dispatchables.hs.desc.InputTensor.Flags: DML_OPERATOR_ACTIVATION_HARD_SIGMOID: "
            "InputTensor.Flags has DML_TENSOR_FLAG_OWNED_BY_DML; opendml binds every tensor at execution and has no "
            "operator initializer for DirectML-owned tensors"
        ],
    ),
    "initialization bindings (for OWNED_BY_DML tensors)": (
        edit(
            SIGMOID,
            '"type": "DML_OPERATOR_ACTIVATION_HARD_SIGMOID",',
            '"type": "DML_OPERATOR_ACTIVATION_HARD_SIGMOID", "bindings": {"InputTensor": "x"},',
        ),
        [
            "model.json:8:73: dispatchables.hs.bindings: initialization bindings serve DML_TENSOR_FLAG_OWNED_BY_DML "
            "tensors, which opendml does not support"
        ],
    ),
    "an unknown compile type": (
        edit(
            SIGMOID,
            '"type": "DML_OPERATOR_ACTIVATION_HARD_SIGMOID",',
            '"type": "DML_OPERATOR_ACTIVATION_HARD_SIGMOID", "dmlCompileType": "DmlCompileOperator",',
        ),
        [
            "model.json:8:79: dispatchables.hs.dmlCompileType: 'DmlCompileOperator' is not a DmlCompileType; "
            "expected DmlCompileOp or DmlCompileGraph"
        ],
    ),
    "printing a resource of mixed types": (
        edit(
            SIGMOID,
            '"y": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 3, "value": 0}}',
            '"y": {"initialValues": [{"type": "FLOAT32", "value": 0}, {"type": "UINT32", "value": 0}, '
            '{"type": "INT32", "value": 0}]}',
        ),
        ["model.json:19:39: commands[1].resource: resource 'y' has no initialValuesDataType, so it cannot be printed"],
    ),
    "writing an image": (
        edit(
            SIGMOID,
            '{"type": "print", "resource": "y"}',
            '{"type": "writeFile", "resource": "y", "targetPath": "y.png"}',
        ),
        [
            "model.json:19:62: commands[1].targetPath: writing images (.png) is not supported by opendml; "
            "write a .npy file"
        ],
    ),
    ".npy dimensions larger than the resource": (
        edit(
            SIGMOID,
            '{"type": "print", "resource": "y"}',
            '{"type": "writeFile", "resource": "y", "targetPath": "y.npy", "dimensions": [2, 2]}',
        ),
        [
            "model.json:19:85: commands[1].dimensions: dimensions [2, 2] hold 16 bytes, more than the 12 bytes of "
            "resource 'y'"
        ],
    ),
    "an operator not implemented yet (CONVOLUTION)": (
        DML_REDUCE.replace("DML_OPERATOR_REDUCE", "DML_OPERATOR_CONVOLUTION"),
        [
            "model.json:9:21: dispatchables.sum.type: DML_OPERATOR_CONVOLUTION is a DirectML operator not implemented "
            f"by opendml yet (implemented: {', '.join(t.name for t in dml.REGISTRY)})"
        ],
    ),
    "problems that name a field in the middle of the message are located at it": (
        edit(
            ARGMAX,
            '"Sizes": [3, 3]}',
            '"Sizes": [46341, 46341]}',
            '{"DataType": "UINT32", "Sizes": [3, 1]}',
            '{"DataType": "INT32", "Sizes": [1, 3]}',
            '"AxisCount": 1',
            '"AxisCount": 2',
            '"Axes": [1]',
            '"Axes": [0, 1]',
        ),
        [
            "model.json:11:68: dispatchables.am.desc.OutputTensor.Sizes[1]: DML_OPERATOR_ARGMAX: expected "
            "OutputTensor.Sizes[1] to be 1 since dimension 1 is reduced, but 3 was provided",
            "model.json:11:46: dispatchables.am.desc.OutputTensor.DataType: DML_OPERATOR_ARGMAX: the reduced "
            "dimensions hold 2147488281 elements, so indices up to 2147488280 do not fit in OutputTensor.DataType "
            "INT32 (max 2147483647)",
        ],
    ),
    "a file path with a NUL character": (
        edit(
            SIGMOID,
            '{"type": "print", "resource": "y"}',
            '{"type": "writeFile", "resource": "y", "targetPath": "a\\u0000b.npy"}',
        ),
        ["model.json:19:62: commands[1].targetPath: a file path cannot contain the NUL character (\\u0000)"],
    ),
    "a valueCount of 16 GB (the resources of a model hold at most 4 GiB)": (
        edit(SIGMOID, '"valueCount": 3', '"valueCount": 4000000000'),
        [
            "model.json:4:83: resources.y.initialValues.valueCount: 4000000000 values of FLOAT32 take 16000000000 "
            "bytes, more than the 4294967284 bytes left of the 4 GiB (4294967296 bytes) that the resources of a "
            "model may hold in all"
        ],
    ),
    ".npy dimensions beyond NumPy's 32": (
        edit(
            SIGMOID,
            '{"type": "print", "resource": "y"}',
            '{"type": "writeFile", "resource": "y", "targetPath": "y.npy", "dimensions": [' + "1, " * 33 + "1]}",
        ),
        ["model.json:19:85: commands[1].dimensions: dimensions has 34 elements; a .npy array has at most 32"],
    ),
}


@pytest.mark.parametrize("case", BROKEN)
def test_broken_model_is_rejected_with_exact_messages(case, capsys, tmp_path, monkeypatch):
    text, messages = BROKEN[case]
    monkeypatch.chdir(tmp_path)
    write(tmp_path, text)
    expected = "".join(f"opendml: error: {m}\n" for m in messages)
    assert run(capsys, "run", "model.json") == (1, "", expected)
    assert run(capsys, "validate", "model.json") == (1, "", expected)


def test_every_problem_is_reported_not_just_the_first(capsys, tmp_path, monkeypatch):
    text = edit(
        SIGMOID,
        '"initialValues": [-1, 0, 1]', '"initialValues": [-1, 0, "one"]',
        '"Alpha": 0.2', '"Alpha": "0.2"',
        '"type": "print", "resource": "y"', '"type": "print", "resource": "z"',
    )  # fmt: skip
    monkeypatch.chdir(tmp_path)
    write(tmp_path, text)
    status, out, err = run(capsys, "validate", "model.json")
    assert (status, out) == (1, "")
    assert err.splitlines() == [
        'opendml: error: model.json:3:76: resources.x.initialValues[2]: expected a number or one of the strings "nan", '
        '"inf", "-inf", found the string "one"',
        'opendml: error: model.json:12:26: dispatchables.hs.desc.Alpha: expected a number or one of the strings "nan", '
        '"inf", "-inf", found the string "0.2"',
        "opendml: error: model.json:19:39: commands[1].resource: Command attempts to print resource 'z', which does "
        "not exist in the model",
    ]


def test_every_dispatchable_reports_its_own_problems(capsys, tmp_path, monkeypatch):
    """A dispatchable that cannot be read (HARD_SIGMOID without Beta) does not hide the operator problems of the
    others (HARDMAX1 with Axes [7]): both are reported, each at its JSON path, and the status is 1."""
    text = (
        HARDMAX.replace('"AxisCount": 2', '"AxisCount": 1')
        .replace('"Axes": [0, 2]', '"Axes": [7]')
        .replace(
            '"dispatchables": {',
            '"dispatchables": {\n        "first": {"type": "ACTIVATION_HARD_SIGMOID", "desc": {'
            '"InputTensor": {"DataType": "FLOAT32", "Sizes": [8]}, '
            '"OutputTensor": {"DataType": "FLOAT32", "Sizes": [8]}, "Alpha": 0.2}},',
        )
    )
    monkeypatch.chdir(tmp_path)
    write(tmp_path, text)
    for command in ("validate", "run"):
        status, out, err = run(capsys, command, "model.json")
        assert (status, out) == (1, "")
        assert err.splitlines() == [
            "opendml: error: model.json:7:62: dispatchables.first.desc.Beta: required field is missing",
            "opendml: error: model.json:14:26: dispatchables.hm.desc.Axes[0]: DML_OPERATOR_ACTIVATION_HARDMAX1: "
            "Axes[0] is 7, outside [0, 2] (InputTensor.DimensionCount is 3)",
        ]


def test_an_operator_above_the_feature_level_is_rejected(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, HARDMAX)
    assert run(capsys, "validate", "model.json", "--feature-level", "5_0") == (
        1,
        "",
        "opendml: error: model.json:8:21: dispatchables.hm.type: DML_OPERATOR_ACTIVATION_HARDMAX1: the operator was "
        "introduced in DML_FEATURE_LEVEL_5_1, but the device's feature level is DML_FEATURE_LEVEL_5_0\n",
    )
    assert run(capsys, "validate", "model.json", "--feature-level", "DML_FEATURE_LEVEL_5_1") == (
        0,
        "model.json: valid at DML_FEATURE_LEVEL_5_1 (2 resources, 1 dispatchable, 2 commands)\n",
        "",
    )


def test_an_unknown_feature_level_is_a_usage_error(capsys, tmp_path):
    status, out, err = run(capsys, "run", write(tmp_path, SIGMOID), "--feature-level", "7_0")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (
        "opendml run: error: argument --feature-level: unknown feature level '7_0' (opendml implements 1_0, 2_0, "
        "2_1, 3_0, 3_1, 4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4)"
    )


def test_a_model_file_that_cannot_be_read_is_a_usage_error(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "run", "missing.json") == (
        2,
        "",
        "opendml: error: cannot read the model 'missing.json': No such file or directory\n",
    )


def test_warnings_do_not_fail_a_model(capsys, tmp_path, monkeypatch):
    text = edit(
        SIGMOID, '"Sizes": [3]}', '"Sizes": [3], "Stride": [1]}', '"type": "print"', '"type": "PRINT", "verbos": true'
    )
    monkeypatch.chdir(tmp_path)
    write(tmp_path, text)
    assert run(capsys, "run", "model.json") == (
        0,
        "Resource 'y': 0.3, 0.5, 0.7\n",
        "opendml: warning: model.json:10:80: dispatchables.hs.desc.InputTensor.Stride: DML_BUFFER_TENSOR_DESC has no "
        "field 'Stride'; it is ignored; did you mean Strides?\n"
        "opendml: warning: model.json:19:37: commands[1].verbos: a print command has no field 'verbos'; it is "
        "ignored; did you mean verbose?\n",
    )


def test_a_model_file_too_large_to_read_is_a_usage_error(capsys, tmp_path, monkeypatch):
    """16 MiB at most: parsing costs memory per value (a device such as /dev/zero is refused as not a regular file:
    see test_hardening.py)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.json").write_text(" " * (16 * 2**20) + "{}")
    message = "it is larger than 16777216 bytes (16 MiB), the most opendml reads\n"
    assert run(capsys, "run", "big.json") == (2, "", f"opendml: error: cannot read the model 'big.json': {message}")


def test_a_huge_axes_array_gets_one_error_without_per_axis_work(capsys, tmp_path, monkeypatch):
    """AxisCount is checked before any axis: 50000 bad axes give one line, not 50000."""
    count = 50_000
    axes = ",\n".join(str(axis) for axis in range(3, count + 3))
    text = edit(HARDMAX, '"AxisCount": 2', f'"AxisCount": {count}', '"Axes": [0, 2]', f'"Axes": [{axes}]')
    monkeypatch.chdir(tmp_path)
    write(tmp_path, text)
    status, out, err = run(capsys, "validate", "model.json")
    assert (status, out, err.splitlines()) == (1, "", [
        "opendml: error: model.json:13:25: dispatchables.hm.desc.Axes: DML_OPERATOR_ACTIVATION_HARDMAX1: AxisCount is "
        "50000, but a tensor has at most 8 dimensions (DML_TENSOR_DIMENSION_COUNT_MAX1) and each may be listed once "
        "in Axes"
    ])  # fmt: skip


def test_bad_axes_of_one_kind_are_summarised_and_located(capsys, tmp_path, monkeypatch):
    text = edit(HARDMAX, '"AxisCount": 2', '"AxisCount": 6', '"Axes": [0, 2]', '"Axes": [0, 5, 6, 7, 8, 9]')
    monkeypatch.chdir(tmp_path)
    write(tmp_path, text)
    status, out, err = run(capsys, "validate", "model.json")
    lines = err.splitlines()
    assert (status, out, len(lines)) == (1, "", 4)
    assert lines[0].endswith("dispatchables.hm.desc.Axes[1]: DML_OPERATOR_ACTIVATION_HARDMAX1: Axes[1] is 5, "
                             "outside [0, 2] (InputTensor.DimensionCount is 3)")  # fmt: skip
    assert lines[3].endswith("dispatchables.hm.desc.Axes[4]: DML_OPERATOR_ACTIVATION_HARDMAX1: Axes[4], Axes[5] "
                             "are outside [0, 2]")  # fmt: skip


def test_did_you_mean_is_offered_for_the_first_ten_unknown_references_only(capsys, tmp_path, monkeypatch):
    """Each hint compares the name with every resource: a model of thousands of wrong names stays linear."""
    resources = ", ".join(f'"r{i}": {{"initialValuesDataType": "UINT8", "initialValues": [1]}}' for i in range(3000))
    commands = ", ".join(f'{{"type": "print", "resource": "r{i}x"}}' for i in range(3000))
    monkeypatch.chdir(tmp_path)
    write(tmp_path, f'{{"resources": {{{resources}}}, "dispatchables": {{}}, "commands": [{commands}]}}')
    status, _, err = run(capsys, "validate", "model.json")
    lines = err.splitlines()
    assert (status, len(lines)) == (1, 3000)
    assert lines[9].endswith("print resource 'r9x', which does not exist in the model; did you mean 'r9'?")
    assert lines[10].endswith("print resource 'r10x', which does not exist in the model")


def test_running_out_of_memory_is_reported_without_a_traceback(capsys, tmp_path, monkeypatch):
    """The resources fit in 4 GiB, but a machine may have less."""

    def no_memory(self):
        raise MemoryError

    monkeypatch.setattr(Resource, "allocate", no_memory)
    monkeypatch.chdir(tmp_path)
    write(tmp_path, SIGMOID)
    expected = "opendml: error: model.json: not enough memory to run the model\n"
    assert run(capsys, "run", "model.json") == (1, "", expected)
