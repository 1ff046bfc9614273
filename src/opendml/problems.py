"""A broken rule, located at the descriptor field it is about.

Validation reports :class:`Problem` objects; the device turns them into the messages of its errors and the
JSON runner into locations in a model (``InputTensor.Sizes[1]``), without reading the message text.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Problem", "summarised"]


@dataclass(frozen=True)
class Problem:
    """``text`` states the rule broken; ``field`` (a C field name), ``member`` and ``index`` say where.

    ``field`` is None for a problem with the operator as a whole (its feature level). ``member`` names a member
    of a struct field (``Sizes`` of a tensor, ``Scale`` of a ScaleBias); ``index`` an element of an array.
    """

    text: str
    field: str | None = None
    member: str | None = None
    index: int | None = None

    def __str__(self) -> str:
        return self.text

    def within(self, field: str) -> Problem:
        """This problem of a nested descriptor, as a problem of the host's ``field``."""
        return Problem(f"{field}: {self.text}", field)


#: How many problems of one kind are listed one by one before the rest are counted.
LISTED_MAX = 3


def summarised(problems: list[Problem], rule: str) -> list[Problem]:
    """``problems`` of one kind, each located at an element: at most :data:`LISTED_MAX` listed, then one line
    ``Axes[9], Axes[12] and 999,998 more <rule>`` so that a huge bad array gives a bounded report."""
    if len(problems) <= LISTED_MAX:
        return problems
    first = problems[LISTED_MAX]
    named = ", ".join(f"{p.field}[{p.index}]" for p in problems[LISTED_MAX : LISTED_MAX + 2])
    rest = len(problems) - LISTED_MAX - 2
    more = f" and {rest:,} more" if rest > 0 else ""
    return problems[:LISTED_MAX] + [Problem(f"{named}{more} {rule}", first.field, first.member, first.index)]
