"""The tracking store: URLs, round trip of a real audit, the tracked list, clear errors."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cardaudit.errors import StoreError
from cardaudit.model import Promise
from cardaudit.pipeline import audit
from cardaudit.sources import AuditRequest
from cardaudit.store import Store, key_for_argument, target_key
from cardaudit.store.engine import default_url, resolve_url
from scenarios import FIXTURES


def clover_report():
    folder = FIXTURES / "clover"
    return audit(
        AuditRequest(str(folder / "model"), code=str(folder / "code"), base=str(folder / "base"))
    )


def test_default_store_lives_in_the_user_data_dir(tmp_path: Path) -> None:
    expected = tmp_path / "xdg-data" / "cardaudit" / "cardaudit.db"
    assert default_url() == f"sqlite:///{expected}"
    with Store.open() as store:
        assert store.targets() == []
    assert expected.is_file()


def test_url_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CARDAUDIT_DB", "postgresql://u:secret@db.example/audits")
    assert resolve_url(None) == "postgresql+psycopg://u:secret@db.example/audits"
    assert resolve_url("postgres://h/d") == "postgresql+psycopg://h/d"
    assert resolve_url(str(tmp_path / "x.db")) == f"sqlite:///{tmp_path / 'x.db'}"
    assert resolve_url("sqlite:////abs/y.db") == "sqlite:////abs/y.db"


def test_round_trip_keeps_every_part_of_an_audit(store_url: str) -> None:
    report = clover_report()
    promise = Promise(
        text="The SFT code will be released soon.",
        artifact="training_code",
        path="README.md",
        line=42,
        status="missing",
        first_seen="2026-03-01T10:00:00+00:00",
        repo="code",
    )
    report = replace(report, facts=replace(report.facts, promises=(promise,)))
    when = datetime(2026, 11, 1, 9, 30, tzinfo=UTC)
    with Store.open(store_url) as store:
        audit_id = store.record(report, when)
        (stored,) = store.audits(target_key(report.target))
    assert stored.id == audit_id
    assert stored.target_key == f"local:{(FIXTURES / 'clover' / 'model').resolve()}"
    assert stored.target_kind == "local"
    assert stored.audited_at == when
    assert stored.tool_version == "0.1.0"
    assert stored.licence_declared == report.facts.license.declared == "apache-2.0"
    assert stored.licence_spdx == "Apache-2.0"
    assert (stored.errors, stored.warnings, stored.infos) == tuple(
        getattr(report.summary, s) for s in ("error", "warning", "info")
    )
    assert [(f.rule_id, f.severity, f.path, f.line) for f in stored.findings] == [
        (f.rule_id, f.severity, f.location.path, f.location.line) for f in report.findings
    ]
    (saved,) = stored.promises
    assert (saved.artifact, saved.text, saved.status, saved.repo) == (
        "training_code",
        promise.text,
        "missing",
        "code",
    )
    assert (saved.path, saved.line, saved.first_seen) == ("README.md", 42, promise.first_seen)


def test_facts_are_stored_as_json(store_url: str) -> None:
    from sqlalchemy import select

    from cardaudit.store.schema import AuditRow

    report = clover_report()
    with Store.open(store_url) as store, store.engine.connect() as connection:
        store.record(report)
        facts = connection.execute(select(AuditRow.facts)).scalar_one()
    assert facts["license"]["declared_spdx"] == "Apache-2.0"
    assert facts["parameters"]["total"] == report.facts.parameters.total


def test_suppressed_findings_are_kept_and_flagged(store_url: str) -> None:
    report = audit(AuditRequest(str(FIXTURES / "apache-link-only" / "model")))
    first = report.findings[0]
    assert first.rule_id == "ATT001"
    report = replace(
        report, findings=report.findings[1:], suppressed=(replace(first, suppressed_by="waiver"),)
    )
    with Store.open(store_url) as store:
        store.record(report)
        (stored,) = store.audits(target_key(report.target))
    assert [f.suppressed_by for f in stored.findings if f.rule_id == first.rule_id] == ["waiver"]
    assert len(stored.active_findings()) == len(report.findings)


def test_tracked_list(store_url: str, tmp_path: Path) -> None:
    with Store.open(store_url) as store:
        assert store.track("hub:org/a", "org/a", None, None) is True
        assert store.track("hub:org/a", "org/a", "/code", None) is False  # updated
        assert store.track("local:/x", "/x", None, None) is True
        assert [(t.key, t.code) for t in store.tracked()] == [
            ("hub:org/a", "/code"),
            ("local:/x", None),
        ]
        assert store.untrack("hub:org/a") is True
        assert store.untrack("hub:org/a") is False
        assert [t.key for t in store.tracked()] == ["local:/x"]


def test_keys_for_command_line_targets(tmp_path: Path) -> None:
    assert key_for_argument("org/name") == "hub:org/name"
    assert key_for_argument(str(tmp_path)) == f"local:{tmp_path.resolve()}"


def test_unknown_target_is_a_clear_error(store_url: str) -> None:
    with Store.open(store_url) as store, pytest.raises(StoreError, match="no stored audit of"):
        store.require_audits("hub:org/none")


def test_unreachable_database_is_a_one_line_store_error() -> None:
    with pytest.raises(StoreError, match=r"cannot open the store postgresql\+psycopg://u:\*\*\*@"):
        Store.open("postgresql://u:pw@127.0.0.1:1/none?connect_timeout=2")


def test_unwritable_location_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError):
        Store.open(str(blocker / "sub" / "store.db"))


def test_corrupt_sqlite_file_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot open the store"):
        Store.open(str(path))
