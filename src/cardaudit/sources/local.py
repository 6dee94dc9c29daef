"""LocalSource: a directory laid out like a model repo (or a code repo checkout)."""

from __future__ import annotations

import os
from pathlib import Path

from cardaudit.errors import SourceError
from cardaudit.extract.reuse import is_reuse_path
from cardaudit.model import FileEntry, Location, Problem, RepoSnapshot, TextFile, frozen_mapping

#: Text files larger than this are listed but not read.
MAX_TEXT_BYTES = 4 * 1024 * 1024
#: Files that are often bigger and still needed whole (a tokenizer.json holds the vocabulary).
MAX_TEXT_BYTES_BY_NAME = {"tokenizer.json": 32 * 1024 * 1024}
#: At most this many text files are read from one repo (huge code repos stay bounded).
MAX_TEXT_FILES = 4000
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    "node_modules",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".cache",
}
TEXT_SUFFIXES = {
    ".md",
    ".markdown",
    ".txt",
    ".rst",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".cfg",
    ".ini",
    ".py",
    ".sh",
    ".jinja",
    ".html",
    ".ipynb",
    ".cff",
    ".bib",
}
TEXT_STEMS = (
    "license",
    "licence",
    "notice",
    "copying",
    "copyright",
    "use_policy",
    "readme",
    "authors",
    "contributors",
    "third_party",
    "third-party",
    "credits",
    "citation",
)


def wants_text(path: str) -> bool:
    """Whether a file is worth reading as text (cards, licences, configs, code)."""
    name = path.rsplit("/", 1)[-1].lower()
    suffix = os.path.splitext(name)[1]
    return suffix in TEXT_SUFFIXES or name.startswith(TEXT_STEMS) or is_reuse_path(path)


def decode_text(data: bytes) -> str | None:
    """UTF-8 text (BOM stripped), or None for binary content."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = data.decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes any byte
            return None
        printable = sum(ch.isprintable() or ch in "\r\n\t" for ch in text[:4096])
        return text if printable >= 0.95 * min(len(text), 4096) else None


def list_files(root: Path) -> list[FileEntry]:
    """Every regular file under ``root`` (skipping VCS and cache folders), sorted by path."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for filename in filenames:
            full = Path(dirpath, filename)
            if full.is_symlink() or not full.is_file():
                continue
            rel = full.relative_to(root).as_posix()
            entries.append(FileEntry(rel, full.stat().st_size))
    return sorted(entries, key=lambda entry: entry.path)


def read_snapshot(
    root: Path, repo_label: str = "model", kind: str = "local", *, trusted_clone: bool = False
) -> tuple[RepoSnapshot, list[Problem]]:
    """List ``root`` and read its text files; unreadable ones become problems.

    ``trusted_clone``: ``root`` is a clone cardaudit made in its cache, whose git config is
    our own; any other checkout is hostile and its git metadata is vetted first.
    """
    if not root.exists():
        raise SourceError(f"path not found: {root}")
    if not root.is_dir():
        raise SourceError(f"not a directory: {root}")
    files = list_files(root)
    texts: dict[str, TextFile] = {}
    skipped: dict[str, str] = {}
    problems: list[Problem] = []
    for entry in files:
        if not wants_text(entry.path):
            continue
        limit = MAX_TEXT_BYTES_BY_NAME.get(entry.path.rsplit("/", 1)[-1], MAX_TEXT_BYTES)
        if entry.size > limit:
            skipped[entry.path] = f"larger than {limit} bytes"
            if "/" not in entry.path:  # a top-level card, licence or config left unread matters
                problems.append(
                    Problem(
                        "SRC003",
                        f"{entry.path} was not read: {entry.size:,} bytes is over the "
                        f"{limit:,}-byte limit for text evidence",
                        Location(entry.path, repo=repo_label),
                    )
                )
            continue
        if len(texts) >= MAX_TEXT_FILES:
            skipped[entry.path] = f"over the {MAX_TEXT_FILES}-file limit"
            continue
        try:
            data = (root / entry.path).read_bytes()
        except OSError as exc:
            skipped[entry.path] = f"cannot be read: {exc.strerror or exc}"
            problems.append(
                Problem(
                    "SRC003",
                    f"{entry.path} cannot be read: {exc}",
                    Location(entry.path, repo=repo_label),
                )
            )
            continue
        text = decode_text(data)
        if text is None:
            skipped[entry.path] = "binary content"
            problems.append(
                Problem(
                    "SRC003",
                    f"{entry.path} is binary, not text",
                    Location(entry.path, repo=repo_label),
                )
            )
            continue
        texts[entry.path] = TextFile(entry.path, text)
    from cardaudit.sources.local_git import read_git_metadata

    git_meta = read_git_metadata(root, files, repo_label, trusted_clone=trusted_clone)
    problems += git_meta.problems
    snapshot = RepoSnapshot(
        kind="git" if kind == "git" else "local",
        id=root.name,
        path=str(root),
        revision=git_meta.revision,
        files=tuple(files),
        texts=frozen_mapping(texts),
        skipped=frozen_mapping(skipped),
        history=frozen_mapping(dict(git_meta.history)),
        tags=git_meta.tags,
    )
    return snapshot, problems
