"""SARIF 2.1.0 for GitHub code scanning: one result per finding, on the card's lines.

Paths: for a local target given as a relative path (as the GitHub Action does, from the
workspace root) each result's URI is that path joined with the file's path, so code scanning
annotates the right file. Otherwise URIs are relative to a base id (MODEL, CODE, BASE,
CONFIG) declared in ``originalUriBaseIds``.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from pathlib import Path
from typing import Any

from cardaudit import __version__
from cardaudit.model import Finding, Location, Report
from cardaudit.reporters.common import rules_for
from cardaudit.rules import Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
#: GitHub sorts alerts by this 0-10 score (its "security-severity" is for security tools).
PRECISION = "high"
INFORMATION_URI = "https://github.com/cardaudit/cardaudit"
BASE_IDS = {"model": "MODEL", "code": "CODE", "base": "BASE", "config": "CONFIG"}


def _camel(title: str) -> str:
    words = "".join(ch if ch.isalnum() else " " for ch in title).split()
    return "".join(word[:1].upper() + word[1:] for word in words)


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    help_text = f"{rule.why}\n\nHow to fix: {rule.fix}"
    help_md = f"**Why it matters.** {rule.why}\n\n**How to fix.** {rule.fix}"
    if rule.references:
        help_text += "\n\nReferences: " + " ".join(rule.references)
        help_md += "\n\n**References**\n" + "\n".join(f"- {ref}" for ref in rule.references)
    data: dict[str, Any] = {
        "id": rule.id,
        "name": _camel(rule.title),
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.checks},
        "help": {"text": help_text, "markdown": help_md},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": ["model-audit", rule.family.lower()],
            "precision": PRECISION,
            "lifecycle": rule.lifecycle,
        },
    }
    refs = [ref for ref in rule.references if ref.startswith(("http://", "https://"))]
    if refs:
        data["helpUri"] = refs[0]
    return data


class _Locator:
    """Turns a finding's (repo, path) into a SARIF artifactLocation."""

    def __init__(self, report: Report) -> None:
        self.roots: dict[str, str | None] = {"model": self._root(report.target.path)}
        evidence = report.evidence
        if evidence is not None and evidence.code is not None:
            self.roots["code"] = self._root(evidence.code.path)
        if evidence is not None and evidence.base:
            self.roots["base"] = self._root(evidence.base[0].target.path)
        self.base_uris: dict[str, dict[str, Any]] = {}
        self.report = report

    @staticmethod
    def _root(path: str | None) -> str | None:
        """A relative POSIX root when ``path`` is a relative local path, else None."""
        if not path or Path(path).is_absolute():
            return None
        root = posixpath.normpath(Path(path).as_posix())
        return "" if root == "." else root

    def _declare(self, repo: str) -> str:
        base_id = BASE_IDS.get(repo, repo.upper())
        if base_id not in self.base_uris:
            uri = self._absolute_root(repo)
            entry: dict[str, Any] = {
                "description": {"text": f"root of the {repo} repository as audited"}
            }
            if uri:
                entry["uri"] = uri
            self.base_uris[base_id] = entry
        return base_id

    def _absolute_root(self, repo: str) -> str | None:
        evidence = self.report.evidence
        snapshot = None
        if evidence is not None:
            snapshot = {"model": evidence.repo, "code": evidence.code}.get(repo)
            if repo == "base" and evidence.base:
                snapshot = evidence.base[0].repo
        if snapshot is None:
            return None
        if snapshot.url:
            return snapshot.url.rstrip("/") + "/"
        if snapshot.path and Path(snapshot.path).is_absolute():
            return Path(snapshot.path).as_uri().rstrip("/") + "/"
        return None

    def artifact(self, repo: str, path: str) -> dict[str, Any]:
        root = self.roots.get(repo)
        if root is not None:
            return {"uri": posixpath.join(root, path) if root else path}
        return {"uri": path, "uriBaseId": self._declare(repo)}


def _fingerprint(finding: Finding) -> str:
    loc = finding.location
    key = "\x1f".join([finding.rule_id, loc.repo, loc.path or "", loc.key or "", finding.message])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _physical(locator: _Locator, place: Location) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": locator.artifact(place.repo, place.path)}
    if place.line is not None:
        physical["region"] = {"startLine": place.line}
    return physical


def _result(
    finding: Finding, locator: _Locator, index: dict[str, int], card: str
) -> dict[str, Any]:
    loc = finding.location
    text = finding.message
    if finding.evidence:
        text += f"\nEvidence: {finding.evidence}"
    result: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "partialFingerprints": {"cardauditFinding/v1": _fingerprint(finding)},
        "properties": {"severity": finding.severity},
    }
    if finding.rule_id in index:
        result["ruleIndex"] = index[finding.rule_id]
    path, repo = loc.path, loc.repo
    if path is None:  # code scanning needs a file: use the model card
        path, repo = card, "model"
    if path:
        physical: dict[str, Any] = {"artifactLocation": locator.artifact(repo, path)}
        if loc.line is not None and loc.path is not None:
            physical["region"] = {"startLine": loc.line}
            if finding.evidence:
                physical["region"]["snippet"] = {"text": finding.evidence}
        location: dict[str, Any] = {"physicalLocation": physical}
        if loc.key:
            location["logicalLocations"] = [{"name": loc.key, "kind": "member"}]
        result["locations"] = [location]
    related = [
        {
            "id": number,
            "physicalLocation": _physical(locator, place),
            "message": {"text": "also stated here"},
        }
        for number, place in enumerate(finding.also, 1)
        if place.path
    ]
    if related:
        result["relatedLocations"] = related
    if finding.remediation:
        result["properties"]["remediation"] = finding.remediation
    if finding.suppressed_by:
        result["suppressions"] = [
            {"kind": "external", "status": "accepted", "justification": finding.suppressed_by}
        ]
    return result


def report_to_sarif(report: Report) -> dict[str, Any]:
    rules = rules_for(report)
    index = {rule.id: i for i, rule in enumerate(rules)}
    locator = _Locator(report)
    card = "README.md"  # where the card is expected when the repo has none
    if report.evidence is not None and report.evidence.card is not None:
        card = report.evidence.card.path
    results = [_result(f, locator, index, card) for f in (*report.findings, *report.suppressed)]
    notifications = [
        {
            "level": "error",
            "message": {"text": f"check {run.rule_id} failed to run: {run.note}"},
            "descriptor": {"id": run.rule_id},
        }
        for run in report.checks
        if run.outcome == "error"
    ]
    failed = bool(notifications)
    notifications += [
        {
            "level": "warning",
            "message": {
                "text": f"check {run.rule_id} not checked: {run.note}"
                + (f" Fix: {run.fix}" if run.fix else "")
            },
            "descriptor": {"id": run.rule_id},
            "properties": {"outcome": "not_checked", "reason": run.note, "fix": run.fix},
        }
        for run in report.checks
        if run.outcome == "not_checked"
    ]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "cardaudit",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [rule_descriptor(rule) for rule in rules],
            }
        },
        "automationDetails": {"id": f"cardaudit/{report.target.id}/"},
        "invocations": [
            {
                "executionSuccessful": not failed,
                "toolExecutionNotifications": notifications,
            }
        ],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"target": report.target.to_json()},
    }
    if locator.base_uris:
        run["originalUriBaseIds"] = dict(sorted(locator.base_uris.items()))
    if report.target.revision and report.evidence is not None and report.evidence.repo.url:
        run["versionControlProvenance"] = [
            {
                "repositoryUri": report.evidence.repo.url,
                "revisionId": report.target.revision,
            }
        ]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render(report: Report, **_options: object) -> str:
    """SARIF with repo text made visible: code-scanning UIs show messages to reviewers, and a
    bidi override there would show a finding's text in another order."""
    from cardaudit.safe_text import visible_values

    return json.dumps(visible_values(report_to_sarif(report)), indent=2, ensure_ascii=False) + "\n"
