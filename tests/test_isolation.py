"""The suite runs on a machine without a git identity and never reads the user's git config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_commits_and_tags_work_with_an_empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "README.md").write_text("hello\n")
    _git("add", "README.md", cwd=repo)
    _git("commit", "-q", "-m", "first", cwd=repo)
    _git("tag", "-m", "first release", "v1.0", cwd=repo)
    author = _git("log", "-1", "--format=%an <%ae>", cwd=repo)
    assert author == "cardaudit tests <tests@cardaudit.invalid>"


def test_the_users_global_git_config_is_not_read(tmp_path: Path):
    # Whatever the developer's ~/.gitconfig holds (identity, commit.gpgsign, hooksPath), git in
    # the tests sees an empty global config and no system config.
    done = subprocess.run(
        ["git", "config", "--show-origin", "--list"], cwd=tmp_path, capture_output=True, text=True
    )
    origins = {line.split("\t", 1)[0] for line in done.stdout.splitlines()}
    assert all(origin.startswith("command line:") for origin in origins), origins


def test_each_xdist_worker_has_its_own_postgresql_database():
    # The PostgreSQL store tests drop every table first: under `pytest -n auto` two workers
    # sharing one database would break each other's tests.
    from conftest import worker_database_url

    url = "postgresql://postgres@127.0.0.1:5432/cardaudit_test"
    assert worker_database_url(url, None).endswith("/cardaudit_test")
    gw0, gw1 = worker_database_url(url, "gw0"), worker_database_url(url, "gw1")
    assert gw0 == "postgresql+psycopg://postgres@127.0.0.1:5432/cardaudit_test_gw0"
    assert gw1.endswith("/cardaudit_test_gw1")
