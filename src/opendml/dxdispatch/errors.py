"""What is wrong in a model, and where: file, line:column and JSON path, as a compiler reports it.

A model is checked as a whole: every resource, dispatchable and command is read even when an earlier one is
broken, and :class:`Diagnostics` collects every error and warning on the way, so that one run of
``opendml validate`` lists them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from ..errors import InvalidArgumentError

__all__ = ["Location", "ModelError", "InvalidModel", "Unavailable", "Diagnostics", "gather"]

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True)
class Location:
    """A place in a model file: ``model.json:12:9: dispatchables.hm.desc.Axes[1]``."""

    file: str
    path: str = ""  # the JSON path; empty for the document itself
    line: int | None = None  # 1-based, like the column
    column: int | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}" if self.path else where


class ModelError(InvalidArgumentError):
    """One problem in a model, at a :class:`Location`; ``str()`` gives ``<location>: <message>``."""

    def __init__(self, location: Location, message: str):
        super().__init__(f"{location}: {message}")
        self.location = location
        self.message = message


class InvalidModel(InvalidArgumentError):
    """Every error found in a model (``problems`` holds them all as text, ``errors`` as ModelErrors)."""

    def __init__(self, errors: Sequence[ModelError]):
        super().__init__(str(errors[0]), tuple(str(e) for e in errors))
        self.errors = tuple(errors)


class Unavailable(Exception):
    """A reference to an item whose own error has already been reported: nothing more to say about it."""


class Diagnostics:
    """The errors and warnings of one model, in the order they were found."""

    def __init__(self) -> None:
        self.errors: list[ModelError] = []
        self.warnings: list[str] = []
        self.incomplete = False  # an item was skipped because of an error reported elsewhere

    @contextmanager
    def item(self) -> Iterator[None]:
        """Check one item (a resource, a dispatchable, a command...): record its error and carry on."""
        try:
            yield
        except ModelError as error:
            self.errors.append(error)
        except InvalidModel as invalid:
            self.errors.extend(invalid.errors)
        except Unavailable:
            self.incomplete = True

    def warn(self, location: Location, message: str) -> None:
        self.warnings.append(f"{location}: {message}")

    def check(self) -> None:
        """Raise :class:`InvalidModel` if any error was recorded (Unavailable if an item was only skipped)."""
        if self.errors:
            raise InvalidModel(self.errors)
        if self.incomplete:
            raise Unavailable


def gather(function: Callable[[T], U], items: Iterable[T]) -> list[U]:
    """``function`` of every item; then raise InvalidModel with all their errors, if any."""
    diagnostics, results = Diagnostics(), []
    for item in items:
        with diagnostics.item():
            results.append(function(item))
    diagnostics.check()
    return results
