"""Checks against the previous stored audit of the same model (tracking store)."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.model import Evidence, Facts, Hit, Location, PriorAudit
from cardaudit.rules import Rule

PRIOR_FIELDS = {"declared_spdx": "licence_spdx", "declared": "licence_declared"}


def compared_licences(
    prior: PriorAudit, facts: Facts, fields: list[str], case_sensitive: bool = False
) -> tuple[str | None, str | None]:
    """The (before, now) licence values to compare: the first field present on both sides,
    else the declared value on each side (so a licence added or removed shows too)."""

    def norm(value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = " ".join(value.split())
        return value if case_sensitive else value.lower()

    for name in fields:
        before = norm(getattr(prior, PRIOR_FIELDS.get(name, ""), None))
        now = norm(getattr(facts.license, name, None))
        if before is not None and now is not None:
            return before, now
    return norm(prior.licence_declared), norm(facts.license.declared)


def describe(value: str | None) -> str:
    return f"`{value}`" if value else "no licence"


@check("LIC050")
def licence_changed_since_previous_audit(
    evidence: Evidence, facts: Facts, rule: Rule
) -> Iterator[Hit]:
    prior = evidence.previous
    if prior is None:
        raise NotApplicable("no previous stored audit of this model")
    fields = [str(name) for name in rule.param("compare", ["declared_spdx", "declared"])]
    before, now = compared_licences(prior, facts, fields, bool(rule.param("case_sensitive")))
    if before == now:
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
