"""extract/literal_filter: a text the filter rules out never matches the pattern — for every
pattern of the claim, promise and lineage tables and of the prose modules, on the fixtures' cards
and on random texts built from the patterns' own words."""

from __future__ import annotations

import random
import re
from pathlib import Path

from cardaudit.extract.claims import claim_table
from cardaudit.extract.lineage import lineage_table
from cardaudit.extract.literal_filter import (
    lowered,
    may_match,
    required_literals,
    ruled_out,
    search,
)
from cardaudit.extract.promises import promise_table

ROOT = Path(__file__).resolve().parents[1]


def table_patterns() -> list[re.Pattern[str]]:
    claims, promises = claim_table(), promise_table()
    found = [bench.name for bench in claims.benchmarks] + list(claims.speed)
    found += [claims.bench_trigger, claims.superiority, claims.pointer, claims.relative]
    for items in claims.checklist.values():
        for item in items:
            found += item.patterns
    for spec in promises.artifacts.values():
        found += spec.phrases
    found += [promises.trigger, promises.delivered_words, *promises.excludes]
    found += [marker.regex for marker in promises.markers]
    lineage = lineage_table()
    found += [pattern for pattern, _relation in (*lineage.prose, *lineage.lists)]
    return found


def texts() -> list[str]:
    lines: list[str] = []
    for folder in (ROOT / "fixtures", ROOT / "tests" / "data"):
        for path in sorted(folder.rglob("*.md")):
            lines += path.read_text(errors="replace").splitlines()
    rng = random.Random(16)
    words = [w for w in re.findall(r"[A-Za-z0-9²]+|[^\sA-Za-z0-9]", " ".join(lines)) if w]
    words += ["SWE-bench", "Human Eval", "tok/s", "2x", "coming soon", "will be released"]
    for _ in range(4000):
        lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))))
    return lines


def test_a_ruled_out_text_never_matches() -> None:
    patterns = table_patterns()
    assert len(patterns) > 100
    with_literals = [p for p in patterns if required_literals(p) is not None]
    assert len(with_literals) > len(patterns) // 2  # the filter applies to most of them
    skipped = 0
    for text in texts():
        low = lowered(text)
        for pattern in with_literals:
            if not may_match(required_literals(pattern), low):
                skipped += 1
                assert pattern.search(text) is None, (pattern.pattern, text)
                assert ruled_out(pattern, low)
            expected = pattern.search(text)
            got = search(pattern, text)
            assert (got and got.span()) == (expected and expected.span())
    assert skipped > 10_000


def test_what_is_required() -> None:
    def of(pattern: str, flags: int = re.IGNORECASE) -> frozenset[str] | None:
        return required_literals(re.compile(pattern, flags))

    assert of(r"\bWino[Gg]rande\b") == {"winogrande"}
    assert of(r"\bHumanEval(?:\+|-?X)?") == {"humaneval"}
    assert of(r"(?:\btau|τ)[²2]?-?bench\b") == {"bench"}
    # the parser factors the branches' common "B" out: what stays required is one of these
    assert of(r"\bBBH\b|\bBIG-?Bench\b") == {"bh", "bench"}
    assert of(r"(?-i:\bGAIA\b)") == {"gaia"}
    assert of(r"\d+\s*tok/s") == {"tok/s"}
    assert of(r"\d+(?:\.\d+)?") is None  # nothing literal: no filter
    assert of(r"a?b?") is None
    assert of("\u212a\u212a") is None  # the Kelvin sign folds to "k": not used


def test_non_ascii_text_is_never_ruled_out() -> None:
    pattern = re.compile(r"ks", re.IGNORECASE)
    text = "\u212aſ"  # the Kelvin sign and the long s: re.IGNORECASE matches "ks"
    assert pattern.search(text) is not None
    assert may_match(required_literals(pattern), lowered(text))
