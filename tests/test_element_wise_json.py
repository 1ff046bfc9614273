"""The shared pieces of the ELEMENT_WISE family as the JSON runner and the Python API read them: DML_SCALE_BIAS,
DML_SCALAR_UNION (DxDispatch's number and object forms, read through MinMaxDataType), in place over named inputs."""

from __future__ import annotations

import numpy as np
import pytest
from dxdispatch_support import buffer, dispatch, model, prints, run_model, tensor

import opendml as dml
from opendml import functional as F

T = dml.TensorDataType


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # run_model writes model.json there and runs it by that name


def clip1_model(data_type: str, values: list, low, high, *, min_max_type: str | None = None, in_place=False):
    """CLIP1 of ``values`` to [low, high] (the JSON members as given), printed after the dispatch."""
    count = len(values)
    desc = {
        "InputTensor": tensor(data_type, [count]),
        "OutputTensor": tensor(data_type, [count]),
        "MinMaxDataType": min_max_type or data_type,
        "Min": low,
        "Max": high,
    }
    out = "x" if in_place else "y"
    return model(
        {"x": buffer(data_type, values), "y": buffer(data_type, {"valueCount": count, "value": 0})},
        {"clip": {"type": "ELEMENT_WISE_CLIP1", "desc": desc}},
        [dispatch("clip", InputTensor="x", OutputTensor=out), *prints(out)],
    )


@pytest.mark.parametrize(
    "data_type, low, high, expected",
    [
        ("FLOAT32", -1.5, 2, "-1.5, -1, 0, 2, 2"),
        ("FLOAT32", {"Float32": -1.5}, {"Float32": "inf"}, "-1.5, -1, 0, 2, 3"),
        ("INT32", -1, 2, "-1, -1, 0, 2, 2"),
        ("INT32", {"Int32": -1}, {"Int32": 2}, "-1, -1, 0, 2, 2"),
        ("UINT16", 1, {"UInt16": 2}, "1, 1, 1, 2, 2"),
        ("INT64", {"Int64": -1}, 9007199254740993, "-1, -1, 0, 2, 3"),
        # FLOAT16: a number is truncated to half as DxDispatch's half.hpp does (0.7 -> 0x3999 = 0.699707);
        # the object form gives the raw bits (0x3C00 = 1.0).
        ("FLOAT16", -0.7, {"UInt16": 0x3C00}, "-0.699707, -0.699707, 0, 1, 1"),
    ],
)
def test_clip1_reads_its_scalar_unions_through_min_max_data_type(data_type, low, high, expected, capsys, tmp_path):
    values = [-2, -1, 0, 2, 3] if data_type[0] != "U" else [0, 1, 0, 2, 3]
    status, out, err = run_model(
        capsys, tmp_path, clip1_model(data_type, values, low, high), "--print-format", "numbers"
    )
    assert (status, err) == (0, "")
    assert out == f"Resource 'y': {expected}\n"


@pytest.mark.parametrize(
    "data_type, low, high, message",
    [
        ("INT32", 2.5, 3, "expected a signed 32-bit integer, found 2.5"),
        ("UINT8", -1, 3, "expected an unsigned 8-bit integer (0 to 255), found -1, which is out of range"),
        ("INT32", {"Float32": 1}, 3, "Int32"),
        ("FLOAT32", [1], 3, 'expected a number or an object {"Float32": ...}'),
    ],
)
def test_bad_scalar_unions_are_refused_where_they_are(data_type, low, high, message, capsys, tmp_path):
    status, out, err = run_model(capsys, tmp_path, clip1_model(data_type, [1, 2], low, high))
    assert status == 1 and out == ""
    assert "dispatchables.clip.desc.Min" in err and message in err, err


def test_min_max_data_type_must_be_the_output_type(capsys, tmp_path):
    status, _, err = run_model(capsys, tmp_path, clip1_model("FLOAT32", [1, 2], 0, 1, min_max_type="FLOAT16"))
    assert status == 1
    assert (
        "dispatchables.clip.desc.MinMaxDataType: DML_OPERATOR_ELEMENT_WISE_CLIP1: MinMaxDataType is FLOAT16, "
        "but OutputTensor.DataType is FLOAT32; they must match" in err
    )


def test_clip1_runs_in_place_from_json(capsys, tmp_path):
    status, out, _ = run_model(capsys, tmp_path, clip1_model("FLOAT32", [-5, 5], -1, 1, in_place=True))
    assert (status, out) == (0, "Resource 'x': -1, 1\n")


def identity_model(scale_bias) -> dict:
    desc = {"InputTensor": tensor("FLOAT32", [3]), "OutputTensor": tensor("FLOAT32", [3])}
    if scale_bias is not ...:
        desc["ScaleBias"] = scale_bias
    return model(
        {"x": buffer("FLOAT32", [1, 2, 3]), "y": buffer("FLOAT32", {"valueCount": 3, "value": 0})},
        {"id": {"type": "ELEMENT_WISE_IDENTITY", "desc": desc}},
        [dispatch("id", InputTensor="x", OutputTensor="y"), *prints("y")],
    )


@pytest.mark.parametrize(
    "scale_bias, expected",
    [
        (..., "1, 2, 3"),
        (None, "1, 2, 3"),
        ({"Scale": -1, "Bias": 0.5}, "-0.5, -1.5, -2.5"),
        ({"Scale": "inf", "Bias": 0}, "inf, inf, inf"),
    ],
)
def test_scale_bias_is_optional_and_read_as_a_struct(scale_bias, expected, capsys, tmp_path):
    assert run_model(capsys, tmp_path, identity_model(scale_bias)) == (0, f"Resource 'y': {expected}\n", "")


def test_a_scale_bias_without_bias_is_refused(capsys, tmp_path):
    status, _, err = run_model(capsys, tmp_path, identity_model({"Scale": 2}))
    assert status == 1 and "dispatchables.id.desc.ScaleBias" in err and "Bias" in err, err


# ---- the Python API --------------------------------------------------------------------------------------------


def clip1(data_type: T, low, high, min_max_type: T | None = None) -> dml.ElementWiseClip1OperatorDesc:
    x = dml.BufferTensorDesc(data_type, (4,))
    return dml.ElementWiseClip1OperatorDesc(
        input_tensor=x, output_tensor=x, min_max_data_type=min_max_type or data_type, min=low, max=high
    )


@pytest.mark.parametrize(
    "data_type, low, high, problem",
    [
        (T.INT8, -128, 127, None),
        (T.INT8, -129, 0, "Min is -129, outside the range of INT8 [-128, 127]"),
        (T.UINT64, 0, 2**64 - 1, None),
        (T.UINT64, 0, 2**64, "Max is 18446744073709551616, outside the range of UINT64"),
        (T.INT32, 3.0, 4, None),  # an integral float is the integer
        (T.INT32, 0.5, 4, "Min is 0.5, which INT32 cannot hold exactly (an integer type)"),
        (T.INT32, float("nan"), 4, "Min is nan, which INT32 cannot hold exactly"),
        (T.FLOAT16, -65504.0, 65519.0, None),  # 65519 rounds to 65504, the largest half
        (T.FLOAT16, 0, 65520.0, "Max is 65520.0, beyond the range of FLOAT16 (largest finite 65504)"),
        (T.FLOAT32, -float("inf"), float("nan"), None),  # a float type holds NaN and infinities
        (T.FLOAT32, 0, 2**200, "Max is 1606938044258990275541962092341162602522202993782792835301376, beyond"),
        (T.FLOAT32, 0, 10**400, "beyond the range of FLOAT32"),
    ],
)
def test_scalar_union_range_and_exactness(data_type, low, high, problem):
    problems = dml.Device().validate(clip1(data_type, low, high))
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0], problems


def test_scalar_union_floats_round_to_nearest_in_their_type():
    """0.1 as a FLOAT16 Min is the nearest half (0x2E66), not a truncation: the C assignment rounds."""
    x = np.full(4, np.float16(0.0999))
    device = dml.Device()
    (out,) = device.compile_operator(device.create_operator(clip1(T.FLOAT16, 0.1, 1.0))).execute([x])
    assert out.view(np.uint16).tolist() == [0x2E66] * 4


@pytest.mark.parametrize("value", [True, "1", None, [1]])
def test_a_scalar_union_must_be_a_number(value):
    with pytest.raises(dml.InvalidArgumentError, match="Min must be a number"):
        clip1(T.INT32, value, 1)


def test_pow_runs_in_place_over_its_input_only():
    """The POW page lets the output alias InputTensor, not ExponentTensor."""
    t = dml.BufferTensorDesc(T.FLOAT32, (4,))
    desc = dml.ElementWisePowOperatorDesc(input_tensor=t, exponent_tensor=t, output_tensor=t)
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    base, exponent = np.array([1, 2, 3, 4], np.float32), np.full(4, 2, np.float32)
    compiled.execute([dml.BufferBinding(base), exponent], [dml.BufferBinding(base)])
    assert base.tolist() == [1, 4, 9, 16]
    with pytest.raises(dml.InvalidArgumentError, match="runs in place only over InputTensor"):
        compiled.execute([base, dml.BufferBinding(exponent)], [dml.BufferBinding(exponent)])


@pytest.mark.parametrize("output_aliases", ["ATensor", "BTensor"])
def test_binary_members_run_in_place_over_either_input(output_aliases):
    t = dml.BufferTensorDesc(T.INT32, (3,))
    desc = dml.ElementWiseSubtractOperatorDesc(a_tensor=t, b_tensor=t, output_tensor=t)
    device = dml.Device()
    compiled = device.compile_operator(device.create_operator(desc))
    a, b = np.array([10, 20, 30], np.int32), np.array([1, 2, 3], np.int32)
    target = a if output_aliases == "ATensor" else b
    compiled.execute([dml.BufferBinding(a), dml.BufferBinding(b)], [dml.BufferBinding(target)])
    assert target.tolist() == [9, 18, 27]


def test_pow_exponent_type_must_be_the_input_type_below_3_0():
    """The POW page: until DML_FEATURE_LEVEL_3_0, ExponentTensor must have InputTensor's data type."""
    x, e = dml.BufferTensorDesc(T.FLOAT32, (1, 1, 2, 2)), dml.BufferTensorDesc(T.FLOAT16, (1, 1, 2, 2))
    desc = dml.ElementWisePowOperatorDesc(input_tensor=x, exponent_tensor=e, output_tensor=x)
    assert dml.Device(feature_level=dml.FeatureLevel.FL_2_1).validate(desc) == [
        "DML_OPERATOR_ELEMENT_WISE_POW: below DML_FEATURE_LEVEL_3_0, InputTensor and ExponentTensor must have the "
        "same DataType, but InputTensor has FLOAT32 and ExponentTensor has FLOAT16"
    ]
    assert dml.Device(feature_level=dml.FeatureLevel.FL_3_0).validate(desc) == []
    base, exponent = np.array([4.0], np.float32), np.array([0.5], np.float16)
    assert F.element_wise_pow(base.reshape(1, 1, 1, 1), exponent.reshape(1, 1, 1, 1)).item() == 2.0
