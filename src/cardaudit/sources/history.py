"""File history and tags of a git repository, read with gitpython (never executed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cardaudit.model import FileVersion, Tag, frozen_mapping
from cardaudit.sources.local import MAX_TEXT_BYTES, decode_text

if TYPE_CHECKING:
    import git

#: At most this many versions of one file are read (newest first, then returned oldest first).
MAX_VERSIONS = 200


@dataclass(frozen=True)
class FileHistory:
    """The versions read per path, and how many versions per path had no blob to read."""

    versions: Mapping[str, tuple[FileVersion, ...]]
    missing: Mapping[str, int] = field(default_factory=dict)


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
    repo: git.Repo, paths: Iterable[str], available: AbstractSet[str] | None = None
) -> FileHistory:
    """Every committed version of each path (oldest first), following the current branch.

    ``repo`` comes from :func:`cardaudit.sources.git_safety.open_repo`, so reading runs
    nothing from the repository. ``available``: the blob ids present in a partial clone that
    may not fetch (git would die asking for any other); a version whose blob is not there is
    counted in ``missing`` instead of failing the history.
    """
    import git

    history: dict[str, tuple[FileVersion, ...]] = {}
    missing: dict[str, int] = {}
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
            except ValueError:  # the tree itself is missing
                missing[path] = missing.get(path, 0) + 1
                continue
            if available is not None and blob.hexsha not in available:
                missing[path] = missing.get(path, 0) + 1
                continue
            if blob.size > MAX_TEXT_BYTES:
                continue
            try:
                data = blob.data_stream.read()
            except ValueError:  # "missing" from cat-file: a blob the partial clone lacks
                missing[path] = missing.get(path, 0) + 1
                continue
            text = decode_text(data)
            if text is None:
                continue
            versions.append(
                FileVersion(commit.hexsha, commit.committed_datetime.astimezone(UTC), text)
            )
        if versions:
            history[path] = tuple(reversed(versions))
    return FileHistory(frozen_mapping(history), missing)


def repo_tags(repo: git.Repo) -> tuple[Tag, ...]:
    """Tags with the commit they point at and their date (tagger date when annotated)."""
    import git

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
