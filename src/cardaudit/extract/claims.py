"""Claims: benchmark scores and speed figures as stated, and what they leave undisclosed.

Benchmarks, speed patterns and the disclosure checklists are data in
``rules/tables/claims.yaml``. A benchmark table is one claim (its rows in ``values``), so a
40-row table is one finding, not forty.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from cardaudit.extract.markdown_prose import Document, paragraphs, sentences, tables
from cardaudit.extract.promises import clean, documents
from cardaudit.model import Claim, Evidence

SCORE = re.compile(r"(?<![\w.@/#-])\d{1,3}(?:\.\d+)?\s*%?(?![\w/]|\.\d)")
URL = re.compile(r"https?://\S+")
PARENS = re.compile(r"\([^()]*\)")
#: Numbers that are not scores: shots, sizes, pass@k, years, figure numbers, and versions
#: right after a name ("Llama 3.2", "ChatGPT 3.5", "Devstral Small 1.1").
NOT_SCORES = re.compile(
    r"\b\d+[-‑]?(?:shot|k|K|B|M|T)\b|(?:pass|maj|cons|avg)@\d+|\b(?:19|20)\d\d\b"
    r"|\b(?:figure|fig\.|table|section|step|top|version|v)\s*\d+(?:\.\d+)*"
    r"|(?-i:\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,8}+)\s+\d+(?:\.\d+)*(?![\d.]*\s*%)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Benchmark:
    name: re.Pattern[str]
    versions: re.Pattern[str] | None
    agentic: bool


@dataclass(frozen=True)
class Item:
    id: str
    label: str
    kind: str
    patterns: tuple[re.Pattern[str], ...]
    agentic_only: bool


@dataclass(frozen=True)
class ClaimTable:
    benchmarks: tuple[Benchmark, ...]
    speed: tuple[re.Pattern[str], ...]
    relative: re.Pattern[str]
    vague_baselines: re.Pattern[str]
    baseline: re.Pattern[str]
    window: int
    sections: re.Pattern[str]
    checklist: Mapping[str, tuple[Item, ...]]


@cache
def claim_table() -> ClaimTable:
    from cardaudit.rules import load_table

    raw: dict[str, Any] = load_table("claims")
    flags = re.IGNORECASE

    def items(entries: list[dict[str, Any]]) -> tuple[Item, ...]:
        return tuple(
            Item(
                id=str(entry["id"]),
                label=str(entry["label"]),
                kind=str(entry.get("kind", "patterns")),
                patterns=tuple(re.compile(p, flags) for p in entry.get("patterns") or ()),
                agentic_only=bool(entry.get("agentic_only")),
            )
            for entry in entries
        )

    speed = raw["speed"]
    return ClaimTable(
        benchmarks=tuple(
            Benchmark(
                re.compile(entry["name"], flags),
                re.compile(entry["versions"], flags) if entry.get("versions") else None,
                bool(entry.get("agentic")),
            )
            for entry in raw["benchmarks"]
        ),
        speed=tuple(re.compile(p, flags) for p in speed["patterns"]),
        relative=re.compile(speed["relative"], flags),
        vague_baselines=re.compile(speed["vague_baselines"], flags),
        baseline=re.compile(speed["baseline"], flags),
        window=int(raw["scope"]["window"]),
        sections=re.compile(raw["scope"]["sections"], flags),
        checklist={kind: items(entries) for kind, entries in raw["checklist"].items()},
    )


# --------------------------------------------------------------------------- finding claims


def benchmarks_in(text: str, table: ClaimTable) -> list[tuple[Benchmark, re.Match[str]]]:
    found = []
    for bench in table.benchmarks:
        match = bench.name.search(text)
        if match:
            found.append((bench, match))
    return found


def scores_in(
    text: str, table: ClaimTable, named: list[tuple[Benchmark, re.Match[str]]] | None = None
) -> list[str]:
    """Numbers in ``text`` that can be scores (benchmark names, their versions, URLs removed)."""
    stripped = URL.sub(" ", text)
    for bench, _match in named if named is not None else benchmarks_in(text, table):
        stripped = _strip_name(stripped, bench)
    stripped = NOT_SCORES.sub(" ", stripped)
    return [match.group(0).strip() for match in SCORE.finditer(stripped)]


def _strip_name(text: str, bench: Benchmark) -> str:
    """``text`` without each mention of ``bench`` and the version right after it."""
    while True:
        match = bench.name.search(text)
        if match is None:
            return text
        end = match.end()
        if bench.versions is not None:
            after = re.match(r"[\s(\[:-]*", text[end:])
            version = bench.versions.match(text, end + after.end()) if after else None
            if version and version.start() - end <= 3:
                end = version.end()
        text = text[: match.start()] + " " + text[end:]


def speed_in(text: str, table: ClaimTable) -> list[str]:
    return [match.group(0) for regex in table.speed for match in regex.finditer(text)]


@dataclass(frozen=True)
class Found:
    """A claim before its disclosure is checked."""

    kind: str  # "benchmark", "benchmark_table" or "speed"
    document: Document
    line: int
    end: int
    text: str
    values: tuple[str, ...]
    benches: tuple[tuple[Benchmark, str], ...]  # (benchmark, the text naming it)


def _table_claims(document: Document, table: ClaimTable) -> list[Found]:
    found = []
    for block in tables(document):
        if not block.rows:
            continue
        header = block.rows[0][1]
        named = ((i, cell, benchmarks_in(cell, table)) for i, cell in enumerate(header))
        header_benches = [(i, cell, hits) for i, cell, hits in named if hits]
        values: list[str] = []
        benches: list[tuple[Benchmark, str]] = []
        speed: list[str] = []
        for _number, cells in block.rows[1:]:
            if not cells:
                continue
            labels = _label_cells(cells)
            first = " ".join(label for label in labels if label.strip())
            row_benches = benchmarks_in(first, table)
            rest = cells[len(labels) :]
            numbers = [cell for cell in rest if SCORE.search(URL.sub(" ", cell))]
            if row_benches and numbers:
                values.append(f"{clean(first)}: {' | '.join(clean(c) for c in rest)}")
                benches += [(bench, first) for bench, _ in row_benches]
            elif header_benches and numbers:
                pairs = [
                    f"{clean(header[i])} {clean(cells[i])}"
                    for i, _, _ in header_benches
                    if i < len(cells) and cells[i]
                ]
                values.append(f"{clean(first)}: {', '.join(pairs)}")
                benches += [(bench, cell) for _, cell, hits in header_benches for bench, _ in hits]
            speed += speed_in(" | ".join(cells), table)
        if values:
            names = []
            for bench, text in benches:
                name = clean(bench.name.search(text).group(0))
                if name not in names:
                    names.append(name)
            shown = ", ".join(names[:6]) + (" …" if len(names) > 6 else "")
            found.append(
                Found(
                    "benchmark_table",
                    document,
                    block.start,
                    block.end,
                    f"table of {len(values)} rows: {shown}",
                    tuple(values),
                    tuple(benches),
                )
            )
        elif speed:
            found.append(
                Found(
                    "speed",
                    document,
                    block.start,
                    block.end,
                    f"table of speed figures: {', '.join(speed[:4])}",
                    tuple(speed),
                    (),
                )
            )
    return found


def _label_cells(cells: tuple[str, ...]) -> list[str]:
    """The leading cells of a row that name it (up to the first numeric cell, at most 3)."""
    labels = [cells[0]]
    for cell in cells[1:3]:
        if SCORE.fullmatch(clean(cell).strip("*_ ")):
            break
        labels.append(cell)
    return labels


def _prose_claims(document: Document, table: ClaimTable) -> list[Found]:
    found = []
    for paragraph in paragraphs(document):
        if re.search(r"<t[dhr]\b", paragraph.text, re.IGNORECASE):
            continue  # HTML table rows belong to their table
        for offset, sentence in sentences(paragraph.text):
            text = clean(sentence)
            number = paragraph.line_at(offset)
            named = benchmarks_in(text, table)
            figures = speed_in(text, table)
            scores = scores_in(_without(text, figures), table, named) if named else []
            outside = scores_in(_without(PARENS.sub(" ", text), figures), table, named)
            scores = outside or scores
            if named and scores:
                benches = tuple((bench, text) for bench, _ in named)
                found.append(
                    Found("benchmark", document, number, number, text, tuple(scores), benches)
                )
            if figures:
                found.append(Found("speed", document, number, number, text, tuple(figures), ()))
    return found


def _without(text: str, parts: list[str]) -> str:
    for part in parts:
        text = text.replace(part, " ")
    return text


def _group_by_section(found: list[Found]) -> list[Found]:
    """Prose claims of one kind in one section become one claim (a news list is one finding)."""
    grouped: list[Found] = []
    by_section: dict[tuple[str, int], int] = {}
    for claim in found:
        line = claim.document.line(claim.line)
        section = line.section_start if line else claim.line
        key = (claim.kind, section)
        if key not in by_section:
            by_section[key] = len(grouped)
            grouped.append(claim)
            continue
        index = by_section[key]
        first = grouped[index]
        grouped[index] = Found(
            first.kind,
            first.document,
            first.line,
            max(first.end, claim.end),
            f"{first.text} / {claim.text}",
            first.values + claim.values,
            first.benches + claim.benches,
        )
    return grouped


# --------------------------------------------------------------------------- disclosure


class Scope:
    """Where a document's claims may be disclosed, prepared once per document.

    The evaluation sections are shared by every claim of the document, so their text and the
    checklist items it discloses are computed once; each claim adds only its own section and
    the lines around it.
    """

    def __init__(self, document: Document, table: ClaimTable) -> None:
        self.document = document
        self.table = table
        self.cleaned = {line.number: clean(line.text) for line in document.lines}
        evaluation = [
            line
            for line in document.lines
            if any(table.sections.search(name) for name in line.section)
        ]
        self.eval_numbers = {line.number for line in evaluation}
        self.eval_text = "\n".join(self.cleaned[line.number] for line in evaluation)
        self.by_section: dict[int, list[int]] = {}
        for line in document.lines:
            self.by_section.setdefault(line.section_start, []).append(line.number)
        self.eval_disclosed = {
            item.id
            for items in table.checklist.values()
            for item in items
            if item.patterns and any(regex.search(self.eval_text) for regex in item.patterns)
        }

    def local_numbers(self, start: int, end: int) -> list[int]:
        """Lines near the claim and in its own section, outside the evaluation sections."""
        anchor = self.document.line(start)
        numbers = set(range(start - self.table.window, end + self.table.window + 1))
        if anchor is not None:
            numbers |= set(self.by_section.get(anchor.section_start, ()))
        return sorted(n for n in numbers if n in self.cleaned and n not in self.eval_numbers)

    def lines_for(self, start: int, end: int) -> list[str]:
        """Cleaned text of every line in scope (local lines, then evaluation sections)."""
        local = [self.cleaned[n] for n in self.local_numbers(start, end)]
        return local + [self.cleaned[n] for n in sorted(self.eval_numbers)]


def _undisclosed(found: Found, scope: Scope) -> list[str]:
    table = scope.table
    local = "\n".join(scope.cleaned[n] for n in scope.local_numbers(found.line, found.end))
    kind = "speed" if found.kind == "speed" else "benchmark"
    agentic = any(bench.agentic for bench, _ in found.benches)
    missing = []
    for item in table.checklist[kind]:
        if item.agentic_only and not agentic:
            continue
        if item.kind == "versions":
            unversioned = _unversioned(found, scope)
            if unversioned:
                missing.append(f"{item.label} ({', '.join(unversioned)})")
        elif item.kind == "baseline":
            if table.relative.search(found.text) and not _baseline_named(found.text, table):
                missing.append(item.label)
        elif item.id in scope.eval_disclosed:
            continue
        elif not any(regex.search(local) for regex in item.patterns):
            missing.append(item.label)
    return missing


def _unversioned(found: Found, scope: Scope) -> list[str]:
    names: list[str] = []
    lines: list[str] | None = None
    for bench, text in found.benches:
        if bench.versions is None or _versioned(bench, text):
            continue
        if lines is None:
            lines = scope.lines_for(found.line, found.end)
        if any(_versioned(bench, line) for line in lines if bench.name.search(line)):
            continue
        name = clean(bench.name.search(text).group(0))
        if name not in names:
            names.append(name)
    return names


def _versioned(bench: Benchmark, text: str) -> bool:
    """Whether a mention of ``bench`` in ``text`` carries its version or track
    (in the name itself, "Aider-Polyglot", or right after it, "SWE-bench Verified")."""
    assert bench.versions is not None
    for match in bench.name.finditer(text):
        if bench.versions.search(text[match.start() : match.end() + 30]):
            return True
    return False


def _baseline_named(text: str, table: ClaimTable) -> bool:
    match = table.baseline.search(text)
    return bool(match) and not table.vague_baselines.search(match.group("target"))


# --------------------------------------------------------------------------- model-index


def model_index_claim(evidence: Evidence) -> Claim | None:
    """The card's ``model-index`` results that have neither a source nor a verified flag."""
    card = evidence.card
    if card is None or card.error:
        return None
    index = card.metadata.get("model-index")
    if not isinstance(index, list):
        return None
    unsourced: list[str] = []
    for entry in index:
        results = entry.get("results") if isinstance(entry, dict) else None
        for result in results if isinstance(results, list) else ():
            if not isinstance(result, dict):
                continue
            source = result.get("source")
            has_source = isinstance(source, dict) and bool(source.get("url") or source.get("name"))
            dataset = result.get("dataset") if isinstance(result.get("dataset"), dict) else {}
            name = str(dataset.get("name") or dataset.get("type") or "unnamed dataset")
            metrics = result.get("metrics") if isinstance(result.get("metrics"), list) else []
            for metric in metrics:
                if not isinstance(metric, dict):
                    continue
                if has_source or metric.get("verified") is True:
                    continue
                label = metric.get("name") or metric.get("type") or "metric"
                unsourced.append(f"{name} {label}: {metric.get('value')}")
    if not unsourced:
        return None
    return Claim(
        kind="model_index",
        text=f"model-index: {len(unsourced)} result(s) without a source or verified flag",
        path=card.path,
        line=card.key_line("model-index") or 1,
        missing=("source", "verified flag"),
        values=tuple(unsourced),
    )


# --------------------------------------------------------------------------- facts


def claim_facts(evidence: Evidence) -> tuple[Claim, ...]:
    """Every benchmark score and speed figure in the card and the code README."""
    table = claim_table()
    claims: list[Claim] = []
    for document, _snapshot in documents(evidence):
        found = _table_claims(document, table) + _group_by_section(_prose_claims(document, table))
        scope = Scope(document, table) if found else None
        for claim in sorted(found, key=lambda f: (f.line, f.kind)):
            claims.append(
                Claim(
                    kind=claim.kind,
                    text=claim.text,
                    path=document.path,
                    line=claim.line,
                    missing=tuple(_undisclosed(claim, scope)),
                    repo=document.repo,
                    values=claim.values,
                )
            )
    indexed = model_index_claim(evidence)
    if indexed is not None:
        claims.append(indexed)
    return tuple(claims)
