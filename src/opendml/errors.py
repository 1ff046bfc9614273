"""Errors: each class stands for the HRESULT that DirectML would return, and subclasses the matching builtin.

DirectML reports almost every misuse as ``E_INVALIDARG`` (0x80070057, "The parameter is incorrect"); opendml
raises :class:`InvalidArgumentError` for those, with a message that says what DirectML's debug layer would:
the operator, the field, the rule broken and, where it matters, the feature level.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DMLError",
    "InvalidArgumentError",
    "UnsupportedError",
    "OperatorNotImplementedError",
    "E_INVALIDARG",
    "E_NOTIMPL",
    "DXGI_ERROR_UNSUPPORTED",
]

E_INVALIDARG = 0x80070057
E_NOTIMPL = 0x80004001
DXGI_ERROR_UNSUPPORTED = 0x887A0004


class DMLError(Exception):
    """Base of every opendml error; ``hresult`` is the code DirectML would have returned."""

    hresult: int = 0x80004005  # E_FAIL

    def __init__(self, message: str, problems: tuple[str, ...] | None = None, *, problem: Any = None):
        super().__init__(message)
        #: Every problem found, when validation collected more than one (the message holds the first).
        self.problems: tuple[str, ...] = problems if problems else (message,)
        #: Where the (first) problem is, as a :class:`~opendml.problems.Problem`, when it concerns one field.
        self.problem = problem


class InvalidArgumentError(DMLError, ValueError):
    """E_INVALIDARG (0x80070057): a descriptor, binding or argument breaks a DirectML rule."""

    hresult = E_INVALIDARG


class UnsupportedError(DMLError, NotImplementedError):
    """DXGI_ERROR_UNSUPPORTED (0x887A0004): e.g. a device asked for a feature level above opendml's."""

    hresult = DXGI_ERROR_UNSUPPORTED


class OperatorNotImplementedError(DMLError, NotImplementedError):
    """E_NOTIMPL (0x80004001): DirectML has this operator or feature, opendml does not implement it (yet)."""

    hresult = E_NOTIMPL
