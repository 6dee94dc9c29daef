"""The likely licence family of a parent model named but not supplied, from its id and the
card line that names it (patterns are data: ``rules/tables/base_families.yaml``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from cardaudit.extract.derivation import pair_bases
from cardaudit.extract.lineage import same_model
from cardaudit.extract.markdown_blocks import card_title
from cardaudit.model import BaseModelRef, Evidence
from cardaudit.rules import load_table


@dataclass(frozen=True)
class Family:
    name: str
    licence: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class LikelyParent:
    """A named parent without files, and the licence family its id (or card line) suggests."""

    ref: BaseModelRef
    family: Family
    #: "id" when the parent's id matched, "card" when the card line naming it did.
    basis: str


@cache
def families() -> tuple[Family, ...]:
    return tuple(
        Family(str(item["name"]), str(item["licence"]), re.compile(item["pattern"], re.I))
        for item in load_table("base_families").get("families") or ()
    )


def family_of(text: str) -> Family | None:
    return next((f for f in families() if f.pattern.search(text)), None)


def _card_line(evidence: Evidence, ref: BaseModelRef) -> str:
    card = evidence.card
    if card is None or ref.location.path != card.path or not ref.location.line:
        return ""
    return card.file.excerpt(ref.location.line, 400)


def missing_bases(evidence: Evidence) -> list[BaseModelRef]:
    """The bases the repo names (its most authoritative claims) that have no evidence.

    A supplied base whose id matches no name (a local folder) is matched by its card's
    title; supplied bases left unmatched then cover as many names, since ``--base`` given
    once per parent supplies them all (none is reported missing when the counts agree).
    """
    pairs = pair_bases(evidence)
    missing = [pair.ref for pair in pairs if pair.ref and pair.evidence is None]
    spare = [pair.evidence for pair in pairs if pair.ref is None and pair.evidence is not None]
    for base in list(spare):
        title = card_title(base.card) if base.card is not None else None
        ref = next((r for r in missing if title and same_model(r.id, title)), None)
        if ref is not None:
            missing.remove(ref)
            spare.remove(base)
    return [] if len(spare) >= len(missing) else missing


def likely_parents(evidence: Evidence) -> list[LikelyParent]:
    """Every parent named but not supplied whose licence family can be inferred (from the
    card line only when that line names no other parent)."""
    names = [pair.ref.id.rsplit("/", 1)[-1].lower() for pair in pair_bases(evidence) if pair.ref]
    found = []
    for ref in missing_bases(evidence):
        family = family_of(ref.id)
        basis = "id"
        if family is None:
            line = _card_line(evidence, ref)
            own = ref.id.rsplit("/", 1)[-1].lower()
            if any(name != own and name in line.lower() for name in names):
                continue
            family, basis = family_of(line), "card"
        if family is not None:
            found.append(LikelyParent(ref, family, basis))
    return found
