"""Replay a fixture's history (``<fixture>/<repo>-history/commits.yaml``) into a real git repo.

Fixtures cannot contain a ``.git`` folder, so their history is data: dated commits, each
writing some files. Tests build the repo in ``tmp_path`` and audit it like any checkout.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import git
import yaml


def build_history_repo(history_dir: Path, dest: Path, upto: int | None = None) -> git.Repo:
    """Create ``dest`` as a git repo holding the first ``upto`` commits (all when None)."""
    spec = yaml.safe_load((history_dir / "commits.yaml").read_text(encoding="utf-8"))
    commits = spec["commits"] if upto is None else spec["commits"][:upto]
    dest.mkdir(parents=True, exist_ok=True)
    repo = git.Repo.init(dest)
    with repo.config_writer() as config:
        config.set_value("user", "name", "Fixture Author")
        config.set_value("user", "email", "fixture@example.org")
    for commit in commits:
        when = datetime.fromisoformat(str(commit["date"]))
        for target, source in (commit.get("files") or {}).items():
            path = dest / target
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(history_dir / source, path)
            repo.index.add([target])
        for target in commit.get("delete") or ():
            repo.index.remove([target], working_tree=True)
        repo.index.commit(commit["message"], author_date=when, commit_date=when)
    return repo
