"""CLM rules: benchmark scores and speed figures stated without the method to check them.

A claim is not called false: it is unverifiable as stated. Severity is info, or warning when
many checklist items (rules/tables/claims.yaml) are undisclosed.
"""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.model import Claim, Evidence, Facts, Hit, Location, Severity
from cardaudit.rules import Rule


def _severity(claim: Claim, rule: Rule) -> Severity:
    return "warning" if len(claim.missing) >= int(rule.param("warning_when_missing", 3)) else "info"


def _values(claim: Claim, limit: int = 4) -> str:
    shown = "; ".join(claim.values[:limit])
    return shown + (f"; … ({len(claim.values)} in all)" if len(claim.values) > limit else "")


def _claims(facts: Facts, kinds: tuple[str, ...]) -> list[Claim]:
    claims = [c for c in facts.claims if c.kind in kinds]
    if not claims:
        raise NotApplicable(f"no {' / '.join(kinds)} claims")
    return claims


@check("CLM001")
def benchmark_method_undisclosed(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    for claim in _claims(facts, ("benchmark", "benchmark_table")):
        if not claim.missing:
            continue
        what = "benchmark table" if claim.kind == "benchmark_table" else "benchmark score"
        yield Hit(
            f"{what} ({_values(claim)}) does not disclose: {', '.join(claim.missing)}",
            Location(claim.path, claim.line, repo=claim.repo),
            claim.text,
            _severity(claim, rule),
        )


@check("CLM002")
def speed_conditions_undisclosed(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    for claim in _claims(facts, ("speed",)):
        if not claim.missing:
            continue
        yield Hit(
            f"speed figure ({_values(claim)}) does not disclose: {', '.join(claim.missing)}",
            Location(claim.path, claim.line, repo=claim.repo),
            claim.text,
            _severity(claim, rule),
        )


@check("CLM003")
def model_index_unsourced(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    for claim in _claims(facts, ("model_index",)):
        yield Hit(
            f"{claim.text}: {_values(claim)}",
            Location(claim.path, claim.line, "model-index", repo=claim.repo),
            claim.text,
        )
