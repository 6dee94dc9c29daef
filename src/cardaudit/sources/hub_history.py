"""The history of a Hub repo's card and licence files, at a cost proportional to their changes.

The Hub tells, for a set of paths at a revision, the commit that last changed each of them
(``paths-info`` with ``expand``). From the audited commit, the path's last commit C is one
version; the walk goes on at C's parent (the next entry of the commit list, newest first:
the Hub's history is linear) and stops where the path does not exist. A card edited 4 times
in 600 commits costs 4 steps, not 600. Paths that are due at the same revision are asked
in one request.

The walk (:func:`walk_changes`) is pure: it gets the commit order and a ``paths_info``
function, so odd answers (a commit outside the history, a missing last commit, folders)
are tested without a server. Every odd answer stops that path's walk with a note; the
walk always ends, because each path's next revision is strictly older than the last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cardaudit.sources.history import MAX_VERSIONS
from cardaudit.sources.local import MAX_TEXT_BYTES

#: The Hub pages ``paths-info`` answers with ``expand`` at 50 entries, and huggingface_hub
#: does not follow the pages: never ask for more paths at once.
PATHS_PER_REQUEST = 50

#: ``paths_info(paths, revision)``: the Hub's entries (``RepoFile`` / ``RepoFolder``).
PathsInfo = Callable[[list[str], str], Sequence[Any]]

__all__ = ["MAX_VERSIONS", "Change", "Walk", "walk_changes"]


@dataclass(frozen=True)
class Change:
    """One version of a path: the commit that wrote it, and what the Hub says of the blob."""

    path: str
    commit: str
    size: int | None
    lfs: bool

    @property
    def readable(self) -> bool:
        """Whether this version is a small text file the audit reads (not LFS, not huge)."""
        return not self.lfs and (self.size is None or self.size <= MAX_TEXT_BYTES)


@dataclass
class Walk:
    """The versions of each path (newest first), notes on cut walks, and requests made."""

    changes: dict[str, list[Change]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    requests: int = 0


def walk_changes(
    paths: Iterable[str],
    order: Sequence[str],
    paths_info: PathsInfo,
    max_versions: int = MAX_VERSIONS,
) -> Walk:
    """Walk back each path's versions from ``order[0]`` (the audited commit).

    ``order`` is the commit list, newest first (each commit's parent is the next one).
    """
    walk = Walk({path: [] for path in paths})
    if not walk.changes:
        return walk
    position: dict[str, int] = {}
    for index, sha in enumerate(order):
        position.setdefault(sha, index)  # a repeated id (a loop in odd data) keeps its first
    if not order:
        for path in walk.changes:
            walk.notes[path] = "the Hub listed no commits: history not read"
        return walk
    due: dict[str, int] = dict.fromkeys(walk.changes, 0)
    while due:
        at = min(due.values())  # the newest revision some path is due at
        batch = sorted(path for path, index in due.items() if index == at)[:PATHS_PER_REQUEST]
        revision = order[at]
        answer = paths_info(batch, revision)
        walk.requests += 1
        found: dict[str, Any] = {}
        for item in answer if isinstance(answer, Sequence) else ():
            name = getattr(item, "path", None)
            if name in batch and name not in found:
                found[name] = item
        for path in batch:
            del due[path]
            item = found.get(path)
            if item is None:
                continue  # the path does not exist here: its history starts after
            next_index = _step(walk, path, item, at, revision, order, position, max_versions)
            if next_index is not None:
                due[path] = next_index
    for versions in walk.changes.values():
        versions.reverse()  # newest first while walking; oldest first from here on
    return walk


def _step(
    walk: Walk,
    path: str,
    item: Any,
    at: int,
    revision: str,
    order: Sequence[str],
    position: dict[str, int],
    max_versions: int,
) -> int | None:
    """Record the version ``item`` names; return where the path is due next (None: done)."""
    short = revision[:12]
    if not hasattr(item, "blob_id"):
        walk.notes[path] = f"{path} is a folder at {short}: history stops there"
        return None
    last = getattr(item, "last_commit", None)
    commit = getattr(last, "oid", None)
    if not isinstance(commit, str):
        walk.notes[path] = f"the Hub sent no last commit for {path} at {short}: history stops there"
        return None
    index = position.get(commit)
    if index is None or index < at:
        walk.notes[path] = (
            f"the Hub named {commit[:12]} as the last change of {path} at {short}, "
            "a commit outside its history: history stops there"
        )
        return None
    size = getattr(item, "size", None)
    lfs = getattr(item, "lfs", None) is not None
    versions = walk.changes[path]
    versions.append(Change(path, commit, size if isinstance(size, int) else None, lfs))
    if index + 1 >= len(order):
        return None  # written by the first commit
    if len(versions) >= max_versions:
        walk.notes[path] = (
            f"history cut at the newest {max_versions} versions "
            f"(older ones, before {commit[:12]}, not read)"
        )
        return None
    return index + 1
