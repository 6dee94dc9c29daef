"""Schema changes go through Alembic: the ORM models must equal the migrated schema."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from cardaudit.store import Store
from cardaudit.store.engine import (
    SCHEMA_REVISION,
    alembic_config,
    create_store_engine,
    current_revision,
    head_revision,
    resolve_url,
    stored_revision,
)
from cardaudit.store.schema import Base

TABLES = {"alembic_version", "audits", "findings", "promises", "tracked"}


def test_opening_a_store_migrates_it_to_head(store_url: str) -> None:
    with Store.open(store_url) as store:
        assert current_revision(store.engine) == head_revision() is not None
        assert set(inspect(store.engine).get_table_names()) >= TABLES


def test_models_match_the_migrations(store_url: str) -> None:
    """`alembic revision --autogenerate` would find nothing to add: no unmigrated change."""
    with Store.open(store_url) as store, store.engine.connect() as connection:
        diffs = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diffs == []


def test_downgrade_and_upgrade_again(store_url: str) -> None:
    engine = create_store_engine(resolve_url(store_url))
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "head")
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    engine.dispose()
    with Store.open(store_url) as store:  # the store migrates an empty database again
        assert current_revision(store.engine) == head_revision()


def test_schema_revision_is_alembics_head() -> None:
    """Stores at SCHEMA_REVISION skip Alembic: it must name the newest revision."""
    assert head_revision() == SCHEMA_REVISION


def test_a_store_at_head_opens_without_importing_alembic(tmp_path: Path) -> None:
    """One query reads the version; Alembic is imported only when a migration is due (and
    a SQLite store never imports the PostgreSQL dialect)."""
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 's.db'}"
    Store.open(url).close()  # created and migrated here
    probe = (
        "import sys; from cardaudit.store import Store\n"
        f"Store.open({url!r}).close()\n"
        "print(any(m == 'alembic' or m.startswith('alembic.') for m in sys.modules),"
        " 'sqlalchemy.dialects.postgresql' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]  # nor the PostgreSQL dialect


def test_a_store_behind_head_is_migrated(tmp_path: Path) -> None:
    url = resolve_url(str(tmp_path / "old.db"))
    engine = create_store_engine(url)
    assert stored_revision(engine) is None  # a new database: no version table yet
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
    assert stored_revision(engine) == "0001"
    engine.dispose()
    with Store.open(url) as store:
        assert stored_revision(store.engine) == SCHEMA_REVISION
        assert "deliveries" in {c["name"] for c in inspect(store.engine).get_columns("audits")}


def test_reopening_is_a_no_op(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    with Store.open(url) as store:
        store.track("hub:o/n", "o/n", None, None)
    with Store.open(url) as store:
        assert [t.key for t in store.tracked()] == ["hub:o/n"]


def test_every_revision_is_shipped_in_the_package() -> None:
    from alembic.script import ScriptDirectory

    import cardaudit.store

    scripts = ScriptDirectory.from_config(alembic_config())
    revisions = list(scripts.walk_revisions())
    assert [r.revision for r in revisions][::-1] == ["0001", "0002", "0003"]
    package = Path(cardaudit.store.__file__).parent
    assert all(Path(r.path).is_relative_to(package) for r in revisions)


def _seed_0001_store(url: str) -> None:
    """A store at revision 0001 holding one audit whose sentence promises two docs items."""
    import sqlalchemy as sa
    from sqlalchemy.dialects import postgresql

    json_type = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
    engine = create_store_engine(resolve_url(url))
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
    audits = sa.table(
        "audits",
        *(sa.column(name) for name in ("id", "target_key", "target_kind", "target_id")),
        *(sa.column(name) for name in ("revision", "audited_at", "tool_version")),
        *(sa.column(name) for name in ("schema_version", "errors", "warnings", "infos")),
        sa.column("facts", json_type),
        sa.column("checks", json_type),
    )
    promises = sa.table(
        "promises",
        *(sa.column(name) for name in ("id", "audit_id", "artifact", "text", "repo", "path")),
        *(sa.column(name) for name in ("line", "status", "first_seen", "reason")),
    )
    rows = [
        {"artifact": "docs", "item": item, "text": LEGACY_TEXT, "path": "README.md", "line": 17}
        for item in ("training instructions", "setup guides")
    ]
    with engine.begin() as connection:
        audit_id = connection.execute(  # ids from the database: PostgreSQL's sequence too
            audits.insert()
            .returning(audits.c.id)
            .values(
                target_key="hub:o/n",
                target_kind="hub",
                target_id="o/n",
                revision="a" * 40,
                audited_at=datetime(2026, 6, 1, tzinfo=UTC),
                tool_version="0.1",
                schema_version="1",
                errors=0,
                warnings=2,
                infos=0,
                facts={"promises": [{**row, "repo": "code", "status": "missing"} for row in rows]},
                checks=[],
            )
        ).scalar_one()
        for row in rows:
            del row["item"]
            connection.execute(
                promises.insert().values(audit_id=audit_id, repo="code", status="missing", **row)
            )
    assert current_revision(engine) == "0001"
    engine.dispose()


LEGACY_TEXT = "The SFT code, training instructions, backend code and setup guides are coming."


def test_a_0001_store_with_data_upgrades_in_place(store_url: str) -> None:
    """Opening an old store adds `promises.item` and `audits.deliveries` and fills each item
    from the facts stored with its audit; the data is kept and new audits diff against it."""
    from cardaudit.timeline import diff_audits

    _seed_0001_store(store_url)
    with Store.open(store_url) as store:
        assert current_revision(store.engine) == head_revision() == SCHEMA_REVISION
        (old,) = store.audits("hub:o/n")
        assert [(p.item, p.line, p.status) for p in old.promises] == [
            ("training instructions", 17, "missing"),
            ("setup guides", 17, "missing"),
        ]
        assert old.deliveries is None and old.warnings == 2
        moved = [
            {
                "artifact": "docs",
                "item": item,
                "text": LEGACY_TEXT,
                "repo": "code",
                "path": "README.md",
                "line": 19,
                "status": status,
            }
            for item, status in (
                ("training instructions", "delivered"),
                ("setup guides", "missing"),
            )
        ]
        store.record_json(
            {"target": {"kind": "hub", "id": "o/n"}, "facts": {"promises": moved}},
            "hub:o/n",
            datetime(2026, 6, 2, tzinfo=UTC),
            {"statements": [], "files": {}},
        )
        old, new = store.audits("hub:o/n")
    diff = diff_audits(old, new)
    assert diff.promises_appeared == () and diff.promises_dropped == ()
    assert [c.after.item for c in diff.promises_delivered] == ["training instructions"]
    assert new.deliveries == {"statements": [], "files": {}}


def test_promises_stored_without_items_still_pair_with_new_ones() -> None:
    """A row whose item the migration could not recover pairs by wording alone."""
    from cardaudit.store.records import PromiseRecord
    from cardaudit.timeline import match_promises

    legacy = PromiseRecord("docs", LEGACY_TEXT, "code", "README.md", 17, "missing")
    current = PromiseRecord(
        "docs", LEGACY_TEXT, "code", "README.md", 18, "missing", item="setup guides"
    )
    assert match_promises([legacy], [current]) == ([(legacy, current)], [], [])
