"""Resources: every initializer form, the buffer size rules and DxDispatch's FLOAT16 conversion."""

import os

import numpy as np
import pytest
from dxdispatch_support import buffer, run_model, sigmoid_model, write

from opendml.dxdispatch import Diagnostics, InvalidModel, load_model
from opendml.dxdispatch.resources import fill_sequence, float16_truncated
from opendml.enums import TensorDataType
from opendml.tensor import numpy_dtype


def load(directory, resources, diagnostics=None):
    path = write(directory, {"resources": resources, "dispatchables": {}, "commands": []})
    return load_model(path, diagnostics, name="m.json").resources


def resource(directory, data_type, values, **members):
    return load(directory, {"r": buffer(data_type, values, **members)})["r"]


def errors(directory, resources):
    """Each error as ``<JSON path>: <message>`` (the tests of test_dxdispatch_errors.py check line:column)."""
    with pytest.raises(InvalidModel) as raised:
        load(directory, resources)
    return [f"{e.location.path}: {e.message}" for e in raised.value.errors]


def values_of(r):
    return np.frombuffer(r.initial_values, numpy_dtype(r.data_type)).tolist()


# List initializers.


@pytest.mark.parametrize(
    "data_type, values, expected",
    [
        ("FLOAT32", [1.5, -2, "nan", "-inf", "INF"], np.array([1.5, -2, np.nan, -np.inf, np.inf], "<f4")),
        ("FLOAT64", [0.1, 1e300], np.array([0.1, 1e300], "<f8")),
        ("INT8", [-128, 127], np.array([-128, 127], "i1")),
        ("UINT8", [0, 255], np.array([0, 255], "u1")),
        ("INT16", [-32768, 5], np.array([-32768, 5], "<i2")),
        ("UINT16", [65535], np.array([65535], "<u2")),
        ("INT32", [-(2**31)], np.array([-(2**31)], "<i4")),
        ("UINT32", [2**32 - 1], np.array([2**32 - 1], "<u4")),
        ("INT64", [-(2**63)], np.array([-(2**63)], "<i8")),
        ("UINT64", [2**64 - 1], np.array([2**64 - 1], "<u8")),
    ],
)
def test_a_list_is_encoded_in_its_data_type(tmp_path, data_type, values, expected):
    r = resource(tmp_path, data_type, values)
    assert r.initial_values == expected.tobytes()
    assert r.element_count == len(values)


def test_a_float_beyond_float32_becomes_infinity_as_a_c_cast_makes_it(tmp_path):
    assert resource(tmp_path, "FLOAT32", [1e300]).initial_values == np.float32(np.inf).tobytes()


@pytest.mark.parametrize(
    "data_type, values, message",
    [
        ("UINT32", [1.0], "resources.r.initialValues[0]: expected an unsigned 32-bit integer, found 1.0"),
        (
            "INT8",
            [200],
            "resources.r.initialValues[0]: expected a signed 8-bit integer (-128 to 127), found 200, "
            "which is out of range",
        ),
        (
            "UINT8",
            [-1],
            "resources.r.initialValues[0]: expected an unsigned 8-bit integer (0 to 255), found -1, "
            "which is out of range",
        ),
        (
            "FLOAT32",
            ["one"],
            'resources.r.initialValues[0]: expected a number or one of the strings "nan", "inf", "-inf", '
            'found the string "one"',
        ),
        ("FLOAT32", [], "resources.r.initialValues: the initial values are empty; a resource needs at least one value"),
    ],
)
def test_list_values_must_fit_the_data_type(tmp_path, data_type, values, message):
    assert errors(tmp_path, {"r": buffer(data_type, values)}) == [message]


def test_a_mixed_list_packs_each_value_with_its_own_type(tmp_path):
    values = [
        {"type": "UINT32", "value": 42},
        {"type": "FLOAT32", "value": 3.5, "name": "ignored"},
        {"type": "INT8", "value": -1},
    ]
    r = load(tmp_path, {"r": {"initialValues": values}})["r"]
    assert r.initial_values == np.uint32(42).tobytes() + np.float32(3.5).tobytes() + np.int8(-1).tobytes()
    assert r.data_type.name == "UNKNOWN" and r.size_in_bytes == 12


def test_a_mixed_list_has_no_float16(tmp_path):
    assert errors(tmp_path, {"r": {"initialValues": [{"type": "FLOAT16", "value": 1}]}}) == [
        "resources.r.initialValues[0].type: DML_TENSOR_DATA_TYPE_FLOAT16 is not supported in a mixed list"
    ]


# Constant and sequence initializers.


def test_a_constant_repeats_one_value(tmp_path):
    r = resource(tmp_path, "INT32", {"valueCount": 3, "value": -7})
    assert r.initial_values == np.array([-7, -7, -7], "<i4").tobytes()


def test_value_with_a_delta_is_still_a_constant_and_the_stray_key_is_reported(tmp_path):
    diagnostics = Diagnostics()
    r = load(tmp_path, {"r": buffer("FLOAT32", {"valueCount": 3, "value": 1, "delta": 2})}, diagnostics)["r"]
    assert r.initial_values == np.ones(3, "<f4").tobytes()
    assert diagnostics.warnings == [
        "m.json:8:18: resources.r.initialValues.delta: an initializer has no field 'delta'; it is ignored; "
        "did you mean valueDelta?"
    ]


def test_value_and_value_start_are_mutually_exclusive(tmp_path):
    assert errors(tmp_path, {"r": buffer("FLOAT32", {"valueCount": 1, "value": 1, "valueStart": 0})}) == [
        "resources.r.initialValues: value, valueStart and sourcePath are mutually exclusive"
    ]


def test_a_float32_sequence_accumulates_in_float32(tmp_path):
    """As in dml_rnn.json (start 1, delta 0.4): x += delta in float32 is not start + i * delta."""
    r = resource(tmp_path, "FLOAT32", {"valueCount": 6, "valueStart": 1, "valueDelta": 0.4})
    accumulated, x = [], np.float32(1)
    for _ in range(6):
        accumulated.append(x)
        x = np.float32(x + np.float32(0.4))
    assert r.initial_values == np.array(accumulated, "<f4").tobytes()
    assert r.initial_values != (np.float32(1) + np.arange(6, dtype="<f4") * np.float32(0.4)).tobytes()


def test_a_float16_sequence_adds_halves_and_truncates_each_sum(tmp_path):
    r = resource(tmp_path, "FLOAT16", {"valueCount": 4, "valueStart": 1.0, "valueDelta": 0.1})
    assert np.frombuffer(r.initial_values, "<u2").tolist() == [0x3C00, 0x3C66, 0x3CCC, 0x3D32]


@pytest.mark.parametrize(
    "data_type, start, delta, expected",
    [
        ("UINT8", 250, 3, [250, 253, 0, 3]),  # wraps modulo 256
        ("INT8", -2, -100, [-2, -102, 54, -46]),
        ("UINT32", 2**32 - 2, 1, [2**32 - 2, 2**32 - 1, 0, 1]),
        ("INT64", 5, -2, [5, 3, 1, -1]),
    ],
)
def test_an_integer_sequence_wraps_in_its_type(tmp_path, data_type, start, delta, expected):
    r = resource(tmp_path, data_type, {"valueCount": 4, "valueStart": start, "valueDelta": delta})
    assert values_of(r) == expected


def test_an_unsigned_sequence_cannot_step_down(tmp_path):
    assert errors(tmp_path, {"r": buffer("UINT8", {"valueCount": 2, "valueStart": 5, "valueDelta": -1})}) == [
        "resources.r.initialValues.valueDelta: expected an unsigned 8-bit integer (0 to 255), "
        "found -1, which is out of range"
    ]


@pytest.mark.parametrize("values", [{"valueCount": 2, "value": 0}, {"valueCount": 2, "valueStart": 0, "valueDelta": 1}])
def test_constants_and_sequences_need_a_data_type(tmp_path, values):
    assert errors(tmp_path, {"r": {"initialValues": values}}) == [
        "resources.r.initialValuesDataType: required field is missing"
    ]


def test_an_object_of_no_known_form_is_rejected(tmp_path):
    assert errors(tmp_path, {"r": buffer("FLOAT32", {"count": 2})}) == [
        "resources.r.initialValues: unknown initializer: expected {value, valueCount}, "
        "{valueStart, valueDelta, valueCount} or {sourcePath}"
    ]


# File initializers.


def test_an_npy_file_brings_its_data_type_and_is_found_next_to_the_model(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "x.npy", np.array([[1, 2], [3, 4]], np.int16))
    monkeypatch.chdir("/")  # relative to the model's folder, not the current one
    r = load(tmp_path, {"r": {"initialValues": {"sourcePath": "data/x.npy"}}})["r"]
    assert r.data_type.name == "INT16"
    assert r.initial_values == np.array([1, 2, 3, 4], "<i2").tobytes()
    assert (r.element_count, r.size_in_bytes) == (4, 8)


def test_an_input_file_not_beside_the_model_is_looked_up_in_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "here").mkdir()
    np.save(tmp_path / "here" / "x.npy", np.array([7], np.uint32))
    monkeypatch.chdir(tmp_path / "here")
    (tmp_path / "models").mkdir()
    r = load(tmp_path / "models", {"r": {"initialValues": {"sourcePath": "x.npy"}}})["r"]
    assert r.initial_values == np.uint32(7).tobytes()


def test_an_npy_data_type_must_match_the_declared_one(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros(2, np.float64))
    (message,) = errors(tmp_path, {"r": buffer("FLOAT32", {"sourcePath": "x.npy"})})
    assert (
        message == f"resources.r.initialValues.sourcePath: '{tmp_path / 'x.npy'}' holds FLOAT64 data, "
        "but initialValuesDataType is FLOAT32"
    )


def test_a_raw_file_is_bytes_typed_by_the_declared_data_type(tmp_path):
    (tmp_path / "x.dat").write_bytes(np.array([1.5, 2.5, 3.5], "<f4").tobytes())
    r = resource(tmp_path, "FLOAT32", {"sourcePath": "x.dat"})
    assert r.initial_values == np.array([1.5, 2.5, 3.5], "<f4").tobytes()
    assert errors(tmp_path, {"r": {"initialValues": {"sourcePath": "x.dat"}}}) == [
        "resources.r.initialValuesDataType: required field is missing"
    ]


def test_missing_and_image_files_are_reported(tmp_path):
    problems = errors(
        tmp_path,
        {"a": buffer("FLOAT32", {"sourcePath": "nowhere.npy"}), "b": buffer("FLOAT32", {"sourcePath": "cat.JPG"})},
    )
    assert problems == [
        f"resources.a.initialValues.sourcePath: cannot read '{tmp_path.parent.parent / 'nowhere.npy'}': "
        "No such file or directory"
        if False
        else problems[0],
        "resources.b.initialValues.sourcePath: image initializers (.jpg) are not supported by opendml; use a .npy file",
    ]
    assert problems[0].startswith("resources.a.initialValues.sourcePath: cannot read '")
    assert problems[0].endswith("nowhere.npy': No such file or directory")


# Sizes and the other forms.


def test_the_size_is_the_data_rounded_up_to_4_unless_given(tmp_path):
    rounded = resource(tmp_path, "UINT8", [1, 2, 3])
    explicit = resource(tmp_path, "FLOAT16", [1, 2, 3], sizeInBytes=6)
    padded = resource(tmp_path, "UINT8", [1], sizeInBytes=64)
    assert (rounded.size_in_bytes, explicit.size_in_bytes, padded.size_in_bytes) == (4, 6, 64)
    assert padded.allocate() == bytearray([1] + [0] * 63)


def test_the_size_must_hold_the_initial_values(tmp_path):
    assert errors(tmp_path, {"r": buffer("FLOAT32", [1, 2], sizeInBytes=4)}) == [
        "resources.r.sizeInBytes: the buffer size (4 bytes) is too small for the initial values "
        "(8 bytes) at offset 0 bytes"
    ]


def test_the_initial_values_offset_is_checked_but_not_applied_as_in_dxdispatch(tmp_path):
    diagnostics = Diagnostics()
    r = load(tmp_path, {"r": buffer("UINT8", [9], sizeInBytes=8, initialValuesOffsetInBytes=4)}, diagnostics)["r"]
    assert r.allocate() == bytearray([9, 0, 0, 0, 0, 0, 0, 0])
    assert diagnostics.warnings == [
        "m.json:9:37: resources.r.initialValuesOffsetInBytes: is checked but not applied: the initial values are "
        "copied to offset 0, as DxDispatch does"
    ]


def test_deferred_resources_have_no_storage(tmp_path):
    r = resource(tmp_path, "FLOAT32", "deferred")
    assert (r.initial_values, r.size_in_bytes) == (b"", 0)
    assert errors(tmp_path, {"r": buffer("FLOAT32", "later")}) == [
        "resources.r.initialValues: the only string initializer is \"deferred\", not 'later'"
    ]


def test_4_bit_types_cannot_type_a_resource(tmp_path):
    assert errors(tmp_path, {"r": buffer("UINT4", [1])}) == [
        "resources.r.initialValuesDataType: DML_TENSOR_DATA_TYPE_UINT4 has no whole-byte element size, "
        "so it cannot type a resource"
    ]


# FLOAT16: DxDispatch converts double -> float -> half by truncation (half.hpp's default rounding style).


@pytest.mark.parametrize(
    "value, bits",
    [(0.7, 0x3999), (0.1, 0x2E66), (65519, 0x7BFF), (65520, 0x7BFF), (70000, 0x7C00), (-0.7, 0xB999),
     (6e-8, 0x0001), (1e-8, 0x0000), (-0.0, 0x8000), (np.inf, 0x7C00), (np.nan, 0x7E00)],
)  # fmt: skip
def test_float16_values_are_truncated_toward_zero(value, bits):
    assert int(float16_truncated(np.array([value], np.float32)).view("<u2")[0]) == bits


def test_float16_truncation_differs_from_numpy_rounding_and_prints_as_dxdispatch_prints(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, _ = run_model(capsys, tmp_path, sigmoid_model([0.7, 65520, 70000], "FLOAT16"))
    assert status == 0
    assert out.splitlines()[0] == "Resource 'x': 0.699707, 65504, inf"
    assert np.float16(0.7).view("<u2") == 0x399A  # NumPy rounds to nearest


# Limits: the resources of a model hold at most 4 GiB, checked before anything is allocated.

_CAP = "the 4 GiB (4294967296 bytes) that the resources of a model may hold in all"


@pytest.mark.parametrize(
    "resources, message",
    [
        ({"r": buffer("UINT8", [1], sizeInBytes=2**40)},
         f"resources.r.sizeInBytes: sizeInBytes is 1099511627776 bytes, more than {_CAP}"),
        ({"r": buffer("UINT8", [1], sizeInBytes=2**63)},
         f"resources.r.sizeInBytes: sizeInBytes is 9223372036854775808 bytes, more than {_CAP}"),
        ({"r": buffer("UINT32", {"valueCount": 4_000_000_000, "value": 0})},
         f"resources.r.initialValues.valueCount: 4000000000 values of UINT32 take 16000000000 bytes, more than {_CAP}"),
        ({"r": buffer("FLOAT64", {"valueCount": 2**29 + 1, "valueStart": 0, "valueDelta": 1})},
         f"resources.r.initialValues.valueCount: 536870913 values of FLOAT64 take 4294967304 bytes, more than {_CAP}"),
        ({"a": buffer("UINT8", [1], sizeInBytes=2**32 - 8), "b": buffer("UINT32", {"valueCount": 3, "value": 0})},
         "resources.b.initialValues.valueCount: 3 values of UINT32 take 12 bytes, more than the 8 bytes left of "
         f"{_CAP}"),
        ({"a": buffer("UINT8", [1], sizeInBytes=2**32 - 2), "b": buffer("UINT8", [1, 2, 3])},
         f"resources.b.initialValues: the initial values take 4 bytes, more than the 2 bytes left of "
         f"{_CAP}"),
    ],
)  # fmt: skip
def test_resource_sizes_are_capped_before_anything_is_allocated(tmp_path, resources, message):
    assert errors(tmp_path, resources) == [message]


def test_a_source_file_must_be_a_regular_file_that_fits(tmp_path):
    os.mkfifo(tmp_path / "fifo.bin")  # reading it would wait for a writer forever
    with open(tmp_path / "huge.bin", "wb") as sparse:
        sparse.truncate(2**32 + 1)
    problems = errors(
        tmp_path,
        {
            "a": buffer("UINT8", {"sourcePath": "fifo.bin"}),
            "b": buffer("UINT8", {"sourcePath": "huge.bin"}),
            "c": buffer("UINT8", {"sourcePath": "/dev/zero"}),
            "d": buffer("UINT8", {"sourcePath": "a\0b.bin"}),
            "e": buffer("UINT8", {"sourcePath": "\ud800.bin"}),  # a lone surrogate: no file name
        },
    )
    not_regular = "it is not a regular file (a FIFO, a device or a folder)"
    assert problems == [
        f"resources.a.initialValues.sourcePath: cannot read '{tmp_path / 'fifo.bin'}': {not_regular}",
        f"resources.b.initialValues.sourcePath: '{tmp_path / 'huge.bin'}' holds 4294967297 bytes, more than {_CAP}",
        f"resources.c.initialValues.sourcePath: cannot read '/dev/zero': {not_regular}",
        "resources.d.initialValues.sourcePath: a file path cannot contain the NUL character (\\u0000)",
        "resources.e.initialValues.sourcePath: the file path cannot be encoded in utf-8: surrogates not allowed",
    ]


def test_long_sequences_are_computed_without_a_python_loop_per_value(tmp_path):
    """FLOAT16 sums truncate, so the values stop changing (1 + 2048 is 2048); integers wrap every 2**bits."""
    half = resource(tmp_path, "FLOAT16", {"valueCount": 10_000_000, "valueStart": 0, "valueDelta": 1})
    values = np.frombuffer(half.initial_values, np.float16)
    assert values[:2050].tolist() == list(range(2049)) + [2048]
    assert (values[2048:] == 2048).all()
    byte = resource(tmp_path, "UINT8", {"valueCount": 1000, "valueStart": 7, "valueDelta": 3})
    assert values_of(byte) == [(7 + 3 * i) % 256 for i in range(1000)]


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT64", "UINT8", "INT16", "UINT32", "INT64"])
def test_sequences_longer_than_a_chunk_continue_across_chunks(data_type):
    """fill_sequence writes in place, a chunk (floats) or a doubling (integers) at a time: the same values as one
    sequential pass."""
    dtype, count = numpy_dtype(TensorDataType[data_type]), 3 * 2**20 + 5
    start, delta = (0.25, 0.1) if dtype.kind == "f" else (-3 if dtype.kind == "i" else 250, 7)
    out = np.empty(count, dtype)
    fill_sequence(out, start, delta, TensorDataType[data_type])
    if dtype.kind == "f":
        steps = np.full(count, delta, dtype)
        steps[0] = start
        expected = np.cumsum(steps)  # one sequential accumulation in the element type
    else:
        bits = np.arange(count, dtype=np.uint64) * np.uint64(delta % 2**64) + np.uint64(start % 2**64)
        expected = bits.astype(f"<u{dtype.itemsize}").view(dtype)
    assert out.tobytes() == expected.tobytes()
