"""The one validator: a descriptor against its operator's table at a device's feature level.

It plays the part of ``IDMLDevice::CreateOperator`` plus the debug layer: every problem is reported as a
:class:`~opendml.problems.Problem` located at its field; :func:`operator_problems` gives the messages, each
naming the operator, the field, the rule and (where it matters) the feature level.
"""

from __future__ import annotations

from .enums import FeatureLevel
from .problems import Problem
from .schema import OperatorDesc

__all__ = ["problems_of", "operator_problems"]


def problems_of(desc: OperatorDesc, feature_level: FeatureLevel, *, fused: bool = False) -> list[Problem]:
    """Every rule ``desc`` breaks on a device at ``feature_level``; empty when valid.

    ``fused``: ``desc`` is a fused activation inside a host operator; its tensors are NULL and its tensor
    rules are the host's, so only its own fields and the rules that relate no tensor are checked.
    """
    schema = desc.schema
    if feature_level < schema.introduced:
        return [Problem(
            f"the operator was introduced in {schema.introduced.c_name}, but the device's feature level "
            f"is {feature_level.c_name}")]  # fmt: skip
    problems = []
    for spec in schema.fields:
        if not (fused and spec.is_tensor):
            problems += spec.kind.problems(desc, spec, feature_level)
    for rule in schema.constraints:
        if fused and any(schema.field(name).is_tensor for name in rule.fields()):
            continue  # a rule relating tensors: a fused activation has none (its host's are checked)
        check_at = getattr(rule, "check_at", None)  # a rule that depends on the feature level
        problems += check_at(desc, feature_level) if check_at else rule.check(desc)
    return problems


def operator_problems(desc: OperatorDesc, feature_level: FeatureLevel) -> list[str]:
    """The messages of :func:`problems_of`, each prefixed with the operator's C name."""
    return [f"{desc.schema.c_name}: {problem}" for problem in problems_of(desc, feature_level)]
