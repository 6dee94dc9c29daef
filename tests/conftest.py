"""Test isolation: no real caches, tokens, git config or identity, colours or terminal widths
leak into tests."""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
GOLDEN = Path(__file__).parent / "golden"

_HOME = tempfile.mkdtemp(prefix="cardaudit-tests-")
# Set before anything imports huggingface_hub: it reads these once, at import.
os.environ.update(
    {
        "HF_HOME": _HOME,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
        "HF_HUB_DISABLE_XET": "1",
        "NO_COLOR": "1",
        "COLUMNS": "120",
        # Upstream packages (transformers) are looked up only where a test puts them.
        "CARDAUDIT_UPSTREAM_PATH": _HOME,
        # Never the user's cache, not even while tests are collected (each test gets its own).
        "CARDAUDIT_CACHE": str(Path(_HOME) / "cardaudit-cache"),
    }
)
for _var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_ENDPOINT"):
    os.environ.pop(_var, None)
# Git never reaches github.com in tests: its URLs are rewritten to bare repos under this folder.
GITHUB_ROOT = Path(_HOME) / "github"
GITHUB_ROOT.mkdir()
os.environ.update(
    {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.{GITHUB_ROOT.as_uri()}/.insteadOf",
        "GIT_CONFIG_VALUE_0": "https://github.com/",
        "GIT_TERMINAL_PROMPT": "0",
        # Clones cardaudit starts use https only unless git's own GIT_ALLOW_PROTOCOL says
        # otherwise: the rewritten github.com URLs above are file:// URLs.
        "GIT_ALLOW_PROTOCOL": "https:file",
    }
)
# Git never reads the user's or the machine's config, and every commit or tag a test makes
# has this identity: a CI container or a fresh machine has no ``user.name`` (and a developer's
# ``commit.gpgsign`` or hooks must not change what the tests do).
_GIT_GLOBAL = Path(_HOME) / "gitconfig"
_GIT_GLOBAL.write_text("")
os.environ.update(
    {
        "GIT_CONFIG_GLOBAL": str(_GIT_GLOBAL),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "cardaudit tests",
        "GIT_AUTHOR_EMAIL": "tests@cardaudit.invalid",
        "GIT_COMMITTER_NAME": "cardaudit tests",
        "GIT_COMMITTER_EMAIL": "tests@cardaudit.invalid",
    }
)


def pytest_configure(config: pytest.Config) -> None:
    """Start the local Hub before anything imports huggingface_hub (it reads HF_ENDPOINT once)."""
    import hub_server

    hub_server.SESSION = hub_server.FakeHub()
    os.environ["HF_ENDPOINT"] = hub_server.SESSION.endpoint
    # The local Hub's "CDN" (its LFS file storage) is another host, as on the real Hub.
    os.environ["CARDAUDIT_HUB_STORAGE_HOSTS"] = "127.0.0.2"


def pytest_unconfigure(config: pytest.Config) -> None:
    import hub_server

    if hub_server.SESSION is not None:
        hub_server.SESSION.close()
        hub_server.SESSION = None


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point every cache and data path at a per-test temp dir."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("CARDAUDIT_CACHE", str(tmp_path / "cardaudit-cache"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
    import hub_server

    if hub_server.SESSION is not None:
        hub_server.SESSION.reset()
        monkeypatch.setenv("HF_ENDPOINT", hub_server.SESSION.endpoint)


@pytest.fixture
def hub():
    """The local test Hub (tests/hub_server.py), emptied before every test."""
    import hub_server

    assert hub_server.SESSION is not None
    return hub_server.SESSION


@pytest.fixture
def github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder standing in for github.com (``https://github.com/o/r`` → ``<folder>/o/r``)."""
    root = tmp_path / "github"
    root.mkdir()
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{root.as_uri()}/.insteadOf")
    return root


# --------------------------------------------------------------------------- tracking store

PG_URL_VAR = "CARDAUDIT_TEST_PG_URL"


def _reset_postgres(url: str) -> None:
    """Drop every store table so each PostgreSQL test starts from an empty database."""
    from sqlalchemy import text

    from cardaudit.store.engine import create_store_engine, resolve_url
    from cardaudit.store.schema import Base

    engine = create_store_engine(resolve_url(url))
    with engine.begin() as connection:
        Base.metadata.drop_all(connection)
        connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()


def worker_database_url(url: str, worker: str | None) -> str:
    """The PostgreSQL URL this test process uses: under ``pytest -n`` each xdist worker gets
    its own database, ``<database>_<worker>`` (each test drops every table first, so two
    workers must never share one)."""
    from sqlalchemy.engine import make_url

    from cardaudit.store.engine import resolve_url

    parsed = make_url(resolve_url(url))
    if not worker:
        return parsed.render_as_string(hide_password=False)
    return parsed.set(database=f"{parsed.database}_{worker}").render_as_string(hide_password=False)


@functools.cache
def _postgres_for_this_process(url: str) -> str:
    """Create this worker's database on first use (needs CREATEDB, as .ci/run's server has)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    own = worker_database_url(url, os.environ.get("PYTEST_XDIST_WORKER"))
    name = make_url(own).database
    if own != worker_database_url(url, None):
        engine = create_engine(worker_database_url(url, None), isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            found = connection.execute(
                text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}
            ).scalar()
            if not found:
                connection.execute(text(f'CREATE DATABASE "{name}"'))
        engine.dispose()
    return own


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for an empty store: a SQLite file, and PostgreSQL when CI provides a server
    (``CARDAUDIT_TEST_PG_URL``; skipped without it)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url = os.environ.get(PG_URL_VAR)
    if not url:
        pytest.skip(f"{PG_URL_VAR} is not set (.ci/run starts a PostgreSQL server)")
    url = _postgres_for_this_process(url)
    _reset_postgres(url)
    return url
