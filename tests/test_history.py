"""Git history and tags of a local checkout, from a real repo built in tmp_path."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import git

from cardaudit.sources.local import read_snapshot


def _commit(repo: git.Repo, root: Path, files: dict[str, str], when: datetime, message: str):
    for name, text in files.items():
        (root / name).write_text(text)
        repo.index.add([name])
    return repo.index.commit(message, author_date=when, commit_date=when)


def test_history_and_tags_of_a_checkout(tmp_path: Path) -> None:
    root = tmp_path / "code"
    root.mkdir()
    repo = git.Repo.init(root)
    first = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    second = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    _commit(repo, root, {"README.md": "SFT code coming soon\n", "main.py": "x = 1\n"}, first, "a")
    head = _commit(repo, root, {"README.md": "SFT code released\n"}, second, "b")
    repo.create_tag("v1.0")

    snapshot, problems = read_snapshot(root, repo_label="code", kind="git")

    assert problems == []
    assert snapshot.revision == head.hexsha
    versions = snapshot.history["README.md"]
    assert [v.text for v in versions] == ["SFT code coming soon\n", "SFT code released\n"]
    assert [v.date for v in versions] == [first, second]
    assert "main.py" not in snapshot.history
    assert [(t.name, t.sha) for t in snapshot.tags] == [("v1.0", head.hexsha)]
