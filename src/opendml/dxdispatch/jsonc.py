"""The JSON dialect DxDispatch reads, parsed strictly, with a location for every value.

DxDispatch parses models with RapidJSON's comments, trailing-commas and stop-when-done flags: ``//`` and
``/* */`` comments and a comma before ``]`` or ``}`` are accepted, and text after the root value is ignored.
``NaN`` and ``Infinity`` literals are not JSON and are rejected (models write the strings ``"nan"``, ``"inf"``,
``"-inf"``). Everything else is standard JSON. One deliberate difference: a member name repeated in one object is
an error here (RapidJSON keeps both and DxDispatch reads the first), since the second one is always a mistake.

A model may hold millions of numbers, so parsing takes a fast path: comments and trailing commas are blanked out
(every offset stays where it was) and the standard library's C decoder reads the rest. Whatever it refuses, or
might read differently from this dialect (NaN, a repeated member, a number beyond a double, deep nesting), is
parsed again by an exact parser, which finds the error and says where. Positions are found only when a message
needs one, by scanning just the objects and arrays on the path to the value.

:func:`parse` gives a :class:`Document`; its :attr:`~Document.root` is a :class:`Node`, a JSON value that
knows its JSON path and position, so every typed read (``node.uint()``, ``node.require("Sizes")``) fails with
a :class:`~opendml.dxdispatch.errors.ModelError` that says where, what was expected and what was found.
"""

from __future__ import annotations

import bisect
import difflib
import errno
import functools
import json
import math
import os
import re
import sys
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .errors import Diagnostics, Location, ModelError
from .files import open_regular

__all__ = ["Document", "Node", "parse", "read", "path_text", "describe", "closest", "MAX_MODEL_BYTES"]

#: The largest model file read (16 MiB). Parsing costs up to about 60 bytes of memory per value (a list of numbers,
#: an empty list); large data belongs in a ``sourcePath`` file.
MAX_MODEL_BYTES = 16 * 2**20

JsonPath = tuple[str | int, ...]
#: Where the members of an object (name -> offset) or the elements of an array start in the text.
Starts = "dict[str, int] | array[int] | np.ndarray"
T = TypeVar("T")

_SKIP = re.compile(r"(?:[ \t\r\n]+|//[^\n]*|/\*.*?\*/)*", re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_LITERALS = (("true", True), ("false", False), ("null", None))
_NOT_JSON = ("NaN", "Infinity", "-Infinity")
_MAX_DEPTH = 200
_FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_WHITESPACE = re.compile(r"[ \t\r\n]*")
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'  # skipped whole, so that what it holds is never taken for a comment
_COMMENTS = re.compile(rf"{_STRING}|//[^\n]*|/\*.*?\*/", re.S)
_MAYBE_TRAILING_COMMA = re.compile(r",[ \t\r\n]*[\]}]")  # a quick test: most models have none
_TRAILING_COMMAS = re.compile(rf"{_STRING}|,(?=[ \t\r\n]*[\]}}])", re.S)
#: Text that may hold a number beyond a double (a digit, then an exponent of 100 or more; 200 digits in a row),
#: which only the exact parser refuses. A name such as "node123" does not match.
_MAYBE_HUGE = (re.compile(r"[0-9][eE]\+?0*[1-9][0-9]{2}"), re.compile(r"[0-9]{200}"))  # 2 searches: faster than 1
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # reads one JSON value at an offset, in C


def path_text(path: JsonPath) -> str:
    """``("dispatchables", "hm", "desc", "Axes", 1)`` -> ``dispatchables.hm.desc.Axes[1]``."""
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        elif _IDENTIFIER.fullmatch(step):
            text += f".{step}" if text else step
        else:
            text += f"[{json.dumps(step)}]"
    return text


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like ``word`` (ignoring case), for a "did you mean" hint; None if none is close."""
    by_lower = {candidate.lower(): candidate for candidate in candidates}
    matches = difflib.get_close_matches(word.lower(), by_lower, n=1)
    return by_lower[matches[0]] if matches else None


def describe(value: Any) -> str:
    """A JSON value as an error message names what it found: ``the string "x"``, ``1.5``, ``an array``."""
    if isinstance(value, str):
        return f"the string {json.dumps(value)}"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value)
    return "an array" if isinstance(value, list) else "an object"


class _Lines:
    """The line and column of an offset in a text, found by bisection: a model with many errors is located fast."""

    def __init__(self, name: str, text: str):
        self.name = name
        self.newlines = array("q", (match.start() for match in re.finditer("\n", text)))

    def location(self, offset: int, path: str = "") -> Location:
        line = bisect.bisect_left(self.newlines, offset)  # the newlines before ``offset``
        start = self.newlines[line - 1] + 1 if line else 0
        return Location(self.name, path, line + 1, offset - start + 1)


class Document:
    """A parsed model file: its root value, and the position of any value in the text on demand."""

    def __init__(self, name: str, text: str, value: Any, start: int, diagnostics: Diagnostics):
        self.name = name
        self.text = text  # plain JSON up to the end of the root value: comments and trailing commas blanked out
        self.start = start  # the offset of the root value
        self.diagnostics = diagnostics
        self.root = Node(self, (), value)
        self.starts: dict[JsonPath, Starts] = {}  # by the path of an object or array, once a message needs it

    @functools.cached_property
    def lines(self) -> _Lines:
        return _Lines(self.name, self.text)

    def location(self, path: JsonPath, anchor: JsonPath | None = None) -> Location:
        """Where ``path`` is; a missing member is located at its object (``anchor``)."""
        return self.lines.location(self.offset(path if anchor is None else anchor), path_text(path))

    def offset(self, path: JsonPath) -> int:
        """Where the value at ``path`` starts in the text."""
        offset = self.start
        for depth, step in enumerate(path):
            container = path[:depth]
            if container not in self.starts:
                self.starts[container] = _starts(self.text, offset)
            offset = int(self.starts[container][step])
        return offset


def _starts(text: str, offset: int) -> Starts:
    """Where each member or element of the object or array at ``offset`` starts (the text is valid there)."""
    is_object = text[offset] == "{"
    if not is_object:
        body = text[offset + 1 : _SCAN(text, offset)[1] - 1]
        if body.isascii() and not any(bracket in body for bracket in '"[{'):
            return _scalar_starts(body, offset + 1)
    starts: Starts = {} if is_object else array("q")
    offset = _WHITESPACE.match(text, offset + 1).end()
    while text[offset] not in "]}":
        if is_object:
            key, offset = json.decoder.scanstring(text, offset + 1)
            offset = _WHITESPACE.match(text, _WHITESPACE.match(text, offset).end() + 1).end()  # past the ':'
            starts[key] = offset
        else:
            starts.append(offset)
        offset = _WHITESPACE.match(text, _SCAN(text, offset)[1]).end()
        if text[offset] == ",":
            offset = _WHITESPACE.match(text, offset + 1).end()
    return starts


def _scalar_starts(body: str, offset: int) -> np.ndarray:
    """Where the elements of an array of numbers (and true, false, null) start: where a run of characters other
    than whitespace and commas starts. Found at once, as an array may hold millions."""
    separator = np.isin(np.frombuffer(body.encode("ascii"), np.uint8), np.frombuffer(b" \t\r\n,", np.uint8))
    return np.flatnonzero(~separator & np.concatenate(([True], separator[:-1]))) + offset


def parse(text: str, name: str, diagnostics: Diagnostics | None = None) -> Document:
    """Parse ``text`` (the contents of the file ``name``); raise ModelError at the first syntax error."""
    plain = _blank(text)
    start = _WHITESPACE.match(plain).end()
    value = _fast_value(plain, start)
    if value is _UNSURE:
        value = _Parser(text, name).document_value()  # raises the exact error, located
    return Document(name, plain, value, start, diagnostics or Diagnostics())


def _blank(text: str) -> str:
    """``text`` with comments and trailing commas replaced by spaces (newlines kept), so that what is left of it
    is plain JSON at the same offsets, lines and columns."""
    if "/" in text:
        text = _COMMENTS.sub(lambda m: m[0] if m[0][0] == '"' else re.sub(r"[^\n]", " ", m[0]), text)
    if _MAYBE_TRAILING_COMMA.search(text):
        text = _TRAILING_COMMAS.sub(_blank_trailing_comma, text)
    return text


def _blank_trailing_comma(match: re.Match) -> str:
    """A string as it is; a comma before "]" or "}" as a space if a value comes before it (in ``[,]`` it is an
    error, left for the C decoder to refuse)."""
    if match[0] != ",":
        return match[0]
    before = match.start() - 1
    while before > 0 and match.string[before] in " \t\r\n":
        before -= 1
    return "," if match.string[before] in "[{,:" else " "


class _Unsure(Exception):
    """The fast path met what the exact parser must judge."""


def _refuse(_: Any) -> Any:
    raise _Unsure  # NaN, Infinity, -Infinity: not JSON


def _unrepeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _Unsure  # a repeated member: an error, whose place the exact parser finds
    return members


_UNSURE = object()
_DECODER = json.JSONDecoder(object_pairs_hook=_unrepeated, parse_constant=_refuse)


def _fast_value(plain: str, start: int) -> Any:
    """The root value read by the C decoder, or _UNSURE when only the exact parser can tell."""
    if start == len(plain) or any(pattern.search(plain) for pattern in _MAYBE_HUGE):
        return _UNSURE
    try:
        value, _ = _DECODER.raw_decode(plain, start)  # stops after the root value, as RapidJSON does
    except (ValueError, _Unsure, RecursionError):
        return _UNSURE
    return value if _shallow(value, plain) else _UNSURE


def _shallow(value: Any, plain: str) -> bool:
    """No value is nested more than _MAX_DEPTH levels deep."""
    if plain.count("[") + plain.count("{") <= _MAX_DEPTH:
        return True  # too few objects and arrays to nest so deep: no need to look
    level = [value] if isinstance(value, (dict, list)) and value else []  # the non-empty containers at a depth
    for _ in range(_MAX_DEPTH):
        level = [
            child
            for container in level
            for child in filter(None, container.values() if isinstance(container, dict) else container)
            if type(child) in (dict, list)
        ]
        if not level:
            return True
    return False


def read(path: Path, diagnostics: Diagnostics | None = None, name: str | None = None) -> Document:
    """Read and parse a model file (UTF-8; undecodable bytes are kept, as RapidJSON keeps them).

    Raise OSError when it cannot be read, is not a regular file, or holds more than MAX_MODEL_BYTES.
    """
    with open_regular(path) as file:
        raw = file.read(MAX_MODEL_BYTES + 1)
    if len(raw) > MAX_MODEL_BYTES:
        raise OSError(errno.EFBIG, f"it is larger than {MAX_MODEL_BYTES} bytes (16 MiB), the most opendml reads")
    text = raw.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    return parse(text, str(path) if name is None else name, diagnostics)


class _Parser:
    """The exact parser: recursive descent over the text, which says where and why the text is not valid."""

    def __init__(self, text: str, name: str):
        self.text = text
        self.name = name

    def document_value(self) -> Any:
        start = self.skip(0)
        if start == len(self.text):
            raise self.error(start, "the document is empty; expected a JSON object")
        return self.value(start, 0)[0]

    def error(self, offset: int, message: str) -> ModelError:
        return ModelError(self.location(offset), f"invalid JSON: {message}")

    def location(self, offset: int) -> Location:
        return _Lines(self.name, self.text).location(offset)  # once: parsing stops at the first error

    def found(self, offset: int) -> str:
        return "the end of the file" if offset >= len(self.text) else repr(self.text[offset])

    def skip(self, offset: int) -> int:
        offset = _SKIP.match(self.text, offset).end()
        if self.text.startswith("/*", offset):
            raise self.error(offset, "this /* comment is never closed with */")
        if self.text.startswith("/", offset):
            raise self.error(offset, "a comment starts with // or /*")
        return offset

    def value(self, offset: int, depth: int) -> tuple[Any, int]:
        """The value starting at ``offset`` (whitespace already skipped) and the offset after it."""
        if depth > _MAX_DEPTH:
            raise self.error(offset, f"values are nested more than {_MAX_DEPTH} levels deep")
        text = self.text
        char = text[offset : offset + 1]
        if char == "{":
            return self.object(offset, depth)
        if char == "[":
            return self.array(offset, depth)
        if char == '"':
            return self.string(offset)
        for word in _NOT_JSON:
            if text.startswith(word, offset):
                raise self.error(offset, f'{word} is not a JSON value; write the string "nan", "inf" or "-inf" instead')
        number = _NUMBER.match(text, offset)
        if number:
            return self.number(number), number.end()
        for word, literal in _LITERALS:
            if text.startswith(word, offset):
                return literal, offset + len(word)
        raise self.error(offset, f"expected a JSON value, found {self.found(offset)}")

    def number(self, match: re.Match) -> int | float:
        """An int when written without fraction or exponent (as RapidJSON tells integers from doubles)."""
        is_float = match.group(1) or match.group(2)
        try:
            number = float(match.group()) if is_float else int(match.group())
        except ValueError:  # more digits than int() converts
            number = math.inf
        if abs(number) > sys.float_info.max:
            raise self.error(match.start(), "the number is too big to be stored in a double")
        return number

    def string(self, offset: int) -> tuple[str, int]:
        try:
            return json.decoder.scanstring(self.text, offset + 1, True)
        except json.JSONDecodeError as error:
            raise self.error(error.pos, f"bad string: {error.msg.removesuffix(' at')}") from None

    def object(self, offset: int, depth: int) -> tuple[dict[str, Any], int]:
        result: dict[str, Any] = {}
        starts: dict[str, int] = {}  # to say where a repeated member first was
        offset = self.skip(offset + 1)
        if self.text.startswith("}", offset):
            return result, offset + 1
        while True:
            if not self.text.startswith('"', offset):
                raise self.error(offset, f"expected a member name in double quotes, found {self.found(offset)}")
            key, after_key = self.string(offset)
            if key in result:
                first = self.location(starts[key])
                raise self.error(
                    offset, f'the member "{key}" is repeated (first at line {first.line}, column {first.column})'
                )
            offset = self.skip(after_key)
            if not self.text.startswith(":", offset):
                raise self.error(offset, f"expected ':' after the member name, found {self.found(offset)}")
            starts[key] = self.skip(offset + 1)
            result[key], offset = self.value(starts[key], depth + 1)
            offset, closed = self.after_item(offset, "}", "an object member")
            if closed:
                return result, offset

    def array(self, offset: int, depth: int) -> tuple[list[Any], int]:
        result: list[Any] = []
        offset = self.skip(offset + 1)
        if self.text.startswith("]", offset):
            return result, offset + 1
        while True:
            item, offset = self.value(offset, depth + 1)
            result.append(item)
            offset, closed = self.after_item(offset, "]", "an array element")
            if closed:
                return result, offset

    def after_item(self, offset: int, close: str, what: str) -> tuple[int, bool]:
        """After a member or element: ``,`` (a trailing one allowed) or the closing bracket."""
        offset = self.skip(offset)
        if self.text.startswith(",", offset):
            offset = self.skip(offset + 1)
            if self.text.startswith(close, offset):
                return offset + 1, True
            return offset, False
        if self.text.startswith(close, offset):
            return offset + 1, True
        raise self.error(offset, f"expected ',' or '{close}' after {what}, found {self.found(offset)}")


class Node:
    """A JSON value of a document with its path: typed reads that fail with located, specific errors."""

    __slots__ = ("document", "path", "value")

    def __init__(self, document: Document, path: JsonPath, value: Any):
        self.document = document
        self.path = path
        self.value = value

    def __repr__(self) -> str:
        return f"Node({path_text(self.path) or '<root>'}: {describe(self.value)})"

    @property
    def location(self) -> Location:
        return self.document.location(self.path)

    def error(self, message: str) -> ModelError:
        return ModelError(self.location, message)

    def expected(self, what: str) -> ModelError:
        return self.error(f"expected {what}, found {describe(self.value)}")

    def warn(self, message: str) -> None:
        self.document.diagnostics.warn(self.location, message)

    def warn_unknown(self, known: tuple[str, ...], what: str, noun: str = "field") -> None:
        """Warn about members outside ``known``: DxDispatch ignores them, so a misspelt optional field is lost."""
        for key, member in self.members():
            if key not in known:
                close = closest(key, known)
                member.warn(
                    f"{what} has no {noun} {key!r}; it is ignored" + (f"; did you mean {close}?" if close else "")
                )

    # Objects and arrays.

    def members(self) -> list[tuple[str, Node]]:
        if not isinstance(self.value, dict):
            raise self.expected("an object")
        return [(key, Node(self.document, (*self.path, key), v)) for key, v in self.value.items()]

    def elements(self) -> list[Node]:
        if not isinstance(self.value, list):
            raise self.expected("an array")
        return [Node(self.document, (*self.path, i), v) for i, v in enumerate(self.value)]

    def element(self, index: int) -> Node:
        """Element ``index`` of this array (which has it)."""
        return Node(self.document, (*self.path, index), self.value[index])

    def get(self, key: str) -> Node | None:
        """The member ``key`` of this object, or None when it is absent."""
        if not isinstance(self.value, dict):
            raise self.expected("an object")
        return Node(self.document, (*self.path, key), self.value[key]) if key in self.value else None

    def first(self, *keys: str) -> Node | None:
        """The first of ``keys`` that is present (DxDispatch reads ``Desc``, then ``desc``)."""
        return next((node for node in map(self.get, keys) if node is not None), None)

    def require(self, key: str) -> Node:
        node = self.get(key)
        if node is None:
            raise self.missing(key, "required field is missing")
        return node

    def missing(self, key: str, message: str) -> ModelError:
        """An error about the absent member ``key``, located at this object."""
        return ModelError(self.document.location((*self.path, key), anchor=self.path), message)

    def optional(self, key: str, read: Callable[[Node], T], default: T) -> T:
        """``read(member)``, or ``default`` when the member is absent."""
        node = self.get(key)
        return default if node is None else read(node)

    # Scalars.

    def string(self) -> str:
        if not isinstance(self.value, str):
            raise self.expected("a string")
        return self.value

    def file_path(self) -> str:
        """A string that can name a file: no NUL character, nothing the file system's encoding cannot encode."""
        path = self.string()
        if "\0" in path:
            raise self.error("a file path cannot contain the NUL character (\\u0000)")
        try:
            os.fsencode(path)
        except UnicodeEncodeError as error:
            raise self.error(f"the file path cannot be encoded in {error.encoding}: {error.reason}") from None
        return path

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.expected("true or false")
        return self.value

    def integer(self, low: int, high: int, what: str) -> int:
        """A JSON integer in [low, high]: ``3.0`` is a number but not an integer, as in RapidJSON."""
        value = self.value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.expected(what)
        if not low <= value <= high:
            raise self.error(f"expected {what} ({low} to {high}), found {value}, which is out of range")
        return value

    def uint(self, bits: int = 32) -> int:
        return self.integer(0, 2**bits - 1, f"an unsigned {bits}-bit integer")

    def sint(self, bits: int) -> int:
        return self.integer(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1, f"a signed {bits}-bit integer")

    def uints(self, bits: int = 32) -> tuple[int, ...]:
        """An array of unsigned integers (``Sizes``, ``Axes``, ``dimensions``)."""
        return tuple(element.uint(bits) for element in self.elements())

    def real(self) -> float:
        """A number, or one of the strings "nan", "inf", "-inf" (any case), as DxDispatch reads floats."""
        value = self.value
        if isinstance(value, str) and value.lower() in _FLOAT_WORDS:
            return _FLOAT_WORDS[value.lower()]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.expected('a number or one of the strings "nan", "inf", "-inf"')
        return float(value)
