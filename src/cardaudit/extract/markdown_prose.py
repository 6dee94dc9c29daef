"""Markdown read line by line for prose analysis: code blocks, comments and sections known.

Promises and claims are searched in prose only: fenced or indented code blocks, HTML comments
and front matter are never prose. Every line keeps its 1-based number in the original file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_HEADING = re.compile(r"<h([1-6])[^>]*>(.*?)</h\1>", re.IGNORECASE)
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[*_`\"'])")
TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Line:
    """One line of a Markdown document."""

    number: int
    text: str
    prose: bool
    heading: str | None
    section: tuple[str, ...]
    section_start: int


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

    def line(self, number: int) -> Line | None:
        index = number - self.lines[0].number if self.lines else -1
        return self.lines[index] if 0 <= index < len(self.lines) else None

    def prose(self) -> list[Line]:
        return [line for line in self.lines if line.prose]


def parse_document(path: str, text: str, *, repo: str = "model", first_line: int = 1) -> Document:
    """Split ``text`` (starting at ``first_line`` of the file) into classified lines."""
    lines: list[Line] = []
    in_fence: str | None = None
    in_comment = False
    stack: list[tuple[int, str]] = []
    section_start = first_line
    previous_blank = True
    for offset, raw in enumerate(text.splitlines()):
        number = first_line + offset
        fence = FENCE.match(raw)
        heading_text: str | None = None
        prose = True
        if in_fence is not None:
            prose = False
            if fence and fence.group(1) == in_fence:
                in_fence = None
        elif fence:
            in_fence = fence.group(1)
            prose = False
        elif in_comment:
            prose = False
            if "-->" in raw:
                in_comment = False
        elif raw.lstrip().startswith("<!--"):
            prose = False
            in_comment = "-->" not in raw
        elif raw.startswith("    ") and previous_blank and raw.strip() and not _listish(raw):
            prose = False  # indented code block
        else:
            heading = HEADING.match(raw) or HTML_HEADING.search(raw)
            if heading:
                level = len(heading.group(1)) if heading.re is HEADING else int(heading.group(1))
                heading_text = TAG.sub("", heading.group(2)).strip()
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, heading_text))
                section_start = number
        previous_blank = not raw.strip() or (previous_blank and not prose)
        lines.append(
            Line(
                number,
                raw,
                prose,
                heading_text,
                tuple(name for _level, name in stack),
                section_start,
            )
        )
    return Document(path, repo, tuple(lines))


def _listish(raw: str) -> bool:
    return bool(re.match(r"^\s+([-*+]|\d+[.)]|\[[ xX]\])\s", raw))


def sentences(text: str) -> list[tuple[int, str]]:
    """(start offset, sentence) pairs of one line of prose."""
    parts = []
    start = 0
    for match in SENTENCE_END.finditer(text):
        parts.append((start, text[start : match.start()]))
        start = match.end()
    parts.append((start, text[start:]))
    return [(offset, part) for offset, part in parts if part.strip()]


def split_cells(row: str) -> tuple[str, ...]:
    inner = row.strip()
    inner = inner.removeprefix("|").removesuffix("|")
    return tuple(cell.strip() for cell in inner.split("|"))


def tables(document: Document) -> list[Table]:
    """Pipe tables and HTML tables of the document's prose."""
    found: list[Table] = []
    lines = document.lines
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.prose and TABLE_ROW.match(line.text):
            block = []
            while index < len(lines) and lines[index].prose and TABLE_ROW.match(lines[index].text):
                block.append(lines[index])
                index += 1
            rows = tuple(
                (row.number, split_cells(row.text))
                for row in block
                if not TABLE_RULE.match(row.text)
            )
            if len(block) >= 2:
                found.append(Table(block[0].number, block[-1].number, rows, block[0].section))
            continue
        if line.prose and "<table" in line.text.lower():
            start = index
            while index < len(lines) and "</table>" not in lines[index].text.lower():
                index += 1
            block = lines[start : index + 1]
            found.append(_html_table(block))
            index += 1
            continue
        index += 1
    return found


def _html_table(block: list[Line]) -> Table:
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


def paragraphs(document: Document) -> list[Paragraph]:
    """Prose paragraphs of the document (headings and table rows excluded)."""
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

    for line in document.lines:
        usable = (
            line.prose
            and line.heading is None
            and line.text.strip()
            and not TABLE_ROW.match(line.text)
        )
        if not usable:
            flush()
            continue
        if LIST_START.match(line.text):
            flush()
        current.append(line)
    flush()
    return found
