"""File history and tags of a git repository, read with gitpython (never executed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from cardaudit.model import FileVersion, Tag, frozen_mapping
from cardaudit.sources.local import MAX_TEXT_BYTES, decode_text

#: At most this many versions of one file are read (newest first, then returned oldest first).
MAX_VERSIONS = 200


def tracked_history_paths(paths: Iterable[str]) -> list[str]:
    """The files whose history matters: cards, READMEs and licence / notice files."""
    wanted = []
    for path in paths:
        name = path.rsplit("/", 1)[-1].lower()
        top_level = "/" not in path
        if top_level and name.startswith(("readme", "license", "licence", "copying", "notice")):
            wanted.append(path)
    return sorted(wanted)


def file_history(
    repo_root: Path | str, paths: Iterable[str]
) -> Mapping[str, tuple[FileVersion, ...]]:
    """Every committed version of each path (oldest first), following the current branch."""
    import git

    repo = git.Repo(repo_root)
    history: dict[str, tuple[FileVersion, ...]] = {}
    for path in paths:
        versions = []
        try:
            commits = list(repo.iter_commits(paths=path, max_count=MAX_VERSIONS))
        except (git.GitCommandError, ValueError):
            continue
        for commit in commits:
            try:
                blob = commit.tree / path
            except KeyError:
                continue  # the commit deleted the file
            if blob.size > MAX_TEXT_BYTES:
                continue
            text = decode_text(blob.data_stream.read())
            if text is None:
                continue
            versions.append(
                FileVersion(commit.hexsha, commit.committed_datetime.astimezone(UTC), text)
            )
        if versions:
            history[path] = tuple(reversed(versions))
    return frozen_mapping(history)


def repo_tags(repo_root: Path | str) -> tuple[Tag, ...]:
    """Tags with the commit they point at and their date (tagger date when annotated)."""
    import git

    repo = git.Repo(repo_root)
    tags = []
    for ref in repo.tags:
        try:
            commit = ref.commit
        except (ValueError, git.GitCommandError):
            continue
        tag_object = ref.tag
        if tag_object is not None:  # annotated: the tagger's date (GitPython has no datetime)
            when = datetime.fromtimestamp(tag_object.tagged_date, UTC)
        else:
            when = commit.committed_datetime.astimezone(UTC)
        tags.append(Tag(ref.name, commit.hexsha, when))
    return tuple(sorted(tags, key=lambda tag: (tag.date, tag.name)))
