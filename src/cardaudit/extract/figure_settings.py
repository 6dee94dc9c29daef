"""Setting figures: the context length ("128K tokens", "context window of 32,768") and the
precision the weights are stated in ("weights in BF16")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from cardaudit.extract.figure_model import APPROX, Figure
from cardaudit.extract.figure_text import DTYPE, DTYPES, anchored_finditer
from cardaudit.extract.figures_cjk import has_cjk
from cardaudit.model import TextFile

PRECISION_CONTEXT = re.compile(r"precision|dtype|tensor\s+type|weights\s+(?:are|in)", re.I)
CONTEXT_NUMBER = (
    r"(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[KkM]\b|\d{3,8})"
    r"(?P<rest>(?:\s|-)*(?:tokens?\b(?!\s*/\s*s|\s+per\s+second)|context\b))"
)
CONTEXT_TOKENS = re.compile(APPROX + CONTEXT_NUMBER)
#: The number every CONTEXT_TOKENS match contains (see figure_text.anchored_finditer).
CONTEXT_ANCHOR = re.compile(CONTEXT_NUMBER)
CONTEXT_LEAD = re.compile(
    r"(?:context(?:\s+(?:length|window|size))?|sequence\s+length|max(?:imum)?\s+(?:input\s+)?"
    r"length)\s*+(?:of|:|=|\||is|up\s+to)?\s*+(?:up\s+to\s+)?"
    + APPROX
    + r"(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[KkM]\b|\d{3,8}\b)",
    re.IGNORECASE,
)
#: "supports 32k", "extended to 128K" on a line about the context: a length the model
#: handles (a K/M-suffixed or thousands-grouped number only; "trained at 4k" is not one).
CONTEXT_SUPPORT = re.compile(
    r"\b(?:supports?|supporting|handles?|extend(?:s|ed)?\s+to)\s++(?:up\s+to\s+)?"
    + APPROX
    + r"(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[KkM])\b(?!\s*(?:[-/]|tokens?/|per\b))",
    re.IGNORECASE,
)
CONTEXT_WORD = re.compile(r"context|sequence length|window|long[- ]?text", re.IGNORECASE)


@cache
def _cjk_context() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The context figure of a CJK card, after or before its word (no word boundaries in
    CJK text: "上下文长度 32K", "支持128K上下文", "128Kトークンのコンテキスト"); the words are data
    (rules/tables/figures_cjk.yaml)."""
    from cardaudit.rules import load_table

    table = load_table("figures_cjk")
    words = f"(?:{table['context_words']})"
    tokens = f"(?:{table['context_token_words']})"
    possessive = f"(?:{table['context_possessives']})"
    number = (
        r"(?<![\d.,])(?P<num>\d{1,3}(?:,\d{3})++|\d++(?:\.\d++)?\s?[KkM](?![A-Za-z])"
        r"|\d{3,8}(?!\d))"
    )
    after = re.compile(
        words
        + r"(?:[ \t]|[:：|=为是达至はが]|는|은|可达|高达|最大|最高|最多|支持|up\s+to)*+"
        + APPROX
        + number
    )
    before = re.compile(APPROX + number + rf"[ \t]*+{tokens}?+[ \t]*+{possessive}?+[ \t]*+" + words)
    return after, before


#: A later cell of a table row labelled with the context ("| Context | 131072 | 32768 |"):
#: each column states its own model's context.
CONTEXT_CELL = re.compile(
    r"(?<=\|)[ \t]*+" + APPROX + r"(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[KkM]|\d{3,8})[ \t]*+"
    r"(?:tokens?[ \t]*+)?(?=\|)",
    re.IGNORECASE,
)


def _row_cells(body: str) -> Iterator[re.Match[str]]:
    """The later cells of each table row whose first cell is a context label."""
    for lead in CONTEXT_LEAD.finditer(body):
        if "|" not in body[lead.start() : lead.start("num")]:
            continue
        line_end = body.find("\n", lead.end())
        yield from CONTEXT_CELL.finditer(
            body, lead.end(), line_end if line_end != -1 else len(body)
        )


def context_figures(file: TextFile, body: str, repo: str) -> Iterator[Figure]:
    seen: set[int] = set()
    readings = [
        (False, CONTEXT_LEAD.finditer(body)),
        (False, _row_cells(body)),
        (False, CONTEXT_SUPPORT.finditer(body)),
        (False, anchored_finditer(CONTEXT_TOKENS, CONTEXT_ANCHOR, body)),
    ]
    if has_cjk(body):  # the CJK words cannot match elsewhere: one search rules them out
        after, before = _cjk_context()
        readings += [(True, after.finditer(body)), (True, before.finditer(body))]
    for cjk, matches in readings:
        for match in matches:
            start = match.start("num")
            if start in seen:
                continue
            line_start = body.rfind("\n", 0, start) + 1
            line_end = body.find("\n", start)
            line_text = body[line_start : line_end if line_end != -1 else len(body)]
            if not cjk and not CONTEXT_WORD.search(line_text):
                continue
            tokens = _tokens(match.group("num"))
            if tokens is None or tokens < 512:
                continue
            seen.add(start)
            yield Figure(
                "context",
                tokens,
                " ".join(match.group(0).split()),
                file.path,
                file.line_at(start),
                repo,
                bool(match.group("approx")),
            )


def _tokens(number: str) -> int | None:
    text = number.replace(",", "").replace(" ", "")
    try:
        if text[-1] in "kK":
            return int(float(text[:-1]) * 1024) if float(text[:-1]) < 1000 else None
        if text[-1] == "M":
            return int(float(text[:-1]) * 1024 * 1024)
        return int(float(text))
    except ValueError:
        return None


def dtype_figures(file: TextFile, body: str, repo: str) -> Iterator[Figure]:
    for line_number, line in enumerate(body.split("\n"), start=1):
        if not PRECISION_CONTEXT.search(line):
            continue
        for match in DTYPE.finditer(line):
            yield Figure(
                "dtype",
                0,
                line.strip()[:160],
                file.path,
                line_number,
                repo,
                dtype=DTYPES[match.group(1).lower()],
            )
