"""The licence knowledge table (``rules/tables/licences.yaml``) and SPDX normalisation."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from cardaudit.model import frozen_mapping
from cardaudit.rules import load_table


@dataclass(frozen=True)
class LicenceInfo:
    hub_id: str
    spdx: str | None
    name: str
    family: str
    duties: Mapping[str, Any] = field(default_factory=frozen_mapping)
    derivatives: tuple[str, ...] = ()
    hub: bool = True
    ambiguous: bool = False
    licensor_orgs: tuple[str, ...] = ()

    def duty(self, name: str) -> Any:
        return self.duties.get(name)

    def allows_derivative(self, hub_id: str) -> bool:
        return "*" in self.derivatives or hub_id in self.derivatives


@cache
def licence_table() -> Mapping[str, LicenceInfo]:
    """Every known Hub licence id, lower-case, mapped to what we know about it."""
    raw = load_table("licences")["licences"]
    return frozen_mapping(
        {
            str(hub_id).lower(): LicenceInfo(
                hub_id=str(hub_id).lower(),
                spdx=entry.get("spdx"),
                name=entry.get("name", str(hub_id)),
                family=entry.get("family", "custom"),
                duties=frozen_mapping(entry.get("duties") or {}),
                derivatives=tuple(entry.get("derivatives") or ()),
                hub=bool(entry.get("hub", True)),
                ambiguous=bool(entry.get("ambiguous", False)),
                licensor_orgs=tuple(entry.get("licensor_orgs") or ()),
            )
            for hub_id, entry in raw.items()
        }
    )


@cache
def by_spdx() -> Mapping[str, LicenceInfo]:
    """Table entries keyed by lower-case SPDX id / LicenseRef."""
    return frozen_mapping(
        {info.spdx.lower(): info for info in licence_table().values() if info.spdx}
    )


def lookup(licence_id: str | None) -> LicenceInfo | None:
    """Table entry for a Hub id or an SPDX id (case-insensitive)."""
    if not licence_id:
        return None
    key = licence_id.strip().lower()
    return licence_table().get(key) or by_spdx().get(key)


def same_licence(a: str | None, b: str | None) -> bool:
    """Whether two ids (Hub or SPDX, any case) name the same licence."""
    if not a or not b:
        return False
    info_a, info_b = lookup(a), lookup(b)
    if info_a is not None and info_b is not None:
        return info_a.hub_id == info_b.hub_id
    return a.strip().lower() == b.strip().lower()


def expression_ids(expression: str | None) -> list[str]:
    """The licence ids in a declared value (``mit``, ``apache-2.0 AND mit``…)."""
    if not expression:
        return []
    parts = re.split(r"\s+(?:AND|OR|WITH)\s+|[()]", expression, flags=re.IGNORECASE)
    return [part.strip() for part in parts if part.strip()]


def normalise_spdx(expression: str) -> tuple[str | None, str | None]:
    """(SPDX expression, error): a Hub id via the table, else a parsed SPDX expression."""
    info = lookup(expression)
    if info is not None:
        return info.spdx, None
    from license_expression import ExpressionError, get_spdx_licensing

    try:
        parsed = get_spdx_licensing().parse(expression, validate=True, strict=True)
    except ExpressionError as exc:
        return None, str(exc)
    except Exception as exc:  # license-expression raises odd types on some inputs
        return None, f"cannot parse {expression!r}: {exc}"
    return (str(parsed) if parsed is not None else None), None
