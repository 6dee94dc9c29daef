"""ATT rules: notice and attribution duties that the licence puts on redistributors."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.licence_table import lookup
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule


@check("ATT001")
def licence_text_shipped(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    info = lookup(facts.license.declared)
    if info is None or not info.duty("ship_text"):
        raise NotApplicable("declared licence does not require shipping its text")
    readable = [m for m in facts.license.files if m.identified is not None or m.note is None]
    if not readable:
        card = evidence.card
        yield Hit(
            f"{info.name} requires a full copy of the licence with the model, but the repo ships "
            "no LICENSE file",
            Location(
                card.path if card else None, card.key_line("license") if card else None, "license"
            ),
        )
