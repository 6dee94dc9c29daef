"""LIC007: what a base model's licence grants a derivative (the declared licence, read as an
SPDX expression; NoDerivatives bases; bases without a licence; the publisher's own base)."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.base_inputs import (
    base_licence_gap,
    checked_or_missing,
    require_bases,
    unread_licence_files,
)
from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.base_licence_state import base_licence_info, base_without_licence
from cardaudit.extract.licence_table import (
    LicenceInfo,
    expression_alternatives,
    lookup,
    same_licence,
)
from cardaudit.extract.licensor import basis, owns_base
from cardaudit.model import Evidence, Facts, Hit, Location, RepoSnapshot
from cardaudit.rules import Rule


def _card_location(evidence: Evidence, key: str) -> Location:
    card = evidence.card
    if card is None:
        return Location(None)
    return Location(card.path, card.key_line(key) or 1, key)


@check("LIC007")
def derivative_licence_allowed(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    what = "whether the base licence allows the declared licence"
    require_bases(evidence, what)
    if not facts.license.base:
        raise NotApplicable("no base model given (--base)")
    alternatives = expression_alternatives(facts.license.declared)
    alternatives = [a for a in alternatives if not all(i.lower() == "other" for i in a)]
    if not alternatives:
        raise NotApplicable("no declared licence")
    hits = _grant_hits(evidence, facts, alternatives)
    yield from checked_or_missing(evidence, hits, what, facts)


def _derivation_location(evidence: Evidence) -> Location:
    card = evidence.card
    if card is not None and card.key_line("base_model"):
        return _card_location(evidence, "base_model")
    return _card_location(evidence, "license")


def _grant_hits(
    evidence: Evidence, facts: Facts, alternatives: list[tuple[str, ...]]
) -> Iterator[Hit]:
    """What each base's licence does not grant the declared licence. ``a AND b`` keeps the
    base's terms when one of the two is a licence the base allows (both bind the recipient);
    under ``a OR b`` the recipient may choose either, so each alternative must keep them."""
    publisher = facts.license.publisher
    declared = f"license: {facts.license.declared}"
    snapshots = [base.repo for base in evidence.base]
    for index, base in enumerate(facts.license.base):
        info = base_licence_info(base)
        name = base["name"]
        if info is None:
            if not owns_base(publisher, name, None):
                snapshot = snapshots[index] if index < len(snapshots) else None
                yield from _unknown_grant_hits(evidence, facts, base, snapshot, alternatives)
            continue
        owner = owns_base(publisher, name, info)
        if info.duty("no_adaptations"):
            if owner:
                continue  # the rights holder may share adaptations of its own work
            yield Hit(
                f"the base model {name} is under {info.name}, which grants no right to share "
                "adapted material: a fine-tune, merge or other modification of it may not be "
                f"published under any licence, `{facts.license.declared}` included",
                _derivation_location(evidence),
                _derivation_evidence(evidence, declared),
            )
            continue
        refused = [a for a in alternatives if not _keeps_base_terms(info, base, a)]
        if not refused:
            continue
        licences = ", ".join(f"`{' AND '.join(a)}`" for a in refused)
        allowed = ", ".join(info.derivatives) or "none (no derivatives may be shared)"
        if owner:
            yield Hit(
                f"{publisher.get('org')} publishes the base model {name} ({info.name}) itself "
                f"and is its licensor ({basis(publisher)}): a rights holder is not bound by its "
                f"own public licence and may relicense its own work, so recipients of this "
                f"model get {licences}, not the {info.name} terms of its base",
                _card_location(evidence, "license"),
                declared,
                severity="info",
            )
            continue
        yield Hit(
            f"the base model {name} is under {info.name} ({info.family}); a derivative "
            f"may not be relicensed as {licences} (allowed: {allowed})",
            _card_location(evidence, "license"),
            declared,
        )


def _unknown_grant_hits(
    evidence: Evidence,
    facts: Facts,
    base: dict,
    snapshot: RepoSnapshot | None,
    alternatives: list[tuple[str, ...]],
) -> Iterator[Hit]:
    """A base whose licence the table does not know. No licence at all reserves every right
    (the copyright default), and an unknown licence grants no known right to relicense: both
    are errors by the same standard as every LIC007 verdict, the terms visible with the model
    (a private grant from the base's author is a waiver with its reason). A licence file that
    could not be read at all yields nothing here: the rule ends not_checked
    (``checked_or_missing``)."""
    name = base["name"]
    declared = f"license: {facts.license.declared}"
    if base_without_licence(base):
        yield Hit(
            f"the base model {name} declares no licence and ships no licence file: without a "
            "licence all rights are reserved, so nothing grants the right to redistribute it "
            f"or to license a derivative as `{facts.license.declared}`",
            _card_location(evidence, "license"),
            declared,
        )
        return
    if unread_licence_files(base, snapshot):
        return
    kept = [a for a in alternatives if any(same_licence(i, base.get("declared")) for i in a)]
    if len(kept) == len(alternatives):
        return  # every alternative keeps the base's own (unknown) licence
    gap = base_licence_gap(base, snapshot)
    yield Hit(
        f"the base model {name} {gap}: no known term of it allows a derivative to be "
        f"relicensed as `{facts.license.declared}`; read the base licence",
        _card_location(evidence, "license"),
        declared,
    )


def _keeps_base_terms(info: LicenceInfo, base: dict, alternative: tuple[str, ...]) -> bool:
    """Whether one alternative of the declared expression keeps the base licence: one of the
    licences that apply together is the base's own, or one the base allows a derivative."""
    base_licence = base.get("declared") or base.get("identified")
    for licence in alternative:
        target = lookup(licence)
        hub_id = target.hub_id if target else licence.lower()
        if info.allows_derivative(hub_id) or same_licence(licence, info.hub_id):
            return True
        if same_licence(licence, base_licence):
            return True
    return False


def _derivation_evidence(evidence: Evidence, fallback: str) -> str:
    card = evidence.card
    value = card.metadata.get("base_model") if card is not None else None
    if isinstance(value, str) and value.strip():
        return f"base_model: {value.strip()}"
    return fallback
