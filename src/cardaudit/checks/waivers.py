"""SRC030: a waiver in the audited repo's own config has expired and no longer applies."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.config import ConfigError, Waiver, repo_config
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.policy import today
from cardaudit.rules import Rule

EXPIRED_WAIVER_RULE = "SRC030"


def expired_waiver_hit(waiver: Waiver, repo: str = "model") -> Hit:
    where = f" for {waiver.path}" if waiver.path else ""
    return Hit(
        f"waiver of {waiver.rule}{where} expired on {waiver.expires.isoformat()} "
        f"(reason: {waiver.reason}); its findings are reported again",
        Location(waiver.source, waiver.line, key="waivers", repo=repo),
        waiver.comment,
    )


@check(EXPIRED_WAIVER_RULE)
def expired_waivers(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    try:
        config = repo_config(evidence)
    except ConfigError as exc:
        raise NotApplicable(f"repo config is invalid: {exc}") from exc
    if config is None or not config.waivers:
        raise NotApplicable("the repo has no waivers")
    on = today()
    for waiver in config.waivers:
        if waiver.expired(on):
            yield expired_waiver_hit(waiver)
