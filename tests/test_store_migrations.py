"""Schema changes go through Alembic: the ORM models must equal the migrated schema."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from cardaudit.store import Store
from cardaudit.store.engine import (
    alembic_config,
    create_store_engine,
    current_revision,
    head_revision,
    resolve_url,
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
    assert [r.revision for r in revisions][::-1] == ["0001", "0002"]
    package = Path(cardaudit.store.__file__).parent
    assert all(Path(r.path).is_relative_to(package) for r in revisions)
