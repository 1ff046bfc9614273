"""Every place where opendml's Python API differs from ``directml.h``, in one table.

The mirror is otherwise mechanical: ``DML_`` stripped, types PascalCased (``DML_ARGMAX_OPERATOR_DESC`` ->
``ArgmaxOperatorDesc``), fields snake_cased (``InputTensor`` -> ``input_tensor``), enum members without the
type prefix (``TensorDataType.FLOAT32``) and with the header's numeric values. Error messages use the C field
names (``OutputTensor.Sizes[1]``), as DirectML's debug layer does. ``tests/test_tables.py`` checks that each
descriptor follows the naming rule and that every C field not mirrored one to one is listed here.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Deviation", "DEVIATIONS"]


class Deviation(NamedTuple):
    c_api: str
    python_api: str
    why: str


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "UINT AxisCount; const UINT* Axes; (any count plus array pointer)",
        "axes: tuple[int, ...]",
        "A count plus a pointer is one Python sequence; AxisCount is len(axes). The JSON runner still reads and "
        "checks the count member.",
    ),
    Deviation(
        "_Maybenull_ const DML_SCALE_BIAS* ScaleBias (any optional pointer field)",
        "scale_bias: ScaleBias | None = None",
        "NULL is None; optional fields default to None, the only defaults a descriptor has.",
    ),
    Deviation(
        "DML_SCALAR_UNION Min (with DML_TENSOR_DATA_TYPE MinMaxDataType)",
        "min: int | float",
        "The union member is chosen by the data-type field; the value is checked to fit that type exactly.",
    ),
    Deviation(
        "_Maybenull_ const DML_OPERATOR_DESC* FusedActivation (DML_OPERATOR_DESC{Type, Desc})",
        "fused_activation: ActivationXxxOperatorDesc | None = None",
        "A descriptor object knows its operator type, so the {Type, Desc} wrapper carries no information; a fused "
        "activation is the activation's descriptor with its tensors None (NULL).",
    ),
    Deviation(
        "const DML_TENSOR_DESC* XxxTensor (DML_TENSOR_DESC{Type, Desc})",
        "xxx_tensor: BufferTensorDesc",
        "DML_TENSOR_TYPE_BUFFER is the only tensor type, so the wrapper struct carries no information.",
    ),
    Deviation(
        "DML_BUFFER_TENSOR_DESC{DataType, Flags, DimensionCount, Sizes, Strides, TotalTensorSizeInBytes, "
        "GuaranteedBaseOffsetAlignment}",
        "BufferTensorDesc(data_type, sizes, strides=None, total_tensor_size_in_bytes=None, "
        "guaranteed_base_offset_alignment=0, flags=NONE)",
        "DimensionCount is len(sizes); the rarely set Flags moves last so it can default; a None total size "
        "is filled with DMLCalcBufferTensorSize.",
    ),
    Deviation(
        "DML_FEATURE_LEVEL_5_1",
        "FeatureLevel.FL_5_1",
        "Python identifiers cannot start with a digit.",
    ),
    Deviation(
        "DMLCreateDevice1(d3d12Device, flags, minimumFeatureLevel, ...)",
        "Device(feature_level=FL_6_4, flags=NONE)",
        "There is no D3D12 device; feature_level is the level the device behaves as (the highest it supports), "
        "so a lower one reproduces an older DirectML runtime.",
    ),
    Deviation(
        "IDMLDevice::CreateOperator / CompileOperator; IDMLBindingTable + IDMLCommandRecorder::RecordDispatch",
        "Device.create_operator(desc) / compile_operator(op, flags); CompiledOperator.execute(inputs, outputs)",
        "Execution is synchronous on the CPU: binding and dispatch are one call; there are no descriptor heaps, "
        "temporary or persistent resources and no operator initializer.",
    ),
    Deviation(
        "DML_BUFFER_BINDING{ID3D12Resource* Buffer, UINT64 Offset, UINT64 SizeInBytes}",
        "BufferBinding(buffer, offset=0, size_in_bytes=None)",
        "Any C-contiguous Python buffer stands for the D3D12 resource; a None size is the rest of the buffer. "
        "A NumPy array of exactly a packed tensor's dtype and sizes may be bound directly.",
    ),
    Deviation(
        "HRESULT return codes",
        "exceptions: InvalidArgumentError (E_INVALIDARG), UnsupportedError (DXGI_ERROR_UNSUPPORTED), "
        "OperatorNotImplementedError (E_NOTIMPL), each with .hresult",
        "Python reports failure by raising.",
    ),
)
