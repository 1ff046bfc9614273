"""The operator table: every operator opendml implements, declared once, in its family's module.

Each class mirrors a ``DML_*_OPERATOR_DESC`` of directml.h field for field (snake_case names; a C count plus
pointer pair such as AxisCount + Axes is one tuple). Its declaration carries what the DirectML doc page says:
the feature level the operator arrived in ("Availability"), its "Tensor support" tables, one row per
"DML_FEATURE_LEVEL_x and above" (transcribed as printed), its "Tensor constraints", and whether it may run in
place. Validation, execution, the JSON runner, the functional layer, the tests and the README read these
declarations (:mod:`opendml.schema`).
"""

from __future__ import annotations

from ..schema import REGISTRY
from . import activation, element_wise, element_wise_logical, reduction

# Every listing (the README's table, messages, the tests) walks the operators in directml.h's order.
for _type in sorted(REGISTRY, key=int):
    REGISTRY[_type] = REGISTRY.pop(_type)

__all__ = sorted(schema.desc_class.__name__ for schema in REGISTRY.values())

globals().update({schema.desc_class.__name__: schema.desc_class for schema in REGISTRY.values()})
del activation, element_wise, element_wise_logical, reduction
