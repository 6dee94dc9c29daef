"""Fixture scenarios: each ``fixtures/<name>/`` holds ``model/`` and optionally ``code/``,
``base/`` and a ``scenario.yaml`` with extra audit arguments (``bases: [folder, …]`` gives
several base models, one ``--base`` each).

``previous_audit: {report: FILE, audited_at: TIME}`` in ``scenario.yaml`` seeds a fresh
tracking store with that JSON report as the model's previous audit, and audits the scenario
the way ``cardaudit audit --record`` does (for rules such as LIC050 that compare audits).

``git_config: {key: value}`` audits ``model/`` as a git checkout (fixtures cannot hold a
``.git``): a copy is committed once in a temp dir, with a fixed identity and date so the
revision is stable, and the keys are written into its ``.git/config``.
"""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime
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


def scenario_settings(name: str) -> dict[str, Any]:
    path = FIXTURES / name / "scenario.yaml"
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def seed_hub(name: str) -> None:
    """Serve the scenario's ``hub:`` repos (id -> folder in the fixture) from the test Hub."""
    import hub_server

    repos = scenario_settings(name).get("hub") or {}
    if repos and hub_server.SESSION is None:
        raise RuntimeError(f"scenario {name} needs the test Hub (tests/conftest.py)")
    for repo_id, folder in repos.items():
        hub_server.SESSION.commit_folder(repo_id, FIXTURES / name / folder)


_CHECKOUTS: dict[str, Path] = {}


def git_checkout(name: str, config: dict[str, str]) -> Path:
    """``fixtures/<name>/model`` committed as a git checkout with ``config`` in .git/config."""
    if name in _CHECKOUTS:
        return _CHECKOUTS[name]
    import shutil

    import git

    dest = Path(tempfile.mkdtemp(prefix=f"cardaudit-{name}-")) / "model"
    shutil.copytree(FIXTURES / name / "model", dest)
    repo = git.Repo.init(dest, initial_branch="main")
    repo.index.add(sorted(p.name for p in dest.iterdir() if p.is_file()))
    who = git.Actor("Fixture Author", "fixture@example.org")
    when = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    repo.index.commit("fixture", author=who, committer=who, author_date=when, commit_date=when)
    with repo.config_writer() as writer:
        for key, value in config.items():
            section, _, option = key.rpartition(".")
            head, _, sub = section.partition(".")
            writer.set_value(f'{head} "{sub}"' if sub else head, option, value)
    repo.close()
    _CHECKOUTS[name] = dest
    return dest


def scenario_request(name: str) -> AuditRequest:
    folder = FIXTURES / name
    settings = scenario_settings(name)
    model = folder / "model"
    if settings.get("git_config"):
        model = git_checkout(name, settings["git_config"])
    code = folder / "code" if (folder / "code").is_dir() else None
    base = folder / "base" if (folder / "base").is_dir() else None
    bases: str | tuple[str, ...] | None = str(base) if base and settings.get("base", True) else None
    if settings.get("bases"):  # several parents (a merge): one --base each
        bases = tuple(str(folder / name) for name in settings["bases"])
    return AuditRequest(
        target=str(model),
        code=str(code) if code and settings.get("code", True) else None,
        base=bases,
        base_depth=settings.get("base_depth"),
        code_discovery=settings.get("code_discovery"),
    )


def scenario_report(name: str, request: AuditRequest | None = None) -> Report:
    """Audit a scenario under its model repo's own config (``.cardaudit.toml``), if any;
    with ``previous_audit``, against a tracking store seeded with it."""
    seed_hub(name)
    evidence = acquire(request or scenario_request(name))
    config = find_config(evidence, None, cwd=FIXTURES / name)
    previous = scenario_settings(name).get("previous_audit")
    if not previous:
        return audit_evidence(evidence, policy_from(config))
    from cardaudit.store import Store, target_key
    from cardaudit.tracking import record_evidence

    seed = json.loads((FIXTURES / name / previous["report"]).read_text())
    audited_at = previous["audited_at"]
    if isinstance(audited_at, str):
        audited_at = datetime.fromisoformat(audited_at)
    with tempfile.TemporaryDirectory() as folder, Store.open(f"{folder}/store.db") as store:
        store.record_json(seed, target_key(evidence.target), audited_at)
        return record_evidence(store, evidence, policy_from(config)).report


def scenario_json(name: str) -> dict[str, Any]:
    """The JSON report of a scenario, with machine-specific paths made relative."""
    data = report_to_json(scenario_report(name))
    data["target"]["path"] = f"fixtures/{name}/model"
    return json.loads(json.dumps(data))


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"
