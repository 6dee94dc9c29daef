"""The text figures are read from: a card's prose with code and comments blanked (line
numbers kept), the sentence around a figure, the table row it sits in, the spans already
taken, and the precision words near it."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator
from functools import lru_cache

from cardaudit.extract import markdown_blocks
from cardaudit.model import TextFile

DTYPES = {
    "bf16": "BF16",
    "bfloat16": "BF16",
    "fp16": "F16",
    "float16": "F16",
    "half precision": "F16",
    "fp32": "F32",
    "float32": "F32",
    "full precision": "F32",
    "fp8": "F8_E4M3",
    "float8": "F8_E4M3",
    "int8": "INT8",
    "8-bit": "INT8",
    "int4": "INT4",
    "4-bit": "INT4",
    "4bit": "INT4",
    "mxfp4": "MXFP4",
}
#: ASCII boundaries: "BF16下约需28GB" names BF16 (a CJK character is a word character to
#: Unicode ``\b``).
DTYPE = re.compile(
    r"\b(" + "|".join(re.escape(k) for k in DTYPES) + r")\b", re.IGNORECASE | re.ASCII
)


def cells(file: TextFile, position: int) -> int:
    """Cells of the Markdown table row holding ``position`` of the file (0 outside tables)."""
    return _row_cells(file.text).get(file.line_at(position), 0)


@lru_cache(maxsize=8)
def _row_cells(text: str) -> dict[int, int]:
    shape = _shape(text)
    return {
        number: len(cells)
        for table in shape.of_kind(markdown_blocks.TABLE)
        for number, cells in table.rows
    }


def prose(text: str) -> str:
    """``text`` with front matter, code blocks and HTML comments blanked (line numbers kept)."""
    shape = _shape(text)
    out = [
        line if number >= shape.first_line and shape.is_prose(number) else " " * len(line)
        for number, line in enumerate(text.split("\n"), start=1)
    ]
    return "\n".join(out)


@lru_cache(maxsize=8)
def _shape(text: str) -> markdown_blocks.Structure:
    """The Markdown structure of the file after its front matter (lines of ``text``)."""
    lines = text.split("\n")
    body = 0
    if lines and lines[0].strip() == "---":
        body = next(
            (i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")),
            len(lines),
        )
    # the same lines as the card body's splitlines(), so the parse is shared with the card
    rest = [line.removesuffix("\r") for line in lines[body:]]
    if rest and not rest[-1]:
        rest.pop()
    return markdown_blocks.structure(rest, body + 1)


#: A "sentence" around a figure reaches at most this far on each side (a card without
#: full stops must not make every figure scan the whole body: quadratic time).
SENTENCE_REACH = 1000
#: How far before or after a figure its immediate neighbours ("2×", "GPU", "with") are read.
NEAR = 200


def sentence_around(text: str, start: int, end: int) -> str:
    low, high = max(0, start - SENTENCE_REACH), min(len(text), end + SENTENCE_REACH)
    left = max(
        text.rfind(". ", low, start), text.rfind("\n\n", low, start), text.rfind("|", low, start)
    )
    if left == -1:
        left = low - 1
    found = [i for i in (text.find(". ", end, high), text.find("\n\n", end, high)) if i != -1]
    right = min(found) if found else high
    return text[left + 1 : right]


def row_label(body: str, position: int) -> str | None:
    """The first cell of the table row holding ``position`` when the position is in a later
    cell: a key/value table's key ("| Model size | 14.5 GB |") says what the value is."""
    start = body.rfind("\n", 0, position) + 1
    end = body.find("\n", position)
    line = body[start : end if end != -1 else len(body)]
    cells = line.strip().strip("|").split("|")
    if not line.lstrip().startswith("|") or len(cells) < 2:
        return None
    first_end = body.find("|", body.find("|", start) + 1)
    if first_end == -1 or position < first_end:
        return None
    return cells[0]


def dtype_in(sentence: str) -> str | None:
    match = DTYPE.search(sentence)
    return DTYPES[match.group(1).lower()] if match else None


#: Characters around a figure that the look-behind and look-ahead tests read (never the
#: whole rest of the text: a long card would make every figure cost its length).
AROUND = 80
#: Longer than any figure's or GPU name's match, so Spans looks back no further.
MAX_SPAN = 200


class Spans:
    """Spans of the text already taken, kept sorted: ``covers`` looks only at the spans
    starting within MAX_SPAN before a position, so a long card is not figures x figures."""

    def __init__(self) -> None:
        self.items: list[tuple[int, int]] = []

    def add(self, span: tuple[int, int]) -> None:
        insort(self.items, span)

    def covers(self, start: int, end: int | None = None) -> bool:
        """Whether ``start`` lies in a span (or, given ``end``, the range overlaps one's end)."""
        low = bisect_left(self.items, (start - MAX_SPAN, -1))
        high = bisect_right(self.items, (start if end is None else end, 1 << 62))
        for s, e in self.items[low:high]:
            if s <= start < e or (end is not None and s < end <= e):
                return True
        return False


def _lead_char(char: str) -> bool:
    """A character that may stand between the start of a figure's match and its number:
    qualifier and label words, spaces, counts and the few signs the patterns allow."""
    return char.isalnum() or char.isspace() or char in LEAD_SIGNS


#: Most tokens a figure pattern's match has before its number: "number of parameters :
#: less than" (ACTIVE / TOTAL) is six.
LEAD_TOKENS = 8
#: Signs the figure patterns allow before their number ("~", "≈", "approx.", "params:",
#: "= ", "| ", "8×", "2*", "-").
LEAD_SIGNS = frozenset("~≈.:=|×*-")


def anchored_finditer(
    pattern: re.Pattern[str], anchor: re.Pattern[str], text: str
) -> Iterator[re.Match[str]]:
    """Exactly ``pattern.finditer(text)``, without trying ``pattern`` at every position.

    Requires of ``pattern``: every match contains a match of ``anchor`` (its number, which
    ``anchor.finditer`` reports: anchor matches never overlap one inside a figure), and
    only :func:`_lead_char` characters, in at most ``LEAD_TOKENS`` tokens (a run of letters
    and digits, or one sign; "number of parameters: about" is five), stand between the
    match's start and that anchor. Then a match can only start in those tokens just before
    an anchor, so ``pattern`` is *matched* at those starts only, in order: the first that
    matches is the leftmost match, as ``finditer`` finds it. Each start is tried once, so
    the work is linear in the text; the full pattern (a dozen optional qualifier words
    before the number) no longer runs at each of a long card's millions of positions.
    """
    position = 0  # where finditer would search next
    tried = 0  # every start before this was tried (or lies before ``position``)
    for found in anchor.finditer(text):
        number = found.start()
        if number < position:
            continue  # inside the last match
        low = max(position, tried)
        start = number
        tokens = 0
        while start > low:
            char = text[start - 1]
            if not _lead_char(char):
                break
            if not char.isspace() and (
                start == number or not (char.isalnum() and text[start].isalnum())
            ):
                tokens += 1  # the last character of a token (reading leftwards)
                if tokens > LEAD_TOKENS:
                    break
            start -= 1
        for candidate in range(start, number + 1):
            match = pattern.match(text, candidate)
            if match is not None:
                yield match
                position = tried = max(match.end(), candidate + 1)
                break
        else:
            tried = number + 1
