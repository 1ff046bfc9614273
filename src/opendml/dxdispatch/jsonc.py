"""The JSON dialect DxDispatch reads, parsed strictly, with a location for every value.

DxDispatch parses models with RapidJSON's comments, trailing-commas and stop-when-done flags: ``//`` and
``/* */`` comments and a comma before ``]`` or ``}`` are accepted, and text after the root value is ignored.
``NaN`` and ``Infinity`` literals are not JSON and are rejected (models write the strings ``"nan"``, ``"inf"``,
``"-inf"``). Everything else is standard JSON, parsed here with the standard library's string scanner.
One deliberate difference: a member name repeated in one object is an error here (RapidJSON keeps both and
DxDispatch reads the first), since the second one is always a mistake.

:func:`parse` gives a :class:`Document`; its :attr:`~Document.root` is a :class:`Node`, a JSON value that
knows its JSON path and position, so every typed read (``node.uint()``, ``node.require("Sizes")``) fails with
a :class:`~opendml.dxdispatch.errors.ModelError` that says where, what was expected and what was found.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from .errors import Diagnostics, Location, ModelError

__all__ = ["Document", "Node", "parse", "read", "path_text", "describe", "closest"]

JsonPath = tuple[str | int, ...]
T = TypeVar("T")

_SKIP = re.compile(r"(?:[ \t\r\n]+|//[^\n]*|/\*.*?\*/)*", re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_LITERALS = (("true", True), ("false", False), ("null", None))
_NOT_JSON = ("NaN", "Infinity", "-Infinity")
_MAX_DEPTH = 200
_FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


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


class Document:
    """A parsed model file: its root value and the position of every value in the text."""

    def __init__(self, name: str, text: str, value: Any, positions: dict[JsonPath, int], diagnostics: Diagnostics):
        self.name = name
        self.text = text
        self.positions = positions
        self.diagnostics = diagnostics
        self.root = Node(self, (), value)

    def location(self, path: JsonPath, anchor: JsonPath | None = None) -> Location:
        """Where ``path`` is; a missing member is located at its object (``anchor``)."""
        return _location(self.name, self.text, self.positions[path if anchor is None else anchor], path_text(path))


def _location(name: str, text: str, offset: int, path: str = "") -> Location:
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return Location(name, path, line, column)


def parse(text: str, name: str, diagnostics: Diagnostics | None = None) -> Document:
    """Parse ``text`` (the contents of the file ``name``); raise ModelError at the first syntax error."""
    parser = _Parser(text, name)
    start = parser.skip(0)
    if start == len(text):
        raise parser.error(start, "the document is empty; expected a JSON object")
    value, _ = parser.value(start, ())
    return Document(name, text, value, parser.positions, diagnostics or Diagnostics())


def read(path: Path, diagnostics: Diagnostics | None = None, name: str | None = None) -> Document:
    """Read and parse a model file (UTF-8; undecodable bytes are kept, as RapidJSON keeps them)."""
    text = path.read_bytes().decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    return parse(text, str(path) if name is None else name, diagnostics)


class _Parser:
    """Recursive descent over the text; records the offset of every value by JSON path."""

    def __init__(self, text: str, name: str):
        self.text = text
        self.name = name
        self.positions: dict[JsonPath, int] = {}

    def error(self, offset: int, message: str) -> ModelError:
        return ModelError(_location(self.name, self.text, offset), f"invalid JSON: {message}")

    def found(self, offset: int) -> str:
        return "the end of the file" if offset >= len(self.text) else repr(self.text[offset])

    def skip(self, offset: int) -> int:
        offset = _SKIP.match(self.text, offset).end()
        if self.text.startswith("/*", offset):
            raise self.error(offset, "this /* comment is never closed with */")
        if self.text.startswith("/", offset):
            raise self.error(offset, "a comment starts with // or /*")
        return offset

    def value(self, offset: int, path: JsonPath) -> tuple[Any, int]:
        """The value starting at ``offset`` (whitespace already skipped) and the offset after it."""
        if len(path) > _MAX_DEPTH:
            raise self.error(offset, f"values are nested more than {_MAX_DEPTH} levels deep")
        self.positions[path] = offset
        text = self.text
        char = text[offset : offset + 1]
        if char == "{":
            return self.object(offset, path)
        if char == "[":
            return self.array(offset, path)
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

    def object(self, offset: int, path: JsonPath) -> tuple[dict[str, Any], int]:
        result: dict[str, Any] = {}
        offset = self.skip(offset + 1)
        if self.text.startswith("}", offset):
            return result, offset + 1
        while True:
            if not self.text.startswith('"', offset):
                raise self.error(offset, f"expected a member name in double quotes, found {self.found(offset)}")
            key, after_key = self.string(offset)
            if key in result:
                first = _location(self.name, self.text, self.positions[(*path, key)])
                raise self.error(
                    offset, f'the member "{key}" is repeated (first at line {first.line}, column {first.column})'
                )
            offset = self.skip(after_key)
            if not self.text.startswith(":", offset):
                raise self.error(offset, f"expected ':' after the member name, found {self.found(offset)}")
            result[key], offset = self.value(self.skip(offset + 1), (*path, key))
            offset, closed = self.after_item(offset, "}", "an object member")
            if closed:
                return result, offset

    def array(self, offset: int, path: JsonPath) -> tuple[list[Any], int]:
        result: list[Any] = []
        offset = self.skip(offset + 1)
        if self.text.startswith("]", offset):
            return result, offset + 1
        while True:
            item, offset = self.value(offset, (*path, len(result)))
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
