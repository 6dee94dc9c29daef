"""Markdown read line by line for prose analysis: code blocks, comments and sections known.

Promises and claims are searched in prose only: fenced or indented code blocks, HTML comments
and front matter are never prose. The block structure comes from :mod:`markdown_blocks`.
Every line keeps its 1-based number in the original file.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from cardaudit.extract import markdown_blocks as blocks

#: A Latin full stop before a space and a capital; a CJK full stop (。！？), which no space
#: follows, before any text.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[*_`\"'])|(?<=[。！？])\s*+(?=\S)")
TAG = re.compile(r"<[^<>]++>")


@dataclass(frozen=True)
class Line:
    """One line of a Markdown document; ``kind`` is its block kind (see markdown_blocks)."""

    number: int
    text: str
    prose: bool
    heading: str | None
    section: tuple[str, ...]
    section_start: int
    kind: str = blocks.PARAGRAPH


@dataclass(frozen=True)
class Table:
    """A Markdown pipe table or an HTML ``<table>``: its lines, rows and cells."""

    start: int
    end: int
    rows: tuple[tuple[int, tuple[str, ...]], ...]
    section: tuple[str, ...]


@dataclass(frozen=True)
class Document:
    path: str
    repo: str
    lines: tuple[Line, ...]
    pipe_tables: tuple[Table, ...] = ()
    block_starts: frozenset[int] = frozenset()  # first lines of paragraphs and HTML blocks

    def line(self, number: int) -> Line | None:
        index = number - self.lines[0].number if self.lines else -1
        return self.lines[index] if 0 <= index < len(self.lines) else None

    def prose(self) -> list[Line]:
        return [line for line in self.lines if line.prose]

    def table_at(self, number: int) -> Table | None:
        """The pipe table holding line ``number``."""
        return next((t for t in self.pipe_tables if t.start <= number <= t.end), None)


def parse_document(path: str, text: str, *, repo: str = "model", first_line: int = 1) -> Document:
    """Split ``text`` (starting at ``first_line`` of the file) into classified lines."""
    raw_lines = text.splitlines()
    shape = blocks.structure(raw_lines, first_line)
    lines: list[Line] = []
    stack: list[tuple[int, str]] = []
    section_start = first_line
    for offset, raw in enumerate(raw_lines):
        number = first_line + offset
        kind = shape.kinds[offset]
        heading = shape.headings.get(number)
        heading_text = heading.title if heading is not None else None
        if heading is not None:
            while stack and stack[-1][0] >= heading.level:
                stack.pop()
            stack.append((heading.level, heading.title or ""))
            section_start = number
        lines.append(
            Line(
                number,
                raw,
                kind not in blocks.NOT_PROSE,
                heading_text,
                tuple(name for _level, name in stack),
                section_start,
                kind,
            )
        )
    done = tuple(lines)
    pipe = tuple(
        Table(block.start, block.end, block.rows, done[block.start - first_line].section)
        for block in shape.of_kind(blocks.TABLE)
    )
    starts = frozenset(
        block.start for block in shape.blocks if block.kind in (blocks.PARAGRAPH, blocks.HTML)
    )
    return Document(path, repo, done, pipe, starts)


def sentences(text: str) -> list[tuple[int, str]]:
    """(start offset, sentence) pairs of one line of prose."""
    parts = []
    start = 0
    for match in SENTENCE_END.finditer(text):
        parts.append((start, text[start : match.start()]))
        start = match.end()
    parts.append((start, text[start:]))
    return [(offset, part) for offset, part in parts if part.strip()]


def tables(document: Document) -> list[Table]:
    """Pipe tables and HTML tables of the document's prose, in document order."""
    found: list[Table] = list(document.pipe_tables)
    lines = document.lines
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.prose and line.kind != blocks.TABLE_ROW and "<table" in line.text.lower():
            start = index
            while index < len(lines) and "</table>" not in lines[index].text.lower():
                index += 1
            found.append(_html_table(lines[start : index + 1]))
        index += 1
    return sorted(found, key=lambda table: table.start)


def _html_table(block: tuple[Line, ...]) -> Table:
    rows: list[tuple[int, tuple[str, ...]]] = []
    text = "\n".join(line.text for line in block)
    first = block[0].number
    for match in re.finditer(r"<tr[^>]*>(.*?)</tr>", text, re.IGNORECASE | re.DOTALL):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", match.group(1), re.IGNORECASE | re.DOTALL)
        clean = tuple(re.sub(r"\s+", " ", TAG.sub("", cell)).strip() for cell in cells)
        rows.append((first + text.count("\n", 0, match.start()), clean))
    return Table(first, block[-1].number, tuple(rows), block[0].section)


def card_document(evidence_card, repo: str = "model") -> Document | None:
    """The prose of a model card's body (front matter excluded), or None."""
    if evidence_card is None:
        return None
    return parse_document(
        evidence_card.path, evidence_card.body, repo=repo, first_line=evidence_card.body_start_line
    )


README_NAMES = ("README.md", "readme.md", "README.markdown", "README.rst", "README.txt", "README")


def readme_path(snapshot) -> str | None:
    """The top-level README of a repo snapshot."""
    for name in README_NAMES:
        if snapshot.text(name) is not None:
            return name
    return None


PARAGRAPH_KINDS = frozenset({blocks.PARAGRAPH, blocks.HTML})
LIST_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\[[ xX✓✔]\]\s)")


@dataclass(frozen=True)
class Paragraph:
    """Consecutive prose lines joined with spaces; a list item starts a new paragraph."""

    lines: tuple[Line, ...]
    text: str
    starts: tuple[int, ...]

    @property
    def first(self) -> Line:
        return self.lines[0]

    def line_at(self, offset: int) -> int:
        """The file line holding character ``offset`` of :attr:`text`."""
        number = self.lines[0].number
        for line, start in zip(self.lines, self.starts, strict=True):
            if start > offset:
                break
            number = line.number
        return number


#: ``paragraphs`` per live Document (by id; an entry goes when its Document is collected):
#: promises, claims and subjects share one split.
_PARAGRAPHS: dict[int, list[Paragraph]] = {}
#: ``cleaned_sentences`` per live Paragraph.
_SENTENCES: dict[int, list[tuple[int, str, str]]] = {}


def paragraphs(document: Document) -> list[Paragraph]:
    """Prose paragraphs of the document (headings and table rows excluded), split once per
    document (callers must not modify the list)."""
    key = id(document)
    found = _PARAGRAPHS.get(key)
    if found is None:
        found = _PARAGRAPHS[key] = _paragraphs(document)
        weakref.finalize(document, _PARAGRAPHS.pop, key, None)
    return found


def cleaned_sentences(
    paragraph: Paragraph, clean: Callable[[str], str]
) -> list[tuple[int, str, str]]:
    """(offset, sentence, ``clean(sentence)``) of a paragraph, split and cleaned once for
    every extractor (``clean`` is always extract.promises.clean)."""
    key = id(paragraph)
    found = _SENTENCES.get(key)
    if found is None:
        found = [(offset, part, clean(part)) for offset, part in sentences(paragraph.text)]
        _SENTENCES[key] = found
        weakref.finalize(paragraph, _SENTENCES.pop, key, None)
    return found


def _paragraphs(document: Document) -> list[Paragraph]:
    found: list[Paragraph] = []
    current: list[Line] = []

    def flush() -> None:
        if current:
            starts, parts, offset = [], [], 0
            for line in current:
                part = line.text.strip()
                starts.append(offset)
                parts.append(part)
                offset += len(part) + 1
            found.append(Paragraph(tuple(current), " ".join(parts), tuple(starts)))
            current.clear()

    previous = None
    for line in document.lines:
        if line.kind not in PARAGRAPH_KINDS or line.heading is not None or not line.text.strip():
            flush()
            previous = None
            continue
        # a new Markdown block or a list item starts a new paragraph
        if (
            previous != line.kind
            or LIST_START.match(line.text)
            or line.number in document.block_starts
        ):
            flush()
        previous = line.kind
        current.append(line)
    flush()
    return found
