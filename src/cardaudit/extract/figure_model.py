"""A figure stated in prose (parameter count, memory, GPU, precision, context length) and
what every kind of figure shares: the "about / ~" qualifier and the precision of a number."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

APPROX = (
    r"(?P<approx>~\s?|≈\s?|about\s+|approximately\s+|approx\.?\s+|around\s+|roughly\s+"
    r"|nearly\s+|almost\s+|over\s+|under\s+|less\s+than\s+|more\s+than\s+)?"
)
SCALE = {"b": 1e9, "billion": 1e9, "m": 1e6, "million": 1e6, "t": 1e12, "trillion": 1e12}


@dataclass(frozen=True)
class Figure:
    """One figure stated in a card or README."""

    kind: str  # parameters_total | parameters_active | memory | gpu | dtype | context
    value: float
    text: str
    path: str
    line: int
    repo: str = "model"
    approx: bool = False
    precision: float = 0.0  # half a unit of the last stated digit, in the value's unit
    unit: str | None = None
    dtype: str | None = None
    gpu: str | None = None
    count: int | None = None
    #: Cells in the Markdown table row the figure sits in (0 outside tables).
    cells: int = 0
    #: False for a figure about another model (its block's subject, extract/reading.py), or a
    #: code-README figure whose line does not name the model (a family README).
    about_model: bool = True

    def to_json(self) -> dict[str, Any]:
        data = {
            "kind": self.kind,
            "value": self.value,
            "text": self.text,
            "path": self.path,
            "line": self.line,
            "approx": self.approx,
        }
        if self.precision:
            data["precision"] = self.precision
        if self.cells:
            data["cells"] = self.cells
        if not self.about_model:
            data["about_model"] = False
        for key in ("unit", "dtype", "gpu", "count"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.repo != "model":
            data["repo"] = self.repo
        return data


def half_unit(number: str, scale: float) -> float:
    """Half the unit of the last significant digit: "3.3" → 0.05, "35" → 0.5, "400" → 50."""
    if "." in number:
        return 0.5 * scale / 10 ** len(number.split(".", 1)[1])
    zeros = len(number) - len(number.rstrip("0")) if number.strip("0") else 0
    return 0.5 * scale * 10**zeros
