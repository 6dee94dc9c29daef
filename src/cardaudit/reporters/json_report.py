"""The JSON report: a contract other tools parse (see docs/report.schema.json)."""

from __future__ import annotations

import json
from typing import Any

from cardaudit import __version__
from cardaudit.extract.licence import modification_json
from cardaudit.model import CheckRun, Facts, Report, to_jsonable
from cardaudit.reporters.common import not_read

SCHEMA_VERSION = "1"


def facts_to_json(facts: Facts) -> dict[str, Any]:
    licence = facts.license
    data: dict[str, Any] = {
        "license": {
            "declared": licence.declared,
            "declared_spdx": licence.declared_spdx,
            "declared_name": licence.declared_name,
            "declared_link": licence.declared_link,
            "files": [
                {
                    "path": m.path,
                    "identified": m.identified,
                    "confidence": m.confidence,
                    "also": list(m.also),
                    **({"note": m.note} if m.note else {}),
                    **({"engine": m.engine} if m.engine else {}),
                    **({"complete": False} if not m.complete else {}),
                    **({"link": m.link} if m.link else {}),
                    **modification_json(m),
                }
                for m in licence.files
            ],
            "code_repo": to_jsonable(licence.code_repo),
            "prose": to_jsonable(licence.prose),
            "notices": list(licence.notices),
            "base": to_jsonable(licence.base),
            "publisher": to_jsonable(licence.publisher),
            "statements": to_jsonable(licence.statements),
            "additional_terms": to_jsonable(licence.additional_terms),
            "obligations": to_jsonable(licence.obligations),
            **({"reuse": to_jsonable(licence.reuse)} if licence.reuse else {}),
        },
        "parameters": to_jsonable(facts.parameters),
        "memory": to_jsonable(facts.memory),
        "base_models": [
            {"id": ref.id, "relation": ref.relation, "source": ref.source}
            for ref in facts.base_models
        ],
        "promises": to_jsonable(facts.promises),
        "claims": to_jsonable(facts.claims),
    }
    for key, value in facts.extra.items():
        data.setdefault(key, to_jsonable(value))
    return data


def check_to_json(run: CheckRun) -> dict[str, Any]:
    """One rule's outcome; ``not_checked`` carries ``reason`` and ``fix``."""
    data: dict[str, Any] = {"rule_id": run.rule_id, "outcome": run.outcome}
    if run.outcome == "not_checked":
        data["reason"] = run.note or "an input was missing"
        data["fix"] = run.fix or ""
    elif run.note:
        data["note"] = run.note
    return data


def report_to_json(report: Report) -> dict[str, Any]:
    summary = report.summary
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "cardaudit", "version": __version__},
        "target": report.target.to_json(),
        "facts": facts_to_json(report.facts),
        "checks": [check_to_json(run) for run in report.checks],
        "findings": [finding.to_json() for finding in report.findings],
        "suppressed_findings": [finding.to_json() for finding in report.suppressed],
        "not_read": not_read(report),
        "summary": {
            "error": summary.error,
            "warning": summary.warning,
            "info": summary.info,
            "suppressed": summary.suppressed,
            "not_checked": summary.not_checked,
        },
    }


def render(report: Report, **_options: object) -> str:
    return json.dumps(report_to_json(report), indent=2, ensure_ascii=False) + "\n"
