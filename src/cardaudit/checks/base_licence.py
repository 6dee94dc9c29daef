"""LIC030: the likely licence of a parent named but not supplied (an informed guess, marked
"base not verified"; LIC007 checks the real licence when the base is given)."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.base_family import LikelyParent, likely_parents
from cardaudit.extract.licence_table import expression_ids, lookup, same_licence
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule


@check("LIC030")
def likely_parent_licence(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    parents = likely_parents(evidence)
    if not parents:
        raise NotApplicable("no parent named without its files, or none whose family is known")
    declared = [i for i in expression_ids(facts.license.declared) if i.lower() != "unknown"]
    if not declared:
        raise NotApplicable("no declared licence")
    card = evidence.card
    where = (
        Location(card.path, card.key_line("license") or 1, "license")
        if card is not None
        else Location(None)
    )
    by_family: dict[str, list[LikelyParent]] = {}
    for parent in parents:
        by_family.setdefault(parent.family.licence, []).append(parent)
    for family_licence, group in by_family.items():
        info = lookup(family_licence)
        if info is None:
            continue
        refused = [
            d
            for d in declared
            if not info.allows_derivative(lookup(d).hub_id if lookup(d) else d.lower())
            and not same_licence(d, family_licence)
        ]
        if not refused:
            continue
        family = group[0].family.name
        names = ", ".join(
            f"{p.ref.id} ({p.ref.location.display()})" if p.ref.location.path else p.ref.id
            for p in group
        )
        allowed = ", ".join(info.derivatives) or "none"
        yield Hit(
            f"likely {family} derivative; base not verified: the parent(s) {names} suggest "
            f"the {info.name}, under which a derivative may not be licensed "
            f"`{', '.join(refused)}` (allowed: {allowed}); supply the base(s) with --base so "
            "LIC007 checks the real licence",
            where,
            f"license: {facts.license.declared}",
        )
