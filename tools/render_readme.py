"""Regenerate the README's generated blocks (operator table, constraints, deviations) from the code."""

import pathlib

from opendml._docs import render

readme = pathlib.Path(__file__).resolve().parent.parent / "README.md"
readme.write_text(render(readme.read_text()))
