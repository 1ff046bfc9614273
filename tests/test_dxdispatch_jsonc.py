"""The JSON dialect of DxDispatch models: RapidJSON with comments, trailing commas and stop-when-done."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opendml.dxdispatch.errors import ModelError
from opendml.dxdispatch.jsonc import _SCAN, _UNSURE, _fast_value, _Parser, parse, path_text


def value(text):
    return parse(text, "m.json").root.value


def error(text):
    with pytest.raises(ModelError) as raised:
        parse(text, "m.json")
    return str(raised.value)


def test_comments_trailing_commas_and_text_after_the_root_are_accepted():
    text = """// a model
    {
        /* block
           comment */ "a": [1, 2, 3,], // trailing comma in an array
        "b": {"c": true,},
    }
    anything after the root value is ignored, as with kParseStopWhenDoneFlag /* even this
    """
    assert value(text) == {"a": [1, 2, 3], "b": {"c": True}}


def test_integers_and_doubles_stay_apart():
    parsed = value('{"i": 3, "f": 3.0, "e": 1e2, "n": -0, "big": 18446744073709551615}')
    assert parsed == {"i": 3, "f": 3.0, "e": 100.0, "n": 0, "big": 2**64 - 1}
    assert [type(parsed[k]) for k in "ife"] == [int, float, float]


def test_strings_use_json_escapes():
    assert value(r'{"s": "a\"b\\c\u00e9\n"}') == {"s": 'a"b\\cé\n'}


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "m.json:1:1: invalid JSON: the document is empty; expected a JSON object"),
        ("  // nothing", "m.json:1:13: invalid JSON: the document is empty; expected a JSON object"),
        (
            '{"a": NaN}',
            'm.json:1:7: invalid JSON: NaN is not a JSON value; write the string "nan", "inf" or "-inf" instead',
        ),
        (
            '{"a": -Infinity}',
            'm.json:1:7: invalid JSON: -Infinity is not a JSON value; write the string "nan", "inf" or "-inf" instead',
        ),
        ('{"a": [1, 2,, 3]}', "m.json:1:13: invalid JSON: expected a JSON value, found ','"),
        ('{"a": 1\n "b": 2}', "m.json:2:2: invalid JSON: expected ',' or '}' after an object member, found '\"'"),
        ("[1, 2", "m.json:1:6: invalid JSON: expected ',' or ']' after an array element, found the end of the file"),
        ("{a: 1}", "m.json:1:2: invalid JSON: expected a member name in double quotes, found 'a'"),
        ('{"a": 1,\n "a": 2}', 'm.json:2:2: invalid JSON: the member "a" is repeated (first at line 1, column 7)'),
        ("[1, /* unclosed", "m.json:1:5: invalid JSON: this /* comment is never closed with */"),
        ("[1, / 2]", "m.json:1:5: invalid JSON: a comment starts with // or /*"),
        ('{"a": "x\\q"}', "m.json:1:9: invalid JSON: bad string: Invalid \\escape"),
        ('{"a": "\n"}', "m.json:1:8: invalid JSON: bad string: Invalid control character"),
        ('{"a": 1e400}', "m.json:1:7: invalid JSON: the number is too big to be stored in a double"),
        ('{"a": tru}', "m.json:1:7: invalid JSON: expected a JSON value, found 't'"),
        ('{"a": 01}', "m.json:1:8: invalid JSON: expected ',' or '}' after an object member, found '1'"),
    ],
)
def test_syntax_errors_say_where_and_what(text, message):
    assert error(text) == message


def test_every_value_knows_its_path_and_position():
    root = parse('{\n  "dispatchables": {"hm": {"desc": {"Axes": [0, 7]}}}\n}', "m.json").root
    axis = root.require("dispatchables").require("hm").require("desc").require("Axes").elements()[1]
    assert str(axis.location) == "m.json:2:49: dispatchables.hm.desc.Axes[1]"
    assert str(axis.error("bad")) == "m.json:2:49: dispatchables.hm.desc.Axes[1]: bad"


def test_a_missing_member_is_located_at_its_object():
    root = parse('{"resources": {"my input": {}}}', "m.json").root
    with pytest.raises(
        ModelError, match=r'^m.json:1:28: resources\["my input"\].initialValues: required field is missing$'
    ):
        root.require("resources").require("my input").require("initialValues")


def test_path_text_quotes_names_that_are_not_identifiers():
    assert path_text(("commands", 0, "bindings", "InputTensor")) == "commands[0].bindings.InputTensor"
    assert path_text(("resources", "a b", "x")) == 'resources["a b"].x'
    assert path_text(()) == ""


@pytest.mark.parametrize(
    "text, read, message",
    [
        ("3.0", lambda n: n.uint(), "expected an unsigned 32-bit integer, found 3.0"),
        (
            "-1",
            lambda n: n.uint(),
            "expected an unsigned 32-bit integer (0 to 4294967295), found -1, which is out of range",
        ),
        ("128", lambda n: n.sint(8), "expected a signed 8-bit integer (-128 to 127), found 128, which is out of range"),
        ("true", lambda n: n.uint(), "expected an unsigned 32-bit integer, found true"),
        (
            '"x"',
            lambda n: n.real(),
            'expected a number or one of the strings "nan", "inf", "-inf", found the string "x"',
        ),
        ("null", lambda n: n.string(), "expected a string, found null"),
        ("[1]", lambda n: n.members(), "expected an object, found an array"),
        ("{}", lambda n: n.elements(), "expected an array, found an object"),
    ],
)
def test_typed_reads_say_what_was_expected_and_found(text, read, message):
    with pytest.raises(ModelError) as raised:
        read(parse(text, "m.json").root)
    assert raised.value.message == message


def test_floats_accept_the_strings_nan_and_inf_in_any_case():
    reals = [node.real() for node in parse('["nan", "NaN", "inf", "-INF", 2, 0.5]', "m.json").root.elements()]
    assert math.isnan(reals[0]) and math.isnan(reals[1])
    assert reals[2:] == [math.inf, -math.inf, 2.0, 0.5]


# The fast path (comments and trailing commas blanked, then the C decoder) must read exactly what the exact
# parser reads, refuse what it refuses with the same message, and locate every value where it starts.

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([10**250, 1e300, 5e-324])
    | st.text(alphabet='ab"\\/*,[]{}\n\u00e9', max_size=6)
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(alphabet="ab/,", max_size=2), inner, max_size=4), max_leaves=12)  # fmt: skip
_GAPS = st.sampled_from(["", " ", "\n", "//c\n", "/* , ] */", "/*\n*/"])


@st.composite
def _jsonc(draw, value=None):
    """A JSONC text of a value: comments and whitespace between tokens, sometimes trailing commas."""
    value = draw(_VALUES) if value is None else value
    gap = lambda: draw(_GAPS)  # noqa: E731
    if isinstance(value, list):
        items = [draw(_jsonc(v)) for v in value]
    elif isinstance(value, dict):
        items = [f"{json.dumps(k)}{gap()}:{gap()}{draw(_jsonc(v))}" for k, v in value.items()]
    else:
        return json.dumps(value)
    trailing = "," if items and draw(st.booleans()) else ""
    body = f"{gap()},{gap()}".join(items) + trailing + gap()
    return ("[" + gap() + body + "]") if isinstance(value, list) else ("{" + gap() + body + "}")


@st.composite
def _texts(draw):
    """A JSONC text, then maybe broken: characters deleted, or inserted from those that matter to the syntax."""
    text = draw(_GAPS) + draw(_jsonc()) + draw(st.sampled_from(["", " tail", " /* x", ' "']))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + draw(st.sampled_from(list(',:[]{}"/*\n') + ["NaN", "1e400", "01"])) + text[at:]
    return text


def _read(read):
    try:
        return "value", repr(read())  # repr tells 1 from 1.0 and True, -0.0 from 0.0
    except ModelError as error:
        return "error", str(error)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_texts())
def test_the_fast_path_reads_and_refuses_exactly_what_the_exact_parser_does(text):
    assert _read(lambda: parse(text, "m.json").root.value) == _read(lambda: _Parser(text, "m.json").document_value())


@settings(max_examples=100, deadline=None)
@given(_texts())
def test_every_value_is_located_where_it_starts(text):
    try:
        document = parse(text, "m.json")
    except ModelError:
        return
    nodes = [document.root]
    while nodes:
        node = nodes.pop()
        offset = document.offset(node.path)
        assert repr(_SCAN(document.text, offset)[0]) == repr(node.value)
        if isinstance(node.value, dict):
            nodes += [member for _, member in node.members()]
        elif isinstance(node.value, list):
            nodes += node.elements()


@pytest.mark.parametrize(
    "text",
    ["[" * 200 + "]" * 200, "[" * 201 + "]" * 201, "[" * 200 + "1" + "]" * 200, "[" * 5000 + "]" * 5000, "[,]", "{,}",
     '{"a": 1,}', "[1,,]", "[1 , // c\n ]", '{"a": 1, "a": 1}', '["//", "/*", ",]"]', "1" * 300, "1" * 5000,
     "[1e99, 1e-400, 1E+0308, 1e309]", "-Infinity", "[true, false, null,]", '"\\ud800"'],
)  # fmt: skip
def test_the_fast_path_agrees_with_the_exact_parser_at_the_edges(text):
    assert _read(lambda: parse(text, "m.json").root.value) == _read(lambda: _Parser(text, "m.json").document_value())


@pytest.mark.parametrize("text, fast", [('{"node123": [1e99, "e100"]}', True), ('{"a": 1e100}', False)])
def test_only_what_may_be_beyond_a_double_leaves_the_fast_path(text, fast):
    assert (_fast_value(text, 0) is not _UNSURE) == fast
