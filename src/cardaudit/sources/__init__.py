"""Sources: the only layer that touches the disk of an audited repo, git or the network."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cardaudit.errors import SourceError
from cardaudit.model import (
    Evidence,
    GGUFHeader,
    Location,
    Problem,
    RepoSnapshot,
    SafetensorsHeader,
    Target,
    frozen_mapping,
)


@dataclass(frozen=True)
class AuditRequest:
    """What to audit: the model repo, and optionally its code repo and base model."""

    target: str
    code: str | None = None
    #: The base model(s): one path / Hub id, or several (the parents of a merge).
    base: str | tuple[str, ...] | None = None
    revision: str | None = None
    #: Generations of base models fetched from the Hub (None: 3 for Hub targets, 0 for local).
    base_depth: int | None = None
    #: Look for the code repo among the card's GitHub links (None: on for Hub targets only).
    code_discovery: bool | None = None
    #: Show a progress display on stderr while fetching.
    progress: bool = False
    #: Seconds for all of the audit's Hub traffic (``--timeout``); None: no limit.
    timeout: float | None = 300.0

    @property
    def bases(self) -> tuple[str, ...]:
        """Every ``--base`` given, in order, each once (none dropped)."""
        if self.base is None:
            return ()
        given = (self.base,) if isinstance(self.base, str) else tuple(self.base)
        return tuple(dict.fromkeys(item for item in given if item))


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
    from cardaudit.sources.progress import progress_display

    with progress_display(request.progress) as step:
        return _Acquisition(request, step).run()


class _Acquisition:
    """One run of :func:`acquire`: the model repo, then its code repo and base models."""

    def __init__(self, request: AuditRequest, step) -> None:
        self.request = request
        self.step = step
        self._hub = None
        #: A code repo came from a clone in the cache (used offline as it is).
        self.cloned = False

    @property
    def hub(self):
        """The HubSource, built on first use (so local audits never import huggingface_hub)."""
        if self._hub is None:
            from cardaudit.sources.hub import HubSource
            from cardaudit.sources.hub_client import HubClient

            self._hub = HubSource(HubClient.from_environment(self.request.timeout), self.step)
        return self._hub

    def hub_ref(self, text: str):
        from cardaudit.sources.hub import parse_hub_target
        from cardaudit.sources.hub_client import hub_endpoint

        return parse_hub_target(text, hub_endpoint())

    def run(self) -> Evidence:
        request = self.request
        is_local = Path(request.target).expanduser().exists()
        if is_local:
            if request.revision:
                raise SourceError("--revision applies to Hub targets; a local path has none")
            evidence = local_evidence(request.target)
        else:
            ref = self.hub_ref(request.target)
            if ref is None:
                raise SourceError(f"path not found: {request.target}")
            if request.revision:
                ref = replace(ref, revision=request.revision)
            try:
                evidence = self.hub.evidence(ref)
            except SourceError as exc:
                # A bare org/name may equally be a mistyped local path: say both.
                unreachable = str(exc).startswith(("model repo ", "cannot reach", "the Hub at"))
                if ref.repo_id == request.target and unreachable:
                    raise SourceError(
                        f"path not found: {request.target}; as a Hub repo: {exc}"
                    ) from None
                raise
        notes: dict[str, Any] = {}
        code, code_problems = self.code_repo(evidence, is_local, notes)
        depth = request.base_depth
        if depth is None:
            depth = 0 if is_local else _default_depth()
        base_problems: list[Problem] = []
        if request.bases:
            evidence = replace(
                evidence,
                base=tuple(self.explicit_base(b, depth, base_problems) for b in request.bases),
            )
        elif depth > 0:
            evidence = self.with_bases(evidence, depth, base_problems)
        target = evidence.target
        if target.offline is None and (self._hub is not None or self.cloned):
            from cardaudit.sources.hub_cache import offline_mode

            if offline_mode():  # a local model audited with its cached code repo or bases
                target = replace(target, offline=())
        return replace(
            evidence,
            target=target,
            code=code,
            problems=evidence.problems + tuple(code_problems) + tuple(base_problems),
            notes=frozen_mapping({**evidence.notes, **notes}),
        )

    # ------------------------------------------------------------------ base models

    def fetch_base(self, base_id: str) -> Evidence:
        from cardaudit.sources.hub_cache import CacheMiss

        ref = self.hub_ref(base_id)
        if ref is None:
            from cardaudit.sources.hub import HubRef

            ref = HubRef(base_id)
        try:
            return self.hub.evidence(ref, history=False)
        except CacheMiss as miss:
            raise CacheMiss(
                f"{miss.what} (a base model)",
                miss.hint + ", or audit without base models: --base-depth 0",
            ) from None

    def with_bases(self, evidence: Evidence, depth: int, problems: list[Problem]) -> Evidence:
        from cardaudit.sources.lineage import Lineage

        lineage = Lineage(self.fetch_base, depth)
        attached = lineage.attach(evidence)
        problems += lineage.problems
        return attached

    def explicit_base(self, text: str, depth: int, problems: list[Problem]) -> Evidence:
        """``--base PATH|ID``: a missing base given explicitly is a fatal error."""
        if Path(text).expanduser().exists():
            base = local_evidence(text)
        elif self.hub_ref(text) is not None:
            base = self.fetch_base(text)
        else:
            raise SourceError(f"base model path not found: {text}")
        if depth > 1:
            from cardaudit.sources.lineage import Lineage

            lineage = Lineage(self.fetch_base, depth - 1)
            base = lineage.attach(base)
            problems += lineage.problems
        return base

    # ------------------------------------------------------------------ code repo

    def code_repo(
        self, evidence: Evidence, is_local: bool, notes: dict[str, Any]
    ) -> tuple[RepoSnapshot | None, list[Problem]]:
        from cardaudit.sources.git import code_snapshot, resolve_code_value

        request = self.request
        if request.code:
            kind, value = resolve_code_value(request.code)
            if kind == "path":
                return local_code_repo(value)
            self.step(f"Cloning {value}")
            self.cloned = True
            return code_snapshot(value)
        discovery = request.code_discovery
        if discovery is None:
            discovery = not is_local
        if not discovery:
            return None, []
        from cardaudit.sources.code_links import choose_code_link

        link, record = choose_code_link(evidence.card, evidence.target.id)
        notes["code_repo_choice"] = record
        if link is None:
            return None, []
        self.step(f"Cloning {link.url}")
        self.cloned = True
        try:
            return code_snapshot(link.url)
        except SourceError as exc:
            where = Location(evidence.card.path if evidence.card else None, link.line)
            return None, [
                Problem("SRC011", f"code repo linked from the card: {exc}", where, link.url)
            ]


def _default_depth() -> int:
    from cardaudit.sources.lineage import DEFAULT_BASE_DEPTH

    return DEFAULT_BASE_DEPTH
