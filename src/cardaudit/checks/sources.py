"""SRC rules: evidence that could not be gathered is reported, never silently dropped."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import check
from cardaudit.model import Evidence, Facts, Hit
from cardaudit.rules import Rule


def recorded_problems(evidence: Evidence, rule: Rule) -> Iterator[Hit]:
    """Hits for the problems sources recorded under ``rule`` (the model's and its bases')."""
    for problem in evidence.problems:
        if problem.rule_id == rule.id:
            yield Hit(problem.message, problem.location, problem.evidence)
    for base in evidence.base:
        for problem in base.problems:
            if problem.rule_id == rule.id:
                yield Hit(
                    f"base model {base.target.id}: {problem.message}",
                    problem.location,
                    problem.evidence,
                )


@check("SRC001")
def model_card_missing(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    yield from recorded_problems(evidence, rule)


@check("SRC002")
def front_matter_invalid(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    yield from recorded_problems(evidence, rule)


@check("SRC003")
def file_unreadable(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    yield from recorded_problems(evidence, rule)


@check("SRC013")
def git_metadata_refused(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    yield from recorded_problems(evidence, rule)
