"""Markdown rendered from the operator table and the deviations list, for the README (kept in sync by a test)."""

from __future__ import annotations

from .deviations import DEVIATIONS
from .schema import REGISTRY
from .support import SupportBy


def operator_table() -> str:
    """One line per operator and support row: the README's operator table."""
    lines = [
        "| Operator | Introduced | Support row | Tensor: dimension counts, data types | In place |",
        "|---|---|---|---|---|",
    ]
    for schema in REGISTRY.values():
        for i, (label, row) in enumerate(_labelled_rows(schema)):
            groups: dict = {}  # tensors with the same support share one line
            for name, support in row.tensors.items():
                optional = schema.field(name).kind.optional and not support.required  # "Optional input"
                groups.setdefault(support, []).append(f"{name} (optional)" if optional else name)
            cells = "<br>".join(f"{', '.join(names)}: {s.dims_text}; {s.types_text}" for s, names in groups.items())
            first = i == 0
            lines.append(
                f"| {schema.c_name if first else ''} | {schema.introduced.version if first else ''} "
                f"| {label}{row.feature_level.version}+ | {cells} | {_in_place(schema.in_place) if first else ''} |"
            )
    return "\n".join(lines)


def _in_place(in_place: bool | tuple[str, ...]) -> str:
    return f"over {', '.join(in_place)}" if isinstance(in_place, tuple) else ("yes" if in_place else "no")


def _labelled_rows(schema):
    """The support rows, each with a label naming the field values it applies to when they depend on a field."""
    if not isinstance(schema.support, SupportBy):
        return [("", row) for row in schema.support]
    return [
        (f"{schema.support.field} {', '.join(v.name for v in values)}: " if k == 0 else "", row)
        for values, rows in schema.support.groups.items()
        for k, row in enumerate(rows)
    ]


def constraints_list() -> str:
    return "\n".join(
        f"- `{schema.c_name}`: " + "; ".join(str(rule) for rule in schema.constraints) + "."
        for schema in REGISTRY.values()
    )


def deviations_table() -> str:
    lines = ["| directml.h | opendml | why |", "|---|---|---|"]
    lines += [f"| `{d.c_api}` | `{d.python_api}` | {d.why} |" for d in DEVIATIONS]
    return "\n".join(lines)


SECTIONS = {"operator-table": operator_table, "constraints": constraints_list, "deviations": deviations_table}


def render(readme: str) -> str:
    """``readme`` with every ``<!-- begin:NAME -->...<!-- end:NAME -->`` block regenerated."""
    for name, make in SECTIONS.items():
        begin, end = f"<!-- begin:{name} -->", f"<!-- end:{name} -->"
        head, found, rest = readme.partition(begin)
        if not found:
            continue
        _, found_end, tail = rest.partition(end)
        if not found_end:
            raise ValueError(f"{begin} has no {end}")
        readme = f"{head}{begin}\n{make()}\n{end}{tail}"
    return readme
