"""Parameter counts and weight sizes stated in Chinese, Japanese and Korean.

CJK cards write "参数量约 76 亿" (about 7.6 billion parameters), "总参数 30B，激活参数 3B" and
"BF16 权重约 15 GB": numbers with their own units (亿, 万, 억) and no English word near them,
so the English patterns of :mod:`cardaudit.extract.figures` read none of them. Here a
figure is read per clause (text between punctuation): a number with a CJK or Latin unit and,
in the same clause, a word saying what it measures. The words and units are data
(``rules/tables/figures_cjk.yaml``); every pattern is linear (no nested repetition).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from cardaudit.extract.model_names import CJK
from cardaudit.model import TextFile

#: Figures in clauses longer than this are not read (a clause is a few dozen characters; a
#: hostile card's 1 MB line must not be searched once per number).
MAX_CLAUSE = 400
_LATIN_SCALE = {"b": 1e9, "m": 1e6, "t": 1e12}
_BYTES = {"gb": 1e9, "gib": 2**30, "tb": 1e12, "tib": 2**40}


@dataclass(frozen=True)
class CjkTable:
    count: re.Pattern[str]
    size: re.Pattern[str]
    units: dict[str, float]
    parameter: re.Pattern[str]
    reach: int
    active: re.Pattern[str]
    total: re.Pattern[str]
    not_after: re.Pattern[str]
    memory: re.Pattern[str]
    gpu: re.Pattern[str]
    comparative: re.Pattern[str]
    approx: re.Pattern[str]
    breaks: re.Pattern[str]


@cache
def cjk_table() -> CjkTable:
    from cardaudit.rules import load_table

    raw: dict[str, Any] = load_table("figures_cjk")
    units = {str(key): float(value) for key, value in raw["units"].items()}
    unit_alternatives = "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True))
    # ASCII: a number starts after any CJK character ("为140亿", "约需28GB"), not only
    # after a space, as CJK characters are word characters to Unicode ``\w``
    return CjkTable(
        count=re.compile(
            rf"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s?(?:(?P<cjk>{unit_alternatives})"
            r"|(?P<latin>[BMT])(?![A-Za-z]))",
            re.ASCII,
        ),
        size=re.compile(
            r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s?(?P<unit>GB|GiB|TB|TiB)(?![A-Za-z])", re.ASCII
        ),
        units=units,
        parameter=re.compile(str(raw["parameter_words"])),
        reach=int(raw["parameter_reach"]),
        active=re.compile(str(raw["active_words"])),
        total=re.compile(str(raw["total_words"])),
        not_after=re.compile(str(raw["not_parameters_after"]), re.IGNORECASE),
        memory=re.compile(str(raw["memory_words"])),
        gpu=re.compile(str(raw["gpu_words"])),
        comparative=re.compile(str(raw["comparative_words"])),
        approx=re.compile(rf"(?:{raw['approx_words']})\s?$"),
        breaks=re.compile(str(raw["clause_breaks"])),
    )


@dataclass(frozen=True)
class CjkFigure:
    """A figure as read, before figures.py makes it a Figure."""

    kind: str  # parameters_total | parameters_active | memory
    value: float
    text: str
    offset: int  # in the body
    approx: bool
    number: str  # the digits as written (for the stated precision)
    scale: float
    clause: str
    unit: str | None = None


def _clauses(body: str, table: CjkTable) -> Iterator[tuple[int, str]]:
    start = 0
    for match in table.breaks.finditer(body):
        if match.start() > start:
            yield start, body[start : match.start()]
        start = match.end()
    if start < len(body):
        yield start, body[start:]


#: Kana, Han and Hangul: the ranges model names are read with.
_CJK = re.compile(f"[{CJK}]")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds any kana, Han or Hangul character."""
    return _CJK.search(text) is not None


def _distance(span: tuple[int, int], others: list[tuple[int, int]]) -> int:
    """Characters between ``span`` and the nearest of ``others`` (a large number if none)."""
    gaps = [max(o_start - span[1], span[0] - o_end, 0) for o_start, o_end in others]
    return min(gaps, default=1 << 30)


def cjk_figures(body: str) -> list[CjkFigure]:
    """Parameter counts and weight sizes stated in CJK clauses of ``body``."""
    if not has_cjk(body):  # an English card costs one search
        return []
    table = cjk_table()
    found: list[CjkFigure] = []
    for start, clause in _clauses(body, table):
        if len(clause) > MAX_CLAUSE or not has_cjk(clause):
            continue
        if table.comparative.search(clause):
            continue  # another model's size
        words = [m.span() for m in table.parameter.finditer(clause)]
        if words:
            actives = [m.span() for m in table.active.finditer(clause)]
            totals = [m.span() for m in table.total.finditer(clause)]
            for match in table.count.finditer(clause):
                if _distance(match.span(), words) > table.reach:
                    continue
                if table.not_after.match(clause, match.end()):
                    continue
                active = _distance(match.span(), actives) < _distance(match.span(), totals)
                kind = "parameters_active" if active else "parameters_total"
                unit = match.group("cjk")
                scale = table.units[unit] if unit else _LATIN_SCALE[match.group("latin").lower()]
                found.append(_figure(kind, match, clause, start, scale, table))
        if table.memory.search(clause) and not table.gpu.search(clause):
            for match in table.size.finditer(clause):
                scale = _BYTES[match.group("unit").lower()]
                found.append(_figure("memory", match, clause, start, scale, table, True))
    return found


def _figure(
    kind: str,
    match: re.Match[str],
    clause: str,
    start: int,
    scale: float,
    table: CjkTable,
    with_unit: bool = False,
) -> CjkFigure:
    before = clause[max(0, match.start() - 6) : match.start()]
    approx = table.approx.search(before)
    lead = approx.start() + match.start() - len(before) if approx else match.start()
    return CjkFigure(
        kind,
        float(match.group("num")) * scale,
        clause[lead : match.end()].strip(),
        start + lead,
        approx is not None,
        match.group("num"),
        scale,
        clause,
        match.group("unit") if with_unit else None,
    )


def new_figures(file: TextFile, body: str, repo: str, seen: Iterable[Any]) -> list[Any]:
    """The CJK figures of ``file`` as :class:`~cardaudit.extract.figures.Figure`, leaving out
    any the English reading already found (same kind, line and value)."""
    # the English reading's own helpers, so both state precision, dtype and cells alike
    from cardaudit.extract.figure_model import Figure, half_unit
    from cardaudit.extract.figure_text import cells, dtype_in

    known = {(f.kind, f.line, f.value) for f in seen}
    out = []
    for item in cjk_figures(body):
        line = file.line_at(item.offset)
        if (item.kind, line, item.value) in known:
            continue
        known.add((item.kind, line, item.value))
        out.append(
            Figure(
                item.kind,
                item.value,
                item.text,
                file.path,
                line,
                repo,
                item.approx,
                half_unit(item.number, item.scale),
                unit=item.unit,
                dtype=dtype_in(item.clause) if item.kind == "memory" else None,
                cells=cells(file, item.offset),
            )
        )
    return out
