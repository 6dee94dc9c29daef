"""LIC rules: the declared licence, the shipped licence texts, and how they agree."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.licence_table import lookup, normalise_spdx
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule

URL = re.compile(r"^https?://\S+$", re.IGNORECASE)


def _card_location(evidence: Evidence, key: str) -> Location:
    card = evidence.card
    if card is None:
        return Location(None)
    return Location(card.path, card.key_line(key) or 1, key)


def _needs_card(evidence: Evidence) -> None:
    if evidence.card is None or evidence.card.error:
        raise NotApplicable("no readable model card")


@check("LIC001")
def declared_licence_present(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_card(evidence)
    if not facts.license.declared:
        yield Hit(
            "the model card declares no licence (no `license:` in its YAML front matter)",
            Location(evidence.card.path, 1, "license"),
        )


@check("LIC002")
def declared_licence_known(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_card(evidence)
    declared = facts.license.declared
    if not declared:
        raise NotApplicable("no declared licence")
    if lookup(declared) is not None:
        return
    _spdx, error = normalise_spdx(declared)
    if error:
        yield Hit(
            f"`license: {declared}` is neither a Hugging Face licence id nor a valid SPDX "
            f"expression ({error})",
            _card_location(evidence, "license"),
            f"license: {declared}",
        )


@check("LIC003")
def other_licence_named_and_linked(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_card(evidence)
    if (facts.license.declared or "").lower() != "other":
        raise NotApplicable("licence is not `other`")
    location = _card_location(evidence, "license")
    if not facts.license.declared_name:
        yield Hit(
            "`license: other` without `license_name`: readers cannot tell which licence applies",
            location,
            "license: other",
        )
    link = facts.license.declared_link
    if not link:
        yield Hit(
            "`license: other` without `license_link`: the licence terms are not reachable",
            location,
            "license: other",
        )
    elif not URL.match(link) and not evidence.repo.has(link.removeprefix("./").lstrip("/")):
        yield Hit(
            f"`license_link: {link}` is neither a URL nor a file in the repo",
            _card_location(evidence, "license_link"),
            f"license_link: {link}",
        )
