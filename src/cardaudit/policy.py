"""Policy: which rules run, severity overrides, and the exit-code threshold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Literal

from cardaudit.errors import UsageError
from cardaudit.model import SEVERITY_RANK, Finding, Report, Severity, frozen_mapping

if TYPE_CHECKING:
    from cardaudit.config import Config, Waiver

FailOn = Literal["error", "warning", "info", "never"]


def _matches(rule_id: str, patterns: Iterable[str]) -> bool:
    return any(rule_id.upper().startswith(pattern.upper()) for pattern in patterns)


@dataclass(frozen=True)
class Policy:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=frozen_mapping)
    fail_on: FailOn = "error"
    waivers: tuple[Waiver, ...] = ()

    def selected(self, rule_id: str) -> bool:
        """Selected by id or prefix, and not ignored (an exact id beats a prefix)."""
        if self.select and not _matches(rule_id, self.select):
            return False
        if rule_id.upper() in {p.upper() for p in self.select}:
            return True
        return not _matches(rule_id, self.ignore)

    def severity_for(self, rule_id: str, default: Severity) -> Severity:
        return self.severity.get(rule_id, default)

    def fails(self, report: Report) -> bool:
        if self.fail_on == "never":
            return False
        threshold = SEVERITY_RANK[self.fail_on]
        return any(SEVERITY_RANK[f.severity] >= threshold for f in report.findings)


def split_patterns(values: Iterable[str] | None) -> tuple[str, ...]:
    """``["LIC,ATT001", "MEM"]`` → ``("LIC", "ATT001", "MEM")``."""
    patterns = []
    for value in values or ():
        patterns += [part.strip() for part in value.split(",") if part.strip()]
    return tuple(patterns)


def validate_patterns(patterns: Iterable[str], known: Iterable[str]) -> None:
    """Reject a select/ignore pattern that matches no rule (a typo would silence nothing)."""
    known = list(known)
    for pattern in patterns:
        if not any(rule_id.upper().startswith(pattern.upper()) for rule_id in known):
            raise UsageError(f"no rule matches {pattern!r} (see `cardaudit rules`)")


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Worst first, then by file, line and rule: a stable order for every report."""
    return tuple(
        sorted(
            findings,
            key=lambda f: (
                -SEVERITY_RANK[f.severity],
                f.location.repo,
                f.location.path or "",
                f.location.line or 0,
                f.rule_id,
                f.message,
            ),
        )
    )


def today() -> date:
    """The UTC date waivers are judged against."""
    return datetime.now(UTC).date()


def policy_from(
    config: Config,
    *,
    select: tuple[str, ...] = (),
    ignore: tuple[str, ...] = (),
    fail_on: str | None = None,
) -> Policy:
    """Policy from a config file; command-line values (when given) override it."""
    return Policy(
        select=select or config.select,
        ignore=ignore or config.ignore,
        severity=frozen_mapping(config.severity),
        fail_on=fail_on or config.fail_on or "error",  # type: ignore[arg-type]
        waivers=config.waivers,
    )


def waiver_for(finding: Finding, waivers: Iterable[Waiver], on: date) -> Waiver | None:
    """The first unexpired waiver covering ``finding`` (same rule; path glob if given)."""
    for waiver in waivers:
        if waiver.rule != finding.rule_id or waiver.expired(on):
            continue
        if waiver.path is None or fnmatchcase(finding.location.path or "", waiver.path):
            return waiver
    return None


def apply_waivers(
    findings: Iterable[Finding], waivers: Iterable[Waiver], on: date
) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """Split findings into (kept, suppressed); suppressed ones say which waiver hid them."""
    waivers = tuple(waivers)
    kept, suppressed = [], []
    for finding in findings:
        waiver = waiver_for(finding, waivers, on)
        if waiver is None:
            kept.append(finding)
        else:
            suppressed.append(replace(finding, suppressed_by=waiver.describe()))
    return tuple(kept), tuple(suppressed)
