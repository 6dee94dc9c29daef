"""The block structure of a Markdown text, as markdown-it-py (CommonMark + tables) parses it.

Every prose extractor asks this module what a line is — heading, paragraph, code, HTML,
HTML comment, table row — so they all agree on what is prose. Lines keep the caller's
numbering: ``first_line`` is the file line of ``lines[0]`` (the body after front matter).
markdown-it is imported on first use, never at CLI start-up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.IGNORECASE | re.DOTALL)
TAG = re.compile(r"<[^<>]++>")

# Line kinds. ``code`` and ``comment`` lines are never prose.
BLANK = "blank"
PARAGRAPH = "paragraph"
HEADING = "heading"
CODE = "code"
HTML = "html"
COMMENT = "comment"
TABLE = "table"
TABLE_ROW = "table_row"
TABLE_RULE = "table_rule"
RULE = "rule"
OTHER = "other"  # container markers, link reference definitions
NOT_PROSE = frozenset({CODE, COMMENT})


@dataclass(frozen=True)
class Block:
    """One leaf block; ``start`` and ``end`` are inclusive file line numbers."""

    kind: str  # HEADING, PARAGRAPH, CODE, HTML, COMMENT, TABLE or RULE
    start: int
    end: int
    level: int = 0  # heading level
    title: str | None = None  # heading text, markup removed
    content: str = ""  # code text (fence markers and container indent removed) or raw HTML
    fenced: bool = False
    info: str = ""  # fence info string ("yaml", "python")
    header: tuple[str, ...] = ()  # table header cells
    rows: tuple[tuple[int, tuple[str, ...]], ...] = ()  # table rows, header first


@dataclass(frozen=True)
class Structure:
    """The blocks of a text and the kind of each of its lines."""

    first_line: int
    kinds: tuple[str, ...]
    blocks: tuple[Block, ...]
    headings: dict[int, Block]  # line number → heading starting there

    def kind(self, number: int) -> str:
        index = number - self.first_line
        return self.kinds[index] if 0 <= index < len(self.kinds) else BLANK

    def is_prose(self, number: int) -> bool:
        return self.kind(number) not in NOT_PROSE

    def of_kind(self, kind: str) -> list[Block]:
        return [block for block in self.blocks if block.kind == kind]

    def title(self) -> str | None:
        """The text of the first level-1 heading."""
        return next((b.title for b in self.headings.values() if b.level == 1 and b.title), None)


@cache
def _parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    md.disable("inline")  # block structure only; inline content is read as raw source
    return md


def structure(lines: Sequence[str], first_line: int = 1) -> Structure:
    """Parse ``lines`` (no line terminators) whose first is file line ``first_line``."""
    return _structure(tuple(lines), first_line)


def text_structure(text: str, first_line: int = 1) -> Structure:
    """:func:`structure` of ``text`` split with :meth:`str.splitlines`."""
    return _structure(tuple(text.splitlines()), first_line)


@lru_cache(maxsize=16)
def _structure(lines: tuple[str, ...], first_line: int) -> Structure:
    # markdown-it also breaks lines at a lone "\r"; keep exactly one line per entry.
    source = "\n".join(line.replace("\r", " ") for line in lines)
    kinds = [BLANK if not line.strip() else OTHER for line in lines]
    blocks: list[Block] = []
    tokens = _parser().parse(source)

    def mark(start: int, end: int, kind: str) -> None:
        for index in range(start, min(end, len(kinds))):
            kinds[index] = kind

    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        if token.map is None:
            index += 1
            continue
        start, end = token.map
        if kind == "heading_open":
            title = _clean(tokens[index + 1].content)
            mark(start, end, HEADING)
            blocks.append(
                Block(HEADING, first_line + start, first_line + end - 1, int(token.tag[1]), title)
            )
        elif kind == "paragraph_open":
            mark(start, end, PARAGRAPH)
            blocks.append(Block(PARAGRAPH, first_line + start, first_line + end - 1))
        elif kind in ("fence", "code_block"):
            mark(start, end, CODE)
            fenced = kind == "fence"
            blocks.append(
                Block(
                    CODE,
                    first_line + start,
                    first_line + end - 1,
                    content=token.content,
                    fenced=fenced,
                    info=token.info.strip() if fenced else "",
                )
            )
        elif kind == "html_block":
            blocks += _html_block(lines, start, end, token.content, kinds, first_line)
        elif kind == "hr":
            mark(start, end, RULE)
            blocks.append(Block(RULE, first_line + start, first_line + end - 1))
        elif kind == "table_open":
            index = _table(tokens, index, kinds, blocks, first_line)
            continue
        index += 1
    blocks.sort(key=lambda block: block.start)
    headings = {block.start: block for block in blocks if block.kind == HEADING}
    return Structure(first_line, tuple(kinds), tuple(blocks), headings)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", TAG.sub("", text)).strip()


def _html_block(
    lines: tuple[str, ...], start: int, end: int, content: str, kinds: list[str], first_line: int
) -> list[Block]:
    """Blocks of raw HTML: comment lines, ``<hN>`` headings, the rest HTML."""
    found: list[Block] = []
    in_comment = False
    for index in range(start, min(end, len(lines))):
        raw = lines[index]
        if in_comment or raw.lstrip().startswith("<!--"):
            kinds[index] = COMMENT
            in_comment = "-->" not in raw
        else:
            kinds[index] = HTML if raw.strip() else BLANK
    if HTML in kinds[start:end]:
        found.append(Block(HTML, first_line + start, first_line + end - 1, content=content))
    else:
        found.append(Block(COMMENT, first_line + start, first_line + end - 1, content=content))
    for match in HTML_HEADING.finditer(content):
        first = start + content.count("\n", 0, match.start())
        last = start + content.count("\n", 0, match.end())
        if kinds[first] == COMMENT:
            continue
        for index in range(first, min(last + 1, len(kinds))):
            kinds[index] = HEADING
        title = _clean(match.group(2))
        found.append(
            Block(HEADING, first_line + first, first_line + last, int(match.group(1)), title)
        )
    return found


def _table(
    tokens: list[Any], index: int, kinds: list[str], blocks: list[Block], first_line: int
) -> int:
    """Read one table from ``tokens[index]`` (``table_open``); return the index after it."""
    start, end = tokens[index].map
    rows: list[tuple[int, tuple[str, ...]]] = []
    cells: list[str] = []
    row_line = start
    while index < len(tokens) and tokens[index].type != "table_close":
        token = tokens[index]
        if token.type == "tr_open":
            cells, row_line = [], token.map[0]
        elif token.type == "inline":
            cells.append(token.content.strip())
        elif token.type == "tr_close":
            rows.append((first_line + row_line, tuple(cells)))
            kinds[row_line] = TABLE_ROW
        index += 1
    kinds[start + 1] = TABLE_RULE
    header = rows[0][1] if rows else ()
    blocks.append(
        Block(TABLE, first_line + start, first_line + end - 1, header=header, rows=tuple(rows))
    )
    return index + 1


def card_title(card: Any) -> str | None:
    """The title (first level-1 heading) of a model card's body."""
    return text_structure(card.body, card.body_start_line).title()


def clear_cache() -> None:
    """Forget parsed texts (benchmarks time cold parses)."""
    _structure.cache_clear()
