"""Running models: the bundled examples (golden output), descriptor and binding forms, print and writeFile."""

import json

import numpy as np
import pytest
from dxdispatch_support import buffer, dispatch, hard_sigmoid, model, prints, run, run_model, sigmoid_model, tensor

from opendml.dxdispatch import bundled_models

SEED_INPUT = "Resource 'input': 12, 0, -101, 11, 3, 234, 0, -101\n"  # the {2,2,2} tensor of the DirectML docs
REDUCE_INPUT = "Resource 'input': 1, 2, 3, 3, 0, 4, 2, 4, 2\n"  # the REDUCE page's {3,3} tensor
#: What ``opendml run`` prints for each bundled model (print format dxdispatch). The values are those of the
#: DirectML doc pages (LOG_SOFTMAX1: the true values; %g shows 6 significant digits).
GOLDEN = {
    "argmax_axes_0": "Resource 'input': 1, 2, 3, 3, 0, 4, 2, 5, 2\nResource 'output': 1, 2, 1\n",
    "argmax_axes_1": "Resource 'input': 1, 2, 3, 3, 0, 4, 2, 5, 2\nResource 'output': 2, 2, 1\n",
    "argmax_all_axes": "Resource 'input': 1, 2, 3, 3, 0, 4, 2, 5, 2\nResource 'output': 7\n",
    "argmax_axis_direction": "Resource 'input': 3, 2, 1, 2, 3\nResource 'first': 0\nResource 'last': 4\n",
    "dml_element_wise_add": "Resource 'A': 1, 2, 3\nResource 'B': 10, 20, 30.5\nResource 'Out': 11, 22, 33.5\n",
    "dml_element_wise_clip": (  # in place: the one resource before and after
        "Resource 'A': -4, -3, -2, -1, 0, 1, 2, 3, 4\nResource 'A': -2.5, -2.5, -2, -1, 0, 1, 2, 2.5, 2.5\n"
    ),
    "dml_element_wise_identity": "Resource 'A': 1, 2, 3\nResource 'Out': 3, 5, 7\n",  # ScaleBias {2, 1}
    "element_wise_if": (
        "Resource 'condition': \x01, \x00, \x01, \x01\n"  # UINT8 prints as raw characters, as in DxDispatch
        "Resource 'a': 1, 2, 3, 4\nResource 'b': 9, 8, 7, 6\nResource 'output': 1, 8, 3, 4\n"
    ),
    "element_wise_if_broadcast": (
        "Resource 'condition': \x01, \x00, \x01, \x00, \x01, \x00\n"
        "Resource 'a': 1, 2, 3\nResource 'b': 9\nResource 'output': 1, 9, 3, 9, 2, 9\n"
    ),
    "element_wise_add1_fused_elu": "Resource 'Out': 6, 10, -0.432332\n",  # ELU(-2) = 0.5 * (exp(-2) - 1)
    "hard_sigmoid": "Resource 'input': -3, -2.5, -1, 0, 1, 2.5, 3\nResource 'output': 0, 0, 0.3, 0.5, 0.7, 1, 1\n",
    "hard_sigmoid_nhwc": (
        "Resource 'nhwc': -2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 3\n"
        "Resource 'nchw': 0, 0.3, 0.6, 0.9, 0.1, 0.4, 0.7, 1, 0.2, 0.5, 0.8, 1\n"
    ),
    "hardmax1_axes_1": f"{SEED_INPUT}Resource 'output': 1, 0, 0, 1, 1, 1, 0, 0\n",
    "hardmax1_axes_0": f"{SEED_INPUT}Resource 'output': 1, 0, 0, 1, 0, 1, 1, 0\n",
    "hardmax1_axes_0_2": f"{SEED_INPUT}Resource 'output': 0, 0, 0, 1, 0, 1, 0, 0\n",
    "log_softmax1_axes_1": (
        f"{SEED_INPUT}Resource 'output': -0, -11, -113, -1.67016e-05, -0.0485874, -0, -3.04859, -335\n"
    ),
    "log_softmax1_axes_0": (
        f"{SEED_INPUT}Resource 'output': -0.000123402, -234, -101, -0, -9.00012, -0, -1.4013e-44, -112\n"
    ),
    "log_softmax1_axes_0_2": (f"{SEED_INPUT}Resource 'output': -222, -234, -112, -1.67016e-05, -231, -0, -11, -112\n"),
    "dml_reduce": "Resource 'input': 1, 2, 3, 4, 5, 6, 7, 8, 9\nResource 'output': 6, 15, 24\n",
    "reduce_sum_axes_0": f"{REDUCE_INPUT}Resource 'output': 6, 6, 9\n",
    "reduce_sum_axes_1": f"{REDUCE_INPUT}Resource 'output': 6, 7, 8\n",
    "reduce_sum_all_axes": f"{REDUCE_INPUT}Resource 'output': 21\n",
    "reduce_functions": (
        "Resource 'input': 1, -2, 3, 0.5, 4, 2\nResource 'argmax': 2, 1\nResource 'argmin': 1, 0\n"
        "Resource 'average': 0.666667, 2.16667\nResource 'l1': 6, 6.5\nResource 'l2': 3.74166, 4.5\n"
        "Resource 'log_sum': 0.693147, 1.8718\nResource 'log_sum_exp': 3.13285, 4.15318\n"
        "Resource 'max': 3, 4\nResource 'min': -2, 0.5\nResource 'multiply': -6, 4\nResource 'sum': 2, 6.5\n"
        "Resource 'sum_square': 14, 20.25\n"
    ),
    "argmin_axes_0": "Resource 'input': 1, 2, 3, 3, 0, 4, 2, 5, 2\nResource 'output': 0, 1, 2\n",
    "argmin_axes_1": "Resource 'input': 1, 2, 3, 3, 0, 4, 2, 5, 2\nResource 'output': 0, 1, 0\n",
    "argmin_all_axes": "Resource 'input': 1, 2, 3, 3, 0, 4, 2, 5, 2\nResource 'output': 4\n",
    "argmin_axis_direction": "Resource 'input': 1, 2, 3, 2, 1\nResource 'first': 0\nResource 'last': 4\n",
    "softmax1_axes_1": f"{SEED_INPUT}Resource 'output': 1, 1.67014e-05, 0, 0.999983, 0.952574, 1, 0.0474259, 0\n",
    "softmax1_axes_0_2": f"{SEED_INPUT}Resource 'output': 0, 0, 0, 0.999983, 0, 1, 1.67014e-05, 0\n",
    "softmax_rows": (
        "Resource 'input': 1, 2, 3, 4, 0, 0, 0, -1000\n"
        "Resource 'output': 0.0320586, 0.0871443, 0.236883, 0.643914, 0.333333, 0.333333, 0.333333, 0\n"
    ),
}
BUNDLED = {path.stem: path for path in bundled_models()}


def test_every_bundled_model_has_a_golden_output():
    assert sorted(BUNDLED) == sorted(GOLDEN)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_bundled_model_prints_its_golden_output(name, capsys):
    assert run(capsys, "run", BUNDLED[name]) == (0, GOLDEN[name], "")


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_bundled_models_are_strict_json_with_a_description(name):
    """Plain JSON (any tool reads them); DxDispatch ignores "description", as it ignores every unread member."""
    content = json.loads(BUNDLED[name].read_text())
    assert set(content) == {"description", "resources", "dispatchables", "commands"}
    assert all(d["type"].startswith("DML_OPERATOR_") or d["type"].isupper() for d in content["dispatchables"].values())


def test_bundled_models_are_valid_at_the_feature_level_their_operators_need(capsys):
    assert run(capsys, "validate", BUNDLED["hard_sigmoid_nhwc"], "--feature-level", "1_0")[0] == 0
    assert run(capsys, "validate", BUNDLED["argmax_axes_0"], "--feature-level", "3_0")[0] == 0
    assert run(capsys, "validate", BUNDLED["hardmax1_axes_1"], "--feature-level", "5_1")[0] == 0
    assert run(capsys, "validate", BUNDLED["dml_reduce"], "--feature-level", "1_0")[0] == 0
    assert run(capsys, "validate", BUNDLED["softmax_rows"], "--feature-level", "1_0")[0] == 0
    assert run(capsys, "validate", BUNDLED["argmin_axes_0"], "--feature-level", "3_0")[0] == 0


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def output_of(capsys, tmp_path, content, *options):
    status, out, err = run_model(capsys, tmp_path, content, *options)
    assert (status, err) == (0, "")
    return out


# Descriptor forms.

SIGMOID_OF_X = "Resource 'x': -1, 0, 1\nResource 'y': 0.3, 0.5, 0.7\n"


@pytest.mark.parametrize(
    "dispatchable",
    [
        hard_sigmoid(),  # "type" + "desc", full enum names
        {"type": "ACTIVATION_HARD_SIGMOID", "Desc": hard_sigmoid()["desc"]},  # suffix, "Desc"
        {"type": "ACTIVATION_HARD_SIGMOID", **hard_sigmoid()["desc"]},  # collapsed: the fields in the dispatchable
        {"type": "x", "Type": "ACTIVATION_HARD_SIGMOID", "desc": hard_sigmoid()["desc"]},  # "Type" is read first
        hard_sigmoid(
            InputTensor={"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": tensor("DML_TENSOR_DATA_TYPE_FLOAT32", [3])}
        ),
        hard_sigmoid(InputTensor={"Desc": {"DataType": "FLOAT32", "Sizes": [3], "Strides": [], "DimensionCount": 1}}),
        hard_sigmoid(InputTensor=tensor("FLOAT32", [3]) | {"Flags": "NONE", "TotalTensorSizeInBytes": 0}),
        hard_sigmoid(InputTensor=tensor("FLOAT32", [3]) | {"Flags": [], "GuaranteedBaseOffsetAlignment": 16}),
        hard_sigmoid()
        | {"executionFlags": ["ALLOW_HALF_PRECISION_COMPUTATION", "DML_EXECUTION_FLAG_DISABLE_META_COMMANDS"]},
        hard_sigmoid() | {"executionFlags": "DESCRIPTORS_VOLATILE", "dmlCompileType": "DmlCompileGraph"},
    ],
)
def test_descriptor_forms(dispatchable, capsys, tmp_path):
    content = sigmoid_model()
    content["dispatchables"]["hs"] = dispatchable
    assert output_of(capsys, tmp_path, content) == SIGMOID_OF_X


def test_floats_accept_nan_and_inf_strings(capsys, tmp_path):
    content = sigmoid_model([-1, 1, 2])
    content["dispatchables"]["hs"] = hard_sigmoid(Alpha="INF")
    assert output_of(capsys, tmp_path, content).endswith("Resource 'y': 0, 1, 1\n")


def test_argmax_with_its_enum_as_suffix_and_a_uint_array(capsys, tmp_path):
    content = model(
        {"x": buffer("INT32", [5, 9, 9, 1]), "i": buffer("UINT32", [0])},
        {
            "a": {
                "type": "ARGMAX",
                "desc": {
                    "InputTensor": tensor("INT32", [4]),
                    "OutputTensor": tensor("UINT32", [1]),
                    "AxisCount": 1,
                    "Axes": [0],
                    "AxisDirection": "DECREASING",
                },
            }
        },  # fmt: skip
        [dispatch("a", InputTensor="x", OutputTensor="i"), *prints("i")],
    )
    assert output_of(capsys, tmp_path, content) == "Resource 'i': 2\n"


# Binding forms.


def test_binding_forms_string_object_and_array_of_one(capsys, tmp_path):
    content = sigmoid_model()
    content["commands"][0]["bindings"] = {"InputTensor": [{"name": "x"}], "OutputTensor": ["y"]}
    assert output_of(capsys, tmp_path, content) == SIGMOID_OF_X


def test_element_offset_is_counted_in_elements_of_the_resource_type(capsys, tmp_path):
    """Offset 4 elements x 4 bytes = 16 bytes, as dml_join.json binds its inputs."""
    content = model(
        {"data": buffer("FLOAT32", [9, 9, 9, 9, -1, 0, 1, 9]), "y": buffer("FLOAT32", {"valueCount": 8, "value": 0})},
        {"hs": hard_sigmoid()},
        [
            dispatch(
                "hs",
                InputTensor={"name": "data", "elementOffset": 4, "elementCount": 3},
                OutputTensor={"name": "y", "elementOffset": 4},
            ),
            *prints("y"),
        ],  # fmt: skip
    )
    assert output_of(capsys, tmp_path, content) == "Resource 'y': 0, 0, 0, 0, 0.3, 0.5, 0.7, 0\n"


def test_element_size_in_bytes_overrides_the_resource_element_size(capsys, tmp_path):
    content = model(
        {"bytes": buffer("UINT8", {"valueCount": 32, "value": 0}), "x": buffer("FLOAT32", [-1, 0, 1])},
        {"hs": hard_sigmoid()},
        [
            dispatch(
                "hs", InputTensor="x", OutputTensor={"name": "bytes", "elementOffset": 1, "elementSizeInBytes": 16}
            ),
            {"type": "print", "resource": "bytes"},
        ],  # fmt: skip
    )
    out = output_of(capsys, tmp_path, content, "--print-format", "numbers")
    written = np.array([0.3, 0.5, 0.7], np.float32).view(np.uint8).tolist()
    assert out == "Resource 'bytes': " + ", ".join(map(str, [0] * 16 + written + [0] * 4)) + "\n"


def test_a_resource_is_bytes_an_operator_reads_through_its_own_data_type(capsys, tmp_path):
    """Initialized as UINT32 bit patterns, read as FLOAT32 by the operator ("type punning")."""
    bits = np.array([-1, 0, 1], np.float32).view(np.uint32).tolist()
    content = sigmoid_model()
    content["resources"]["x"] = buffer("UINT32", bits)
    assert (
        output_of(capsys, tmp_path, content)
        == f"Resource 'x': {', '.join(map(str, bits))}\nResource 'y': 0.3, 0.5, 0.7\n"
    )


def test_in_place_execution_binds_one_resource_twice(capsys, tmp_path):
    content = sigmoid_model()
    content["commands"] = [dispatch("hs", InputTensor="x", OutputTensor="x"), *prints("x")]
    assert output_of(capsys, tmp_path, content) == "Resource 'x': 0.3, 0.5, 0.7\n"


def test_contents_persist_from_command_to_command(capsys, tmp_path):
    content = sigmoid_model([-10, 0, 10])
    content["commands"] = [dispatch("hs", InputTensor="x", OutputTensor="x")] * 2 + prints("x")
    assert output_of(capsys, tmp_path, content) == "Resource 'x': 0.5, 0.6, 0.7\n"  # (0, 0.5, 1) then again


def test_an_unknown_bind_point_is_ignored_with_a_warning(capsys, tmp_path):
    content = sigmoid_model()
    content["commands"][0]["bindings"]["InputTensr"] = "x"
    status, out, err = run_model(capsys, tmp_path, content)
    assert (status, out) == (0, SIGMOID_OF_X)
    assert err == (
        "opendml: warning: model.json:47:23: commands[0].bindings.InputTensr: DML_OPERATOR_ACTIVATION_HARD_SIGMOID "
        "has no tensor 'InputTensr'; it is ignored; did you mean InputTensor?\n"
    )


# Print formats.


def test_uint8_prints_as_characters_by_default_and_as_numbers_on_request(capsys, tmp_path):
    """Bytes beyond ASCII are written raw too: see test_cli.py (capsys keeps text only)."""
    content = model({"b": buffer("UINT8", [72, 105, 33, 0]), "i": buffer("INT8", [65, 10])}, {}, prints("b", "i"))
    assert output_of(capsys, tmp_path, content) == "Resource 'b': H, i, !, \x00\nResource 'i': A, \n\n"
    assert (
        output_of(capsys, tmp_path, content, "--print-format", "numbers")
        == "Resource 'b': 72, 105, 33, 0\nResource 'i': 65, 10\n"
    )


@pytest.mark.parametrize(
    "data_type, values, text",
    [
        ("FLOAT32", [1, 0.1, 1e-05, 123456789, 1 / 3, -0.0, "inf", "-inf", "nan"],
         "1, 0.1, 1e-05, 1.23457e+08, 0.333333, -0, inf, -inf, nan"),
        ("FLOAT64", [0.1, 2.5e300], "0.1, 2.5e+300"),
        ("FLOAT16", [0.7, 1, -2], "0.699707, 1, -2"),
        ("INT64", [-(2**63), 2**63 - 1], "-9223372036854775808, 9223372036854775807"),
        ("UINT16", [65535, 0], "65535, 0"),
    ],
)  # fmt: skip
def test_values_print_as_cpp_ostream_prints_them(capsys, tmp_path, data_type, values, text):
    content = model({"r": buffer(data_type, values)}, {}, prints("r"))
    assert output_of(capsys, tmp_path, content) == f"Resource 'r': {text}\n"


def test_a_nan_with_its_sign_bit_prints_as_libstdcxx_prints_it(capsys, tmp_path):
    (tmp_path / "negative_nan.dat").write_bytes(np.uint32(0xFFC00000).tobytes())
    content = model({"r": buffer("FLOAT32", {"sourcePath": "negative_nan.dat"})}, {}, prints("r"))
    assert output_of(capsys, tmp_path, content) == "Resource 'r': -nan\n"


def test_print_shows_the_initial_element_count_not_the_padding(capsys, tmp_path):
    content = model({"r": buffer("FLOAT16", [1, 2, 3], sizeInBytes=32)}, {}, prints("r"))
    assert output_of(capsys, tmp_path, content) == "Resource 'r': 1, 2, 3\n"


def test_verbose_print_shows_index_value_and_raw_bits(capsys, tmp_path):
    content = model({"r": buffer("FLOAT32", {"valueCount": 10, "valueStart": 1, "valueDelta": -0.5})}, {},
                    prints("r", verbose=True))  # fmt: skip
    lines = output_of(capsys, tmp_path, content).split("\n")
    assert lines[:4] == ["Resource 'r':", "[ 0] 1 (0x3F800000)", "[ 1] 0.5 (0x3F000000)", "[ 2] 0 (0x       0)"]
    assert lines[-4:] == ["[ 8] -3 (0xC0400000)", "[ 9] -3.5 (0xC0600000)", "", ""]  # ends with an empty line


# writeFile.


def test_write_file_npy_round_trips_with_its_dimensions(capsys, tmp_path):
    content = sigmoid_model([-1, 0, 1, 2])
    content["commands"] = [content["commands"][0], {"type": "writeFile", "resource": "y", "targetPath": "out/y.npy",
                                                    "dimensions": [2, 2]}]  # fmt: skip
    out = output_of(capsys, tmp_path, content)
    assert out == f"Resource 'y' written to '{tmp_path / 'out' / 'y.npy'}'\n"
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), np.array([[0.3, 0.5], [0.7, 0.9]], np.float32))


def test_write_file_npy_without_dimensions_covers_the_whole_rounded_buffer(capsys, tmp_path):
    """5 FLOAT16 values are 10 bytes, a 12-byte buffer: written as 6 elements, as DxDispatch writes them."""
    content = model(
        {"h": buffer("FLOAT16", [1, 2, 3, 4, 5])}, {}, [{"type": "writeFile", "resource": "h", "targetPath": "h.npy"}]
    )
    output_of(capsys, tmp_path, content)
    loaded = np.load(tmp_path / "h.npy")
    assert loaded.dtype == np.float16 and loaded.tolist() == [1, 2, 3, 4, 5, 0]


def test_write_file_raw_writes_the_buffer_bytes(capsys, tmp_path):
    content = model(
        {"b": buffer("UINT8", [1, 2, 3])}, {}, [{"type": "writeFile", "resource": "b", "targetPath": "b.bin"}]
    )
    output_of(capsys, tmp_path, content)
    assert (tmp_path / "b.bin").read_bytes() == b"\x01\x02\x03\x00"


def test_a_written_npy_file_initializes_another_model(capsys, tmp_path):
    first = sigmoid_model([-1, 0, 1])
    first["commands"] = [first["commands"][0], {"type": "writeFile", "resource": "y", "targetPath": "y.npy"}]
    output_of(capsys, tmp_path, first)
    second = model({"y": {"initialValues": {"sourcePath": "y.npy"}}}, {}, prints("y"))
    assert output_of(capsys, tmp_path, second) == "Resource 'y': 0.3, 0.5, 0.7\n"


def test_a_file_that_cannot_be_written_is_reported_and_the_run_goes_on(capsys, tmp_path):
    (tmp_path / "taken").write_text("a file, not a folder")
    content = sigmoid_model()
    content["commands"] = [{"type": "writeFile", "resource": "x", "targetPath": "taken/x.bin"}, *prints("x")]
    status, out, err = run_model(capsys, tmp_path, content)
    assert (status, out) == (1, "Resource 'x': -1, 0, 1\n")
    assert err.startswith("opendml: error: model.json:41:5: commands[0]: cannot write 'taken/x.bin': ")
