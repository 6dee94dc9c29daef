"""Sources: the only layer that touches the disk of an audited repo, git or the network."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cardaudit.errors import SourceError
from cardaudit.model import (
    Evidence,
    GGUFHeader,
    Problem,
    RepoSnapshot,
    SafetensorsHeader,
    Target,
)


@dataclass(frozen=True)
class AuditRequest:
    """What to audit: the model repo, and optionally its code repo and base model."""

    target: str
    code: str | None = None
    base: str | None = None
    revision: str | None = None


def read_local_headers(root: Path, snapshot: RepoSnapshot) -> list[SafetensorsHeader]:
    """Headers of every .safetensors file in a local repo (tensor data is never read)."""
    from cardaudit.sources.safetensors_header import read_header

    headers = []
    for entry in snapshot.files:
        if not entry.path.endswith(".safetensors"):
            continue
        try:
            with open(root / entry.path, "rb") as stream:
                headers.append(read_header(stream, entry.path, entry.size))
        except OSError as exc:
            headers.append(SafetensorsHeader(entry.path, entry.size, error=f"cannot read: {exc}"))
    return headers


def read_local_gguf(root: Path, snapshot: RepoSnapshot) -> list[GGUFHeader]:
    """Headers of every .gguf file in a local repo (tensor data is never read)."""
    from cardaudit.sources.gguf_header import read_gguf_header

    return [
        read_gguf_header(str(root / entry.path), entry.path, entry.size)
        for entry in snapshot.files
        if entry.path.lower().endswith(".gguf")
    ]


def local_evidence(
    path: str, *, code: RepoSnapshot | None = None, base: tuple[Evidence, ...] = ()
) -> Evidence:
    """Evidence for a model repo in a local directory."""
    from cardaudit.sources.evidence import assemble
    from cardaudit.sources.local import read_snapshot

    root = Path(path).expanduser()
    snapshot, problems = read_snapshot(root)
    target = Target("local", root.resolve().name, str(root), snapshot.revision)
    headers = read_local_headers(root, snapshot)
    evidence = assemble(target, snapshot, headers=headers, code=code, base=base, problems=problems)
    ggufs = read_local_gguf(root, snapshot)
    if not ggufs:
        return evidence
    from dataclasses import replace

    from cardaudit.model import Location

    gguf_problems = tuple(
        Problem("SRC003", f"{header.path}: {header.error}", Location(header.path))
        for header in ggufs
        if header.error
    )
    return replace(evidence, gguf=tuple(ggufs), problems=evidence.problems + gguf_problems)


def local_code_repo(path: str) -> tuple[RepoSnapshot, list[Problem]]:
    """Snapshot of a code repo in a local directory or git checkout."""
    from cardaudit.sources.local import read_snapshot

    root = Path(path).expanduser()
    snapshot, problems = read_snapshot(
        root, repo_label="code", kind="git" if (root / ".git").exists() else "local"
    )
    return snapshot, problems


def acquire(request: AuditRequest) -> Evidence:
    """Gather the evidence for ``request``; raises :class:`SourceError` when impossible."""
    base: tuple[Evidence, ...] = ()
    if request.base:
        if not Path(request.base).exists():
            raise SourceError(f"base model path not found: {request.base}")
        base = (local_evidence(request.base),)
    code = None
    code_problems: list[Problem] = []
    if request.code:
        if not Path(request.code).exists():
            raise SourceError(f"code repo path not found: {request.code}")
        code, code_problems = local_code_repo(request.code)
    if not Path(request.target).exists():
        raise SourceError(f"path not found: {request.target}")
    evidence = local_evidence(request.target, code=code, base=base)
    if code_problems:
        from dataclasses import replace

        evidence = replace(evidence, problems=evidence.problems + tuple(code_problems))
    return evidence
