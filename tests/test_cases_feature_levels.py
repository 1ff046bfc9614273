"""The feature-level walk of every registered operator, from its declaration: each support row accepts every data
type and its lowest and highest dimension count at its own level; what a row adds is refused one level below it,
naming the level that supports it; nothing is accepted below the level of introduction."""

from __future__ import annotations

import pytest
from cases import CASES, make_desc, rng_for, schema, types_for

import opendml as dml
from opendml.schema import SupportBy

LEVELS = sorted(dml.FeatureLevel, key=int)


def _below(level):
    lower = [lv for lv in LEVELS if lv < level]
    return lower[-1] if lower else None


def _walk():
    for op, case in CASES.items():
        support = schema(case).support
        if isinstance(support, SupportBy):
            name = schema(case).field(support.field).name
            groups = [({name: values[0]}, rows) for values, rows in support.groups.items()]
        else:
            groups = [({}, support)]
        for fixed, rows in groups:
            for k, row in enumerate(rows):
                lower_row = rows[k + 1] if k + 1 < len(rows) else None
                label = "".join(f"{v.name}-" for v in fixed.values())
                yield pytest.param(case, fixed, row, lower_row, id=f"{op.name}-{label}{row.feature_level.version}")


def _desc(case, fixed, row, i, rank):
    rng = rng_for(case.operator_type.name, row.feature_level, i, rank)
    return make_desc(case, (2,) * rank, types_for(row, i, case), rng, params={**case.params(rank, rng), **fixed})


@pytest.mark.parametrize("case, fixed, row, lower_row", list(_walk()))
def test_each_row_accepts_its_types_and_dimension_counts_at_its_level(case, fixed, row, lower_row):
    device = dml.Device(feature_level=row.feature_level)
    low = max(cell.min_dims for cell in row.tensors.values())
    high = min(cell.max_dims for cell in row.tensors.values())
    longest = max(len(cell.data_types) for cell in row.tensors.values())
    for i in range(longest):
        for rank in {low, high}:
            desc = _desc(case, fixed, row, i, rank)
            assert device.validate(desc) == [], (i, rank)


@pytest.mark.parametrize("case, fixed, row, lower_row", list(_walk()))
def test_what_a_row_adds_is_refused_one_level_below(case, fixed, row, lower_row):
    s = schema(case)
    below = _below(row.feature_level)
    if lower_row is None:  # the lowest row: below it the operator (or this group) does not exist
        if row.feature_level == s.introduced and below is not None:
            desc = _desc(case, fixed, row, 0, max(cell.min_dims for cell in row.tensors.values()))
            assert dml.Device(feature_level=below).validate(desc) == [
                f"{s.c_name}: the operator was introduced in {s.introduced.c_name}, but the device's feature level "
                f"is {below.c_name}"
            ]
        return
    device = dml.Device(feature_level=below)
    added = 0
    for name, cell in row.tensors.items():
        old = lower_row.tensors[name]
        for i, data_type in enumerate(cell.data_types):
            if data_type in old.data_types:
                continue
            desc = _desc(case, fixed, row, i, max(cell.min_dims, old.min_dims))
            problems = device.validate(desc)
            expected = (
                f"{s.c_name}: {name}.DataType {data_type.name} is not supported at {below.c_name} "
                f"(supported: {old.types_text}); {row.feature_level.c_name} and above support it"
            )
            assert expected in problems
            added += 1
        for rank in range(cell.min_dims, cell.max_dims + 1):
            if old.allows_dimension_count(rank) or not all(
                c.allows_dimension_count(rank) for c in row.tensors.values()
            ):
                continue
            shared = (
                next(i for i, t in enumerate(cell.data_types) if t in old.data_types)
                if set(cell.data_types) & set(old.data_types)
                else 0
            )
            desc = _desc(case, fixed, row, shared, rank)
            expected = (
                f"{s.c_name}: {name}.DimensionCount {rank} is not supported at {below.c_name} "
                f"(supported: {old.dims_text}); {row.feature_level.c_name} and above support it"
            )
            assert expected in device.validate(desc)
            added += 1
    for name, cell in row.tensors.items():  # "Optional input" where the row below says "Input"
        if lower_row.tensors[name].required and not cell.required:
            spec = s.field(name)
            params = {k: v for k, v in case.params(1, rng_for(case.operator_type.name, name)).items() if k != spec.name}
            low = max(c.min_dims for c in row.tensors.values())
            desc = make_desc(case, (2,) * low, types_for(row, 0, case), rng_for(), params={**params, **fixed})
            assert dml.Device(feature_level=row.feature_level).validate(desc) == []
            expected = (
                f"{s.c_name}: {name} is NULL, but it is required at {below.c_name}; "
                f"{row.feature_level.c_name} and above support it"
            )
            assert expected in device.validate(desc)
            added += 1
    assert added or row == lower_row or _same_cells(row, lower_row), "a row that adds nothing"


def _same_cells(row, lower_row):
    """Some pages repeat a row unchanged at a higher level (e.g. when the operator's other rules changed)."""
    return all(row.tensors[n] == lower_row.tensors[n] for n in row.tensors)
