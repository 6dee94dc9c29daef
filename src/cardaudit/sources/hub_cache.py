"""The commit store: what a Hub audit needs beyond huggingface_hub's own file cache.

Online audits keep here, by commit sha, the Hub's safetensors totals sent with the sha
(``info.json``), the file listing with sizes (``files.json``), the commit list read for the
card and licence history (``commits.json``) and the paths-info answers of its walk
(``paths-info/``), readable GGUF headers (``gguf-headers/``), the prefixes of unreadable
ones and safetensors header errors (safetensors headers and their lengths stay where
:func:`cardaudit.sources.hub.header_cache_path` puts them). A commit never changes, so
nothing is ever invalidated, and online re-audits of a commit read the listing, the
commit list, the history steps and the headers from here: only the revision is asked
again. With ``HF_HUB_OFFLINE=1`` the audit reads everything here instead of asking the
Hub; branch and tag names resolve as huggingface_hub resolves them offline, from
``refs/<name>`` in its cache (written by online audits, as the library writes them).

Every write is atomic (a temporary file renamed into place) and best effort (a read-only
cache only costs a refetch or the offline audit); an entry that cannot be read or parsed
counts as missing. Nothing here ever holds a token.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from cardaudit.errors import AuditError, SourceError
from cardaudit.model import FileEntry

SHA = re.compile(r"[0-9a-f]{40}")
SHORT_SHA = re.compile(r"[0-9a-f]{7,39}")
TRUE_VALUES = {"1", "ON", "YES", "TRUE"}
#: How to get what is missing, said at the end of every :class:`CacheMiss` message.
FIX = "run the audit once online (without HF_HUB_OFFLINE) to cache it"


def offline_mode() -> bool:
    """Whether ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is set, as huggingface_hub
    reads it: from the environment now, or from the library's constant once imported."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    if value.upper() in TRUE_VALUES:
        return True
    constants = sys.modules.get("huggingface_hub.constants")
    return bool(getattr(constants, "HF_HUB_OFFLINE", False))


class CacheMiss(AuditError):
    """Offline, something the audit needs is not cached. Not a :class:`SourceError` on
    purpose: an unfetchable base or code repo is a finding online (SRC010, SRC011), but one
    merely missing from the cache would make the offline report silently differ, so it stops
    the audit (exit 2)."""

    def __init__(self, what: str, hint: str = "") -> None:
        self.what = what
        self.hint = hint
        super().__init__(f"HF_HUB_OFFLINE is set and {what} is not in the cache: {FIX}{hint}")


@dataclass(frozen=True)
class HubTotals:
    """The Hub's safetensors parameter totals for one commit (``model_info().safetensors``)."""

    parameters: dict[str, int]
    total: int

    @classmethod
    def of(cls, value: Any) -> HubTotals | None:
        """From the library's ``SafeTensorsInfo`` (or None when it is not usable)."""
        return cls.checked(getattr(value, "parameters", None), getattr(value, "total", None))

    @classmethod
    def checked(cls, parameters: Any, total: Any) -> HubTotals | None:
        if not isinstance(parameters, dict) or not isinstance(total, int):
            return None
        if not all(isinstance(k, str) and isinstance(n, int) for k, n in parameters.items()):
            return None
        return cls(dict(parameters), total)


@dataclass(frozen=True)
class CommitRef:
    """One commit of a repo's history (the fields card history reads of ``GitCommitInfo``)."""

    commit_id: str
    created_at: datetime
    title: str = ""


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed into place; an unwritable
    cache is ignored (it only costs a refetch, or an offline audit)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def _safe_name(revision: str) -> bool:
    """A branch or tag name usable as a relative path (no ``..``, no absolute path)."""
    parts = revision.split("/")
    return bool(revision) and "\\" not in revision and all(p not in ("", ".", "..") for p in parts)


class HubStore:
    """The offline store for one audit: ``root`` in the cardaudit cache, refs in ``hf_cache``."""

    def __init__(self, hf_cache: Path, root: Path | None = None) -> None:
        if root is None:
            from cardaudit.disk_cache import cache_root

            root = cache_root() / "hub"
        self.hf_cache = hf_cache
        self.root = root

    # ------------------------------------------------------------------ layout

    @staticmethod
    def folder_name(repo_id: str) -> str:
        """``models--org--name``: huggingface_hub's folder name for a model repo."""
        return "--".join(["models", *repo_id.split("/")])

    def commit_dir(self, repo_id: str, sha: str) -> Path:
        return self.root / self.folder_name(repo_id) / sha

    def _ref_path(self, repo_id: str, revision: str) -> Path:
        return self.hf_cache / self.folder_name(repo_id) / "refs" / revision

    def _refusal_path(self, repo_id: str, revision: str) -> Path:
        safe = re.sub(r"[^\w.-]+", "--", revision)
        return self.root / self.folder_name(repo_id) / "refusals" / f"{safe}.json"

    def _load(self, path: Path) -> Any:
        try:
            return json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None

    def _save(self, path: Path, value: Any) -> None:
        write_atomic(path, json.dumps(value, sort_keys=True).encode())

    # ------------------------------------------------------------------ revision → sha

    def save_resolution(
        self, repo_id: str, revision: str | None, sha: str, totals: HubTotals | None
    ) -> None:
        """What ``model_info`` said for ``revision``: the sha (as ``refs/<name>`` in the
        huggingface_hub cache, as the library writes it) and the totals (by sha)."""
        data = None if totals is None else {"parameters": totals.parameters, "total": totals.total}
        self._save(self.commit_dir(repo_id, sha) / "info.json", {"sha": sha, "safetensors": data})
        name = revision or "main"
        with contextlib.suppress(OSError):  # an unwritable cache: nothing to forget
            self._refusal_path(repo_id, name).unlink(missing_ok=True)
        if name != sha and _safe_name(name):
            ref = self._ref_path(repo_id, name)
            try:
                current = ref.read_text().strip()
            except OSError:
                current = None
            if current != sha:
                write_atomic(ref, sha.encode())

    def save_refusal(self, repo_id: str, revision: str | None, message: str) -> None:
        """The Hub's definitive no (not found, gated, no such revision), replayed offline so
        a base model that could not be fetched is the same finding."""
        self._save(self._refusal_path(repo_id, revision or "main"), {"message": message})

    def resolve(self, repo_id: str, revision: str | None) -> tuple[str, HubTotals | None]:
        """Offline: the sha ``revision`` points at and the Hub's totals for it."""
        name = revision or "main"
        refusal = self._load(self._refusal_path(repo_id, name))
        if isinstance(refusal, dict) and isinstance(refusal.get("message"), str):
            raise SourceError(refusal["message"])
        sha: str | None = name if SHA.fullmatch(name) else None
        if sha is None and _safe_name(name):
            try:
                text = self._ref_path(repo_id, name).read_text().strip()
            except OSError:
                text = ""
            sha = text if SHA.fullmatch(text) else None
        if sha is None and SHORT_SHA.fullmatch(name):
            folder = self.root / self.folder_name(repo_id)
            matches = sorted(p.name for p in folder.glob(f"{name}*") if SHA.fullmatch(p.name))
            sha = matches[0] if len(matches) == 1 else None
        if sha is None:
            raise CacheMiss(f"revision {name!r} of {repo_id}")
        info = self._load(self.commit_dir(repo_id, sha) / "info.json")
        if not isinstance(info, dict) or info.get("sha") != sha:
            raise CacheMiss(f"the model info of {repo_id} at {sha}")
        data = info.get("safetensors")
        totals = None
        if isinstance(data, dict):
            totals = HubTotals.checked(data.get("parameters"), data.get("total"))
        return sha, totals

    # ------------------------------------------------------------------ listing, commits

    def save_files(self, repo_id: str, sha: str, files: list[FileEntry]) -> None:
        rows = [[entry.path, entry.size, entry.lfs] for entry in files]
        self._save(self.commit_dir(repo_id, sha) / "files.json", rows)

    def files(self, repo_id: str, sha: str) -> list[FileEntry]:
        rows = self._load(self.commit_dir(repo_id, sha) / "files.json")
        try:
            entries = [FileEntry(path, size, lfs) for path, size, lfs in rows]
        except (TypeError, ValueError):
            entries = None
        valid = entries is not None and all(
            isinstance(e.path, str) and type(e.size) is int and isinstance(e.lfs, bool)
            for e in entries
        )
        if not valid:
            raise CacheMiss(f"the file listing of {repo_id} at {sha}")
        return entries  # type: ignore[return-value]

    def save_commits(self, repo_id: str, sha: str, commits: list[CommitRef]) -> None:
        rows = [
            {"id": c.commit_id, "date": c.created_at.isoformat(), "title": c.title} for c in commits
        ]
        self._save(self.commit_dir(repo_id, sha) / "commits.json", rows)

    def commits(self, repo_id: str, sha: str) -> list[CommitRef]:
        rows = self._load(self.commit_dir(repo_id, sha) / "commits.json")
        try:
            commits = [
                CommitRef(row["id"], datetime.fromisoformat(row["date"]), str(row["title"]))
                for row in rows
            ]
        except (TypeError, ValueError, KeyError):
            commits = []
        if not commits or not all(SHA.fullmatch(str(c.commit_id)) for c in commits):
            raise CacheMiss(f"the commit list of {repo_id} at {sha}")
        return commits

    # ------------------------------------------------------------------ history steps

    def _paths_info_file(self, repo_id: str, sha: str, paths: list[str]) -> Path:
        key = hashlib.sha256("\n".join(sorted(paths)).encode()).hexdigest()[:24]
        return self.commit_dir(repo_id, sha) / "paths-info" / f"{key}.json"

    def save_paths_info(self, repo_id: str, sha: str, paths: list[str], answer: Any) -> None:
        """What ``get_paths_info(paths, expand=True)`` said at commit ``sha``: for each path
        found, file or folder, its last commit, size and whether it is in LFS."""
        rows = []
        for item in answer if isinstance(answer, list) else []:
            last = getattr(getattr(item, "last_commit", None), "oid", None)
            size = getattr(item, "size", None)
            rows.append(
                {
                    "path": getattr(item, "path", None),
                    "file": hasattr(item, "blob_id"),
                    "last_commit": last if isinstance(last, str) else None,
                    "size": size if isinstance(size, int) else None,
                    "lfs": getattr(item, "lfs", None) is not None,
                }
            )
        self._save(
            self._paths_info_file(repo_id, sha, paths), {"paths": sorted(paths), "items": rows}
        )

    def paths_info(self, repo_id: str, sha: str, paths: list[str]) -> list[Any]:
        """The answer :meth:`save_paths_info` kept, as objects with the attributes the
        history walk reads (``path``, ``blob_id`` for files, ``last_commit.oid``, ``size``,
        ``lfs``)."""
        stored = self._load(self._paths_info_file(repo_id, sha, paths))
        rows = stored.get("items") if isinstance(stored, dict) else None
        if not isinstance(rows, list) or stored.get("paths") != sorted(paths):
            raise CacheMiss(f"the history of {', '.join(paths)} at {sha[:12]}")
        items: list[Any] = []
        for row in rows:
            if not isinstance(row, dict) or not isinstance(row.get("path"), str):
                raise CacheMiss(f"the history of {', '.join(paths)} at {sha[:12]}")
            fields = {
                "path": row["path"],
                "size": row.get("size"),
                "lfs": True if row.get("lfs") else None,
                "last_commit": SimpleNamespace(oid=row.get("last_commit")),
            }
            if row.get("file"):
                fields["blob_id"] = None
            items.append(SimpleNamespace(**fields))
        return items

    # ------------------------------------------------------------------ headers

    def _header_file(self, repo_id: str, sha: str, kind: str, path: str) -> Path:
        safe = re.sub(r"[^\w.-]+", "--", path)
        return self.commit_dir(repo_id, sha) / kind / safe

    def save_header_error(self, repo_id: str, sha: str, path: str, error: str) -> None:
        """Why a safetensors header could not be read (its bytes never change)."""
        write_atomic(self._header_file(repo_id, sha, "header-errors", path), error.encode())

    def header_error(self, repo_id: str, sha: str, path: str) -> str | None:
        try:
            text = self._header_file(repo_id, sha, "header-errors", path).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return text or None

    def gguf_header_path(self, repo_id: str, sha: str, path: str) -> Path:
        """Where a readable GGUF header (the bytes up to its tensor data) is kept."""
        return self._header_file(repo_id, sha, "gguf-headers", path)

    def save_gguf_prefix(self, repo_id: str, sha: str, path: str, prefix: bytes) -> None:
        """The prefix of a GGUF file whose header could not be parsed (to say so offline)."""
        write_atomic(self._header_file(repo_id, sha, "gguf-prefixes", path), prefix)

    def gguf_prefix(self, repo_id: str, sha: str, path: str) -> bytes | None:
        try:
            return self._header_file(repo_id, sha, "gguf-prefixes", path).read_bytes() or None
        except OSError:
            return None
