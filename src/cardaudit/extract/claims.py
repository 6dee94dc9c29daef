"""Claims: benchmark scores, speed figures and superiority claims as stated, and what they
leave undisclosed.

Benchmarks, speed patterns, superiority wording and the disclosure checklists are data in
``rules/tables/claims.yaml``. A benchmark table is one claim (its rows in ``values``), so a
40-row table is one finding, not forty; the same table or sentence in the card and the code
README is one claim with both locations. Every claim carries the subject of its block
(:mod:`cardaudit.extract.reading`): claims about other models are kept, never charged.
Benchmark names match across spelling variants ("Human Eval", "MT Bench", "Arena-Hard") and
next to CJK text; numbers with "％" count as figures.
"""

import re
from dataclasses import dataclass, replace

from cardaudit.extract.claim_model_index import model_index_claim
from cardaudit.extract.claim_table import Benchmark, ClaimTable, Item, claim_table
from cardaudit.extract.claim_text import (
    SCORE,
    URL,
    benchmarks_in,
    scores_in,
    speed_in,
)
from cardaudit.extract.clause_subject import clause_subject
from cardaudit.extract.literal_filter import search
from cardaudit.extract.markdown_prose import Document, cleaned_sentences, paragraphs
from cardaudit.extract.promises import clean
from cardaudit.extract.reading import (
    PAGE_SUBJECT,
    Reading,
    Subject,
    read_evidence,
    subject_near,
)
from cardaudit.model import Claim, Evidence, Location

__all__ = [
    "Benchmark",
    "ClaimTable",
    "Item",
    "benchmarks_in",
    "claim_facts",
    "claim_table",
    "scores_in",
    "speed_in",
]

IMAGE = re.compile(
    r"!\[([^\]\n]{0,300})\]\(([^)\s]{1,500})(?:\s[^)\n]{0,200})?\)|<img\s[^>\n]{0,1000}>",
    re.IGNORECASE,
)
ATTRIBUTE = re.compile(r"\b(alt|src)\s*=\s*[\"']([^\"'\n]{0,500})[\"']", re.IGNORECASE)
PARENS = re.compile(r"\([^()]*\)")


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
    subject: Subject = PAGE_SUBJECT


def _table_claims(reading: Reading, table: ClaimTable) -> list[Found]:
    found = []
    document = reading.document
    for block in reading.tables:
        if not block.rows:
            continue
        subject = reading.table_subject(block)
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
                    subject,
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
                    subject,
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


def _prose_claims(reading: Reading, table: ClaimTable) -> list[Found]:
    found = []
    document = reading.document
    for paragraph in paragraphs(document):
        found += _image_claims(reading, paragraph, table)
        if re.search(r"<t[dhr]\b", paragraph.text, re.IGNORECASE):
            continue  # HTML table rows belong to their table
        prior: tuple[Subject, str] | None = None  # the sentence before: (block, text)
        for offset, sentence, text in cleaned_sentences(paragraph, clean):
            number = paragraph.line_at(offset)
            block = reading.at(number)
            named = benchmarks_in(text, table)
            figures = speed_in(text, table)
            scores = scores_in(_without(text, figures), table, named) if named else []
            outside = scores_in(_without(PARENS.sub(" ", text), figures), table, named)
            scores = outside or scores
            previous = _last_subject(reading, prior, text) if named or figures else None
            if named and scores:
                benches = tuple((bench, text) for bench, _ in named)
                for subject, values in _by_subject(reading, block, text, scores, previous):
                    found.append(
                        Found("benchmark", document, number, number, text, values, benches, subject)
                    )
            for subject, values in _by_subject(reading, block, text, figures, previous):
                found.append(Found("speed", document, number, number, text, values, (), subject))
            if not figures and not (named and scores):
                match = search(table.superiority, text)
                if match:
                    block = subject_near(reading, number, text, match.start())
                if match and not table.pointer.search(IMAGE.sub(" ", sentence)):
                    benches = tuple((bench, text) for bench, _ in named)
                    values = (match.group(0),)
                    found.append(
                        Found("superiority", document, number, number, text, values, benches, block)
                    )
            prior = (block, text)
    return found


def _by_subject(
    reading: Reading,
    block: Subject,
    text: str,
    values: list[str],
    previous: Subject | None,
) -> list[tuple[Subject, tuple[str, ...]]]:
    """``values`` (in the order ``text`` states them) grouped by the subject of the clause
    each sits in (extract/clause_subject.py): "Breeze scores 64.1; the base scores 62.5"
    is one claim about each model."""
    if not values:
        return []
    names = reading.names
    groups: dict[Subject, list[str]] = {}
    cursor = 0
    for value in values:
        at = text.find(value, cursor)
        if at < 0:
            at = max(0, text.find(value))
        cursor = at + len(value)
        subject = block if names is None else clause_subject(names, block, text, at, previous)
        groups.setdefault(subject, []).append(value)
    return [(subject, tuple(found)) for subject, found in groups.items()]


def _last_subject(reading: Reading, prior: tuple[Subject, str] | None, text: str) -> Subject | None:
    """The subject of the last clause of the sentence before, when ``text`` has a pronoun
    that may stand for it ("The original model has 14.7B parameters. It scores…")."""
    names = reading.names
    if names is None or prior is None or not names.table.pronoun.search(text):
        return None
    block, before = prior
    return clause_subject(names, block, before, max(0, len(before.rstrip(" .")) - 1))


def _image_claims(reading: Reading, paragraph, table: ClaimTable) -> list[Found]:
    """Benchmark results shown only as an image: alt text or file name of a chart."""
    found = []
    for match in IMAGE.finditer(paragraph.text):
        if match.group(0).startswith("!"):
            alt, source = match.group(1), match.group(2)
        else:
            attributes = {k.lower(): v for k, v in ATTRIBUTE.findall(match.group(0))}
            alt, source = attributes.get("alt", ""), attributes.get("src", "")
        name = source.rsplit("/", 1)[-1]
        described = f"{alt} {re.sub(r'[-_.]+', ' ', name)}"
        named = benchmarks_in(described, table)
        if not (table.image_words.search(described) or named):
            continue
        number = paragraph.line_at(match.start())
        shown = clean(alt) or name
        benches = tuple((bench, described) for bench, _ in named)
        found.append(
            Found(
                "benchmark_image",
                reading.document,
                number,
                number,
                f"image {shown!r}",
                (shown,),
                benches,
                reading.at(number),
            )
        )
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
        key = (claim.kind, section, claim.subject)
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
            first.subject,
        )
    return grouped


# --------------------------------------------------------------------------- facts


def claim_facts(evidence: Evidence) -> tuple[Claim, ...]:
    """Every benchmark score, speed figure and superiority claim in the card and the code
    README, once each (the same table or sentence in both is one claim with both places)."""
    from cardaudit.extract.claim_disclosure import Scope, undisclosed
    from cardaudit.extract.claim_identity import fold_repeated_facts

    table = claim_table()
    claims: list[Claim] = []
    seen: dict[tuple, int] = {}
    for reading, _snapshot in read_evidence(evidence):
        document = reading.document
        found = _table_claims(reading, table) + _group_by_section(_prose_claims(reading, table))
        found = _drop_backed(found)
        scope = Scope(document, table) if found else None
        second_heading = _second_heading(document)
        for claim in sorted(found, key=lambda f: (f.line, f.kind)):
            missing = tuple(undisclosed(claim, scope))
            if claim.kind == "superiority" and not missing:
                continue
            key = (claim.kind, claim.values if claim.kind != "superiority" else claim.text)
            place = Location(document.path, claim.line, repo=document.repo)
            if key in seen:
                index = seen[key]
                kept = claims[index]
                claims[index] = replace(kept, locations=(*kept.locations, place))
                continue
            seen[key] = len(claims)
            claims.append(
                Claim(
                    kind=claim.kind,
                    text=claim.text,
                    path=document.path,
                    line=claim.line,
                    missing=missing,
                    repo=document.repo,
                    values=claim.values,
                    locations=(place,),
                    about=claim.subject.about,
                    inherited=claim.subject.inherited,
                    reported=claim.subject.reported,
                    headline=document.repo == "model" and claim.line < second_heading,
                )
            )
    claims = list(fold_repeated_facts(claims, table))
    indexed = model_index_claim(evidence)
    if indexed is not None:
        claims.append(indexed)
    return tuple(claims)


def _drop_backed(found: list[Found]) -> list[Found]:
    """Claims backed by numbers the document shows: a superiority claim or a chart image in a
    document with a benchmark table or score about the audited model, and a chart image in a
    section that states its scores or speed figures, are not claims of their own."""
    numbers = {"benchmark", "benchmark_table"}
    backed = any(claim.kind in numbers and claim.subject.charged for claim in found)
    sections_with: dict[int, set[str]] = {}
    for claim in found:
        line = claim.document.line(claim.line)
        section = line.section_start if line else claim.line
        sections_with.setdefault(section, set()).add(claim.kind)
    kept = []
    for claim in found:
        line = claim.document.line(claim.line)
        kinds = sections_with.get(line.section_start if line else claim.line, set())
        if claim.kind in ("superiority", "benchmark_image") and backed:
            continue
        if claim.kind == "benchmark_image" and kinds & (numbers | {"speed"}):
            continue
        kept.append(claim)
    return kept


def _second_heading(document: Document) -> int:
    """The line of the document's second heading: what comes before it is the headline."""
    headings = [line.number for line in document.lines if line.heading is not None]
    return (
        headings[1]
        if len(headings) > 1
        else (document.lines[-1].number + 1 if document.lines else 0)
    )
