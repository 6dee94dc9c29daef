"""The claims table (``rules/tables/claims.yaml``) compiled: benchmark names (tolerant of
their spelling variants), speed patterns, superiority wording, the disclosure checklists."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Benchmark:
    name: re.Pattern[str]
    versions: re.Pattern[str] | None
    agentic: bool


@dataclass(frozen=True)
class Item:
    id: str
    label: str
    kind: str
    patterns: tuple[re.Pattern[str], ...]
    agentic_only: bool


@dataclass(frozen=True)
class ClaimTable:
    benchmarks: tuple[Benchmark, ...]
    bench_trigger: re.Pattern[str]  # any benchmark name: one search rules a text out
    speed: tuple[re.Pattern[str], ...]
    relative: re.Pattern[str]
    vague_baselines: re.Pattern[str]
    baseline: re.Pattern[str]
    window: int
    sections: re.Pattern[str]
    checklist: Mapping[str, tuple[Item, ...]]
    superiority: re.Pattern[str]
    pointer: re.Pattern[str]
    pointer_discloses: frozenset[str]
    image_words: re.Pattern[str]
    #: A number followed by one of these units is a figure, not a score.
    unit_figure: re.Pattern[str] = re.compile(r"(?!)")


@cache
def claim_table() -> ClaimTable:
    from cardaudit.rules import load_table

    raw: dict[str, Any] = load_table("claims")
    flags = re.IGNORECASE

    def items(entries: list[dict[str, Any]]) -> tuple[Item, ...]:
        return tuple(
            Item(
                id=str(entry["id"]),
                label=str(entry["label"]),
                kind=str(entry.get("kind", "patterns")),
                # ASCII boundaries: "使用OpenCompass", "5-shot，贪心解码" (CJK characters
                # are word characters to Unicode ``\b``)
                patterns=tuple(
                    re.compile(p, flags | re.ASCII) for p in entry.get("patterns") or ()
                ),
                agentic_only=bool(entry.get("agentic_only")),
            )
            for entry in entries
        )

    speed = raw["speed"]
    names = [spelling_tolerant(entry["name"]) for entry in raw["benchmarks"]]
    pointer = raw["pointer"]
    return ClaimTable(
        benchmarks=tuple(
            Benchmark(
                re.compile(name, flags | re.ASCII),
                re.compile(entry["versions"], flags) if entry.get("versions") else None,
                bool(entry.get("agentic")),
            )
            for name, entry in zip(names, raw["benchmarks"], strict=True)
        ),
        bench_trigger=re.compile("|".join(f"(?:{name})" for name in names), flags | re.ASCII),
        speed=tuple(re.compile(p, flags) for p in speed["patterns"]),
        relative=re.compile(speed["relative"], flags),
        vague_baselines=re.compile(speed["vague_baselines"], flags),
        baseline=re.compile(speed["baseline"], flags),
        window=int(raw["scope"]["window"]),
        sections=re.compile(raw["scope"]["sections"], flags),
        checklist={kind: items(entries) for kind, entries in raw["checklist"].items()},
        superiority=re.compile(raw["superiority"], flags),
        pointer=re.compile(pointer["pattern"], flags),
        pointer_discloses=frozenset(str(item) for item in pointer["discloses"]),
        image_words=re.compile(raw["image_words"], flags | re.ASCII),
        unit_figure=re.compile(
            r"(?<![0-9A-Za-z_.])\d+(?:[.,]\d+)?\s?" + f"(?:{raw['score_units']})", flags
        ),
    )


def spelling_tolerant(pattern: str) -> str:
    """A benchmark-name pattern that also matches its spelling variants: an optional
    separator ("-", "_" or a space) wherever the name has "-?" or " ?", and between the
    words of a CamelCase name ("HumanEval" → "Human Eval", "Human-Eval"). Literal letters
    only: escapes, character classes and group syntax are copied as they are."""
    out: list[str] = []
    previous = ""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            previous = ""
            continue
        if char == "[":
            end = index + 1
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            out.append(pattern[index : end + 1])
            index = end + 1
            previous = ""
            continue
        if char == "(" and pattern.startswith("(?", index):
            end = pattern.find(":", index)
            end = (
                end if end != -1 and pattern[index + 2 : end].strip("-aiLmsux") == "" else index + 1
            )
            out.append(pattern[index : end + 1])
            index = end + 1
            previous = ""
            continue
        if char in "- " and pattern.startswith("?", index + 1):
            out.append(SEPARATOR)
            index += 2
            previous = ""
            continue
        if char.isalpha() and char.isupper() and previous.islower():
            out.append(SEPARATOR)
        out.append(char)
        previous = char if char.isalpha() else ""
        index += 1
    return "".join(out)


SEPARATOR = "[-_ ]?"
