"""Promise identity and fate across stored audits, severity changes, and the audit clock.

Audits run the real extractor and checks on model and code folders built in the test, and go
through the real store (SQLite, and PostgreSQL when CI provides it).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.sources import AuditRequest
from cardaudit.store import Store, key_for_argument
from cardaudit.store.records import AuditRecord, FindingRecord
from cardaudit.timeline import build_history, diff_audits
from cardaudit.tracking import audit_and_record
from scenarios import FIXTURES

CLOVER = FIXTURES / "clover"
ROADMAP = "The SFT code, training instructions, backend code and setup guides are coming."


def _record(store: Store, model: Path, code: Path, when: str) -> None:
    audit_and_record(
        store,
        AuditRequest(str(model), code=str(code)),
        audited_at=datetime.fromisoformat(when).replace(tzinfo=UTC),
    )


def test_two_items_of_one_sentence_are_two_promises_and_moving_keeps_them(
    store_url: str, tmp_path: Path
) -> None:
    """code/README.md:17 promises "backend code" and "setup guides" in one sentence (its
    "training instructions" are the card's promise too, so they are one promise at the card's
    line). When only the guides are delivered, the diff says so — and the sentence moving two
    lines down is neither a dropped nor a new promise."""
    model, code = tmp_path / "model", tmp_path / "code"
    shutil.copytree(CLOVER / "model", model)
    shutil.copytree(CLOVER / "code", code)
    with Store.open(store_url) as store:
        _record(store, model, code, "2026-06-01T00:00:00")
        readme = code / "README.md"
        text = readme.read_text()
        assert ROADMAP in text.splitlines()[16]
        readme.write_text(text.replace("## Roadmap\n", "## Roadmap\n\nWhat we still owe.\n"))
        (code / "docs").mkdir()
        (code / "docs" / "setup.md").write_text("# Setup\n\nInstall the package.\n")
        _record(store, model, code, "2026-06-02T00:00:00")
        old, new = store.audits(key_for_argument(str(model)))

    line17 = [(p.item, p.status) for p in old.promises if (p.repo, p.line) == ("code", 17)]
    assert ("backend code", "missing") in line17
    assert ("setup guides", "missing") in line17
    moved = [(p.item, p.line) for p in new.promises if p.repo == "code"]
    assert ("backend code", 19) in moved and ("setup guides", 19) in moved

    diff = diff_audits(old, new)
    assert diff.promises_appeared == () and diff.promises_dropped == ()
    docs = [
        (c.after.item, c.after.line, c.after.reason)
        for c in diff.promises_delivered
        if c.after.artifact == "docs" and c.after.repo == "code"
    ]
    assert docs == [("setup guides", 19, "the code repo has docs/setup.md")]
    assert not any(c.after.item == "backend code" for c in diff.promises_changed)


CARD = """---
license: apache-2.0
---

# Wren-1B

A small text generator.

{body}
"""


def test_promises_removed_after_delivery_are_not_dropped(store_url: str, tmp_path: Path) -> None:
    """The later audit's evidence decides what a vanished promise means: a delivery statement
    or delivering files → delivered and removed; nothing → dropped, never delivered."""
    model, code = tmp_path / "wren", tmp_path / "wren-code"
    model.mkdir()
    (code / "wren").mkdir(parents=True)
    (code / "README.md").write_text("# wren\n\nModelling code.\n")
    (code / "wren" / "modeling.py").write_text("class Wren:\n    pass\n")
    before = (
        "Training code coming soon.\n\nEvaluation scripts will be released.\n\n"
        "A live demo is coming soon.\n"
    )
    after = "The evaluation scripts are now available.\n"
    with Store.open(store_url) as store:
        (model / "README.md").write_text(CARD.format(body=before))
        _record(store, model, code, "2026-06-01T00:00:00")
        (model / "README.md").write_text(CARD.format(body=after))
        (code / "train.py").write_text("print('training')\n")
        _record(store, model, code, "2026-06-02T00:00:00")
        audits = store.audits(key_for_argument(str(model)))

    assert sorted(p.artifact for p in audits[0].promises) == [
        "demo",
        "evaluation_code",
        "training_code",
    ]
    assert audits[1].promises == ()
    diff = diff_audits(*audits)
    delivered = {c.before.artifact: c for c in diff.promises_delivered}
    assert set(delivered) == {"training_code", "evaluation_code"}
    assert all(c.removed and c.after.status == "delivered" for c in delivered.values())
    assert delivered["training_code"].after.reason == "the code repo has train.py"
    assert delivered["evaluation_code"].after.reason == (
        "a statement at README.md:9: 'The evaluation scripts are now available.'"
    )
    assert [p.artifact for p in diff.promises_dropped] == ["demo"]

    events = build_history(audits[0].target_key, audits).events
    kinds = [(e.kind, e.detail.get("artifact")) for e in events if e.audit_id == audits[1].id]
    assert ("promise_delivered", "training_code") in kinds
    assert ("promise_delivered", "evaluation_code") in kinds
    (dropped,) = [e for e in events if e.kind == "promise_dropped"]
    assert "never delivered" in dropped.message and dropped.detail["artifact"] == "demo"
    (training,) = [e for e in events if e.kind == "promise_delivered" and "train.py" in e.message]
    assert training.message.startswith("promise delivered and removed from the text")
    assert training.detail["still_stated"] is False


def _audit(audit_id: int, *findings: FindingRecord) -> AuditRecord:
    return AuditRecord(
        id=audit_id,
        target_key="hub:o/n",
        target_kind="hub",
        target_id="o/n",
        revision=f"{audit_id:040x}",
        audited_at=datetime(2026, 6, audit_id, tzinfo=UTC),
        tool_version="test",
        licence_declared="apache-2.0",
        licence_spdx="Apache-2.0",
        errors=0,
        warnings=0,
        infos=0,
        findings=findings,
    )


def _prm(severity: str) -> FindingRecord:
    return FindingRecord(
        "PRM001", severity, "promised but not delivered: SFT code", "code", "README.md", 17
    )


def test_severity_changes_are_events() -> None:
    audits = [
        _audit(1, _prm("info")),
        _audit(2, _prm("warning")),
        _audit(3, _prm("error")),
        _audit(4, _prm("warning")),
    ]
    history = build_history("hub:o/n", audits)
    changes = [
        (e.audit_id, e.kind, e.severity, e.detail.get("previous_severity"), e.where)
        for e in history.events
        if e.kind.startswith("finding_")
    ]
    assert changes == [
        (2, "finding_escalated", "warning", "info", "code:README.md:17"),
        (3, "finding_escalated", "error", "warning", "code:README.md:17"),
        (4, "finding_deescalated", "warning", "error", "code:README.md:17"),
    ]
    assert history.events[1].message == (
        "PRM001 info → warning: promised but not delivered: SFT code"
    )
    diff = diff_audits(audits[1], audits[2])
    assert (len(diff.findings_escalated), diff.findings_unchanged, diff.empty) == (1, 0, False)
    assert diff_audits(audits[0], audits[0]).findings_unchanged == 1


def test_recorded_audit_time_follows_the_audit_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`audit --record` and `track run` stamp the audit with CARDAUDIT_NOW, the clock that
    ages the promises, not the wall clock."""
    model = tmp_path / "wren"
    model.mkdir()
    (model / "README.md").write_text(CARD.format(body="Training code coming soon.\n"))
    db = str(tmp_path / "store.db")
    runner = CliRunner()
    monkeypatch.setenv("CARDAUDIT_NOW", "2031-01-02T03:04:05Z")
    recorded = runner.invoke(app, ["audit", str(model), "--record", "--db", db, "-f", "json"])
    assert recorded.exit_code in (0, 1), recorded.output
    assert runner.invoke(app, ["track", "add", str(model), "--db", db]).exit_code == 0
    monkeypatch.setenv("CARDAUDIT_NOW", "2031-02-03")
    run = runner.invoke(app, ["track", "run", "--db", db, "--fail-on", "never", "-f", "json"])
    assert run.exit_code == 0, run.output
    history = runner.invoke(app, ["history", str(model), "--db", db, "--format", "json"])
    stamps = [audit["audited_at"] for audit in json.loads(history.stdout)["audits"]]
    assert stamps == ["2031-01-02T03:04:05+00:00", "2031-02-03T00:00:00+00:00"]
