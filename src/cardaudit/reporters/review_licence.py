"""The licence part of the review reports: what adopting the model obliges you to do, where
each licence was found, and additional terms, as rows in words (reporters/review.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardaudit.model import Report

BINDS = {
    "user": "anyone who uses the model",
    "redistributor": "anyone who shares the model or a derivative",
}
TERM_KINDS = {
    "aup": "acceptable-use policy",
    "gating": "access gated on the Hub",
    "registration": "registration required",
    "mau": "monthly-active-user limit",
    "territory": "territorial restriction",
    "research_only": "research use only",
    "non_commercial": "no commercial use",
    "commercial_permission": "commercial use needs permission",
}


def _fields(item: Any, names: tuple[str, ...]) -> Mapping[str, Any]:
    """A JSON object (facts read back from a store) or a dataclass (facts from this run)."""
    if isinstance(item, Mapping):
        return item
    return {name: getattr(item, name, None) for name in names}


def obligations(report: Report) -> tuple[Mapping[str, str], ...]:
    """``facts.license.obligations`` (what adopting the model obliges you to do) when the
    audit produced it; each row says who it binds in words."""
    licence = report.facts.license
    items = getattr(licence, "obligations", None) or report.facts.extra.get("obligations") or ()
    rows = []
    for item in items:
        data = _fields(item, ("duty", "title", "detail", "source", "binds"))
        binds = str(data.get("binds") or "")
        rows.append(
            {
                # the reader's name for the duty; the id (``ship_text``) stays in the JSON
                "duty": str(data.get("title") or data.get("duty") or ""),
                "detail": str(data.get("detail") or ""),
                "source": str(data.get("source") or ""),
                "binds": BINDS.get(binds, binds or "—"),
            }
        )
    return tuple(rows)


def licence_rows(report: Report) -> tuple[tuple[str, str, str], ...]:
    """(where, licence, what it means) in words."""
    licence = report.facts.license
    rows: list[tuple[str, str, str]] = []
    declared = licence.declared or "no licence declared"
    said = []
    if licence.declared_spdx and licence.declared_spdx != licence.declared:
        said.append(f"SPDX identifier {licence.declared_spdx}")
    if licence.declared_name:
        said.append(f"named “{licence.declared_name}”")
    if licence.declared_link:
        said.append(f"linked to {licence.declared_link}")
    rows.append(("model card (license)", declared, "; ".join(said) or "as declared in the card"))
    for match in licence.files:
        where = match.path if match.repo == "model" else f"{match.repo} repo: {match.path}"
        what = match.identified or "not identified"
        detail = f"identified with {match.confidence:.0%} confidence"
        if match.also:
            detail += f"; also contains {', '.join(match.also)}"
        if not match.complete:
            detail += "; the text is incomplete"
        if match.note:
            detail += f"; {match.note}"
        rows.append((where, what, detail))
    code = licence.code_repo
    if code:
        rows.append(
            (
                f"code repo {code.get('id') or ''}".strip(),
                str(code.get("identified") or code.get("declared") or "not identified"),
                "the licence of the code the model is run or trained with",
            )
        )
    for item in licence.prose:
        identified = item.get("identified") or item.get("text") or "a licence statement"
        line = item.get("line")
        rows.append(
            (f"card prose{f', line {line}' if line else ''}", str(identified), "stated in prose")
        )
    for base in licence.base:
        rows.append(
            (
                f"base model {base.get('id') or ''}".strip(),
                str(base.get("licence") or base.get("declared") or "licence unknown"),
                "the licence the model is derived under",
            )
        )
    return tuple(rows)


def additional_terms(report: Report) -> tuple[tuple[str, str, str], ...]:
    terms = getattr(report.facts.license, "additional_terms", None) or ()
    rows = []
    for term in terms:
        data = _fields(term, ("kind", "text", "path", "line"))
        kind = str(data.get("kind") or "")
        where = f"{data.get('path') or ''}:{data.get('line') or ''}".strip(":")
        rows.append((TERM_KINDS.get(kind, kind.replace("_", " ")), str(data.get("text")), where))
    return tuple(rows)
