"""GitSource: the model's code repo, cloned with gitpython into a cache (never executed).

The clone is blobless (``--filter=blob:none``): every commit and tag comes down, but file
contents only for the checked-out tree and, lazily, the old README / licence versions the
history reader asks for. Every git command runs with :mod:`cardaudit.sources.git_safety`'s
environment: https only (or git's own ``GIT_ALLOW_PROTOCOL``), no hooks, fsmonitor, pager,
credential helpers or LFS smudging. URLs and revisions are validated before git sees them.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from cardaudit.disk_cache import cache_root
from cardaudit.errors import SourceError
from cardaudit.model import Problem, RepoSnapshot


def redact_url(url: str) -> str:
    """The URL without any user name or password in it."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _slug(url: str) -> str:
    parts = urlsplit(url)
    name = re.sub(r"[^\w.-]+", "-", (parts.path or url).strip("/").removesuffix(".git"))[-60:]
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return f"{name or 'repo'}-{digest}"


def _git_env() -> dict[str, str]:
    """Clone / fetch / checkout environment: no LFS, no prompts, no programs, https only."""
    from cardaudit.sources.git_safety import clone_env

    return clone_env()


#: A revision git would read as an option, or one holding whitespace or control characters.
_BAD_REVISION = re.compile(r"^-|[\s\x00-\x1f\x7f]|\.\.|@\{")


def check_revision(revision: str) -> str:
    """``revision`` if it is a plain ref name or sha; a SourceError otherwise."""
    if not revision or _BAD_REVISION.search(revision) or len(revision) > 255:
        raise SourceError(f"not a valid git revision: {revision[:80]!r}")
    return revision


def check_clone_url(url: str) -> str:
    """``url`` if cardaudit may clone it: ``https://`` with a host and no option-like text."""
    parts = urlsplit(url)
    if url.startswith("-") or parts.scheme != "https" or not parts.hostname:
        raise SourceError(
            f"cannot clone {redact_url(url)[:200]!r}: only https:// URLs are cloned "
            "(give a local checkout as a path instead)"
        )
    if any(ord(ch) < 0x20 or ch in " \x7f" for ch in url):
        raise SourceError("cannot clone a URL with spaces or control characters")
    return url


#: Offline, git may use no transport at all (not even a lazy fetch of a missing blob).
OFFLINE_GIT_ENV = {"GIT_ALLOW_PROTOCOL": "none-offline", "GIT_NO_LAZY_FETCH": "1"}
#: How to audit without the code repo, said when its clone is not in the cache.
CODE_HINT = ", or audit without it (--no-code-discovery, or --code PATH of a local checkout)"


def cached_clone(url: str, target: Path, revision: str | None) -> Path:
    """Offline (``HF_HUB_OFFLINE``): the clone an online audit left in the cache, checked
    out at ``revision`` (default: the remote HEAD as last fetched), without any fetch."""
    import git

    from cardaudit.sources.hub_cache import CacheMiss

    what = f"the code repo {redact_url(url)}"
    if not (target / ".git").is_dir():
        raise CacheMiss(f"a clone of {what}", CODE_HINT)
    try:
        repo = git.Repo(target)
        with repo.git.custom_environment(**{**_git_env(), **OFFLINE_GIT_ENV}):
            repo.git.checkout("--force", "--detach", revision or "origin/HEAD", "--")
    except (git.GitError, ValueError, OSError):  # a damaged clone counts as a missing one
        at = f" with revision {revision!r}" if revision else ""
        raise CacheMiss(f"a usable clone of {what}{at}", CODE_HINT) from None
    return target


def _clone_error(url: str, exc: Exception) -> str:
    text = str(getattr(exc, "stderr", "") or exc)
    lowered = text.lower()
    if "not found" in lowered or "does not appear to be a git repository" in lowered:
        reason = "repository not found"
    elif "could not resolve host" in lowered or "unable to access" in lowered:
        reason = "host unreachable"
    elif "authentication" in lowered or "terminal prompts disabled" in lowered:
        reason = "authentication required (private repository?)"
    else:
        lines = [line.strip() for line in text.splitlines() if line.strip().startswith("fatal")]
        reason = lines[0] if lines else type(exc).__name__
    return f"could not clone {redact_url(url)}: {reason}"


def clone(url: str, *, revision: str | None = None) -> Path:
    """A blobless clone of ``url`` in the cache (refreshed if already there); its path."""
    try:
        import git
    except ImportError as exc:  # gitpython without the git binary
        raise SourceError(f"git is not available: {exc}") from None

    check_clone_url(url)
    if revision is not None:
        check_revision(revision)
    target = cache_root() / "git" / _slug(url)
    from cardaudit.sources.hub_cache import offline_mode

    if offline_mode():
        return cached_clone(url, target, revision)
    options = ["--filter=blob:none"]
    env = _git_env()
    try:
        if (target / ".git").is_dir():
            repo = git.Repo(target)
            with repo.git.custom_environment(**env):
                repo.git.fetch("origin", "--tags", "--force", "--prune")
                ref = revision or "origin/HEAD"
                repo.git.checkout("--force", "--detach", ref, "--")
            return target
    except (git.GitCommandError, git.InvalidGitRepositoryError, ValueError):
        shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        repo = git.Repo.clone_from(url, partial, multi_options=options, env=env)
        if revision:
            with repo.git.custom_environment(**env):
                repo.git.checkout("--force", "--detach", revision, "--")
    except git.GitCommandError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        if revision and "pathspec" in str(exc.stderr):
            raise SourceError(f"revision {revision!r} not found in {redact_url(url)}") from None
        raise SourceError(_clone_error(url, exc)) from None
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


_GITHUB_SHORTHAND = re.compile(r"^[A-Za-z0-9][\w.-]{0,99}/[\w.-]{1,100}(?:#[^\s#]+)?$")


def resolve_code_value(value: str) -> tuple[str, str]:
    """What ``--code VALUE`` names: ``("path", dir)`` or ``("url", https URL[#REV])``.

    Accepted: an existing local path, an ``https://`` URL (``#REV`` or a ``/tree/REV`` page),
    or a GitHub ``org/name[#REV]``. Anything else (a value starting with ``-``, ``ssh://``,
    ``file://``, ``ext::`` transports, scp-like ``user@host:path``) is refused before git sees it.
    """
    if value.startswith("-"):
        raise SourceError(f"--code value {value[:80]!r} looks like an option, not a repo")
    if Path(value).expanduser().exists():
        return "path", value
    if value.startswith("https://"):
        base, revision = split_code_url(value)
        check_clone_url(base)
        if revision is not None:
            check_revision(revision)
        return "url", value
    if _GITHUB_SHORTHAND.match(value) and ".." not in value:
        return "url", f"https://github.com/{value}"
    raise SourceError(
        f"--code {value[:80]!r}: not an existing path, an https:// URL or a GitHub org/name"
    )


def split_code_url(url: str) -> tuple[str, str | None]:
    """The clonable URL and revision of ``URL#REV`` or a GitHub ``/tree/REV`` page link."""
    base, _, revision = url.partition("#")
    parts = urlsplit(base)
    if parts.hostname in ("github.com", "www.github.com"):
        segments = [p for p in parts.path.split("/") if p]
        if len(segments) >= 4 and segments[2] in ("tree", "commit", "releases") and not revision:
            revision = segments[-1] if segments[2] == "releases" else segments[3]
        if len(segments) > 2:
            base = urlunsplit((parts.scheme, parts.netloc, "/" + "/".join(segments[:2]), "", ""))
    return base, revision or None


def prefetch_history_blobs(root: Path) -> int:
    """Fetch, in one request, every version of the files whose history is read (README,
    LICENSE, NOTICE...), so the history reader does not lazily fetch them one by one.

    Best effort: returns how many blobs were asked for (0 when nothing was or could be).
    """
    import git

    from cardaudit.sources.history import MAX_VERSIONS, tracked_history_paths
    from cardaudit.sources.hub_cache import offline_mode
    from cardaudit.sources.local import list_files

    paths = tracked_history_paths(entry.path for entry in list_files(root))
    if not paths or offline_mode():
        return 0
    from cardaudit.sources.git_safety import open_repo

    repo = open_repo(root, trusted_clone=True)
    try:
        raw = repo.git.log(
            "--raw", "--no-abbrev", "--format=", f"--max-count={MAX_VERSIONS}", "--", *paths
        )
        blob_ids = set()
        for line in raw.splitlines():
            fields = line.split()
            if len(fields) >= 4 and line.startswith(":") and set(fields[3]) != {"0"}:
                blob_ids.add(fields[3])
        if not blob_ids:
            return 0
        with tempfile.TemporaryFile() as ids, repo.git.custom_environment(**_git_env()):
            ids.write("".join(f"{oid}\n" for oid in sorted(blob_ids)).encode())
            ids.seek(0)
            repo.git.execute(
                [
                    "git",
                    "-c",
                    "fetch.negotiationAlgorithm=noop",
                    "fetch",
                    "origin",
                    "--no-tags",
                    "--no-write-fetch-head",
                    "--recurse-submodules=no",
                    "--filter=blob:none",
                    "--stdin",
                ],
                istream=ids,
            )
        return len(blob_ids)
    except git.GitCommandError:
        return 0


def code_snapshot(url: str) -> tuple[RepoSnapshot, list[Problem]]:
    """Clone ``url`` (``URL#REV`` picks a revision) and read it like a local checkout."""
    from dataclasses import replace

    from cardaudit.sources.local import read_snapshot

    base, revision = split_code_url(url)
    root = clone(base, revision=revision)
    prefetch_history_blobs(root)
    snapshot, problems = read_snapshot(root, repo_label="code", kind="git", trusted_clone=True)
    name = urlsplit(base).path.strip("/").removesuffix(".git") or snapshot.id
    return replace(snapshot, id=name, url=redact_url(base)), problems
