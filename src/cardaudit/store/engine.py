"""Where the store lives and how to connect: URL resolution, SQLite tuning, migrations."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from cardaudit.errors import StoreError

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.engine import URL

ENV_VAR = "CARDAUDIT_DB"
#: How long a SQLite writer waits for another process's lock before giving up.
SQLITE_BUSY_TIMEOUT_MS = 15_000
#: Advisory-lock key that serialises migrations on PostgreSQL ("cardaudit" in ASCII, cut).
PG_MIGRATION_LOCK = 0x63617264617564
MIGRATIONS = Path(__file__).parent / "migrations"
#: The Alembic head revision that ``schema.py`` matches. Opening a store at this revision
#: skips Alembic entirely; ``tests/test_store_migrations.py`` fails when a new revision is
#: added without updating it.
SCHEMA_REVISION = "0003"


def default_url() -> str:
    """A SQLite file in the user's data directory (honours ``XDG_DATA_HOME``)."""
    import platformdirs

    folder = Path(platformdirs.user_data_dir("cardaudit", appauthor=False))
    return f"sqlite:///{folder / 'cardaudit.db'}"


def resolve_url(url: str | None) -> str:
    """``--db`` beats ``CARDAUDIT_DB`` beats the default; a bare path means a SQLite file.

    ``postgresql://`` and ``postgres://`` URLs are sent through psycopg 3.
    """
    url = url or os.environ.get(ENV_VAR) or default_url()
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    scheme, rest = url.split("://", 1)
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return url


def safe_url(url: str | URL) -> str:
    """The URL with any password hidden, for messages."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(str(url) if not isinstance(url, str) else url).render_as_string(
            hide_password=True
        )
    except Exception:
        return "<invalid URL>"


def create_store_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and ``BEGIN IMMEDIATE``.

    ``BEGIN IMMEDIATE`` takes the write lock when a transaction starts, so two processes
    never both read and then fail to upgrade to a write (SQLite's "database is locked"
    deadlock); the busy timeout makes the second one wait instead.
    """
    from sqlalchemy import create_engine, event
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"invalid database URL {url!r}") from exc
    try:
        if parsed.get_backend_name() != "sqlite":
            return create_engine(parsed, pool_pre_ping=True)
    except NoSuchModuleError as exc:
        raise StoreError(f"unsupported database URL {safe_url(parsed)}: {exc}") from exc
    except ModuleNotFoundError as exc:
        raise StoreError(
            f"the driver for {safe_url(parsed)} is not installed ({exc.name}); "
            "for PostgreSQL: pip install 'cardaudit[postgres]'"
        ) from exc

    database = parsed.database
    if database and database != ":memory:" and not database.startswith("file:"):
        try:
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store folder for {database}: {exc}") from exc
    engine = create_engine(parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:  # type: ignore[no-untyped-def]
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def alembic_config(connection=None):  # type: ignore[no-untyped-def]
    """An Alembic config for the packaged migrations (optionally bound to a connection)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def stored_revision(engine: Engine) -> str | None:
    """The revision the store records, read with one query (no Alembic import).

    None for a store without ``alembic_version`` (a new database) or with several heads.
    """
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError, ProgrammingError

    with engine.connect() as connection:
        try:
            rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
        except (OperationalError, ProgrammingError):  # no such table: nothing migrated yet
            return None
    return str(rows[0][0]) if len(rows) == 1 else None


def upgrade(engine: Engine) -> None:
    """``alembic upgrade head`` on ``engine`` when its revision is not :data:`SCHEMA_REVISION`,
    serialised between processes.

    The common case, a store already at head, costs one query and never imports Alembic.
    SQLite serialises migrations through ``BEGIN IMMEDIATE``; PostgreSQL through an advisory
    lock. Alembic reads the current revision inside that transaction, so a second process
    that waited finds the schema already at head and does nothing.
    """
    if stored_revision(engine) == SCHEMA_REVISION:
        return
    from alembic import command

    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_MIGRATION_LOCK})")
        command.upgrade(alembic_config(connection), "head")
