"""The git side of a local checkout: revision, file history and tags, read safely.

Everything goes through :mod:`cardaudit.sources.git_safety`: a checkout whose git metadata
could execute a command or lead outside the folder is not handed to git at all (its files are
still audited, and an SRC013 problem says why history is missing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cardaudit.model import FileEntry, FileVersion, Location, Problem, Tag

_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True)
class GitMetadata:
    """Revision, history and tags of a checkout, with what could not be read."""

    revision: str | None = None
    history: Mapping[str, tuple[FileVersion, ...]] = field(default_factory=dict)
    tags: tuple[Tag, ...] = ()
    problems: tuple[Problem, ...] = ()


def head_from_files(git_dir: Path) -> str | None:
    """HEAD's commit sha read from ``HEAD``, loose refs and ``packed-refs`` (no git command)."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="ascii", errors="replace").strip()
        for _ in range(5):  # symbolic refs may chain
            if _SHA.match(head):
                return head
            if not head.startswith("ref: refs/"):
                return None
            ref = head.removeprefix("ref: ").strip()
            if ".." in ref.split("/"):
                return None
            loose = git_dir / ref
            if loose.is_file():
                head = loose.read_text(encoding="ascii", errors="replace").strip()
                continue
            packed = git_dir / "packed-refs"
            if not packed.is_file():
                return None
            for line in packed.read_text(encoding="ascii", errors="replace").splitlines():
                sha, _, name = line.partition(" ")
                if name.strip() == ref and _SHA.match(sha):
                    return sha
            return None
    except OSError:
        return None
    return None


def read_git_metadata(
    root: Path, files: Sequence[FileEntry], repo_label: str, *, trusted_clone: bool = False
) -> GitMetadata:
    """Revision, history of the card / README / licence files and tags of ``root``.

    ``trusted_clone``: ``root`` is a clone cardaudit made in its cache (see ``open_repo``).
    """
    root = root.absolute()
    if not (root / ".git").exists():
        return GitMetadata()
    from cardaudit.sources.git_safety import inspect_git_dir, local_objects, open_repo

    check = inspect_git_dir(root) if not trusted_clone else None
    if check is not None and not check.usable:
        reasons = "; ".join(check.refused)
        problem = Problem(
            "SRC013",
            f"git history of {root.name} was not read: {reasons}. Git could run a command or "
            "read another repository with it, so no git command was run; the files were "
            "audited without their history",
            Location(".git", repo=repo_label),
        )
        revision = head_from_files(check.git_dir) if check.git_dir is not None else None
        return GitMetadata(revision=revision, problems=(problem,))
    try:
        repo = open_repo(root, trusted_clone=trusted_clone)
        revision = repo.head.commit.hexsha
    except Exception:  # any git failure just means "no revision known"
        return GitMetadata()
    from cardaudit.sources.history import file_history, repo_tags, tracked_history_paths

    problems: list[Problem] = []
    try:
        # A hostile partial clone may not fetch: read only the blobs it has.
        available = local_objects(repo) if check is not None and check.partial_clone else None
        read = file_history(repo, tracked_history_paths(e.path for e in files), available)
        history, tags = dict(read.versions), repo_tags(repo)
    except Exception as exc:  # a damaged or shallow repo: audit the files, say so
        history, tags = {}, ()
        problems.append(
            Problem(
                "SRC003",
                f"git history of {root.name} cannot be read: {exc}",
                Location(None, repo=repo_label),
            )
        )
    else:
        for path, count in sorted(read.missing.items()):
            problems.append(
                Problem(
                    "SRC003",
                    f"{count} earlier version(s) of {path} are not in the local object store "
                    "(a partial clone) and were not fetched: the history starts later",
                    Location(path, repo=repo_label),
                )
            )
    finally:
        repo.close()
    return GitMetadata(revision, history, tuple(tags), tuple(problems))
