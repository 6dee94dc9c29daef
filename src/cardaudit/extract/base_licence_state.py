"""What is known of a base model's licence (a ``facts.license.base`` item): its licence table
entry, or that it states none. Shared by the base-dependent checks and the obligations list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardaudit.extract.licence_table import LicenceInfo, lookup

UNKNOWN_IDS = ("other", "unknown")


def base_licence_info(base: Mapping[str, Any]) -> LicenceInfo | None:
    """The licence table entry of a base: its declared licence when the table knows it and it
    is not ``other`` / ``unknown``, else its identified licence file."""
    declared = lookup(base.get("declared"))
    if declared is not None and declared.hub_id not in UNKNOWN_IDS:
        return declared
    return lookup(base.get("identified"))


def base_without_licence(base: Mapping[str, Any]) -> bool:
    """Whether the base states no licence at all: no (or ``unknown``) ``license:`` and no
    licence file. No licence grants nothing: all rights are reserved."""
    declared = str(base.get("declared") or "").strip().lower()
    return declared in ("", "unknown") and not base.get("files")
