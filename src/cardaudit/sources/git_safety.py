"""Running git on a repository we audit without letting that repository run anything.

An audited folder is hostile input, and so is its ``.git``: git executes commands named in a
repository's own config (``core.fsmonitor``, ``core.sshCommand``, textconv and clean/smudge
filters, ``remote.<name>.uploadpack`` during the lazy fetch of a partial clone, credential
helpers, remote helpers through ``<transport>::`` URLs, ...), and a ``.git`` *file*
(``gitdir: /elsewhere``) or ``commondir`` / ``alternates`` entries make git read another
repository on the machine. Two layers keep that from happening:

1. :func:`inspect_git_dir` refuses a repository before any git command runs when its git
   metadata lies outside the audited folder or its config (read by ``git config --file``,
   which neither follows includes nor executes anything) sets a key that can execute or reach
   out. The key list mirrors git-config(1); it is code, not a table, because it is a security
   boundary and not prose matching.
2. Every git command we run on an audited checkout gets :func:`read_only_env`: the repository
   is pinned (``GIT_DIR`` / ``GIT_WORK_TREE``, no discovery), no transport is allowed at all
   (``GIT_ALLOW_PROTOCOL`` naming none, ``GIT_NO_LAZY_FETCH``), and fsmonitor, hooks, the
   pager and credential helpers are switched off through command-line config, which beats the
   repository's own. Clones we start ourselves get :func:`clone_env`: https only (or the
   protocols the user allows with git's own ``GIT_ALLOW_PROTOCOL``).
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

#: Config keys (lower-cased, ``*`` for any subsection) with which git may run a program, load
#: more config, write files or contact a host while it reads history.
EXEC_CAPABLE_KEYS: tuple[str, ...] = (
    "core.fsmonitor",
    "core.sshcommand",
    "core.gitproxy",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.hookspath",
    "core.worktree",
    "core.alternaterefscommand",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "difftool.*.cmd",
    "merge.*.driver",
    "mergetool.*.cmd",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "credential.helper",
    "credential.*.helper",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.vcs",
    "remote.*.proxy",
    "http.proxy",
    "http.*.proxy",
    "url.*.insteadof",
    "url.*.pushinsteadof",
    "include.path",
    "includeif.*.path",
    "sequence.editor",
    "gpg.program",
    "gpg.*.program",
    "uploadpack.packobjectshook",
    "pager.*",
    "submodule.*.update",
    "trace2.*",
    "web.browser",
    "browser.*.cmd",
    "browser.*.path",
    "man.*.cmd",
    "man.*.path",
)
#: Boolean keys that are harmless when switched off.
_OFF_VALUES = frozenset({"", "false", "no", "off", "0"})
_BOOLEAN_KEYS = frozenset({"core.fsmonitor"})
#: ``<transport>::<address>`` URLs run the ``git-remote-<transport>`` helper (``ext::`` runs
#: any command).
_REMOTE_HELPER_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
#: Longest excerpt of a repo-supplied value quoted in a message.
_QUOTE_LIMIT = 80
#: A transport name git does not know: with it as the only allowed one, no transport runs.
NO_TRANSPORT = "none"


@dataclass(frozen=True)
class GitDirCheck:
    """What :func:`inspect_git_dir` found: the git dir to use, or why git must not run."""

    git_dir: Path | None
    refused: tuple[str, ...] = field(default=())
    #: A partial clone (``extensions.partialClone`` / a promisor remote): objects may be
    #: missing, and git dies rather than answer "missing" when it may not fetch them.
    partial_clone: bool = False

    @property
    def usable(self) -> bool:
        return self.git_dir is not None and not self.refused


def quote(value: str) -> str:
    """A repo-supplied value for a message: repr-quoted (newlines and controls escaped), short."""
    text = value if len(value) <= _QUOTE_LIMIT else value[:_QUOTE_LIMIT] + "…"
    return repr(text)


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


def _git_dir_of(root: Path) -> tuple[Path | None, list[str]]:
    """The git dir of the checkout at ``root`` if it lies inside ``root``; else why not."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        if not _inside(dot_git, root):
            return None, [f".git is a link to {quote(str(dot_git.resolve()))}, outside the folder"]
        return dot_git, []
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace")[:4096].splitlines()[:1]
    except OSError as exc:
        return None, [f".git cannot be read: {exc.strerror or exc}"]
    line = first[0] if first else ""
    if not line.startswith("gitdir:"):
        return None, [".git is a file that names no git dir"]
    target = Path(line.removeprefix("gitdir:").strip())
    target = target if target.is_absolute() else root / target
    if not _inside(target, root) or not target.is_dir():
        return None, [f".git points to {quote(str(target))}, outside the audited folder"]
    return target, []


def _escaping_links(git_dir: Path, root: Path) -> list[str]:
    """``commondir``, ``objects/info/alternates`` and linked entries that lead outside ``root``."""
    reasons = []
    for name in ("objects", "refs", "HEAD", "packed-refs", "config"):
        entry = git_dir / name
        if entry.exists() and not _inside(entry, root):
            where = quote(str(entry.resolve()))
            reasons.append(f".git/{name} leads to {where}, outside the folder")
    commondir = git_dir / "commondir"
    if commondir.is_file():
        value = commondir.read_text(encoding="utf-8", errors="replace").strip()
        target = Path(value) if Path(value).is_absolute() else git_dir / value
        if not _inside(target, root):
            reasons.append(f".git/commondir points to {quote(value)}, outside the folder")
    alternates = git_dir / "objects" / "info" / "alternates"
    if alternates.is_file():
        for value in alternates.read_text(encoding="utf-8", errors="replace").splitlines():
            value = value.strip()
            if not value or value.startswith("#"):
                continue
            target = Path(value) if Path(value).is_absolute() else git_dir / "objects" / value
            if not _inside(target, root):
                reasons.append(f"objects/info/alternates reads objects from {quote(value)}")
    return reasons


def config_entries(config_file: Path) -> list[tuple[str, str]]:
    """``(key, value)`` pairs of one git config file, read by git itself without includes.

    Runs ``git config --no-includes --file F --list -z`` from an empty temporary folder: it
    parses exactly as git does (quoting, subsections, multi-valued keys) and runs nothing.
    A file git cannot parse is reported as one pseudo entry, so the repository is refused.
    """
    with tempfile.TemporaryDirectory(prefix="cardaudit-gitcfg-") as empty:
        env = {
            **_clean_environ(),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CEILING_DIRECTORIES": str(Path(empty).parent),
            "GIT_ALLOW_PROTOCOL": NO_TRANSPORT,
        }
        env.pop("GIT_CONFIG_COUNT", None)
        result = subprocess.run(
            ["git", "config", "--no-includes", "--file", str(config_file), "--list", "-z"],
            cwd=empty,
            env=env,
            capture_output=True,
            timeout=30,
            check=False,
        )
    if result.returncode != 0:
        return [("<unparseable>", config_file.name)]
    entries = []
    for item in result.stdout.decode("utf-8", "replace").split("\0"):
        if item:
            key, _, value = item.partition("\n")
            entries.append((key, value))
    return entries


def dangerous_keys(entries: list[tuple[str, str]]) -> list[str]:
    """The keys among ``entries`` with which git could execute or reach out, with values."""
    found = []
    for key, value in entries:
        lowered = key.lower()
        if lowered == "<unparseable>":
            found.append(f"{value} cannot be parsed by git")
            continue
        if lowered in _BOOLEAN_KEYS and value.strip().lower() in _OFF_VALUES:
            continue
        if any(fnmatch.fnmatchcase(lowered, pattern) for pattern in EXEC_CAPABLE_KEYS) or (
            lowered.startswith("remote.")
            and lowered.endswith((".url", ".pushurl"))
            and _REMOTE_HELPER_URL.match(value.strip())
        ):
            found.append(f"{key} = {quote(value)}")
    return found


def inspect_git_dir(root: Path) -> GitDirCheck:
    """Whether git may run on the checkout at ``root``, and on which git dir."""
    root = root.absolute()
    git_dir, reasons = _git_dir_of(root)
    if git_dir is None:
        return GitDirCheck(None, tuple(reasons))
    reasons = _escaping_links(git_dir, root)
    partial = False
    for name in ("config", "config.worktree"):
        config = git_dir / name
        if config.is_file() and _inside(config, root):
            entries = config_entries(config)
            reasons += [f"{key} (.git/{name})" for key in dangerous_keys(entries)]
            partial = partial or any(_is_partial_clone_key(k, v) for k, v in entries)
    return GitDirCheck(git_dir, tuple(reasons), partial)


def _is_partial_clone_key(key: str, value: str) -> bool:
    lowered = key.lower()
    if lowered == "extensions.partialclone":
        return bool(value.strip())
    return (
        lowered.startswith("remote.")
        and lowered.endswith(".promisor")
        and (value.strip().lower() not in _OFF_VALUES)
    )


def local_objects(repo) -> frozenset[str]:  # repo: git.Repo
    """Ids of every object in the local object store (enumerated; never fetches)."""
    listing = repo.git.cat_file("--batch-all-objects", "--batch-check=%(objectname)")
    return frozenset(listing.split())


def _clean_environ() -> dict[str, str]:
    """The process environment without git variables that would pick another repository."""
    drop = {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    }
    return {k: v for k, v in os.environ.items() if k not in drop}


def _config_overrides(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """``GIT_CONFIG_COUNT`` variables adding ``pairs`` after any the caller already set."""
    try:
        start = int(os.environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        start = 0
    env = {"GIT_CONFIG_COUNT": str(start + len(pairs))}
    for offset, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{start + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    return env


#: Command-line config (stronger than the repository's) switching off what could run.
_SAFE_CONFIG = [
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("credential.helper", ""),
]
_COMMON = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_LFS_SKIP_SMUDGE": "1",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
}


def read_only_env(git_dir: Path, work_tree: Path) -> dict[str, str]:
    """Environment for git reading an audited checkout: pinned repo, no transport, no programs."""
    return {
        **_COMMON,
        **_config_overrides(_SAFE_CONFIG),
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(work_tree),
        "GIT_ALLOW_PROTOCOL": NO_TRANSPORT,
        "GIT_NO_LAZY_FETCH": "1",
    }


def allowed_clone_protocols() -> str:
    """Protocols a clone we start may use: git's own ``GIT_ALLOW_PROTOCOL``, else https."""
    return os.environ.get("GIT_ALLOW_PROTOCOL") or "https"


#: A clone or fetch slower than 1 kB/s for a minute is given up (git's own stall guard), so a
#: drip-fed code repo cannot hold the audit (``--timeout`` bounds the Hub traffic only).
_STALL_GUARD = [("http.lowSpeedLimit", "1000"), ("http.lowSpeedTime", "60")]


def clone_env() -> dict[str, str]:
    """Environment for clones and fetches we start ourselves (https only, no programs)."""
    return {
        **_COMMON,
        **_config_overrides(_SAFE_CONFIG + _STALL_GUARD),
        "GIT_ALLOW_PROTOCOL": allowed_clone_protocols(),
    }


def open_repo(root: Path, *, trusted_clone: bool = False):  # -> git.Repo
    """A gitpython ``Repo`` for ``root`` whose every command runs with the hardened env.

    ``trusted_clone`` marks a clone cardaudit made itself in its cache: its config was written
    by git from our own command line, and its lazy fetches may use the clone protocols.
    Callers must have checked the checkout with :func:`inspect_git_dir` first.
    """
    import git

    root = root.absolute()
    check = inspect_git_dir(root) if not trusted_clone else GitDirCheck(root / ".git")
    if not check.usable:
        raise UnsafeRepository(root, check.refused)
    repo = git.Repo(root)
    env = read_only_env(check.git_dir or root / ".git", root)
    if trusted_clone:
        env.update(GIT_ALLOW_PROTOCOL=allowed_clone_protocols())
        env.pop("GIT_NO_LAZY_FETCH")
    repo.git.update_environment(**env)
    return repo


class UnsafeRepository(Exception):
    """Git must not run on this checkout (see :func:`inspect_git_dir`)."""

    def __init__(self, root: Path, reasons: tuple[str, ...]) -> None:
        self.root = root
        self.reasons = reasons
        super().__init__("; ".join(reasons) or "no git dir")
