"""A local server speaking the Hugging Face Hub API to the unmodified huggingface_hub client.

Written for cardaudit's tests and benchmark (stdlib only, real sockets, threaded). It serves
in-memory repos with commits, branches and tags (model info, tree, refs, commits, paths-info
with each path's last commit, resolve); file contents are bytes or (sparse) files on
disk. LFS files are answered with a 302 to a second "CDN" server on 127.0.0.2 (the 2.x client
only follows same-origin HEAD redirects, as on the real Hub). Every request is logged with
the bytes of body sent, so tests can prove that no weight bytes beyond headers were fetched.

Faults can be injected per path (status, headers, body, delay) to test 429/5xx retries,
timeouts and malformed responses.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote

import yaml

#: Files at least this big, or with these suffixes, are stored as LFS.
LFS_MIN_SIZE = 10 * 1024 * 1024
LFS_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".onnx", ".msgpack", ".h5")
#: A GET of an LFS file this big without a Range header is refused (and logged) with 403.
WEIGHT_GUARD_BYTES = 50 * 1024 * 1024


# --------------------------------------------------------------------------- content


@dataclass
class HubFile:
    """One file of a commit: bytes in memory, or a path on disk (possibly sparse)."""

    data: bytes | None = None
    disk: Path | None = None
    lfs: bool | None = None

    @property
    def size(self) -> int:
        return len(self.data) if self.data is not None else self.disk.stat().st_size  # type: ignore[union-attr]

    def is_lfs(self, path: str) -> bool:
        if self.lfs is not None:
            return self.lfs
        return path.endswith(LFS_SUFFIXES) or self.size >= LFS_MIN_SIZE

    @property
    def git_sha(self) -> str:
        """The git blob sha1 (small files only; large ones get a stable pseudo id)."""
        if self.data is None:
            return hashlib.sha1(f"{self.disk}:{self.size}".encode()).hexdigest()
        return hashlib.sha1(b"blob %d\0" % len(self.data) + self.data).hexdigest()

    @property
    def sha256(self) -> str:
        """LFS oid. Sparse files are never hashed: a stable pseudo oid stands in."""
        if self.data is None:
            return hashlib.sha256(f"{self.disk}:{self.size}".encode()).hexdigest()
        return hashlib.sha256(self.data).hexdigest()

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``start``..``end`` inclusive."""
        if self.data is not None:
            return self.data[start : end + 1]
        with open(self.disk, "rb") as stream:  # type: ignore[arg-type]
            stream.seek(start)
            return stream.read(end - start + 1)


@dataclass
class Commit:
    sha: str
    title: str
    date: datetime
    files: dict[str, HubFile]
    parent: str | None


@dataclass
class HubRepo:
    id: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    private: bool = False
    gated: bool = False
    #: Tokens that may read the repo when it is private or gated.
    allowed_tokens: set[str] = field(default_factory=set)

    def resolve(self, revision: str) -> Commit | None:
        sha = self.branches.get(revision) or self.tags.get(revision) or revision
        if sha in self.commits:
            return self.commits[sha]
        matches = [
            c for s, c in self.commits.items() if len(revision) >= 7 and s.startswith(revision)
        ]
        return matches[0] if len(matches) == 1 else None

    def last_change(self, commit: Commit, path: str) -> Commit:
        """The newest commit of ``commit``'s lineage that changed ``path`` (a file, or any file
        under a folder): what the Hub reports as the path's ``lastCommit``."""

        def state(at: Commit) -> list[tuple[str, str]]:
            return sorted(
                (name, item.git_sha)
                for name, item in at.files.items()
                if name == path or name.startswith(path + "/")
            )

        current = state(commit)
        lineage = self.lineage(commit)
        for at, parent in zip(lineage, [*lineage[1:], None], strict=True):
            if parent is None or state(parent) != current:
                return at
        raise AssertionError("unreachable")  # pragma: no cover

    def lineage(self, commit: Commit) -> list[Commit]:
        """``commit`` and its ancestors, newest first."""
        out = []
        current: Commit | None = commit
        while current is not None:
            out.append(current)
            current = self.commits.get(current.parent) if current.parent else None
        return out


def _to_hub_file(value: bytes | str | Path | HubFile) -> HubFile:
    if isinstance(value, HubFile):
        return value
    if isinstance(value, Path):
        return HubFile(disk=value)
    if isinstance(value, str):
        return HubFile(data=value.encode("utf-8"))
    return HubFile(data=bytes(value))


def card_data(files: dict[str, HubFile]) -> dict[str, Any] | None:
    """The README front matter, as the Hub serves it in ``cardData``."""
    readme = files.get("README.md")
    if readme is None or readme.data is None:
        return None
    match = re.match(r"---\s*\n(.*?)\n---\s*\n", readme.data.decode("utf-8", "replace"), re.S)
    if not match:
        return None
    try:
        loaded = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None
    return loaded if isinstance(loaded, dict) else None


def write_sparse_safetensors(
    path: Path, tensors: dict[str, tuple[str, list[int]]], metadata: dict[str, str] | None = None
) -> Path:
    """A real safetensors header followed by a sparse hole as big as the tensor data."""
    widths = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1}
    widths |= {"U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
    header: dict[str, Any] = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        count = 1
        for dim in shape:
            count *= dim
        nbytes = count * widths[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as stream:
        stream.write(struct.pack("<Q", len(raw)) + raw)
        stream.truncate(8 + len(raw) + offset)
    return path


# --------------------------------------------------------------------------- the server


@dataclass
class LogEntry:
    method: str
    path: str
    host: str
    status: int
    range: str | None
    authorization: str | None
    body_bytes: int


@dataclass
class Fault:
    """An injected response for requests whose path matches ``pattern``."""

    pattern: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    times: int = 1_000_000
    delay: float = 0.0
    #: Seconds between body bytes: a drip-fed body (never idle long enough to time out).
    drip: float = 0.0
    #: Close the connection without answering (a reset mid-request).
    reset: bool = False
    #: Stop dripping when this event is set (so a test ends its server threads).
    stop: threading.Event = field(default_factory=threading.Event)


class FakeHub:
    """The Hub and its CDN: two threaded HTTP servers sharing repos and one request log."""

    def __init__(self) -> None:
        self.repos: dict[str, HubRepo] = {}
        self.log: list[LogEntry] = []
        self.faults: list[Fault] = []
        self.tree_page_size = 1000
        self.commits_page_size = 50
        self.without_safetensors_totals: set[str] = set()
        self._totals: dict[str, dict[str, Any] | None] = {}
        self._lock = threading.Lock()
        #: Bumped by reset(): a request that began in an earlier test (a delayed fault still
        #: sleeping when its test ended) is not logged into the next test's log.
        self.generation = 0
        self.hub = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, cdn=False))
        self.cdn = ThreadingHTTPServer(("127.0.0.2", 0), _handler(self, cdn=True))
        for server in (self.hub, self.cdn):
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.hub.server_address[1]}"

    @property
    def cdn_endpoint(self) -> str:
        return f"http://127.0.0.2:{self.cdn.server_address[1]}"

    def close(self) -> None:
        for server in (self.hub, self.cdn):
            server.shutdown()
            server.server_close()

    def reset(self) -> None:
        with self._lock:
            self.generation += 1
            self.repos.clear()
            self.log.clear()
            self.faults.clear()
            self.tree_page_size = 1000
            self.commits_page_size = 50
            self.without_safetensors_totals.clear()
            self._totals.clear()

    # ------------------------------------------------------------------ repo building

    def add_repo(self, repo_id: str, **options: Any) -> HubRepo:
        repo = HubRepo(repo_id, **options)
        self.repos[repo_id] = repo
        return repo

    def commit(
        self,
        repo_id: str,
        files: dict[str, bytes | str | Path | HubFile],
        *,
        title: str = "Upload files",
        date: datetime | None = None,
        branch: str = "main",
        delete: tuple[str, ...] = (),
    ) -> str:
        """Add a commit on ``branch`` (files are merged with its parent's); return its sha."""
        repo = self.repos.get(repo_id) or self.add_repo(repo_id)
        parent_sha = repo.branches.get(branch)
        content = dict(repo.commits[parent_sha].files) if parent_sha else {}
        content.update({path: _to_hub_file(value) for path, value in files.items()})
        for path in delete:
            content.pop(path, None)
        when = date or datetime(2026, 1, 1, tzinfo=UTC)
        digest = hashlib.sha1(f"{repo_id}\0{parent_sha}\0{title}\0{when.isoformat()}".encode())
        for path, item in sorted(content.items()):
            digest.update(f"\0{path}\0{item.git_sha}".encode())
        sha = digest.hexdigest()
        repo.commits[sha] = Commit(sha, title, when, content, parent_sha)
        repo.branches[branch] = sha
        return sha

    def commit_folder(self, repo_id: str, folder: Path, **options: Any) -> str:
        """Commit every file under ``folder`` (small files as bytes, big ones by path)."""
        files: dict[str, bytes | str | Path | HubFile] = {}
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                rel = path.relative_to(folder).as_posix()
                files[rel] = path.read_bytes() if path.stat().st_size < LFS_MIN_SIZE else path
        return self.commit(repo_id, files, **options)

    def tag(self, repo_id: str, name: str, sha: str) -> None:
        self.repos[repo_id].tags[name] = sha

    def fault(self, pattern: str, status: int, **options: Any) -> Fault:
        fault = Fault(pattern, status, **options)
        self.faults.append(fault)
        return fault

    def safetensors_totals(self, commit: Commit) -> dict[str, Any] | None:
        """Parameters by dtype over every header of the model's weights, as the Hub computes
        them for ``model_info``'s ``safetensors`` (the index's shards, else model.safetensors);
        ``without_safetensors_totals`` holds commits the Hub has no totals for."""
        if commit.sha in self.without_safetensors_totals:
            return None
        if commit.sha not in self._totals:
            self._totals[commit.sha] = _safetensors_totals(commit.files)
        return self._totals[commit.sha]

    # ------------------------------------------------------------------ log helpers

    def requests(self, method: str | None = None, contains: str = "") -> list[LogEntry]:
        return [
            e
            for e in list(self.log)
            if (method is None or e.method == method) and contains in unquote(e.path)
        ]

    def body_bytes(self) -> int:
        return sum(entry.body_bytes for entry in list(self.log))

    def weight_bytes(self) -> int:
        """Body bytes of every weight file sent (through the Hub or the CDN)."""
        return sum(
            e.body_bytes
            for e in list(self.log)
            if e.method == "GET" and unquote(e.path).endswith(LFS_SUFFIXES)
        )

    def record(self, entry: LogEntry, generation: int | None = None) -> None:
        with self._lock:
            if generation is None or generation == self.generation:
                self.log.append(entry)

    def take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and re.search(fault.pattern, unquote(path)):
                    fault.times -= 1
                    return fault
        return None


def _safetensors_totals(files: dict[str, HubFile]) -> dict[str, Any] | None:
    index = files.get("model.safetensors.index.json")
    names: list[str] = []
    if index is not None and index.data is not None:
        try:
            weight_map = json.loads(index.data).get("weight_map") or {}
            names = sorted(set(weight_map.values()))
        except (ValueError, AttributeError):
            return None
    elif "model.safetensors" in files:
        names = ["model.safetensors"]
    parameters: dict[str, int] = {}
    for name in names:
        item = files.get(name)
        if item is None or item.size < 8:
            return None
        try:
            (length,) = struct.unpack("<Q", item.read(0, 7))
            if length > item.size - 8:
                return None  # the Hub has no totals for a corrupt header
            header = json.loads(item.read(8, 7 + length))
            for key, info in header.items():
                if key == "__metadata__":
                    continue
                count = 1
                for dim in info["shape"]:
                    count *= int(dim)
                parameters[info["dtype"]] = parameters.get(info["dtype"], 0) + count
        except (ValueError, KeyError, TypeError, AttributeError, struct.error):
            return None
    if not parameters:
        return None
    return {"parameters": parameters, "total": sum(parameters.values())}


#: The hub the test session runs (set by tests/conftest.py), for helpers that seed it.
SESSION: FakeHub | None = None


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _handler(hub: FakeHub, *, cdn: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(_HubHandler):
        pass

    Handler.hub = hub
    Handler.is_cdn = cdn
    return Handler


class _HubHandler(BaseHTTPRequestHandler):
    hub: FakeHub
    is_cdn: bool
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes: without this, Nagle + delayed ACK
        # add ~40 ms to many responses.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._dispatch(head=False)

    def do_HEAD(self) -> None:
        self._dispatch(head=True)

    def do_POST(self) -> None:
        # Read the body first: an unread body would corrupt the next request on this socket.
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length > 0 else b""
        self._dispatch(head=False)

    # ------------------------------------------------------------------ plumbing

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        *,
        head: bool = False,
        length: int | None = None,
    ) -> None:
        sent = 0 if head else len(body)
        # Log before writing: the client may act on the response before this thread returns.
        self.hub.record(
            LogEntry(
                self.command,
                self.path,
                "cdn" if self.is_cdn else "hub",
                status,
                self.headers.get("Range"),
                self.headers.get("Authorization"),
                sent,
            ),
            getattr(self, "_generation", None),
        )
        self.send_response(status)
        headers = dict(headers or {})
        headers.setdefault("Content-Length", str(len(body) if length is None else length))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def _drip(self, fault: Fault) -> None:
        """Headers at once, then the body a byte at a time, ``fault.drip`` s apart."""
        self._send(fault.status, b"", fault.headers, length=len(fault.body))
        try:
            for byte in fault.body:
                if fault.stop.wait(fault.drip):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _json(self, data: Any, headers: dict[str, str] | None = None, head: bool = False) -> None:
        body = json.dumps(data).encode()
        self._send(200, body, {"Content-Type": "application/json", **(headers or {})}, head=head)

    def _error(
        self,
        status: int,
        code: str,
        message: str,
        head: bool = False,
        extra: dict[str, str] | None = None,
    ) -> None:
        body = json.dumps({"error": message}).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Error-Code": code,
            "X-Error-Message": message,
            **(extra or {}),
        }
        self._send(status, body, headers, head=head)

    def _token(self) -> str | None:
        value = self.headers.get("Authorization") or ""
        return value[7:] if value.lower().startswith("bearer ") else None

    def _dispatch(self, head: bool) -> None:
        self._generation = self.hub.generation
        fault = self.hub.take_fault(self.path)
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.reset:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault.drip and not head:
                self._drip(fault)
                return
            self._send(fault.status, fault.body, fault.headers, head=head)
            return
        raw_path, _, raw_query = self.path.partition("?")
        query = parse_qs(raw_query)
        segments = [unquote(part) for part in raw_path.strip("/").split("/")]
        try:
            if self.is_cdn:
                self._cdn(segments, head)
            elif segments[:2] == ["api", "models"] and len(segments) >= 4:
                self._api(segments[2] + "/" + segments[3], segments[4:], query, head)
            elif len(segments) >= 4 and segments[2] == "resolve":
                self._resolve(segments[0] + "/" + segments[1], segments[3], segments[4:], head)
            else:
                self._error(404, "EntryNotFound", f"no route for {raw_path}", head)
        except BrokenPipeError:  # pragma: no cover - client went away
            pass

    # ------------------------------------------------------------------ access

    def _repo(self, repo_id: str, head: bool, *, files: bool) -> HubRepo | None:
        """The repo if the caller may see it (and its files); else send the Hub's error."""
        repo = self.hub.repos.get(repo_id)
        token = self._token()
        allowed = token is not None and token in (repo.allowed_tokens if repo else set())
        if repo is None or (repo.private and not allowed):
            status = 404 if token else 401
            message = "Repository not found"
            self._error(status, "RepoNotFound", message, head)
            return None
        if files and repo.gated and not allowed:
            message = (
                f"Access to model {repo_id} is restricted. You must have access to it "
                "and be authenticated to access it. Please log in."
            )
            self._error(403 if token else 401, "GatedRepo", message, head)
            return None
        return repo

    def _commit(self, repo: HubRepo, revision: str, head: bool) -> Commit | None:
        commit = repo.resolve(revision)
        if commit is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}", head)
        return commit

    # ------------------------------------------------------------------ /api/models

    def _api(self, repo_id: str, rest: list[str], query: dict, head: bool) -> None:
        repo = self._repo(repo_id, head, files=False)
        if repo is None:
            return
        if self.command == "POST":
            if rest[:1] != ["paths-info"] or len(rest) < 2:
                self._error(405, "MethodNotAllowed", "POST is only for paths-info", head)
                return
            commit = self._commit(repo, rest[1], head)
            if commit is not None:
                self._paths_info(repo, commit)
            return
        if not rest or rest[0] == "revision":
            revision = rest[1] if len(rest) > 1 else "main"
            commit = self._commit(repo, revision, head)
            if commit is not None:
                info = self._info(repo, commit, blobs="blobs" in query)
                expand = query.get("expand") or query.get("expand[]")
                if expand:  # as on the Hub: only the fields asked for (and the ids)
                    info = {k: v for k, v in info.items() if k in {"_id", "id", *expand}}
                self._json(info, head=head)
        elif rest[0] == "tree" and len(rest) >= 2:
            commit = self._commit(repo, rest[1], head)
            if commit is not None:
                self._tree(repo, commit, "/".join(rest[2:]), query, head)
        elif rest[0] == "refs":
            self._json(self._refs(repo), head=head)
        elif rest[0] == "commits" and len(rest) >= 2:
            commit = self._commit(repo, rest[1], head)
            if commit is not None:
                self._commits(repo, commit, query, head)
        else:
            self._error(404, "EntryNotFound", "unknown API route", head)

    def _info(self, repo: HubRepo, commit: Commit, blobs: bool) -> dict[str, Any]:
        siblings = []
        for path, item in sorted(commit.files.items()):
            sibling: dict[str, Any] = {"rfilename": path}
            if blobs:
                sibling |= {"size": item.size, "blobId": item.git_sha}
                if item.is_lfs(path):
                    sibling["lfs"] = {"sha256": item.sha256, "size": item.size, "pointerSize": 134}
            siblings.append(sibling)
        data = card_data(commit.files)
        first = repo.lineage(commit)[-1]
        return {
            "_id": hashlib.md5(repo.id.encode()).hexdigest()[:24],
            "id": repo.id,
            "modelId": repo.id,
            "author": repo.id.split("/")[0],
            "sha": commit.sha,
            "lastModified": _iso(commit.date),
            "createdAt": _iso(first.date),
            "private": repo.private,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": list((data or {}).get("tags") or []),
            "cardData": data,
            "siblings": siblings,
            **({"safetensors": totals} if (totals := self.hub.safetensors_totals(commit)) else {}),
        }

    def _tree(self, repo: HubRepo, commit: Commit, prefix: str, query: dict, head: bool) -> None:
        entries = []
        folders: set[str] = set()
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        for path, item in sorted(commit.files.items()):
            if prefix and not path.startswith(prefix.rstrip("/") + "/"):
                continue
            rel = path[len(prefix) + 1 :] if prefix else path
            if "/" in rel and not recursive:
                folder = (prefix + "/" if prefix else "") + rel.split("/", 1)[0]
                if folder not in folders:
                    folders.add(folder)
                    entries.append(
                        {"type": "directory", "oid": "0" * 40, "size": 0, "path": folder}
                    )
                continue
            entry: dict[str, Any] = {"type": "file", "oid": item.git_sha, "size": item.size}
            entry["path"] = path
            if item.is_lfs(path):
                entry["lfs"] = {"oid": item.sha256, "size": item.size, "pointerSize": 134}
            entries.append(entry)
        self._paged(entries, self.hub.tree_page_size, query, head)

    def _paths_info(self, repo: HubRepo, commit: Commit) -> None:
        """``POST paths-info/{rev}`` (form or JSON body: ``paths``, ``expand``): an entry for
        each path that exists (files and folders; the others are left out, as on the Hub),
        with ``lastCommit`` {id, title, date} when expanded."""
        body = getattr(self, "body", b"")
        try:
            if "json" in (self.headers.get("Content-Type") or ""):
                data = json.loads(body or b"{}")
                paths, expand = data.get("paths") or [], data.get("expand", False)
            else:
                form = parse_qs(body.decode("utf-8"))
                paths, expand = form.get("paths", []), form.get("expand", ["false"])[0]
        except (ValueError, AttributeError):
            self._error(400, "BadRequest", "malformed paths-info body")
            return
        paths = [paths] if isinstance(paths, str) else paths
        if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
            self._error(400, "BadRequest", "paths must be a list of strings")
            return
        expanded = expand is True or str(expand).lower() in ("true", "1")
        entries = []
        for path in dict.fromkeys(path.strip("/") for path in paths):
            item = commit.files.get(path)
            if item is not None:
                entry: dict[str, Any] = {"type": "file", "oid": item.git_sha, "size": item.size}
                entry["path"] = path
                if item.is_lfs(path):
                    entry["lfs"] = {"oid": item.sha256, "size": item.size, "pointerSize": 134}
            elif path and any(name.startswith(path + "/") for name in commit.files):
                tree = hashlib.sha1(f"{commit.sha}:{path}".encode()).hexdigest()
                entry = {"type": "directory", "oid": tree, "size": 0, "path": path}
            else:
                continue
            if expanded:
                last = repo.last_change(commit, path)
                entry["lastCommit"] = {"id": last.sha, "title": last.title, "date": _iso(last.date)}
            entries.append(entry)
        self._json(entries)

    def _paged(self, items: list[Any], size: int, query: dict, head: bool) -> None:
        start = int(query.get("cursor", ["0"])[0])
        page = items[start : start + size]
        headers = {}
        if start + size < len(items):
            base = self.path.split("?")[0]
            params = {k: v[0] for k, v in query.items() if k != "cursor"}
            params["cursor"] = str(start + size)
            link = base + "?" + "&".join(f"{k}={quote(v)}" for k, v in params.items())
            headers["Link"] = f'<{self.hub.endpoint}{link}>; rel="next"'
        self._json(page, headers, head=head)

    def _refs(self, repo: HubRepo) -> dict[str, Any]:
        return {
            "branches": [
                {"name": n, "ref": f"refs/heads/{n}", "targetCommit": s}
                for n, s in sorted(repo.branches.items())
            ],
            "converts": [],
            "tags": [
                {"name": n, "ref": f"refs/tags/{n}", "targetCommit": s}
                for n, s in sorted(repo.tags.items())
            ],
        }

    def _commits(self, repo: HubRepo, commit: Commit, query: dict, head: bool) -> None:
        items = [
            {
                "id": c.sha,
                "title": c.title,
                "message": "",
                "date": _iso(c.date),
                "authors": [{"user": repo.id.split("/")[0]}],
            }
            for c in repo.lineage(commit)
        ]
        self._paged(items, self.hub.commits_page_size, query, head)

    # ------------------------------------------------------------------ files

    def _resolve(self, repo_id: str, revision: str, parts: list[str], head: bool) -> None:
        repo = self._repo(repo_id, head, files=True)
        if repo is None:
            return
        commit = self._commit(repo, revision, head)
        if commit is None:
            return
        path = "/".join(parts)
        item = commit.files.get(path)
        meta = {"X-Repo-Commit": commit.sha}
        if item is None:  # as on the Hub, naming the commit (the client caches the absence)
            self._error(404, "EntryNotFound", f"{path} does not exist on {revision}", head, meta)
            return
        if item.is_lfs(path):
            location = f"{self.hub.cdn_endpoint}/cdn/{repo_id}/{commit.sha}/{quote(path)}"
            headers = meta | {
                "Location": location,
                "X-Linked-Etag": f'"{item.sha256}"',
                "X-Linked-Size": str(item.size),
                "ETag": f'"{item.git_sha}"',
            }
            self._send(302, b"", headers, head=head)
            return
        self._serve(item, meta | {"ETag": f'"{item.git_sha}"'}, head, lfs=False)

    def _cdn(self, segments: list[str], head: bool) -> None:
        if len(segments) < 5 or segments[0] != "cdn":
            self._error(404, "EntryNotFound", "no such CDN object", head)
            return
        repo = self.hub.repos.get(segments[1] + "/" + segments[2])
        commit = repo.commits.get(segments[3]) if repo else None
        item = commit.files.get("/".join(segments[4:])) if commit else None
        if item is None:
            self._error(404, "EntryNotFound", "no such CDN object", head)
            return
        self._serve(item, {"ETag": f'"{item.sha256}"'}, head, lfs=True)

    def _serve(self, item: HubFile, headers: dict[str, str], head: bool, lfs: bool) -> None:
        size = item.size
        requested = self.headers.get("Range")
        if requested is None:
            if not head and lfs and size > WEIGHT_GUARD_BYTES:
                self._error(403, "WeightGuard", "refusing a full download of a weight file")
                return
            body = b"" if head else item.read(0, size - 1)
            self._send(200, body, headers, head=head, length=size)
            return
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", requested.strip())
        if not match or (not match.group(1) and not match.group(2)):
            self._error(416, "RangeNotSatisfiable", "bad range", head)
            return
        if match.group(1):
            start = int(match.group(1))
            end = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
        else:
            start, end = max(size - int(match.group(2)), 0), size - 1
        if start >= size or start > end:
            self._send(416, b"", headers | {"Content-Range": f"bytes */{size}"}, head=head)
            return
        body = b"" if head else item.read(start, end)
        headers = headers | {"Content-Range": f"bytes {start}-{end}/{size}"}
        self._send(206, body, headers, head=head, length=end - start + 1)
