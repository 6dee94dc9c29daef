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


@cache
def _hub_licensing() -> Any:
    """A license-expression parser that takes any id as a symbol (Hub ids such as
    ``llama3.1`` are not SPDX keys)."""
    from license_expression import Licensing

    return Licensing()


def _symbol_key(symbol: Any) -> str:
    inner = getattr(symbol, "license_symbol", None)  # ``mit WITH exception``: the licence
    return str((inner or symbol).key)


def expression_alternatives(expression: str | None) -> list[tuple[str, ...]]:
    """The choices a recipient has under a declared expression, from license-expression's
    parse in disjunctive normal form: each alternative is the licences that apply together
    (``a AND b`` is one alternative of two licences, ``a OR b`` two of one). An expression
    the parser rejects (LIC002 reports it) counts each id as its own alternative, the reading
    that asks most of each."""
    if not expression or not expression.strip():
        return []
    licensing = _hub_licensing()
    try:
        parsed = licensing.dnf(licensing.parse(expression, validate=False, strict=False))
    except Exception:  # license-expression raises several types on malformed input
        return [(part,) for part in expression_ids(expression)]
    if parsed is None:
        return []
    order = {key.lower(): i for i, key in enumerate(expression_ids(expression))}
    branches = parsed.args if isinstance(parsed, licensing.OR) else (parsed,)
    found: list[tuple[str, ...]] = []
    for branch in branches:
        symbols = branch.args if isinstance(branch, licensing.AND) else (branch,)
        keys = sorted(map(_symbol_key, symbols), key=lambda k: order.get(k.lower(), len(order)))
        found.append(tuple(keys))
    return sorted(found, key=lambda keys: [order.get(k.lower(), len(order)) for k in keys])


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
