"""figure_text.anchored_finditer gives exactly ``finditer``'s matches for every figure
pattern it is used with: on real cards, on the fixtures, and on random texts made of the
pieces the patterns are built from (numbers, units, qualifier words, signs, line breaks)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from cardaudit.extract.figure_gpus import GENERIC_GPU, GIB_ANCHOR
from cardaudit.extract.figure_settings import CONTEXT_ANCHOR, CONTEXT_TOKENS
from cardaudit.extract.figure_sizes import ACTIVE, COUNT_ANCHOR, MEMORY, MEMORY_ANCHOR, TOTAL
from cardaudit.extract.figure_text import anchored_finditer

ROOT = Path(__file__).resolve().parents[1]
PAIRS = {
    "ACTIVE": (ACTIVE, COUNT_ANCHOR),
    "TOTAL": (TOTAL, COUNT_ANCHOR),
    "MEMORY": (MEMORY, MEMORY_ANCHOR),
    "CONTEXT_TOKENS": (CONTEXT_TOKENS, CONTEXT_ANCHOR),
    "GENERIC_GPU": (GENERIC_GPU, GIB_ANCHOR),
}
PIECES = (
    "7",
    "70",
    "1.5",
    "0",
    "128",
    "32,768",
    "4",
    "80",
    "B",
    "b",
    "M",
    "T",
    "K",
    "k",
    "billion",
    "million",
    "GB",
    "GiB",
    "gb",
    "TB",
    "gigabytes",
    "tokens",
    "token",
    "context",
    "x",
    "×",
    "*",
    "~",
    "≈",
    "about",
    "approx.",
    "approximately",
    "over",
    "less than",
    "nearly",
    "parameters",
    "params",
    "total",
    "in total",
    "number of",
    "active",
    "activated",
    "activates",
    "are",
    "is",
    "of",
    ":",
    "=",
    "|",
    "-",
    ".",
    ",",
    "/",
    "(",
    ")",
    "GPU",
    "GPUs",
    "cards",
    "VRAM",
    "two",
    "eight",
    "a",
    "an",
    "single",
    "per second",
    "/s",
    "A100",
    " ",
    " ",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "\u00a0",
    "é",
    "_",
    "@",
    "#",
)


def same(pattern: re.Pattern[str], anchor: re.Pattern[str], text: str) -> None:
    expected = [(m.span(), m.groupdict()) for m in pattern.finditer(text)]
    got = [(m.span(), m.groupdict()) for m in anchored_finditer(pattern, anchor, text)]
    assert got == expected, text[:200]


def corpus() -> list[str]:
    texts = []
    for folder in (ROOT / "fixtures", ROOT / "tests" / "data"):
        texts += [p.read_text(errors="replace") for p in sorted(folder.rglob("*.md"))]
    return texts


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_same_matches_on_cards(name: str) -> None:
    pattern, anchor = PAIRS[name]
    texts = corpus()
    assert texts
    found = 0
    for text in texts:
        same(pattern, anchor, text)
        found += sum(1 for _ in pattern.finditer(text))
    assert found or name == "ACTIVE"  # the cards do state these figures


LEADS = (
    *("", "", "~", "≈ ", "about ", "approx. ", "over ", "activated ", "total params: "),
    *("number of parameters: less than ", "activated parameters of approx.  ", "eight × "),
)
NUMBERS = ("7", "70", "1.5", "128", "32,768", "8", "2x ", "8×", "4 * ", "two ", "a ")
UNITS = ("B", " B", "b", "M", " billion", "GB", " GiB", "gb", "TB", "K", "k", "", "80GB")
TAILS = (
    " parameters",
    " params",
    "-active",
    " active",
    " total",
    " in total",
    " tokens",
    " context",
    " GPUs",
    " GPU",
    " cards",
    " VRAM GPUs",
    "/s",
    " per second",
    "",
    ".",
)


def random_text(rng: random.Random) -> str:
    """Figure-shaped phrases (lead, number, unit, tail) among random pieces."""
    parts = []
    for _ in range(rng.randint(1, 12)):
        if rng.random() < 0.5:
            parts.append(rng.choice(PIECES))
        else:
            parts.append(
                rng.choice(LEADS) + rng.choice(NUMBERS) + rng.choice(UNITS) + rng.choice(TAILS)
            )
        parts.append(rng.choice(("", " ", " ", "\n", ", ", "| ")))
    return "".join(parts)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_same_matches_on_random_texts(name: str) -> None:
    pattern, anchor = PAIRS[name]
    rng = random.Random(16)
    matched = 0
    for _ in range(3000):
        text = random_text(rng)
        same(pattern, anchor, text)
        matched += any(True for _ in pattern.finditer(text))
    assert matched > 100  # the texts exercise the patterns, not only their misses


def test_a_wrong_anchor_is_caught() -> None:
    """The comparison can fail: an anchor that misses the numbers a match holds loses it."""
    text = "It has about 7B parameters in total."
    wrong = re.compile(r"(?<!\d)\d+\s?GB")
    assert [m.group(0) for m in TOTAL.finditer(text)] == ["about 7B parameters"]
    assert list(anchored_finditer(TOTAL, wrong, text)) == []
