"""CLM rules: benchmark scores, speed figures and superiority claims stated without the
method to check them.

A claim is not called false: it is unverifiable as stated. Severity is info, or warning when
many checklist items (rules/tables/claims.yaml) are undisclosed; a superiority claim is a
warning when it is the card's headline. Only claims about the audited model or the page are
charged (``Claim.charged``); those of an original card a converted repo carries are info,
"inherited from the original card". A claim stated in several places is one finding.
"""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.checks.repeats import also_stated
from cardaudit.model import Claim, Evidence, Facts, Hit, Location, Severity
from cardaudit.rules import Rule


def _severity(claim: Claim, rule: Rule) -> Severity:
    return "warning" if len(claim.missing) >= int(rule.param("warning_when_missing", 3)) else "info"


def _values(claim: Claim, limit: int = 4) -> str:
    shown = "; ".join(claim.values[:limit])
    return shown + (f"; … ({len(claim.values)} in all)" if len(claim.values) > limit else "")


def _claims(facts: Facts, kinds: tuple[str, ...]) -> list[Claim]:
    of_kind = [c for c in facts.claims if c.kind in kinds]
    claims = [c for c in of_kind if c.charged]
    if not claims:
        others = f" ({len(of_kind)} about other models)" if of_kind else ""
        raise NotApplicable(
            f"no {' / '.join(kinds)} claims{' about this model' if others else ''}{others}"
        )
    return claims


def _hit(claim: Claim, message: str, severity: Severity | None) -> Hit:
    """The finding of one claim: inherited ones are info; other places listed in ``also``
    and named by file in the message (no lines: a message is part of a finding's identity)."""
    first = Location(claim.path, claim.line, repo=claim.repo)
    also = tuple(place for place in claim.locations if place != first)
    if claim.inherited:
        message, severity = f"{message}; inherited from the original card", "info"
    message += also_stated(first, also)
    return Hit(message, first, claim.text, severity, also)


@check("CLM001")
def benchmark_method_undisclosed(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    kinds = ("benchmark", "benchmark_table", "benchmark_image")
    for claim in _claims(facts, kinds):
        if not claim.missing:
            continue
        what = {
            "benchmark_table": "benchmark table",
            "benchmark_image": "benchmark results shown as an image",
        }.get(claim.kind, "benchmark score")
        message = f"{what} ({_values(claim)}) does not disclose: {', '.join(claim.missing)}"
        yield _hit(claim, message, _severity(claim, rule))


@check("CLM002")
def speed_conditions_undisclosed(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    for claim in _claims(facts, ("speed",)):
        if not claim.missing:
            continue
        message = f"speed figure ({_values(claim)}) does not disclose: {', '.join(claim.missing)}"
        yield _hit(claim, message, _severity(claim, rule))


@check("CLM003")
def model_index_unsourced(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    for claim in _claims(facts, ("model_index",)):
        yield Hit(
            f"{claim.text}: {_values(claim)}",
            Location(claim.path, claim.line, "model-index", repo=claim.repo),
            claim.text,
        )


@check("CLM004")
def superiority_without_evidence(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    for claim in _claims(facts, ("superiority",)):
        if not claim.missing:
            continue
        where = "the card's headline claims" if claim.headline else "the card claims"
        message = (
            f"{where} {_values(claim)!r} without a number or the method behind it: "
            f"{claim.text[:160]}"
        )
        yield _hit(claim, message, "warning" if claim.headline else None)
