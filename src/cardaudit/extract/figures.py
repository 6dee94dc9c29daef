"""Figures stated in prose: parameter counts, memory, GPUs, precision and context length.

Each figure keeps the file, repo and line it was read from. Fenced code blocks and the
YAML front matter are skipped (commands and metadata are not claims).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

from cardaudit.extract import markdown_blocks
from cardaudit.model import Evidence, TextFile

APPROX = (
    r"(?P<approx>~\s?|≈\s?|about\s+|approximately\s+|approx\.?\s+|around\s+|roughly\s+"
    r"|nearly\s+|almost\s+|over\s+|under\s+|less\s+than\s+|more\s+than\s+)?"
)
COUNT = r"(?<![\w.\-/])(?P<num>\d+(?:\.\d+)?)\s?(?P<unit>[BMT]|billion|million|trillion)\b"
ACTIVE = re.compile(
    APPROX
    + COUNT
    + r"(?:\s+|-)(?:(?:parameters|params)\s+)?(?:(?:are|is)\s+)?(?:active|activated)\b"
    + r"|(?:activat(?:es|ed|ing)|active)\s+(?:parameters?|params)?\s*(?:of|:|=|\|)?\s*"
    + APPROX.replace("approx>", "approx2>")
    + COUNT.replace("num>", "num2>").replace("unit>", "unit2>"),
    re.IGNORECASE,
)
TOTAL = re.compile(
    APPROX
    + COUNT
    + r"(?:\s+|-)(?:(?:total\s+)?(?:parameters?|params)\b|(?:in\s+)?total\b)"
    + r"|(?:total\s+(?:parameters?|params)|(?:number\s+of\s+)?parameters?|params)"
    + r"\s*(?:of|:|=|\|)\s*"
    + APPROX.replace("approx>", "approx2>")
    + COUNT.replace("num>", "num2>").replace("unit>", "unit2>")
    + r"(?!\s*(?:active|activated))",
    re.IGNORECASE,
)
MEMORY = re.compile(
    APPROX + r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s?(?P<unit>GB|GiB|gigabytes?|TB|TiB)\b",
    re.IGNORECASE,
)
MEMORY_CONTEXT = re.compile(
    r"memory|vram|weights|footprint|requires?|needs?|disk|download|size|occup",
    re.IGNORECASE,
)
#: "a Mac with 32GB RAM": a machine's capacity, not the model's size.
DEVICE_MEMORY = re.compile(r"^\s*(?:of\s+)?(?:RAM|VRAM|unified|system)\b", re.IGNORECASE)
COMPARATIVE = re.compile(
    r"\b(?:than|outperform\w*|compared|competitive|vs\.?|versus|rivals?|beats?|surpass\w*)\b",
    re.IGNORECASE,
)
GPU_CAPACITY_AFTER = re.compile(r"^\s*(?:of\s+)?(?:GPUs?|cards?|VRAM\s+(?:GPU|card)s?|HBM)\b", re.I)
GPU_VERB = re.compile(
    r"\b(?:runs?|running|fits?|fitting|deploy(?:ed|able)?|serv(?:e|ed|ing)|inference|"
    r"load(?:ed)?|requires?|needs?|hosted|on\s+(?:a\s+)?single)\b",
    re.IGNORECASE,
)
COUNT_WORDS = {"single": 1, "one": 1, "a": 1, "an": 1, "two": 2, "four": 4, "eight": 8}
#: Linear: a count starts a word (no start inside a digit run) and is taken whole.
GPU_COUNT = r"(?:(?<![\w.])(?P<count>single|one|two|four|eight|an?|\d++)\s*+(?:x|×|\*)?\s*+)?"
GENERIC_GPU = re.compile(
    GPU_COUNT + r"(?<![\w.])(?P<gib>\d+)\s?GB\s+(?:GPUs?|cards?|VRAM\s+GPUs?)\b"
    r"|(?<![\w.])(?P<count2>\d++)\s*+(?:x|×|\*)\s*+(?P<gib2>\d++)\s?GB\b",
    re.IGNORECASE,
)
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
DTYPE = re.compile(r"\b(" + "|".join(re.escape(k) for k in DTYPES) + r")\b", re.IGNORECASE)
PRECISION_CONTEXT = re.compile(r"precision|dtype|tensor\s+type|weights\s+(?:are|in)", re.I)
CONTEXT_TOKENS = re.compile(
    APPROX
    + r"(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[KkM]\b|\d{3,8})"
    + r"(?P<rest>(?:\s|-)*(?:tokens?\b(?!\s*/\s*s|\s+per\s+second)|context\b))",
)
CONTEXT_LEAD = re.compile(
    r"(?:context(?:\s+(?:length|window|size))?|sequence\s+length|max(?:imum)?\s+(?:input\s+)?"
    r"length)\s*+(?:of|:|=|\||is|up\s+to)?\s*+(?:up\s+to\s+)?"
    + APPROX
    + r"(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?[KkM]\b|\d{3,8}\b)",
    re.IGNORECASE,
)
CONTEXT_WORD = re.compile(r"context|sequence length|window|long[- ]?text", re.IGNORECASE)
#: Folder names that say nothing about which model a line is about.
GENERIC_NAMES = frozenset({"model", "models", "base", "code", "repo", "weights", "checkpoint"})
SCALE = {"b": 1e9, "billion": 1e9, "m": 1e6, "million": 1e6, "t": 1e12, "trillion": 1e12}


@dataclass(frozen=True)
class Figure:
    """One figure stated in a card or README."""

    kind: str  # parameters_total | parameters_active | memory | gpu | dtype | context
    value: float
    text: str
    path: str
    line: int
    repo: str = "model"
    approx: bool = False
    precision: float = 0.0  # half a unit of the last stated digit, in the value's unit
    unit: str | None = None
    dtype: str | None = None
    gpu: str | None = None
    count: int | None = None
    #: Cells in the Markdown table row the figure sits in (0 outside tables).
    cells: int = 0
    #: False for a figure about another model (its block's subject, extract/reading.py), or a
    #: code-README figure whose line does not name the model (a family README).
    about_model: bool = True

    def to_json(self) -> dict[str, Any]:
        data = {
            "kind": self.kind,
            "value": self.value,
            "text": self.text,
            "path": self.path,
            "line": self.line,
            "approx": self.approx,
        }
        if self.precision:
            data["precision"] = self.precision
        if self.cells:
            data["cells"] = self.cells
        if not self.about_model:
            data["about_model"] = False
        for key in ("unit", "dtype", "gpu", "count"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.repo != "model":
            data["repo"] = self.repo
        return data


def _cells(file: TextFile, position: int) -> int:
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


def _half_unit(number: str, scale: float) -> float:
    """Half the unit of the last significant digit: "3.3" → 0.05, "35" → 0.5, "400" → 50."""
    if "." in number:
        return 0.5 * scale / 10 ** len(number.split(".", 1)[1])
    zeros = len(number) - len(number.rstrip("0")) if number.strip("0") else 0
    return 0.5 * scale * 10**zeros


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


def _sentence(text: str, start: int, end: int) -> str:
    low, high = max(0, start - SENTENCE_REACH), min(len(text), end + SENTENCE_REACH)
    left = max(
        text.rfind(". ", low, start), text.rfind("\n\n", low, start), text.rfind("|", low, start)
    )
    if left == -1:
        left = low - 1
    found = [i for i in (text.find(". ", end, high), text.find("\n\n", end, high)) if i != -1]
    right = min(found) if found else high
    return text[left + 1 : right]


def _count_figures(file: TextFile, body: str, repo: str) -> Iterator[Figure]:
    taken = Spans()
    for kind, regex in (("parameters_active", ACTIVE), ("parameters_total", TOTAL)):
        for match in regex.finditer(body):
            if taken.covers(match.start()):
                continue
            if COMPARATIVE.search(_sentence(body, match.start(), match.end())):
                continue  # "outperforms 13B models": another model's size
            num = match.group("num") or match.group("num2")
            unit = (match.group("unit") or match.group("unit2")).lower()
            approx = bool(match.group("approx") or match.group("approx2"))
            scale = SCALE[unit]
            taken.add(match.span())
            line = file.line_at(match.start())
            yield Figure(
                kind,
                float(num) * scale,
                " ".join(match.group(0).split()),
                file.path,
                line,
                repo,
                approx,
                _half_unit(num, scale),
                cells=_cells(file, match.start()),
            )
            if _cells(file, match.start()) > 2:
                yield from _row_counts(file, body, match, kind, repo)


def _row_counts(file: TextFile, body: str, match: re.Match, kind: str, repo: str):
    """The other cells of a table row ("| # Parameters | 2.5B | 8.1B | **1.3B** |")."""
    start = body.rfind("\n", 0, match.start()) + 1
    end = body.find("\n", match.end())
    row = body[match.end() : end if end != -1 else len(body)]
    line = file.line_at(start)
    for cell in re.finditer(r"(?P<num>\d+(?:\.\d+)?)\s?(?P<unit>[BMT])\b", row):
        scale = SCALE[cell.group("unit").lower()]
        yield Figure(
            kind,
            float(cell.group("num")) * scale,
            cell.group(0),
            file.path,
            line,
            repo,
            False,
            _half_unit(cell.group("num"), scale),
            cells=_cells(file, match.start()),
        )


def _gpu_figures(file: TextFile, body: str, repo: str, gpus: GpuMatches) -> Iterator[Figure]:
    spans = Spans()
    for entry, matches in gpus:
        for match in matches:
            if spans.covers(match.start("gpu")):
                continue
            sentence = _sentence(body, match.start(), match.end())
            if not GPU_VERB.search(sentence):
                continue
            spans.add(match.span("gpu"))
            count = _count(match.group("count"))
            yield Figure(
                "gpu",
                entry["memory_gib"] * count,
                " ".join(match.group(0).split()),
                file.path,
                file.line_at(match.start()),
                repo,
                gpu=entry["name"],
                count=count,
                unit="GiB",
                dtype=_dtype_in(sentence),
            )
    for match in GENERIC_GPU.finditer(body):
        if spans.covers(match.start()):
            continue
        sentence = _sentence(body, match.start(), match.end())
        if not GPU_VERB.search(sentence):
            continue
        gib = int(match.group("gib") or match.group("gib2"))
        count = _count(match.group("count") or match.group("count2"))
        spans.add(match.span())
        yield Figure(
            "gpu",
            gib * count,
            " ".join(match.group(0).split()),
            file.path,
            file.line_at(match.start()),
            repo,
            gpu=f"{gib}GB GPU",
            count=count,
            unit="GiB",
            dtype=_dtype_in(sentence),
        )


def _count(word: str | None) -> int:
    if not word:
        return 1
    word = word.lower()
    return COUNT_WORDS.get(word) or (int(word) if word.isdigit() and int(word) > 0 else 1)


def _dtype_in(sentence: str) -> str | None:
    match = DTYPE.search(sentence)
    return DTYPES[match.group(1).lower()] if match else None


def _gpu_spans(gpus: GpuMatches) -> Spans:
    spans = Spans()
    for _, matches in gpus:
        for match in matches:
            spans.add(match.span("gpu"))
    return spans


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


def _memory_figures(file: TextFile, body: str, repo: str, gpus: GpuMatches) -> Iterator[Figure]:
    gpu_spans = _gpu_spans(gpus)
    for match in MEMORY.finditer(body):
        start, end = match.span("num")[0], match.end()
        if gpu_spans.covers(start, end):
            continue  # "A100 80GB" names a GPU
        after, before = body[end : end + AROUND], body[max(0, start - AROUND) : start]
        if GPU_CAPACITY_AFTER.match(after) or re.search(r"[x×*]\s*$", before):
            continue  # "80GB GPU", "2×80GB": a GPU's capacity, read by _gpu_figures
        start_before = body[max(0, match.start() - AROUND) : match.start()]
        if DEVICE_MEMORY.match(after) and re.search(r"\bwith\s*$", start_before):
            continue
        sentence = _sentence(body, match.start(), match.end())
        if not MEMORY_CONTEXT.search(sentence):
            label = _row_label(body, match.start())
            if label is None or not MEMORY_CONTEXT.search(label):
                continue
            sentence = f"{label} {sentence}"  # "| **Weights (fp16)** | 14.5 GB |"
        unit = match.group("unit").lower()
        factor = {"gb": 1e9, "gib": 2**30, "tb": 1e12, "tib": 2**40}.get(unit[:3].rstrip("a"))
        if unit.startswith("gigabyte"):
            factor = 1e9
        if factor is None:
            factor = 1e9
        num = match.group("num")
        yield Figure(
            "memory",
            float(num) * factor,
            " ".join(match.group(0).split()),
            file.path,
            file.line_at(match.start()),
            repo,
            bool(match.group("approx")),
            _half_unit(num, factor),
            unit=match.group("unit"),
            dtype=_dtype_in(sentence),
            cells=_cells(file, match.start()),
        )


def _row_label(body: str, position: int) -> str | None:
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
@cache
def _cjk_context() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The context figure of a CJK card, after or before its word (no word boundaries in
    CJK text: "上下文长度 32K", "支持128K上下文"); the words are data
    (rules/tables/figures_cjk.yaml)."""
    from cardaudit.rules import load_table

    words = f"(?:{load_table('figures_cjk')['context_words']})"
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
    before = re.compile(
        APPROX + number + r"[ \t]*+(?:tokens?|个\s*token|トークン)?+[ \t]*+的?+[ \t]*+" + words
    )
    return after, before


def _context_figures(file: TextFile, body: str, repo: str) -> Iterator[Figure]:
    seen: set[int] = set()
    cjk = _cjk_context()
    for regex in (CONTEXT_LEAD, CONTEXT_TOKENS, *cjk):
        for match in regex.finditer(body):
            start = match.start("num")
            if start in seen:
                continue
            line_start = body.rfind("\n", 0, start) + 1
            line_end = body.find("\n", start)
            line_text = body[line_start : line_end if line_end != -1 else len(body)]
            if regex not in cjk and not CONTEXT_WORD.search(line_text):
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


def _dtype_figures(file: TextFile, body: str, repo: str) -> Iterator[Figure]:
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


@cache
def gpu_table() -> tuple[dict[str, Any], ...]:
    """The GPU table (``rules/tables/gpus.yaml``) with compiled name patterns."""
    from cardaudit.rules import load_table

    entries = []
    for entry in load_table("gpus").get("gpus", []):
        names = "|".join(f"(?:{alias})" for alias in entry["aliases"])
        regex = re.compile(
            GPU_COUNT + r"(?:NVIDIA\s+|AMD\s+)?(?<![\w-])(?P<gpu>" + names + r")(?![\w-])",
            re.IGNORECASE,
        )
        entries.append({**entry, "regex": regex, "name_regex": _name_regex(names)})
    return tuple(entries)


def _name_regex(names: str) -> re.Pattern[str]:
    """A GPU's names alone, as whole words: what every match of its full pattern contains."""
    return re.compile(r"(?<![\w-])(?:" + names + r")(?![\w-])", re.IGNORECASE)


@cache
def _any_gpu_name() -> re.Pattern[str]:
    aliases = "|".join(f"(?:{alias})" for entry in gpu_table() for alias in entry["aliases"])
    return _name_regex(aliases)


#: Per GPU table entry, its pattern's matches in a text (what ``finditer`` yields).
GpuMatches = tuple[tuple[Mapping[str, Any], tuple[re.Match[str], ...]], ...]
#: A character that cannot occur in the count-and-vendor prefix of a GPU match ("2x NVIDIA ").
PREFIX_BREAK = re.compile(r"[^\w\s×*]")


def gpu_matches(body: str) -> GpuMatches:
    """Each GPU entry's ``regex.finditer(body)``, without running every entry over all of it.

    A full pattern starts with an optional count ("two", "8x") that Python's ``re`` must try
    at every position of the text, for every entry. Its names alone are found far faster, so
    the full pattern is only searched from just before a name: a match has its name inside,
    and nothing but word characters, spaces, "×" and "*" between its start and that name.
    """
    starts: list[int] = []
    finder = _any_gpu_name()
    found = finder.search(body)
    while found is not None:
        starts.append(found.start())
        found = finder.search(body, found.start() + 1)
    if not starts:
        return tuple((entry, ()) for entry in gpu_table())
    breaks = [match.start() for match in PREFIX_BREAK.finditer(body)]
    result = []
    for entry in gpu_table():
        matches: list[re.Match[str]] = []
        end = 0
        for start in starts:
            if start < end or not entry["name_regex"].match(body, start):
                continue
            before = bisect_left(breaks, start) - 1
            match = entry["regex"].search(body, max(end, breaks[before] + 1 if before >= 0 else 0))
            if match is None:
                break
            matches.append(match)
            end = max(match.end(), match.start() + 1)
        result.append((entry, tuple(matches)))
    return tuple(result)


def figures_in(file: TextFile, repo: str = "model") -> list[Figure]:
    """Every figure stated in ``file``."""
    body = prose(file.text)
    gpus = gpu_matches(body)
    found: list[Figure] = list(_count_figures(file, body, repo))
    found += _memory_figures(file, body, repo, gpus)
    found += _gpu_figures(file, body, repo, gpus)
    found += _context_figures(file, body, repo)
    found += _dtype_figures(file, body, repo)
    from cardaudit.extract.figures_cjk import new_figures

    found += new_figures(file, body, repo, found)
    return sorted(found, key=lambda f: (f.repo, f.path, f.line, f.kind))


def stated_figures(evidence: Evidence) -> list[Figure]:
    """Figures in the model card and in the code repo's README, each marked with whether it
    is about the audited model: a figure of a block about another model (the block's subject,
    see extract/reading.py) is not, nor is a code-README figure whose line does not name the
    model (a family README describes every size with the family's name)."""
    from cardaudit.extract.reading import read_evidence

    readings = {(r.document.repo, r.document.path): r for r, _ in read_evidence(evidence)}
    found: list[Figure] = []
    if evidence.card is not None and not evidence.card.error:
        reading = readings.get(("model", evidence.card.path))
        for figure in figures_in(evidence.card.file):
            if reading is not None and not reading.at(figure.line).charged:
                figure = replace(figure, about_model=False)
            found.append(figure)
    if evidence.code is not None:
        names = model_names(evidence)
        for path in evidence.code.find("README.md", "README.rst", "README.txt", "README"):
            text = evidence.code.text(path)
            if text is None:
                continue
            lines = text.lines
            reading = readings.get(("code", path))
            for figure in figures_in(text, "code"):
                line = lines[figure.line - 1].lower() if figure.line <= len(lines) else ""
                other = reading is not None and not reading.at(figure.line).charged
                if other or not any(name in line for name in names):
                    figure = replace(figure, about_model=False)
                found.append(figure)
    return found


def model_names(evidence: Evidence) -> set[str]:
    """Lower-case names the model goes by: repo id (without owner) and the card's title."""
    names = {evidence.target.id.rsplit("/", 1)[-1].lower()}
    if evidence.card is not None:
        title = markdown_blocks.card_title(evidence.card)
        if title:
            names.add(title.lower())
    return {name for name in names if len(name) >= 3 and name not in GENERIC_NAMES}
