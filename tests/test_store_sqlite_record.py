"""``audit --record`` into an existing SQLite store goes through sqlite3 and stores exactly
what the SQLAlchemy store stores."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cardaudit.config import find_config
from cardaudit.extract.promise_delivery import delivery_evidence
from cardaudit.pipeline import audit_evidence
from cardaudit.policy import policy_from
from cardaudit.sources import AuditRequest, acquire
from cardaudit.store import Store, target_key
from cardaudit.store.sqlite_record import (
    AUDIT_COLUMNS,
    FINDING_COLUMNS,
    PROMISE_COLUMNS,
    SqliteRecorder,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


def _report(name: str):
    folder = FIXTURES / name
    request = AuditRequest(
        str(folder / "model"),
        code=str(folder / "code") if (folder / "code").is_dir() else None,
        base=str(folder / "base") if (folder / "base").is_dir() else None,
    )
    evidence = acquire(request)
    policy = policy_from(find_config(evidence, None, cwd=folder))
    return audit_evidence(evidence, policy), evidence


def _tables(db: Path) -> dict[str, list[tuple]]:
    connection = sqlite3.connect(db)
    try:
        return {
            table: connection.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
            for table in ("audits", "findings", "promises")
        }
    finally:
        connection.close()


def _new_store(path: Path) -> str:
    url = f"sqlite:///{path}"
    Store.open(url).close()  # created and migrated as `track add` or a first --record does
    return url


@pytest.mark.parametrize("name", ["clover", "waived", "promises-kept", "drv-wrong-base"])
def test_the_recorder_stores_what_the_store_stores(tmp_path, name):
    report, evidence = _report(name)
    deliveries = delivery_evidence(evidence)
    first = datetime(2026, 6, 15, 12, 30, 5, 123456, tzinfo=UTC)
    with_store, with_recorder = _new_store(tmp_path / "a.db"), _new_store(tmp_path / "b.db")
    with Store.open(with_store) as store:
        store.record(report, first, deliveries)
        store.record(report, first + timedelta(hours=1))
    with SqliteRecorder.open(with_recorder) as recorder:
        assert recorder.record(report, first, deliveries) == 1
        assert recorder.record(report, first + timedelta(hours=1)) == 2
    expected = _tables(tmp_path / "a.db")
    assert expected["audits"] and _tables(tmp_path / "b.db") == expected
    key = target_key(report.target)
    with Store.open(with_store) as a, Store.open(with_recorder) as b:
        assert b.audits(key) == a.audits(key)  # read back through SQLAlchemy: the same
        latest = a.latest(key, content=False)
    with SqliteRecorder.open(with_recorder) as recorder:
        assert recorder.latest(key, content=False) == latest
        assert recorder.latest("local:/nothing/here", content=False) is None


def test_the_recorder_writes_every_column_of_the_schema():
    from cardaudit.store.schema import AuditRow, FindingRow, PromiseRow

    def names(row, skip):
        return {c.key for c in row.__table__.columns} - skip

    assert set(AUDIT_COLUMNS) == names(AuditRow, {"id"})
    assert set(FINDING_COLUMNS) == names(FindingRow, {"id", "audit_id"})
    assert set(PROMISE_COLUMNS) == names(PromiseRow, {"id", "audit_id"})


def test_anything_but_an_existing_current_sqlite_store_is_left_to_sqlalchemy(tmp_path):
    assert SqliteRecorder.open(str(tmp_path / "missing.db")) is None
    assert not (tmp_path / "missing.db").exists()
    (tmp_path / "junk.db").write_text("not a database")
    assert SqliteRecorder.open(str(tmp_path / "junk.db")) is None
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    assert SqliteRecorder.open(str(empty)) is None  # no alembic_version: never migrated
    old = tmp_path / "old.db"
    _new_store(old)
    connection = sqlite3.connect(old)
    connection.execute("UPDATE alembic_version SET version_num = '0002'")
    connection.commit()
    connection.close()
    assert SqliteRecorder.open(str(old)) is None  # needs a migration: Store does it
    assert SqliteRecorder.open("sqlite://") is None
    assert SqliteRecorder.open(f"sqlite:///{tmp_path / 'x.db'}?mode=ro") is None
    assert SqliteRecorder.open("postgresql://user@localhost/db") is None
    with pytest.raises(ValueError):
        current = tmp_path / "current.db"
        _new_store(current)
        SqliteRecorder.open(str(current)).latest("local:/x")  # content is not read


def test_record_twice_imports_no_sqlalchemy_the_second_time(tmp_path):
    db = tmp_path / "store.db"
    code = (
        "import sys\n"
        "sys.argv = ['cardaudit', 'audit', sys.argv[1], '-f', 'json', '--record', '--db', "
        "sys.argv[2]]\n"
        "from cardaudit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('sqlalchemy' in sys.modules, file=sys.stderr)\n"
    )
    model = str(FIXTURES / "clover" / "model")
    env = {"CARDAUDIT_NO_CACHE": "1", "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}

    def run() -> list[str]:
        result = subprocess.run(
            [sys.executable, "-c", code, model, str(db)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=False,
        )
        assert result.returncode in (0, 1), result.stderr
        return result.stderr.strip().splitlines()

    first = run()
    assert first[-1] == "True" and "recorded audit #1 in" in first[-2]
    second = run()
    assert second[-1] == "False", second
    assert "recorded audit #2 (previous: #1)" in second[-2]
