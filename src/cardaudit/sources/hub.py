"""HubSource: a model repo on the Hugging Face Hub, read with the real huggingface_hub client.

Only what the checks need is fetched: the repo listing, the card, licence / notice / policy
files and small configs (into the huggingface_hub cache), and the header of each
``.safetensors`` file by HTTP Range. Weight data is never downloaded.
"""

from __future__ import annotations

import re
import struct
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from cardaudit.bounded import loads_json
from cardaudit.errors import SourceError
from cardaudit.extract.reuse import is_reuse_path
from cardaudit.model import (
    Evidence,
    FileEntry,
    FileVersion,
    GGUFHeader,
    Location,
    Problem,
    RepoSnapshot,
    SafetensorsHeader,
    SafetensorsTotals,
    Target,
    TextFile,
    frozen_mapping,
)
from cardaudit.sources.hub_cache import CacheMiss, CommitRef, HubStore, HubTotals, write_atomic
from cardaudit.sources.hub_client import HubClient, HubRefusal
from cardaudit.sources.local import MAX_TEXT_BYTES, decode_text
from cardaudit.sources.safetensors_header import (
    MAX_HEADER_BYTES,
    decode_header,
    parse_header_json,
)

Step = Callable[[str], None]

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
HUB_HOSTS = {"huggingface.co", "www.huggingface.co", "hf.co"}
#: Small files read by exact top-level name (case-insensitive).
WANTED_NAMES = {
    "readme.md",
    "config.json",
    "generation_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
    "adapter_config.json",
    "quantization_config.json",
    "quant_config.json",
    "quantize_config.json",
    "hf_quant_config.json",
    "mergekit_config.yml",
    "mergekit_config.yaml",
    "params.json",
    "chat_template.jinja",
    "citation.cff",
}
#: Top-level files whose name starts with (or contains) one of these are licence-like texts.
LICENCE_WORDS = ("license", "licence", "notice", "copying", "copyright", "use_policy", "policy")
QUANT_FILES = ("quantization_config.json", "quant_config.json", "quantize_config.json")
#: safetensors files whose headers are read (the rest are listed, not read).
MAX_HEADER_FILES = 512
HEADER_WORKERS = 8
#: Fewest bytes one tensor's entry takes in a header, besides its name.
MIN_ENTRY_BYTES = 50
#: GGUF headers (metadata with token lists, then tensor infos) are read in prefixes that
#: double until the header is whole (a 150k-token vocabulary makes it about 6 MB).
GGUF_FIRST_READ = 1024 * 1024
GGUF_MAX_HEADER = 64 * 1024 * 1024
MAX_GGUF_FILES = 64
#: The first read is capped (an index could list tensors a shard does not have).
MAX_FIRST_READ = 2 * 1024 * 1024
#: When a repo's safetensors headers add up to more than this (one tensor per expert: tens of
#: thousands of entries), they are not read if the Hub's own parameter totals can be bound to
#: the audited commit (:class:`SafetensorsTotals`); otherwise they are read in full.
HEADER_BUDGET = 512 * 1024
#: A safetensors index larger than this is fetched only when the headers are read in full.
INDEX_BUDGET = 256 * 1024
#: Dtypes whose stored elements are the logical parameters (nothing packed, no scale
#: tensors): the only ones for which the Hub's element totals are cardaudit's exact count.
PLAIN_WIDTHS = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "BOOL": 1}
#: Quantized repos (FP8 block, GPTQ, AWQ, compressed-tensors): the totals count quantized
#: weights, scales and zero points too, so they are used only when they prove the config
#: count exact (:func:`cardaudit.extract.quant_totals.verify_quantized`).
QUANT_WIDTHS = {**PLAIN_WIDTHS, "F8_E4M3": 1, "I8": 1, "U8": 1, "I32": 4}


def header_cache_path(repo_id: str, sha: str, path: str, suffix: str = ".json") -> Path:
    """Where the header of ``path`` at commit ``sha`` is kept (a commit never changes);
    ``suffix=".length"``: where only its length is kept."""
    from cardaudit.disk_cache import cache_root

    safe = re.sub(r"[^\w.-]+", "--", f"{repo_id}/{sha}/{path}")
    return cache_root() / "safetensors-headers" / f"{safe}{suffix}"


@dataclass
class HeaderProbe:
    """What the first Range read (or the cache) told about one shard's header."""

    entry: FileEntry
    #: Bytes of the JSON header after the 8-byte prefix; None when unreadable.
    length: int | None = None
    #: The start of the JSON header, as far as it was read.
    raw: bytes = b""
    #: The final answer when already known (cached header, or an error).
    header: SafetensorsHeader | None = None


def bind_totals(
    hub_totals: Any, probes: list[HeaderProbe], widths: dict[str, int] = PLAIN_WIDTHS
) -> SafetensorsTotals | None:
    """The Hub's totals, if they are exact for these shards: dtypes in ``widths`` only, and
    the listed sizes minus the header lengths equal the elements times their widths."""
    parameters = getattr(hub_totals, "parameters", None)
    total = getattr(hub_totals, "total", None)
    if not isinstance(parameters, dict) or not isinstance(total, int) or not parameters:
        return None
    if any(d not in widths or not isinstance(n, int) for d, n in parameters.items()):
        return None
    if sum(parameters.values()) != total:
        return None
    if any(p.length is None or (p.header is not None and p.header.error) for p in probes):
        return None
    data = sum(p.entry.size - 8 - (p.length or 0) for p in probes)
    if data != sum(n * widths[d] for d, n in parameters.items()):
        return None
    return SafetensorsTotals(
        frozen_mapping(dict(sorted(parameters.items()))),
        total,
        tuple(p.entry.path for p in probes),
        sum(p.length or 0 for p in probes),
        data,
    )


@dataclass(frozen=True)
class HubRef:
    """A Hub model repo named on the command line, and the revision it asks for."""

    repo_id: str
    revision: str | None = None


def parse_hub_target(text: str, endpoint: str | None = None) -> HubRef | None:
    """``org/name``, ``hf://org/name[@rev]`` or ``https://huggingface.co/org/name[/tree/rev]``.

    A path that exists on disk is never a Hub target (the caller checks that first).
    """
    text = text.strip()
    if text.startswith("hf://"):
        rest = text[5:].removeprefix("models/").strip("/")
        repo_id, _, revision = rest.partition("@")
        return HubRef(repo_id, revision or None) if REPO_ID.match(repo_id) else None
    if text.startswith(("http://", "https://")):
        url = urlsplit(text)
        hosts = set(HUB_HOSTS)
        if endpoint:
            hosts.add(urlsplit(endpoint).netloc)
        if url.netloc not in hosts:
            return None
        parts = [unquote(p) for p in url.path.strip("/").split("/") if p]
        if parts[:1] == ["models"]:
            parts = parts[1:]
        if len(parts) < 2 or not REPO_ID.match(f"{parts[0]}/{parts[1]}"):
            return None
        revision = None
        if len(parts) >= 4 and parts[2] in ("tree", "blob", "resolve", "commit"):
            revision = parts[3]
        return HubRef(f"{parts[0]}/{parts[1]}", revision)
    return HubRef(text) if REPO_ID.match(text) else None


def wanted_file(entry: FileEntry) -> bool:
    """Whether the audit needs this file's content (never a weight file)."""
    if entry.lfs or entry.size > MAX_TEXT_BYTES:
        return False
    if is_reuse_path(entry.path):  # LICENSES/<id>.txt, REUSE.toml, .reuse/dep5
        return True
    if "/" in entry.path:
        return False
    name = entry.path.lower()
    if name in WANTED_NAMES or name.endswith(".safetensors.index.json"):
        return True
    return any(word in name for word in LICENCE_WORDS) and not name.endswith(
        (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".onnx")
    )


def is_large_index(entry: FileEntry) -> bool:
    """A safetensors index over :data:`INDEX_BUDGET` (one entry per expert tensor)."""
    return entry.path.endswith(".safetensors.index.json") and entry.size > INDEX_BUDGET


@dataclass
class HubSource:
    """Fetch one model repo's evidence from the Hub."""

    client: HubClient
    step: Step = lambda message: None
    #: Versions read per file's history (None: ``hub_history.MAX_VERSIONS`` at call time).
    history_versions: int | None = None

    @cached_property
    def store(self) -> HubStore:
        """What online audits keep by commit sha, and offline audits read."""
        return HubStore(self.client.cache_dir)

    def resolve(self, ref: HubRef) -> str:
        """The commit sha ``ref.revision`` (default: the main branch) points at."""
        return self.resolve_info(ref)[0]

    def resolve_info(self, ref: HubRef) -> tuple[str, HubTotals | None]:
        """The commit sha, and the Hub's safetensors parameter totals sent with it (or None):
        one ``model_info`` call, so both describe the same commit. Offline: from the store."""
        self.step(f"Resolving {ref.repo_id}@{ref.revision or 'main'}")
        if self.client.offline:
            return self.store.resolve(ref.repo_id, ref.revision)
        try:
            info = self.client.call(
                "read the model info",
                ref.repo_id,
                lambda: self.client.api.model_info(
                    ref.repo_id,
                    revision=ref.revision,
                    timeout=self.client.timeout,
                    expand=["sha", "safetensors"],
                ),
                ref.revision,
            )
        except HubRefusal as refusal:
            self.store.save_refusal(ref.repo_id, ref.revision, str(refusal))
            raise
        sha = getattr(info, "sha", None)
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{40}", sha):
            raise SourceError(
                f"malformed response from {self.client.endpoint}: "
                f"no commit sha for {ref.repo_id}@{ref.revision or 'main'}"
            )
        totals = HubTotals.of(getattr(info, "safetensors", None))
        self.store.save_resolution(ref.repo_id, ref.revision, sha, totals)
        return sha, totals

    def _kept(self, read: Callable[[], Any]) -> Any:
        """What the store kept for a commit (it never changes), or None to ask the Hub;
        offline, a miss is final (:class:`CacheMiss`)."""
        try:
            return read()
        except CacheMiss:
            if self.client.offline:
                raise
            return None

    def list_files(self, repo_id: str, sha: str) -> list[FileEntry]:
        """The files at commit ``sha``, with sizes and LFS flags (kept by commit: a listing
        kept by an earlier audit is used online too; offline it is the only source)."""
        self.step(f"Listing {repo_id}")
        kept = self._kept(lambda: self.store.files(repo_id, sha))
        if kept is not None:
            return kept

        def listing() -> list[FileEntry]:
            entries = []
            for item in self.client.api.list_repo_tree(repo_id, recursive=True, revision=sha):
                size = getattr(item, "size", None)
                if size is None:  # a folder
                    continue
                entries.append(FileEntry(item.path, int(size), bool(getattr(item, "lfs", None))))
            return sorted(entries, key=lambda entry: entry.path)

        files = self.client.call("list the repo files", repo_id, listing, sha)
        self.store.save_files(repo_id, sha, files)
        return files

    def list_commits(self, repo_id: str, sha: str) -> list[CommitRef]:
        """The commits from ``sha`` back, newest first (kept by commit, like the listing)."""
        kept = self._kept(lambda: self.store.commits(repo_id, sha))
        if kept is not None:
            return kept

        def listing() -> list[CommitRef]:
            return [
                CommitRef(c.commit_id, c.created_at, c.title)
                for c in self.client.api.list_repo_commits(repo_id, revision=sha)
            ]

        commits = self.client.call("list the repo commits", repo_id, listing, sha)
        self.store.save_commits(repo_id, sha, commits)
        return commits

    def read_texts(
        self, repo_id: str, sha: str, files: list[FileEntry], *, defer_index: bool = True
    ) -> tuple[dict[str, TextFile], dict[str, str], list[Problem], Path | None]:
        texts: dict[str, TextFile] = {}
        skipped: dict[str, str] = {}
        problems: list[Problem] = []
        folder: Path | None = None
        for entry in files:
            if not wanted_file(entry):
                if "/" not in entry.path and entry.size > MAX_TEXT_BYTES and not entry.lfs:
                    skipped[entry.path] = f"larger than {MAX_TEXT_BYTES} bytes"
                continue
            if defer_index and is_large_index(entry):
                continue  # fetched later, only if the headers are read in full
            self.step(f"Downloading {repo_id}/{entry.path}")
            local = self.client.download(repo_id, entry.path, sha)
            if local is None:
                skipped[entry.path] = "listed but not served by the Hub"
                continue
            folder = local.parent
            text = decode_text(local.read_bytes())
            if text is None:
                skipped[entry.path] = "binary content"
                problems.append(
                    Problem("SRC003", f"{entry.path} is binary, not text", Location(entry.path))
                )
                continue
            texts[entry.path] = TextFile(entry.path, text)
        return texts, skipped, problems, folder

    def card_history(
        self, repo_id: str, sha: str, paths: Iterable[str] = ("README.md",)
    ) -> tuple[dict[str, tuple[FileVersion, ...]], dict[str, str]]:
        """Distinct versions (oldest first) of the card and licence files among ``paths`` (the
        rule of :func:`tracked_history_paths`), walked change by change through the Hub's
        last-commit information (:mod:`cardaudit.sources.hub_history`); and notes, keyed
        ``"<path> (history)"``, where a history was cut or versions could not be read."""
        from cardaudit.sources import hub_history
        from cardaudit.sources.history import tracked_history_paths

        tracked = tracked_history_paths(paths)
        if not tracked:
            return {}, {}
        self.step(f"Reading the history of {', '.join(tracked)} in {repo_id}")
        commits = self.list_commits(repo_id, sha)
        order = [commit.commit_id for commit in commits]
        dates: dict[str, datetime] = {}
        for commit in commits:
            when = commit.created_at
            dates.setdefault(
                commit.commit_id, when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
            )
        if order[:1] != [sha]:
            note = f"the Hub's commit list does not start at the audited commit {sha[:12]}"
            return {}, {f"{path} (history)": f"{note}: history not read" for path in tracked}

        position = {commit: index for index, commit in enumerate(order)}

        def paths_info(batch: list[str], revision: str) -> Any:
            """The last commits of ``batch`` at commit ``revision`` (kept by commit)."""
            kept = self._kept(lambda: self.store.paths_info(repo_id, revision, batch))
            if kept is not None:
                return kept
            answer = self.client.call(
                f"read the last commits of {', '.join(batch)}",
                repo_id,
                lambda: self.client.api.get_paths_info(
                    repo_id, batch, expand=True, revision=revision
                ),
                revision,
            )
            if _sane_last_commits(answer, revision, position):
                self.store.save_paths_info(repo_id, revision, batch, answer)
            return answer  # an odd answer is walked (and noted), never kept

        walk = hub_history.walk_changes(
            tracked, order, paths_info, self.history_versions or hub_history.MAX_VERSIONS
        )
        history, notes = self.read_versions(repo_id, walk.changes, dates)
        for path, note in walk.notes.items():
            key = f"{path} (history)"
            notes[key] = f"{note}; {notes[key]}" if key in notes else note
        return history, notes

    def read_versions(
        self, repo_id: str, changes: dict[str, list[Any]], dates: dict[str, datetime]
    ) -> tuple[dict[str, tuple[FileVersion, ...]], dict[str, str]]:
        """Download each readable version (:class:`hub_history.Change`) at its commit, in
        parallel; keep the distinct consecutive texts, oldest first, dated by their commit."""
        wanted = [change for versions in changes.values() for change in versions]
        wanted = [change for change in wanted if change.readable]
        with ThreadPoolExecutor(max_workers=HEADER_WORKERS) as pool:
            local = dict(
                zip(
                    wanted,
                    pool.map(
                        lambda change: self.client.download(repo_id, change.path, change.commit),
                        wanted,
                    ),
                    strict=True,
                )
            )
        history: dict[str, tuple[FileVersion, ...]] = {}
        notes: dict[str, str] = {}
        for path, path_changes in changes.items():
            versions: list[FileVersion] = []
            unread = 0
            for change in path_changes:
                where = local.get(change)
                text = decode_text(where.read_bytes()) if where is not None else None
                if text is None:
                    unread += 1
                    continue
                if versions and versions[-1].text == text:
                    continue
                versions.append(FileVersion(change.commit, dates[change.commit], text))
            if unread:
                notes[f"{path} (history)"] = (
                    f"{unread} of {len(path_changes)} versions not read (in LFS, over "
                    f"{MAX_TEXT_BYTES:,} bytes, binary or not served)"
                )
            if versions:
                history[path] = tuple(versions)
        return history, notes

    # ------------------------------------------------------------------ safetensors headers

    def headers(
        self,
        repo_id: str,
        sha: str,
        files: list[FileEntry],
        index: dict | None,
        hub_totals: Any = None,
        config: dict | None = None,
    ) -> tuple[list[SafetensorsHeader], SafetensorsTotals | None, str | None]:
        """Headers of the repo's .safetensors files, each read by HTTP Range.

        Every header's length is read first (8 bytes, or a lower bound of the header from
        the index). When they add up to more than :data:`HEADER_BUDGET` and the Hub's totals
        are exact for these files (:func:`bind_totals`), no header is read further and the
        totals are returned instead; otherwise every header is read in full. A quantized
        repo's totals (``config`` has a ``quantization_config``) count weights, scales and the
        rest: they are used only when they prove the config count exact (FP8 block,
        GPTQ, AWQ, compressed-tensors).
        """
        shards = [entry for entry in files if entry.path.endswith(".safetensors")]
        note = None
        if len(shards) > MAX_HEADER_FILES:
            note = f"headers read from {MAX_HEADER_FILES} of {len(shards)} .safetensors files"
            shards = shards[:MAX_HEADER_FILES]
            hub_totals = None  # totals over every file cannot be checked against a part
        if not shards:
            return [], None, note
        # A lower bound of each shard's header length from the index's tensor names: every
        # entry is at least `"name":{"dtype":"X","shape":[],"data_offsets":[0,0]},` long.
        floor: dict[str, int] = {}
        weight_map = (index or {}).get("weight_map")
        if isinstance(weight_map, dict):
            for name, shard in weight_map.items():
                floor[str(shard)] = floor.get(str(shard), 1) + len(str(name)) + MIN_ENTRY_BYTES
        workers = min(HEADER_WORKERS, len(shards))
        self.step(f"Reading safetensors header lengths of {repo_id}")
        with ThreadPoolExecutor(max_workers=workers) as pool:
            probes = list(
                pool.map(lambda e: self.probe_header(repo_id, sha, e, floor.get(e.path)), shards)
            )
        header_bytes = sum(p.length or 0 for p in probes)
        if header_bytes > HEADER_BUDGET:
            totals = usable_totals(hub_totals, probes, config)
            if totals is not None:
                return [], totals, note
        done = [0]

        def one(probe: HeaderProbe) -> SafetensorsHeader:
            header = self.finish_header(repo_id, sha, probe)
            done[0] += 1
            self.step(f"Reading safetensors headers of {repo_id} ({done[0]}/{len(shards)})")
            return header

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, probes)), None, note

    def probe_header(
        self, repo_id: str, sha: str, entry: FileEntry, floor: int | None
    ) -> HeaderProbe:
        """The header's length: from the cache, else from a first Range that stops at a
        lower bound of the header's end (from the index) or at the 8-byte length."""
        if entry.size < 8:
            error = "file is shorter than 8 bytes"
            return HeaderProbe(entry, header=SafetensorsHeader(entry.path, entry.size, error=error))
        length_file = header_cache_path(repo_id, sha, entry.path, ".length")
        try:
            length: int | None = int(length_file.read_text())
        except (OSError, ValueError):
            length = None
        if length is not None and not 0 <= length <= min(MAX_HEADER_BYTES, entry.size - 8):
            length = None  # a damaged entry is a missing one
        try:
            stored = header_cache_path(repo_id, sha, entry.path).read_bytes()
            header = decode_header(stored)
        except (OSError, ValueError):
            stored, header = b"", None
        # A kept header is trusted at the length kept with it, never on its own.
        if isinstance(header, dict) and len(stored) == length:
            parsed = parse_header_json(entry.path, entry.size, header, header_length=len(stored))
            return HeaderProbe(entry, len(stored), stored, parsed)
        if self.client.offline:  # a header that could not be read online, and why
            error = self.store.header_error(repo_id, sha, entry.path)
            if error is not None:
                return HeaderProbe(
                    entry, header=SafetensorsHeader(entry.path, entry.size, error=error)
                )
        if length is not None:
            return HeaderProbe(entry, length)
        first = self.client.read_range(
            repo_id, entry.path, sha, 0, min(8 + min(floor or 0, MAX_FIRST_READ), entry.size) - 1
        )
        if len(first) < 8:
            return HeaderProbe(
                entry, header=self.unreadable(repo_id, sha, entry, "header is truncated")
            )
        (length,) = struct.unpack("<Q", first[:8])
        if length > MAX_HEADER_BYTES or length > entry.size - 8:
            error = f"header length {length} is impossible"
            return HeaderProbe(entry, header=self.unreadable(repo_id, sha, entry, error))
        write_atomic(length_file, str(length).encode())
        return HeaderProbe(entry, length, first[8 : 8 + length])

    def unreadable(self, repo_id: str, sha: str, entry: FileEntry, error: str) -> SafetensorsHeader:
        """A header that cannot be read, and why (kept for offline audits of the commit)."""
        self.store.save_header_error(repo_id, sha, entry.path, error)
        return SafetensorsHeader(entry.path, entry.size, error=error)

    def finish_header(self, repo_id: str, sha: str, probe: HeaderProbe) -> SafetensorsHeader:
        """The whole header: the bytes the probe did not read, by a second Range."""
        if probe.header is not None:
            return probe.header
        entry, length, raw = probe.entry, probe.length or 0, probe.raw
        if len(raw) < length:
            raw += self.client.read_range(repo_id, entry.path, sha, 8 + len(raw), length + 7)
        if len(raw) < length:
            return self.unreadable(repo_id, sha, entry, "header is truncated")
        try:
            header = decode_header(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            return self.unreadable(repo_id, sha, entry, f"header is not valid JSON: {exc}")
        if not isinstance(header, dict):
            return self.unreadable(repo_id, sha, entry, "header is not a JSON object")
        # Atomic: a header cut short by a crash would be a different, wrong header.
        write_atomic(header_cache_path(repo_id, sha, entry.path), raw)
        return parse_header_json(entry.path, entry.size, header, header_length=length)

    # ------------------------------------------------------------------ GGUF headers

    def gguf_headers(
        self, repo_id: str, sha: str, files: list[FileEntry]
    ) -> tuple[list[GGUFHeader], str | None]:
        """Headers of the .gguf files of the model whose parameters are counted (the main
        group of split parts, :func:`main_gguf_group`), each from a prefix read by HTTP
        Range. Other quantizations of the same model, often a dozen files of 5 MB headers
        each, are listed with their sizes, not read."""
        from cardaudit.extract.gguf_files import main_gguf_group

        ggufs = {entry.path: entry for entry in files if entry.path.lower().endswith(".gguf")}
        chosen = main_gguf_group(ggufs)
        note = None
        if len(chosen) > MAX_GGUF_FILES:
            note = f"headers read from {MAX_GGUF_FILES} of the {len(chosen)} parts of {chosen[0]}"
            chosen = chosen[:MAX_GGUF_FILES]
        others = len(ggufs) - len(chosen)
        if others and note is None:
            note = (
                f"headers of {others} other .gguf files (other quantizations or projectors) "
                f"not read: the parameters are counted from {chosen[0]}; sizes are listed"
            )
        if not chosen:
            return [], note
        self.step(f"Reading GGUF headers of {repo_id}")
        with ThreadPoolExecutor(max_workers=min(HEADER_WORKERS, len(chosen))) as pool:
            return list(pool.map(lambda p: self.read_gguf(repo_id, sha, ggufs[p]), chosen)), note

    def read_gguf(self, repo_id: str, sha: str, entry: FileEntry) -> GGUFHeader:
        """The header from the cardaudit cache (kept by commit), else from a prefix read by
        Range that doubles (1 MiB, 2, 4...) until the whole header is in it.

        The header's length is only known once parsed, so up to as many bytes again as the
        header may be fetched past its end; never more than ``GGUF_MAX_HEADER`` in all.
        """
        from cardaudit.sources.gguf_header import read_gguf_header

        cached = self.store.gguf_header_path(repo_id, sha, entry.path)
        if cached.is_file():
            header = read_gguf_header(str(cached), entry.path, entry.size)
            if header.error is None:
                return header
        prefix = b""
        want = min(GGUF_FIRST_READ, entry.size)
        # Offline, the reads replay from the prefix the last online audit parsed.
        kept = self.store.gguf_prefix(repo_id, sha, entry.path) if self.client.offline else None

        def read(start: int, end: int) -> bytes:
            if kept is not None and start < len(kept):
                return kept[start : end + 1]
            return self.client.read_range(repo_id, entry.path, sha, start, end)

        with tempfile.TemporaryDirectory(prefix="cardaudit-gguf-") as folder:
            local = Path(folder) / "header.gguf"
            while True:
                if want > len(prefix):
                    prefix += read(len(prefix), want - 1)
                local.write_bytes(prefix)
                header = read_gguf_header(str(local), entry.path, entry.size)
                if header.error is None:
                    write_atomic(cached, prefix[: header.header_length or len(prefix)])
                    return header
                done = want >= entry.size or len(prefix) < want
                if not done and want >= GGUF_MAX_HEADER:
                    error = f"no complete GGUF header in its first {GGUF_MAX_HEADER} bytes"
                    header, done = replace(header, error=error), True
                if done:  # unreadable: the prefix is kept, so offline audits say so too
                    if kept is None:
                        self.store.save_gguf_prefix(repo_id, sha, entry.path, prefix)
                    return header
                want = min(want * 2, entry.size, GGUF_MAX_HEADER)

    # ------------------------------------------------------------------ evidence

    def evidence(self, ref: HubRef, *, history: bool = True) -> Evidence:
        """Everything about one Hub model repo at one commit (its own base and code excluded)."""
        from cardaudit.sources.evidence import assemble

        sha, hub_totals = self.resolve_info(ref)
        files = self.list_files(ref.repo_id, sha)
        texts, skipped, problems, folder = self.read_texts(ref.repo_id, sha, files)
        versions: dict[str, tuple[FileVersion, ...]] = {}
        unavailable: list[str] = []
        if history:
            try:
                versions, notes = self.card_history(ref.repo_id, sha, texts)
                skipped |= notes
            except CacheMiss as miss:  # optional: the audit goes on, and says so
                note = f"not read offline: {miss.what} is not in the cache"
                unavailable.append(f"card and licence history ({note})")
        index = _json_object(texts.get("model.safetensors.index.json"))
        config = _json_object(texts.get("config.json"))
        if quantized(texts) and not isinstance((config or {}).get("quantization_config"), dict):
            hub_totals = None  # a separate quantization file: the config cannot verify them
        headers, totals, note = self.headers(ref.repo_id, sha, files, index, hub_totals, config)
        if note:
            skipped["*.safetensors (headers)"] = note
        for entry in (entry for entry in files if is_large_index(entry) and wanted_file(entry)):
            if totals is None:  # the headers were read in full: the index is checked too
                more, more_skipped, more_problems, _ = self.read_texts(
                    ref.repo_id, sha, [entry], defer_index=False
                )
                texts |= more
                skipped |= more_skipped
                problems += more_problems
            else:
                skipped[entry.path] = (
                    f"{entry.size:,} bytes, over the {INDEX_BUDGET:,}-byte index budget: not "
                    f"fetched (the {len(totals.files)} shard headers total "
                    f"{totals.header_bytes:,} bytes; parameter totals came from the Hub"
                    + (", verified against the config count)" if totals.method != "plain" else ")")
                )
        ggufs, note = self.gguf_headers(ref.repo_id, sha, files)
        if note:
            skipped["*.gguf (headers)"] = note
        snapshot = RepoSnapshot(
            kind="hub",
            id=ref.repo_id,
            path=str(folder) if folder else None,
            revision=sha,
            files=tuple(files),
            texts=frozen_mapping(texts),
            skipped=frozen_mapping(skipped),
            history=frozen_mapping(versions),
            url=self.client.repo_url(ref.repo_id),
        )
        problems += [
            Problem("SRC003", f"{header.path}: {header.error}", Location(header.path))
            for header in ggufs
            if header.error
        ]
        offline = tuple(unavailable) if self.client.offline else None
        target = Target("hub", ref.repo_id, None, sha, offline)
        evidence = assemble(target, snapshot, headers=headers, problems=problems)
        return replace(evidence, gguf=tuple(ggufs), safetensors_totals=totals)


def usable_totals(
    hub_totals: Any, probes: list[HeaderProbe], config: dict | None
) -> SafetensorsTotals | None:
    """The Hub's totals bound to these shards, when they give an exact count: as they are
    for plain repos; for a quantized repo (FP8 block, GPTQ, AWQ, compressed-tensors), only
    if they prove the config count."""
    from cardaudit.extract.quant_totals import verify_quantized

    quant = (config or {}).get("quantization_config")
    if not isinstance(quant, dict):
        return bind_totals(hub_totals, probes)
    totals = bind_totals(hub_totals, probes, QUANT_WIDTHS)
    if totals is None:
        return None
    try:
        verified = verify_quantized(config, totals.parameters)
    except Exception:  # a config no verification foresaw: reading the headers is exact
        verified = None
    if verified is None:
        return None  # another scheme, or an equation failed: the headers are read in full
    return replace(totals, method="verified")


def _sane_last_commits(answer: Any, revision: str, position: dict[str, int]) -> bool:
    """Whether every entry of a paths-info answer names a last commit at or before
    ``revision`` in its history (only such answers are kept for later audits)."""
    if not isinstance(answer, list):
        return False
    at = position.get(revision, len(position))
    for item in answer:
        commit = getattr(getattr(item, "last_commit", None), "oid", None)
        if not isinstance(commit, str) or position.get(commit, -1) < at:
            return False
    return True


def _json_object(text: TextFile | None) -> dict | None:
    try:
        value = loads_json(text.text) if text is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def quantized(texts: dict[str, TextFile]) -> bool:
    """Whether the repo declares a quantization (config.json or a quantization config file)."""
    if any(name in texts for name in QUANT_FILES):
        return True
    config = _json_object(texts.get("config.json"))
    if config is None:
        return False
    parts = [config, *(v for v in config.values() if isinstance(v, dict))]
    return any(isinstance(part.get("quantization_config"), dict) for part in parts)
