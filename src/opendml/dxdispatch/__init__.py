"""Run DxDispatch's JSON operator models on opendml, on any machine.

DxDispatch is DirectML's tool for running operators described in JSON: resources (byte buffers with initial
values), dispatchables (an operator type and its descriptor, with the C field names) and commands (dispatch,
print, writeFile). The format and every default are in the README, section "Running JSON operator models";
in code::

    from opendml import Device
    from opendml.dxdispatch import PrintFormat, Session, load_model

    session = Session(load_model("model.json"), Device())
    session.run(sys.stdout, PrintFormat.NUMBERS)
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from .errors import Diagnostics, InvalidModel, Location, ModelError
from .model import Model, load_model
from .printing import PrintFormat
from .runner import Session

__all__ = [
    "Diagnostics",
    "InvalidModel",
    "Location",
    "ModelError",
    "Model",
    "load_model",
    "PrintFormat",
    "Session",
    "models_dir",
    "bundled_models",
]


def models_dir() -> Path:
    """The folder of the example models installed with opendml (``opendml/models``)."""
    return Path(str(importlib.resources.files("opendml").joinpath("models")))


def bundled_models() -> list[Path]:
    """Every bundled example model, by name."""
    return sorted(models_dir().glob("*.json"))
