"""Core values shared by every layer: evidence, facts, findings and the report.

Everything here is a frozen dataclass (or a tuple / read-only mapping of them) so that
checks can be pure functions of evidence and facts.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
Outcome = Literal["pass", "fail", "not_applicable", "not_checked", "error"]
SEVERITY_RANK: Mapping[str, int] = MappingProxyType({"info": 0, "warning": 1, "error": 2})
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


def frozen_mapping(data: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """A read-only view of a fresh dict copy of ``data``."""
    return MappingProxyType(dict(data or {}))


# --------------------------------------------------------------------------- evidence


@dataclass(frozen=True)
class Location:
    """Where a finding or a fact comes from.

    ``repo`` says which repository ``path`` belongs to: "model" (the audited repo),
    "code" (its code repo) or "base" (a base model repo).
    """

    path: str | None = None
    line: int | None = None
    key: str | None = None
    repo: str = "model"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "line": self.line}
        if self.key is not None:
            data["key"] = self.key
        if self.repo != "model":
            data["repo"] = self.repo
        return data

    def display(self) -> str:
        """``path:line`` (with a ``code:`` / ``base:`` prefix for other repos)."""
        if self.path is None:
            return "-"
        text = self.path if self.line is None else f"{self.path}:{self.line}"
        return text if self.repo == "model" else f"{self.repo}:{text}"


@dataclass(frozen=True)
class TextFile:
    """A small text file read from a repository."""

    path: str
    text: str

    @cached_property
    def lines(self) -> list[str]:
        """The text's lines, split once (callers must not modify the list)."""
        return self.text.splitlines()

    def line_at(self, offset: int) -> int:
        """1-based line number of character ``offset``."""
        return bisect_right(self._newlines, max(offset, 0) - 1) + 1

    @cached_property
    def _newlines(self) -> list[int]:
        """Offsets of the text's "\\n" characters, found once (line_at is a bisection)."""
        return [match.start() for match in re.finditer("\n", self.text)]

    def find_line(self, pattern: str | re.Pattern[str], flags: int = re.IGNORECASE) -> int | None:
        """Line of the first match of ``pattern`` (a regex), or None."""
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, flags)
        match = regex.search(self.text)
        return self.line_at(match.start()) if match else None

    def find_text(self, needle: str) -> int | None:
        """Line of the first occurrence of the literal ``needle``, or None.

        For values taken from the repo (shard, tensor, module names): they are searched as
        text, never compiled into a pattern (``(a+)+b`` as a regex backtracks for days).
        """
        offset = self.text.find(needle)
        return self.line_at(offset) if offset >= 0 else None

    def excerpt(self, line: int, width: int = 200) -> str:
        """The text of ``line`` (1-based), stripped and cut to ``width`` characters."""
        lines = self.lines
        if not 1 <= line <= len(lines):
            return ""
        text = lines[line - 1].strip()
        return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class FileEntry:
    """A file in a repository listing (read or not)."""

    path: str
    size: int
    lfs: bool = False


@dataclass(frozen=True)
class FileVersion:
    """One committed version of a file: for promise history and licence changes."""

    sha: str
    date: datetime
    text: str


@dataclass(frozen=True)
class Tag:
    name: str
    sha: str
    date: datetime | None


@dataclass(frozen=True)
class RepoSnapshot:
    """One repository at one revision: its listing and the small text files read from it.

    ``texts`` holds files worth reading (cards, licences, notices, configs, code) keyed by
    repo-relative POSIX path; ``skipped`` says why any other candidate was not read.
    """

    kind: Literal["local", "hub", "git"]
    id: str
    path: str | None = None
    revision: str | None = None
    files: tuple[FileEntry, ...] = ()
    texts: Mapping[str, TextFile] = field(default_factory=frozen_mapping)
    skipped: Mapping[str, str] = field(default_factory=frozen_mapping)
    history: Mapping[str, tuple[FileVersion, ...]] = field(default_factory=frozen_mapping)
    tags: tuple[Tag, ...] = ()
    url: str | None = None

    def text(self, path: str) -> TextFile | None:
        return self.texts.get(path)

    def has(self, path: str) -> bool:
        return any(entry.path == path for entry in self.files)

    def find(self, *names: str, top_level: bool = True) -> list[str]:
        """Paths whose file name equals one of ``names`` (case-insensitive), sorted."""
        wanted = {name.lower() for name in names}
        found = []
        for entry in self.files:
            if top_level and "/" in entry.path:
                continue
            if entry.path.rsplit("/", 1)[-1].lower() in wanted:
                found.append(entry.path)
        return sorted(found)


@dataclass(frozen=True)
class Card:
    """A model card: YAML front matter and Markdown body, with line numbers.

    ``metadata_lines`` maps each top-level front-matter key to its 1-based line in the
    file. ``error`` is set (with a line) when the front matter is not valid YAML.
    """

    path: str
    raw: str
    metadata: Mapping[str, Any]
    metadata_lines: Mapping[str, int]
    body: str
    body_start_line: int
    has_front_matter: bool
    error: str | None = None
    error_line: int | None = None
    #: Top-level keys whose value held a string too long to audit, cut for the audit.
    cut_keys: tuple[str, ...] = ()

    def key_line(self, key: str) -> int | None:
        return self.metadata_lines.get(key)

    @property
    def file(self) -> TextFile:
        return TextFile(self.path, self.raw)


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]
    file: str


@dataclass(frozen=True)
class SafetensorsHeader:
    """The parsed header of one .safetensors file (never its data)."""

    path: str
    size: int | None
    tensors: tuple[TensorInfo, ...] = ()
    metadata: Mapping[str, str] = field(default_factory=frozen_mapping)
    error: str | None = None
    #: Bytes of the JSON header (after the 8-byte length); None when unknown.
    header_length: int | None = None


@dataclass(frozen=True)
class SafetensorsTotals:
    """Parameter totals by dtype that the Hub computed from every shard header (``model_info``
    ``safetensors``), used instead of reading headers too large for the transfer budget.

    Only kept when they are bound to the audited commit: ``data_bytes`` (the listed sizes of
    ``files`` minus their 8-byte prefixes and ``header_bytes``, read by Range) equals the
    parameters times their dtype widths.
    """

    parameters: Mapping[str, int]
    total: int
    files: tuple[str, ...]
    header_bytes: int
    data_bytes: int
    #: "plain": the totals are the parameters. "verified": a quantized repo (FP8 block,
    #: GPTQ, AWQ, compressed-tensors) whose totals (weights, scales and the rest) prove the
    #: config count exact (:mod:`cardaudit.extract.quant_totals`).
    method: str = "plain"


@dataclass(frozen=True)
class GGUFHeader:
    """The parsed header of one .gguf file: metadata scalars and tensor infos (never data).

    ``tensors`` use ggml type names as dtype and the logical (unquantized) shape;
    ``tensor_bytes`` is the size of the data section the header describes.
    """

    path: str
    size: int | None
    tensors: tuple[TensorInfo, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=frozen_mapping)
    tensor_bytes: int = 0
    error: str | None = None
    #: Bytes from the start of the file to the (aligned) start of the tensor data.
    header_length: int | None = None


@dataclass(frozen=True)
class Problem:
    """Evidence that could not be gathered; becomes an SRC finding."""

    rule_id: str
    message: str
    location: Location = Location()
    evidence: str | None = None


@dataclass(frozen=True)
class Target:
    kind: Literal["local", "hub"]
    id: str
    path: str | None
    revision: str | None
    #: Set when the audit ran with ``HF_HUB_OFFLINE`` from caches alone: the optional parts
    #: that were not available (empty when nothing was missing). None: fetched online.
    offline: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "id": self.id,
            "path": self.path,
            "revision": self.revision,
        }
        if self.offline is not None:
            data["offline"] = {"from_cache": True, "unavailable": list(self.offline)}
        return data


@dataclass(frozen=True)
class PriorAudit:
    """The previous stored audit of the same model (from the tracking store), if any."""

    audit_id: int
    revision: str | None
    audited_at: datetime
    licence_declared: str | None
    licence_spdx: str | None


@dataclass(frozen=True)
class Evidence:
    """Everything acquired about one model repo, its code repo and its base models."""

    target: Target
    repo: RepoSnapshot
    card: Card | None = None
    config: Mapping[str, Any] | None = None
    safetensors: tuple[SafetensorsHeader, ...] = ()
    safetensors_index: Mapping[str, Any] | None = None
    code: RepoSnapshot | None = None
    base: tuple[Evidence, ...] = ()
    base_relation: str | None = None
    problems: tuple[Problem, ...] = ()
    gguf: tuple[GGUFHeader, ...] = ()
    previous: PriorAudit | None = None
    #: How the evidence was gathered (e.g. ``code_repo_choice``: which card link was cloned, why).
    notes: Mapping[str, Any] = field(default_factory=frozen_mapping)
    #: Hub-computed totals standing in for ``safetensors`` headers that were not read.
    safetensors_totals: SafetensorsTotals | None = None
    #: ``pytorch_model.bin.index.json`` (JSON: ``total_size`` and ``weight_map``; the .bin
    #: shards themselves are never read or unpickled).
    bin_index: Mapping[str, Any] | None = None

    def json_file(self, path: str) -> Any:
        """Parsed JSON of a text file in the model repo, or None when absent or invalid."""
        from cardaudit.bounded import loads_json

        text = self.repo.text(path)
        if text is None:
            return None
        try:
            return loads_json(text.text)
        except ValueError:
            return None


# --------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class Modification:
    """One passage where a licence file differs from its licence's reference text.

    ``kind`` is ``added`` (only in the file), ``removed`` (only in the reference: ``text`` is
    the removed wording) or ``changed`` (``text`` the file's wording, ``reference_text`` the
    original). ``line`` is the 1-based line in the audited file (for ``removed``, where the
    passage would have been). ``restricts`` is True when an added or changed passage limits
    use; ``category`` names what it is about (commercial, research_only, territory, users,
    field_of_use, attribution, revocability, period, threshold, other), or for a removed
    passage the restriction it drops; a changed number that does not restrict keeps the
    category of what it counts (period, threshold, users, commercial).
    """

    kind: Literal["added", "removed", "changed"]
    text: str
    line: int
    reference_text: str | None = None
    restricts: bool = False
    category: str | None = None


@dataclass(frozen=True)
class LicenceMatch:
    """What a licence text was identified as; ``modifications`` is how it differs from the
    reference text ``compared_with`` names (None: not compared, ``compare_note`` says why)."""

    path: str
    identified: str | None
    confidence: float
    also: tuple[str, ...] = ()
    repo: str = "model"
    note: str | None = None
    engine: str | None = None
    complete: bool = True
    link: str | None = None
    modifications: tuple[Modification, ...] = ()
    compared_with: str | None = None
    compare_note: str | None = None


@dataclass(frozen=True)
class LicenceFacts:
    declared: str | None = None
    declared_spdx: str | None = None
    declared_name: str | None = None
    declared_link: str | None = None
    files: tuple[LicenceMatch, ...] = ()
    code_repo: Mapping[str, Any] | None = None
    prose: tuple[Mapping[str, Any], ...] = ()
    notices: tuple[str, ...] = ()
    base: tuple[Mapping[str, Any], ...] = ()
    #: Who publishes: ``{org, role: licensor|redistributor|unknown, evidence: [...]}``.
    publisher: Mapping[str, Any] | None = None
    #: Licence statements in any form: ``{kind, text, path, line, repo, licence?, ...}``.
    statements: tuple[Mapping[str, Any], ...] = ()
    #: Terms beside the licence: ``{kind: aup|gating|registration|mau|territory|...}``.
    additional_terms: tuple[Mapping[str, Any], ...] = ()
    #: What adopting the model obliges one to do: ``{duty, detail, source, binds}``.
    obligations: tuple[Mapping[str, Any], ...] = ()
    #: The REUSE layout (LICENSES/, REUSE.toml, .reuse/dep5) when the repo has one.
    reuse: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ParameterFacts:
    total: int | None = None
    active: int | None = None
    by_dtype: Mapping[str, int] = field(default_factory=frozen_mapping)
    source: Literal["safetensors", "hub", "index", "config", "gguf"] | None = None
    details: Mapping[str, Any] = field(default_factory=frozen_mapping)


@dataclass(frozen=True)
class MemoryFacts:
    weight_bytes: int | None = None
    kv_cache_bytes_per_token: int | None = None
    context_length: int | None = None
    details: Mapping[str, Any] = field(default_factory=frozen_mapping)


@dataclass(frozen=True)
class BaseModelRef:
    id: str
    relation: str | None
    source: str
    location: Location = Location()


@dataclass(frozen=True)
class Promise:
    """One promised artifact found in the card or the code README (extract/promises.py).

    ``text`` is the promising sentence (or roadmap box) and ``line`` its 1-based line in
    ``path`` of ``repo`` ("model" or "code"). ``artifact`` is the category (training_code,
    training_data, evaluation_code, inference_code, docs, paper, checkpoints, quantized, demo,
    other) and ``item`` the words that name it ("SFT code"): one sentence can promise several
    items, each is its own Promise. ``status`` is decided from the repos' files, links, checked
    roadmap boxes and delivery statements; ``reason`` says why. ``first_seen`` is the ISO date
    of the commit since which the item has been promised in that file (None without history)
    and ``age_days`` its age on the audit clock. ``locations`` lists every place the same
    promise is stated (the first is ``repo``/``path``/``line``); ``about`` is its subject
    ("audited", "page" or another model's name; see extract/reading.py) and ``inherited``
    marks a promise of the original card a converted repo carries.
    """

    text: str
    artifact: str
    path: str
    line: int
    status: Literal["missing", "delivered", "unknown"]
    first_seen: str | None = None
    reason: str | None = None
    repo: str = "model"
    item: str | None = None
    age_days: int | None = None
    locations: tuple[Location, ...] = ()
    about: str = "audited"
    inherited: bool = False

    @property
    def charged(self) -> bool:
        """Whether findings may charge the audited model with this promise."""
        return self.about in ("audited", "page")

    def to_json(self) -> dict[str, Any]:
        return _prose_item_json(self)


@dataclass(frozen=True)
class Claim:
    """A benchmark score or speed figure as stated (extract/claims.py).

    ``kind`` is "benchmark" (a prose score), "benchmark_table" (one claim per table; its rows
    in ``values``), "speed" or "model_index" (front-matter results). ``missing`` lists the
    checklist items (rules/tables/claims.yaml) that the claim and its surroundings do not
    disclose. ``values`` holds the scores or figures as written ("SWE-bench Verified: 68.2").
    """

    kind: str
    text: str
    path: str
    line: int
    missing: tuple[str, ...] = ()
    repo: str = "model"
    values: tuple[str, ...] = ()
    locations: tuple[Location, ...] = ()
    about: str = "audited"
    inherited: bool = False
    headline: bool = False
    #: The text attributes the figures to someone else ("as reported by Meta").
    reported: bool = False

    @property
    def charged(self) -> bool:
        """Whether findings may charge the audited model with this claim."""
        return self.about in ("audited", "page") and not self.reported

    def to_json(self) -> dict[str, Any]:
        return _prose_item_json(self)


def _prose_item_json(item: Any) -> dict[str, Any]:
    """A promise or claim as JSON: ``locations`` with their repo, ``inherited`` and
    ``headline`` only when true."""
    data: dict[str, Any] = {}
    for name in item.__dataclass_fields__:
        value = getattr(item, name)
        if name in ("inherited", "headline", "reported") and not value:
            continue
        if name == "locations":
            places = value or (Location(item.path, item.line, repo=item.repo),)
            value = [{"repo": p.repo, "path": p.path, "line": p.line} for p in places]
        elif isinstance(value, tuple):
            value = list(value)
        data[name] = value
    return data


@dataclass(frozen=True)
class Facts:
    """Facts derived from evidence, shared by several checks and published in the report."""

    license: LicenceFacts = LicenceFacts()
    parameters: ParameterFacts = ParameterFacts()
    memory: MemoryFacts = MemoryFacts()
    base_models: tuple[BaseModelRef, ...] = ()
    promises: tuple[Promise, ...] = ()
    claims: tuple[Claim, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=frozen_mapping)


# --------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Hit:
    """What a check reports: the pipeline adds rule id, severity and remediation."""

    message: str
    location: Location = Location()
    evidence: str | None = None
    severity: Severity | None = None
    also: tuple[Location, ...] = ()  # the same promise or claim stated elsewhere


#: A finding quotes at most this much of its evidence, and says at most this much: a card's
#: values can be 100,000 characters long (``sources.card.MAX_VALUE_CHARS``), and a message
#: that repeats one must not carry it into every report and terminal (issue 14 §2).
MAX_EVIDENCE_CHARS = 500
MAX_MESSAGE_CHARS = 2_000


def cut_text(text: str | None, limit: int) -> str | None:
    """``text`` shortened to ``limit`` characters with an ellipsis; None stays None."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + "…"


@dataclass(frozen=True)
class Finding:
    rule_id: str
    severity: Severity
    message: str
    location: Location
    evidence: str | None = None
    remediation: str | None = None
    suppressed_by: str | None = None
    also: tuple[Location, ...] = ()  # further places of the same promise or claim

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", cut_text(self.message, MAX_MESSAGE_CHARS))
        object.__setattr__(self, "evidence", cut_text(self.evidence, MAX_EVIDENCE_CHARS))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "rule_id": self.rule_id,
            "severity": self.severity,
            "message": self.message,
            "location": self.location.to_json(),
            "evidence": self.evidence,
            "remediation": self.remediation,
        }
        if self.also:
            data["also_at"] = [location.to_json() for location in self.also]
        if self.suppressed_by is not None:
            data["suppressed_by"] = self.suppressed_by
        return data


@dataclass(frozen=True)
class CheckRun:
    """How one rule's check ended. ``not_checked``: the rule concerns this repo but an input
    is missing (``note`` says which, ``fix`` how to supply it); never a pass."""

    rule_id: str
    outcome: Outcome
    note: str | None = None
    fix: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "note", cut_text(self.note, MAX_MESSAGE_CHARS))
        object.__setattr__(self, "fix", cut_text(self.fix, MAX_MESSAGE_CHARS))


@dataclass(frozen=True)
class Summary:
    error: int
    warning: int
    info: int
    suppressed: int
    #: Rules that concern the repo but could not be checked (an input was missing).
    not_checked: int = 0


@dataclass(frozen=True)
class Report:
    target: Target
    facts: Facts
    checks: tuple[CheckRun, ...]
    findings: tuple[Finding, ...]
    suppressed: tuple[Finding, ...] = ()
    evidence: Evidence | None = field(default=None, compare=False, repr=False)

    @property
    def summary(self) -> Summary:
        counts = {severity: 0 for severity in SEVERITIES}
        for finding in self.findings:
            counts[finding.severity] += 1
        return Summary(
            error=counts["error"],
            warning=counts["warning"],
            info=counts["info"],
            suppressed=len(self.suppressed),
            not_checked=sum(1 for run in self.checks if run.outcome == "not_checked"),
        )

    def worst_severity(self) -> Severity | None:
        worst: Severity | None = None
        for finding in self.findings:
            if worst is None or SEVERITY_RANK[finding.severity] > SEVERITY_RANK[worst]:
                worst = finding.severity
        return worst


def to_jsonable(value: Any) -> Any:
    """Convert dataclasses, mappings, tuples and datetimes into JSON-ready values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_json = getattr(value, "to_json", None)
        if callable(to_json):
            return to_json()
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value
