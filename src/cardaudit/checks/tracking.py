"""Checks against the previous stored audit of the same model (tracking store)."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule

#: Index of each comparable fact in a ``(declared_spdx, declared)`` pair.
FIELDS = {"declared_spdx": 0, "declared": 1}
LicencePair = tuple[str | None, str | None]


def compared_licences(
    before: LicencePair, now: LicencePair, fields: list[str], case_sensitive: bool = False
) -> tuple[str | None, str | None]:
    """The (before, now) licence values to compare, from ``(declared_spdx, declared)`` pairs:
    the first field present on both sides, else the declared values (so a licence that was
    added or removed counts as a change)."""

    def norm(value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = " ".join(value.split())
        return value if case_sensitive else value.lower()

    for name in fields:
        index = FIELDS.get(name)
        if index is None:
            continue
        old, new = norm(before[index]), norm(now[index])
        if old is not None and new is not None:
            return old, new
    return norm(before[1]), norm(now[1])


def licence_changed(before: LicencePair, now: LicencePair, rule: Rule) -> bool:
    """Whether two audits' licences differ, by LIC050's parameters."""
    fields = [str(name) for name in rule.param("compare", ["declared_spdx", "declared"])]
    old, new = compared_licences(before, now, fields, bool(rule.param("case_sensitive")))
    return old != new


def describe(value: str | None) -> str:
    return f"`{value}`" if value else "no licence"


@check("LIC050")
def licence_changed_since_previous_audit(
    evidence: Evidence, facts: Facts, rule: Rule
) -> Iterator[Hit]:
    prior = evidence.previous
    if prior is None:
        raise NotApplicable("no previous stored audit of this model")
    before = (prior.licence_spdx, prior.licence_declared)
    if not licence_changed(before, (facts.license.declared_spdx, facts.license.declared), rule):
        return
    old = prior.licence_declared or prior.licence_spdx
    new = facts.license.declared or facts.license.declared_spdx
    revision = (prior.revision or "unknown revision")[:12]
    card = evidence.card
    location = (
        Location(card.path, card.key_line("license") or 1, "license")
        if card is not None
        else Location(None)
    )
    yield Hit(
        f"licence changed from {describe(old)} (audit #{prior.audit_id} of {revision}, "
        f"{prior.audited_at:%Y-%m-%d}) to {describe(new)}: legal review must see this",
        location,
        f"license: {new}" if new else None,
    )
