"""Whether a figure stated in a card is about the audited model: the subject of its block
(:mod:`cardaudit.extract.reading`), narrowed to its clause in prose
(:mod:`cardaudit.extract.clause_subject`: "Qwen2.5-72B (72.7B parameters)" is the 72B's)
and to its column in a table (a "Teacher" or another model's column is that model's)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from cardaudit.extract.clause_subject import clause_subject
from cardaudit.extract.figure_model import Figure
from cardaudit.extract.markdown_prose import Paragraph, Table, paragraphs
from cardaudit.extract.reading import Reading, column_subjects
from cardaudit.extract.subject import Subject

HTML_CELL = re.compile(r"<t[dh]\b", re.IGNORECASE)
NUMBER = re.compile(r"\d[\d.,]*")


def figure_subjects(reading: Reading, figures: Iterable[Figure]) -> Iterator[Subject]:
    """The subject of each figure of ``reading``'s document, in order."""
    document = reading.document
    in_paragraph: dict[int, Paragraph] = {}
    for paragraph in paragraphs(document):
        for line in paragraph.lines:
            in_paragraph[line.number] = paragraph
    in_table: dict[int, tuple[Table, tuple[Subject, ...]]] = {}
    for block in reading.tables:
        columns: tuple[Subject, ...] | None = None
        for number, _cells in block.rows[1:]:
            if columns is None:
                columns = _columns(reading, block)
            in_table[number] = (block, columns)
    seen: dict[tuple[int, str], int] = {}  # (line, text) → where the last one was found
    for figure in figures:
        subject = reading.at(figure.line)
        line = document.line(figure.line)
        if not subject.charged or line is None or reading.names is None:
            yield subject
            continue
        key = (figure.line, figure.text)
        if figure.line in in_table:
            at = _find(line.text, figure.text, seen.get(key, 0))
            seen[key] = at + 1
            yield _column_subject(line.text, at, in_table[figure.line][1], subject)
        elif figure.line in in_paragraph:
            paragraph = in_paragraph[figure.line]
            start = _line_start(paragraph, figure.line)
            at = _find(paragraph.text, figure.text, max(start, seen.get(key, start)))
            seen[key] = at + 1
            yield clause_subject(reading.names, subject, paragraph.text, at)
        else:
            yield subject


def _columns(reading: Reading, block: Table) -> tuple[Subject, ...]:
    """Each column's subject; a column without a model of its own has the section's."""
    first = reading.document.line(block.start)
    section = reading.at(first.section_start if first else 0)
    assert reading.names is not None
    return column_subjects(block, section, reading.names)


def _line_start(paragraph: Paragraph, number: int) -> int:
    for line, start in zip(paragraph.lines, paragraph.starts, strict=True):
        if line.number == number:
            return start
    return 0


def _find(text: str, figure: str, start: int) -> int:
    """Where ``figure`` (its text, else its first number) sits in ``text`` from ``start``."""
    at = text.find(figure, start)
    if at < 0:
        number = NUMBER.search(figure)
        at = text.find(number.group(0), start) if number else -1
    return max(at, start if at < 0 else at)


def _column_subject(
    row: str, at: int, columns: tuple[Subject, ...], row_subject: Subject
) -> Subject:
    """The subject of the column holding offset ``at`` of a table row's line (the figure's
    number: a label cell before it, "Context | 131072", is read with the first column)."""
    number = NUMBER.search(row, at)
    position = number.start() if number else at
    if HTML_CELL.search(row):
        index = len(HTML_CELL.findall(row[:position])) - 1
    else:
        index = row[:position].count("|") - (1 if row.lstrip().startswith("|") else 0)
    if 0 <= index < len(columns) and not columns[index].charged:
        return columns[index]
    return row_subject
