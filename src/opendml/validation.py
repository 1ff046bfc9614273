"""The one validator: a descriptor against its operator's table at a device's feature level.

It plays the part of ``IDMLDevice::CreateOperator`` plus the debug layer: every problem is reported, each
message names the operator, the field, the rule and (where it matters) the feature level.
"""

from __future__ import annotations

from .enums import TENSOR_DIMENSION_COUNT_MAX1, FeatureLevel, TensorDataType, TensorFlags
from .schema import FieldKind, FieldSpec, OperatorDesc, OperatorSchema
from .tensor import BufferTensorDesc, output_overlap_problem, tensor_desc_problems

__all__ = ["operator_problems"]


def operator_problems(desc: OperatorDesc, feature_level: FeatureLevel) -> list[str]:
    """Every rule ``desc`` breaks on a device at ``feature_level``, as messages; empty when valid."""
    schema = desc.schema
    prefix = f"{schema.c_name}: "
    if feature_level < schema.introduced:
        return [
            f"{prefix}the operator was introduced in {schema.introduced.c_name}, but the device's feature level "
            f"is {feature_level.c_name}"
        ]
    problems = []
    for spec in schema.fields:
        if spec.is_tensor:
            problems += _tensor_problems(schema, spec, getattr(desc, spec.name), feature_level)
    for rule in schema.constraints:
        problems += rule.check(desc)
    return [prefix + p for p in problems]


def _tensor_problems(
    schema: OperatorSchema, spec: FieldSpec, tensor: BufferTensorDesc, feature_level: FeatureLevel
) -> list[str]:
    """One tensor: the rules every buffer tensor obeys, then the "Tensor support" row in force at the level."""
    name = spec.c_name
    problems = [f"{name}.{p}" if p[0].isupper() else f"{name} {p}" for p in tensor_desc_problems(tensor)]
    if tensor.flags & TensorFlags.OWNED_BY_DML:
        problems.append(
            f"{name}.Flags has DML_TENSOR_FLAG_OWNED_BY_DML; opendml binds every tensor at execution and has no "
            "operator initializer for DirectML-owned tensors"
        )
    support = schema.support_row(feature_level).tensors[name]
    # A dimension count outside 1..8 or an UNKNOWN type is already reported above: say it once.
    if 1 <= tensor.dimension_count <= TENSOR_DIMENSION_COUNT_MAX1 and not support.allows_dimension_count(
        tensor.dimension_count
    ):
        later = _first_level(schema, feature_level, name, lambda s: s.allows_dimension_count(tensor.dimension_count))
        problems.append(
            f"{name}.DimensionCount {tensor.dimension_count} is not supported at {feature_level.c_name} "
            f"(supported: {support.dims_text}){later}"
        )
    if tensor.data_type != TensorDataType.UNKNOWN and tensor.data_type not in support.data_types:
        later = _first_level(schema, feature_level, name, lambda s: tensor.data_type in s.data_types)
        problems.append(
            f"{name}.DataType {tensor.data_type.name} is not supported at {feature_level.c_name} "
            f"(supported: {support.types_text}){later}"
        )
    if spec.kind is FieldKind.OUTPUT_TENSOR and not problems:  # the overlap proof needs a well-formed tensor
        overlap = output_overlap_problem(tensor)
        if overlap:
            problems.append(f"{name}: {overlap}; an output may not write one address twice")
    return problems


def _first_level(schema: OperatorSchema, feature_level: FeatureLevel, c_name: str, accepts) -> str:
    for support_row in reversed(schema.support):  # lowest level first
        if support_row.feature_level > feature_level and accepts(support_row.tensors[c_name]):
            return f"; {support_row.feature_level.c_name} and above support it"
    return ""
