"""Fixture scenarios: each ``fixtures/<name>/`` holds ``model/`` and optionally ``code/``,
``base/`` and a ``scenario.yaml`` with extra audit arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from cardaudit.config import find_config
from cardaudit.model import Report
from cardaudit.pipeline import audit_evidence
from cardaudit.policy import policy_from
from cardaudit.reporters.json_report import report_to_json
from cardaudit.sources import AuditRequest, acquire

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


def scenario_report(name: str, request: AuditRequest | None = None) -> Report:
    """Audit a scenario under its model repo's own config (``.cardaudit.toml``), if any."""
    evidence = acquire(request or scenario_request(name))
    config = find_config(evidence, None, cwd=FIXTURES / name)
    return audit_evidence(evidence, policy_from(config))


def scenario_json(name: str) -> dict[str, Any]:
    """The JSON report of a scenario, with machine-specific paths made relative."""
    data = report_to_json(scenario_report(name))
    data["target"]["path"] = f"fixtures/{name}/model"
    return json.loads(json.dumps(data))


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"
