"""Policy: which rules run, severity overrides, and the exit-code threshold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from cardaudit.errors import UsageError
from cardaudit.model import SEVERITY_RANK, Finding, Report, Severity, frozen_mapping

FailOn = Literal["error", "warning", "info", "never"]


def _matches(rule_id: str, patterns: Iterable[str]) -> bool:
    return any(rule_id.upper().startswith(pattern.upper()) for pattern in patterns)


@dataclass(frozen=True)
class Policy:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=frozen_mapping)
    fail_on: FailOn = "error"

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
