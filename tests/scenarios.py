"""Fixture scenarios: each ``fixtures/<name>/`` holds ``model/`` and optionally ``code/``,
``base/`` and a ``scenario.yaml`` with extra audit arguments.

``previous_audit: {report: FILE, audited_at: TIME}`` in ``scenario.yaml`` seeds a fresh
tracking store with that JSON report as the model's previous audit, and audits the scenario
the way ``cardaudit audit --record`` does (for rules such as LIC050 that compare audits).
"""

from __future__ import annotations

import json
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from cardaudit.model import Report
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.reporters.json_report import report_to_json
from cardaudit.sources import AuditRequest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
GOLDEN = Path(__file__).parent / "golden"


def scenario_names() -> list[str]:
    return sorted(p.name for p in FIXTURES.iterdir() if (p / "model").is_dir())


def scenario_request(name: str) -> AuditRequest:
    folder = FIXTURES / name
    settings: dict[str, Any] = {}
    if (folder / "scenario.yaml").is_file():
        settings = yaml.safe_load((folder / "scenario.yaml").read_text()) or {}
    code = folder / "code" if (folder / "code").is_dir() else None
    base = folder / "base" if (folder / "base").is_dir() else None
    return AuditRequest(
        target=str(folder / "model"),
        code=str(code) if code and settings.get("code", True) else None,
        base=str(base) if base and settings.get("base", True) else None,
    )


def scenario_settings(name: str) -> dict[str, Any]:
    path = FIXTURES / name / "scenario.yaml"
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def scenario_report(name: str) -> Report:
    """Audit a scenario; with ``previous_audit``, against a store seeded with it."""
    request = scenario_request(name)
    previous = scenario_settings(name).get("previous_audit")
    if not previous:
        return audit(request, Policy())
    from cardaudit.store import Store, key_for_argument
    from cardaudit.tracking import audit_and_record

    seed = json.loads((FIXTURES / name / previous["report"]).read_text())
    audited_at = previous["audited_at"]
    if isinstance(audited_at, str):
        audited_at = datetime.fromisoformat(audited_at)
    with tempfile.TemporaryDirectory() as folder, Store.open(f"{folder}/store.db") as store:
        store.record_json(seed, key_for_argument(request.target), audited_at)
        return audit_and_record(store, request, Policy()).report


def scenario_json(name: str) -> dict[str, Any]:
    """The JSON report of a scenario, with machine-specific paths made relative."""
    data = report_to_json(scenario_report(name))
    data["target"]["path"] = f"fixtures/{name}/model"
    return json.loads(json.dumps(data))


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"
