"""What adopting this model obliges you to do: the conditions of the declared licence, of the
base models' licences (not of a base the publisher owns: its licence does not pass to
recipients of a model its owner relicensed), of the parents' likely licences and of the
additional terms the repo states — one list a lawyer reads first (``facts.license.obligations``).

Sentences and who each duty binds are data (``rules/tables/obligations.yaml``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from cardaudit.extract.base_family import LikelyParent
from cardaudit.extract.base_licence_state import base_licence_info, base_without_licence
from cardaudit.extract.licence_table import LicenceInfo, expression_ids, lookup
from cardaudit.extract.licensor import owns_base
from cardaudit.model import LicenceFacts
from cardaudit.rules import load_table


@cache
def _table() -> Mapping[str, Any]:
    return load_table("obligations")


def _format(template: str, **values: Any) -> str:
    text = str(template)
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    return " ".join(text.split())


def licence_obligations(info: LicenceInfo, source: str) -> list[dict[str, Any]]:
    """The duties of one licence table entry, as obligations."""
    table = _table()
    found = []
    family = (table.get("families") or {}).get(info.family)
    if family:
        found.append(
            {
                "duty": family["duty"],
                "detail": _format(family["detail"], name=info.name),
                "source": source,
                "binds": family["binds"],
            }
        )
    for duty, value in info.duties.items():
        spec = (table.get("duties") or {}).get(duty)
        if not spec or not value:
            continue
        if duty == "ship_text" and info.duty("link_licence"):
            continue  # a link suffices: the link_licence sentence says so
        found.append(
            {
                "duty": duty,
                "detail": _format(spec["detail"], name=info.name, value=value),
                "source": source,
                "binds": spec["binds"],
            }
        )
    for item in (table.get("licences") or {}).get(info.hub_id) or ():
        found.append({**item, "detail": _format(item["detail"]), "source": source})
    return found


def _where(item: Mapping[str, Any]) -> str:
    where = f"{item['path']}:{item['line']}" if item.get("line") else str(item.get("path"))
    return where if item.get("repo", "model") == "model" else f"{item['repo']}:{where}"


def term_obligations(terms: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Obligations from the additional terms found in the card, code README and gating."""
    table = _table().get("terms") or {}
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for term in terms:
        if term["kind"] in table:
            grouped.setdefault(term["kind"], []).append(term)
    found = []
    for kind, items in grouped.items():  # one obligation per kind, every place it is stated
        spec = table[kind]
        first = items[0]["text"]
        text = first if len(first) <= 160 else first[:159] + "…"
        places = list(dict.fromkeys(_where(item) for item in items))
        source = ", ".join(places[:4]) + (f" (+{len(places) - 4} more)" if len(places) > 4 else "")
        found.append(
            {
                "duty": spec["duty"],
                "detail": _format(spec["detail"], text=text),
                "source": source,
                "binds": spec["binds"],
            }
        )
    return found


def _declares_unknown(declared: str | None) -> bool:
    infos = [lookup(i) for i in expression_ids(declared)]
    return not infos or any(i is None or i.hub_id in ("other", "unknown") for i in infos)


def unknown_licence_obligations(licence: LicenceFacts) -> list[dict[str, Any]]:
    """A licence file no known licence matches, or a declared licence the table does not
    know, is read by a person: the duties listed cannot be all of its terms (unchecked is
    not passed)."""
    spec = (_table().get("unknown") or {}).get("read_licence")
    if not spec:
        return []
    unknown = [m.path for m in licence.files if m.repo == "model" and m.identified is None]
    if not unknown and licence.declared_link and _declares_unknown(licence.declared):
        unknown = [str(licence.declared_link)]  # `license: other` with its `license_link`
    if not unknown:
        return []
    return [
        {
            "duty": "read_licence",
            "detail": _format(spec["detail"], files=", ".join(unknown)),
            "source": ", ".join(unknown),
            "binds": spec["binds"],
        }
    ]


def base_gap_obligations(base: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A base whose licence is not known: one that states none reserves all rights (get its
    author's permission); one no known licence matches must be read in full."""
    table = _table().get("unknown") or {}
    kind = "base_no_licence" if base_without_licence(base) else "read_base_licence"
    spec = table.get(kind)
    if not spec:
        return []
    name = str(base.get("name"))
    files = ", ".join(str(f["path"]) for f in base.get("files") or ()) or "its card"
    return [
        {
            "duty": kind,
            "detail": _format(spec["detail"], name=name, files=files),
            "source": f"base model {name}: {base.get('declared') or 'no licence'}",
            "binds": spec["binds"],
        }
    ]


def obligation_facts(
    licence: LicenceFacts,
    terms: Sequence[Mapping[str, Any]],
    likely: Sequence[LikelyParent] = (),
) -> tuple[dict[str, Any], ...]:
    """The obligations list, each (duty, detail) once, declared licence first."""
    found: list[dict[str, Any]] = []
    for hub_id in expression_ids(licence.declared):
        info = lookup(hub_id)
        if info is not None:
            found += licence_obligations(info, f"declared licence {hub_id} (licence table)")
    for base in licence.base:
        info = base_licence_info(base)
        if owns_base(licence.publisher, base.get("name"), info):
            continue  # the publisher's own base: its licence does not pass to recipients
        if info is not None:
            found += licence_obligations(info, f"base model {base.get('name')}: {info.hub_id}")
        else:
            found += base_gap_obligations(base)
    for parent in likely:
        info = lookup(parent.family.licence)
        if info is not None:
            source = (
                f"likely {parent.family.name} parent {parent.ref.id} (inferred from its "
                f"{'id' if parent.basis == 'id' else 'card line'}; not verified)"
            )
            found += licence_obligations(info, source)
    found += term_obligations(terms)
    found += unknown_licence_obligations(licence)
    titles = _table().get("titles") or {}
    unique: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for item in found:
        key = (item["duty"], item["detail"])
        if key not in seen:
            seen.add(key)
            title = titles.get(item["duty"]) or str(item["duty"]).replace("_", " ").capitalize()
            unique.append({**item, "title": title})
    return tuple(unique)
