"""SRC rules for evidence fetched from elsewhere: base models and code repos that could not be
gathered, and lineages that loop. The problems are recorded by sources/; these checks report
them so nothing is silently lost."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import check
from cardaudit.checks.sources import recorded_problems
from cardaudit.model import Evidence, Facts, Hit
from cardaudit.rules import Rule


@check("SRC010")
def base_model_unavailable(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    yield from recorded_problems(evidence, rule)


@check("SRC011")
def code_repo_unavailable(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    yield from recorded_problems(evidence, rule)


@check("SRC012")
def lineage_cycle(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    yield from recorded_problems(evidence, rule)
