"""The one-pass GPU scan finds exactly what each GPU pattern's own ``finditer`` finds."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cardaudit.extract.figures import gpu_matches, gpu_table, prose

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

TRICKY = [
    "Runs on 2x NVIDIA A100 80GB or eight H100 SXM5 80 GB cards.",
    "two\n\nA100, one A100-40G; 8 × AMD MI300X and 4*RTX 4090 (a 4090 too).",
    "abc2 A100 x-A100 A100x H20 H200 L40S L40 L4 A10G A10 RTX A6000 RTX 6000 Ada.",
    "eightH100 an A100 a  A100 single\tV100 32GB, V100; 1 T4 | 3 RTX-3090 | M2 Ultra.",
    "4090x RTX 4090 and 40904090 4090-4090 — ſingle A100, NVIDIA\n\nH100 NVL.",
    "",
    "no gpus at all, only 80GB of memory and 2 × 24GB cards",
]
WORDS = [
    "A100",
    "80GB",
    "H100",
    "NVL",
    "2x",
    "x",
    "×",
    "*",
    "two",
    "an",
    "a",
    "NVIDIA",
    "AMD",
    "RTX",
    "4090",
    "-",
    " ",
    "  ",
    "\n",
    "\n\n",
    ".",
    ",",
    "|",
    "8",
    "eight",
    "L4",
    "L40S",
    "T4",
    "MI250X",
    "M2 Ultra",
    "SXM4",
    "PCIe",
    "40 GB",
    "runs on",
    "ſ",
]


def plain(body: str) -> list[list[tuple[int, int, int, int]]]:
    return [
        [(m.start(), m.end(), *m.span("gpu")) for m in entry["regex"].finditer(body)]
        for entry in gpu_table()
    ]


def scanned(body: str) -> list[list[tuple[int, int, int, int]]]:
    found = gpu_matches(body)
    assert [entry["name"] for entry, _ in found] == [entry["name"] for entry in gpu_table()]
    return [[(m.start(), m.end(), *m.span("gpu")) for m in matches] for _, matches in found]


@pytest.mark.parametrize("body", TRICKY)
def test_tricky_texts(body: str) -> None:
    assert scanned(body) == plain(body)


def test_tricky_texts_do_find_gpus() -> None:
    assert sum(map(len, scanned(TRICKY[0]))) >= 2
    a100 = [entry["name"] for entry in gpu_table()].index("NVIDIA A100")
    assert scanned(TRICKY[1])[a100][0] == (0, 9, 5, 9)  # "two\n\nA100": count over a blank line


def test_random_texts() -> None:
    rng = random.Random(20261130)
    for _ in range(400):
        body = "".join(rng.choice(WORDS) + rng.choice(["", " "]) for _ in range(rng.randint(1, 40)))
        assert scanned(body) == plain(body), body


def test_fixture_cards() -> None:
    cards = sorted(FIXTURES.glob("*/*/README.md"))
    assert cards
    for card in cards:
        body = prose(card.read_text(encoding="utf-8", errors="replace"))
        assert scanned(body) == plain(body), card
