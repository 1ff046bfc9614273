"""A model on a device: operators created and compiled, bindings checked, commands executed in order.

Each resource is a ``bytearray``; a dispatch binds each tensor with a :class:`~opendml.BufferBinding` over its
resource's bytes from the binding's offset (``elementOffset`` x the resource's element size) to the end, so the
operator reads and writes through its tensor descs' DataType, Sizes and Strides, and DirectML's binding rules
(size, 16-byte alignment, hazards) apply. Resource contents persist from command to command.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO, TypeVar

import numpy as np

from ..binding import Bound, BufferBinding
from ..device import CompiledOperator, Device
from ..errors import DMLError, InvalidArgumentError
from ..validation import problems_of
from .descs import locate_problem
from .errors import Diagnostics, InvalidModel, ModelError, gather
from .model import Dispatch, Dispatchable, Model, Print, TensorBinding
from .printing import PrintFormat, print_text, write_file

__all__ = ["Session"]

T = TypeVar("T")


class Session:
    """``model`` made ready on ``device``: every problem a run would meet before executing is raised here.

    Creating a session validates each operator at the device's feature level (all problems, located in the
    model), compiles it with its execution flags, and binds every dispatch to scratch buffers of the resources'
    sizes to check sizes, alignment and hazards. ``run`` then executes the commands.
    """

    def __init__(self, model: Model, device: Device, diagnostics: Diagnostics | None = None):
        diagnostics = Diagnostics() if diagnostics is None else diagnostics
        self.model = model
        self.compiled: dict[str, CompiledOperator] = {}
        for name, dispatchable in model.dispatchables.items():
            with diagnostics.item():
                self.compiled[name] = _compile(device, dispatchable)
        # Zeros the system gives lazily: checking a binding reads nothing, so a huge resource costs no memory yet.
        scratch = {name: np.zeros(resource.size_in_bytes, np.uint8) for name, resource in model.resources.items()}
        for command in model.commands:
            compiled = isinstance(command, Dispatch) and self.compiled.get(command.dispatchable.name)
            if compiled:
                with diagnostics.item():
                    _check_bindings(command, compiled, scratch)
        diagnostics.check()

    def run(self, out: TextIO, print_format: PrintFormat = PrintFormat.DXDISPATCH) -> list[ModelError]:
        """Execute the commands in order, writing to ``out``; return the writeFile failures.

        As in DxDispatch, a file that cannot be written does not stop the run. A dispatch that fails raises.
        """
        buffers = {name: resource.allocate() for name, resource in self.model.resources.items()}
        failures = []
        for command in self.model.commands:
            if isinstance(command, Dispatch):
                self._dispatch(command, buffers)
            elif isinstance(command, Print):
                resource = command.resource
                out.writelines(print_text(resource, buffers[resource.name], command.verbose, print_format))
            else:
                name = command.resource.name
                try:
                    path = write_file(command.resource, buffers[name], Path(command.target_path), command.dimensions)
                except OSError as error:
                    failures.append(command.node.error(f"cannot write {command.target_path!r}: {error.strerror}"))
                else:
                    out.write(f"Resource '{name}' written to '{path}'\n")
        return failures

    def _dispatch(self, command: Dispatch, buffers: dict[str, bytearray]) -> None:
        inputs, outputs = _inputs_outputs(
            [BufferBinding(buffers[b.resource.name], b.offset) for b in command.bindings], command.bindings
        )
        try:
            self.compiled[command.dispatchable.name].execute(inputs, outputs)
        except DMLError as error:
            raise command.node.error(str(error)) from None


def _compile(device: Device, dispatchable: Dispatchable) -> CompiledOperator:
    """Create and compile the operator; raise every validation problem, each located in the descriptor."""
    problems = problems_of(dispatchable.desc, device.feature_level)
    if problems:
        operator_type = dispatchable.node.first("Type", "type")
        name = dispatchable.desc.schema.c_name
        raise InvalidModel(
            [locate_problem(dispatchable.fields, p, operator_type).error(f"{name}: {p}") for p in problems]
        )
    return device.compile_operator(device.create_operator(dispatchable.desc), dispatchable.execution_flags)


def _check_bindings(command: Dispatch, compiled: CompiledOperator, scratch: dict[str, np.ndarray]) -> None:
    """Bind every tensor as the dispatch will, to buffers of the same sizes, and check DirectML's hazard rules."""

    def bind(binding: TensorBinding) -> Bound:
        plan = compiled.plans[binding.field.c_name]
        try:
            return plan.bind(BufferBinding(scratch[binding.resource.name], binding.offset))
        except InvalidArgumentError as error:
            raise binding.node.error(str(error)) from None

    inputs, outputs = _inputs_outputs(gather(bind, command.bindings), command.bindings)
    try:
        compiled.check_hazards(inputs, outputs)
    except InvalidArgumentError as error:
        raise command.node.require("bindings").error(str(error)) from None


def _inputs_outputs(values: list[T], bindings: tuple[TensorBinding, ...]) -> tuple[list[T], list[T]]:
    """Per-tensor values split into the inputs and the outputs, the two lists ``execute`` takes."""
    return (
        [v for v, b in zip(values, bindings) if b.field.is_input],
        [v for v, b in zip(values, bindings) if b.field.is_output],
    )
