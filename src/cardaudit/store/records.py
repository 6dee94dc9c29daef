"""Plain values read from the store: what history, diff and the CLI work on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from cardaudit.model import Location, PriorAudit, Target


@dataclass(frozen=True)
class TrackedTarget:
    key: str
    target: str
    code: str | None
    base: str | None
    added_at: datetime


@dataclass(frozen=True)
class FindingRecord:
    rule_id: str
    severity: str
    message: str
    repo: str
    path: str | None
    line: int | None
    evidence: str | None = None
    suppressed_by: str | None = None

    @property
    def identity(self) -> tuple[str, str, str | None, str]:
        """What makes "the same finding" in two audits (lines move; messages stay)."""
        return (self.rule_id, self.repo, self.path, self.message)

    def where(self) -> str:
        """``path:line`` as reports show it (a ``code:`` / ``base:`` prefix for other repos)."""
        return Location(self.path, self.line, repo=self.repo).display()


@dataclass(frozen=True)
class PromiseRecord:
    artifact: str
    text: str
    repo: str
    path: str | None
    line: int | None
    status: str
    first_seen: str | None = None
    reason: str | None = None
    item: str | None = None  # the words naming what is promised (None in pre-0002 stores)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """The same promise across audits: repo, artifact kind, item and wording — not the
        file or line, so a promise that moves keeps its identity, and two items promised by
        one sentence stay two promises."""
        return (self.repo, self.artifact, _words(self.item or ""), _words(self.text))

    @property
    def loose_identity(self) -> tuple[str, str, str]:
        """The identity without the item, to pair with records stored before items were."""
        return (self.repo, self.artifact, _words(self.text))

    def where(self) -> str:
        """``path:line`` as reports show it (a ``code:`` / ``base:`` prefix for other repos)."""
        return Location(self.path, self.line, repo=self.repo).display()

    def detail(self) -> dict[str, Any]:
        """The promise as timeline and diff JSON carry it (without its location)."""
        return {
            "artifact": self.artifact,
            "item": self.item,
            "text": self.text,
            "status": self.status,
            "first_seen": self.first_seen,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class AuditRecord:
    id: int
    target_key: str
    target_kind: str
    target_id: str
    revision: str | None
    audited_at: datetime
    tool_version: str
    licence_declared: str | None
    licence_spdx: str | None
    errors: int
    warnings: int
    infos: int
    findings: tuple[FindingRecord, ...] = ()
    promises: tuple[PromiseRecord, ...] = ()
    #: What the audit saw delivered (see ``extract.promises.delivery_evidence``); None when
    #: the audit was recorded without it.
    deliveries: Mapping[str, Any] | None = None

    @property
    def licence(self) -> str | None:
        """The licence as compared between audits: SPDX when known, else as declared."""
        return self.licence_spdx or self.licence_declared

    @property
    def short_revision(self) -> str:
        return (self.revision or "-")[:12]

    def active_findings(self) -> tuple[FindingRecord, ...]:
        return tuple(f for f in self.findings if f.suppressed_by is None)

    def as_prior(self) -> PriorAudit:
        return PriorAudit(
            audit_id=self.id,
            revision=self.revision,
            audited_at=self.audited_at,
            licence_declared=self.licence_declared,
            licence_spdx=self.licence_spdx,
        )


def _words(text: str) -> str:
    return " ".join(text.lower().split())


def target_key(target: Target) -> str:
    """The store's identity of an audited model: ``hub:org/name`` or ``local:/abs/path``."""
    if target.kind == "hub":
        return f"hub:{target.id}"
    return f"local:{Path(target.path or target.id).expanduser().resolve()}"


def key_for_argument(argument: str) -> str:
    """The key for a command-line target: an existing path is local, else a Hub id."""
    if argument.startswith(("hub:", "local:")):
        return argument
    path = Path(argument).expanduser()
    if path.exists():
        return f"local:{path.resolve()}"
    return f"hub:{argument.strip('/')}"


def display_key(key: str) -> str:
    """``hub:org/name`` → ``org/name``; local keys keep their path."""
    kind, _, rest = key.partition(":")
    return rest if kind in ("hub", "local") else key
