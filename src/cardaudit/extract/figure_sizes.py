"""Size figures: parameter counts (total and active, table rows of sizes) and memory
("about 26 GB"), each with the precision of its stated digits."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cardaudit.extract.figure_gpus import GpuMatches, gpu_spans
from cardaudit.extract.figure_model import APPROX, SCALE, Figure, half_unit
from cardaudit.extract.figure_text import (
    AROUND,
    Spans,
    anchored_finditer,
    cells,
    dtype_in,
    row_label,
    sentence_around,
)
from cardaudit.model import TextFile

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
MEMORY_NUMBER = r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s?(?P<unit>GB|GiB|gigabytes?|TB|TiB)\b"
MEMORY = re.compile(APPROX + MEMORY_NUMBER, re.IGNORECASE)
#: The numbers ACTIVE / TOTAL and MEMORY contain (see figure_text.anchored_finditer).
COUNT_ANCHOR = re.compile(COUNT, re.IGNORECASE)
MEMORY_ANCHOR = re.compile(MEMORY_NUMBER, re.IGNORECASE)
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


def count_figures(file: TextFile, body: str, repo: str) -> Iterator[Figure]:
    taken = Spans()
    for kind, regex in (("parameters_active", ACTIVE), ("parameters_total", TOTAL)):
        for match in anchored_finditer(regex, COUNT_ANCHOR, body):
            if taken.covers(match.start()):
                continue
            if COMPARATIVE.search(sentence_around(body, match.start(), match.end())):
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
                half_unit(num, scale),
                cells=cells(file, match.start()),
            )
            if cells(file, match.start()) > 2:
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
            half_unit(cell.group("num"), scale),
            cells=cells(file, match.start()),
        )


def memory_figures(file: TextFile, body: str, repo: str, gpus: GpuMatches) -> Iterator[Figure]:
    named_gpus = gpu_spans(gpus)
    for match in anchored_finditer(MEMORY, MEMORY_ANCHOR, body):
        start, end = match.span("num")[0], match.end()
        if named_gpus.covers(start, end):
            continue  # "A100 80GB" names a GPU
        after, before = body[end : end + AROUND], body[max(0, start - AROUND) : start]
        if GPU_CAPACITY_AFTER.match(after) or re.search(r"[x×*]\s*$", before):
            continue  # "80GB GPU", "2×80GB": a GPU's capacity, read by gpu_figures
        start_before = body[max(0, match.start() - AROUND) : match.start()]
        if DEVICE_MEMORY.match(after) and re.search(r"\bwith\s*$", start_before):
            continue
        sentence = sentence_around(body, match.start(), match.end())
        if not MEMORY_CONTEXT.search(sentence):
            label = row_label(body, match.start())
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
            half_unit(num, factor),
            unit=match.group("unit"),
            dtype=dtype_in(sentence),
            cells=cells(file, match.start()),
        )
