"""Forms of a model name: its comparable form, family stem, the names it goes by without
size / format / variant parts, its short forms, and the prose table
(``rules/tables/prose.yaml``) that says which parts are sizes and variants (split from
:mod:`cardaudit.extract.model_names`). Hand-written: no library knows model-name parts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from cardaudit.rules import load_table

#: Han, kana and Hangul: scripts written without spaces between words.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
CJK_HEAD = re.compile(rf"^[{CJK}]+")


def cjk_forms(token: str) -> list[str]:
    """``token`` without each run of leading CJK characters: in "我们发布了云雀-7B" the name
    is one of the run's endings ("云雀-7B"), not the run."""
    head = CJK_HEAD.match(token)
    if head is None:
        return []
    forms = [token[start:] for start in range(1, head.end())]
    rest = token[head.end() :]
    if rest[:1].isalpha():  # "基于Qwen2.5-7B": the Latin name after the CJK words
        forms.append(rest)
    return forms


@dataclass(frozen=True)
class ProseTable:
    variant_suffix: re.Pattern[str]
    size_part: re.Pattern[str]
    converted_name: re.Pattern[str]
    family_sections: re.Pattern[str]
    original_card: re.Pattern[str]
    self_reference: re.Pattern[str]
    possessive_lead: re.Pattern[str]
    not_model_names: re.Pattern[str]
    generic_names: re.Pattern[str]
    base_reference: re.Pattern[str]
    reported_by: re.Pattern[str]
    self_column: re.Pattern[str]
    pronoun: re.Pattern[str]


@cache
def prose_table() -> ProseTable:
    raw: dict[str, Any] = load_table("prose")
    flags = re.IGNORECASE
    return ProseTable(
        **{key: re.compile(str(raw[key]), flags) for key in ProseTable.__dataclass_fields__}
    )


SEPARATORS = re.compile(r"[\s_.\-]+")


@lru_cache(maxsize=1 << 16)
def canonical(name: str) -> str:
    """A comparable form of a model name: no org, lower case, no separators or dots
    (remembered: every word of a card is asked for it by several readings)."""
    name = name.strip().strip("*_`.,;:!?\"'()[]").rsplit("/", 1)[-1].lower()
    return SEPARATORS.sub("", name)


def name_stem(name: str) -> str:
    match = re.match(r"[a-z]+", name.rsplit("/", 1)[-1].lower())
    return match.group(0) if match and len(match.group(0)) >= 3 else ""


def aliases_of(name: str, table: ProseTable) -> set[str]:
    """``name`` and the names it goes by without trailing size / format / variant parts."""
    found = {canonical(name)}
    parts = re.split(r"[-_ ]", name.rsplit("/", 1)[-1])
    while len(parts) > 1 and table.variant_suffix.match(parts[-1]):
        parts.pop()
        found.add(canonical("-".join(parts)))
    return {alias for alias in found if len(alias) >= 3}


def core_and_sizes(name: str, table: ProseTable) -> tuple[str, frozenset[str]]:
    """(the name without trailing size / format / variant parts, the sizes among them)."""
    parts = re.split(r"[-_ ]", name.rsplit("/", 1)[-1])
    sizes = set()
    while len(parts) > 1 and table.variant_suffix.match(parts[-1]):
        part = parts.pop().lower()
        if table.size_part.match(part):
            sizes.add(part)
    return canonical("-".join(parts)), frozenset(sizes)


def short_forms(name: str, table: ProseTable) -> set[str]:
    """The trailing parts of ``name``'s core that start with a word of three letters or
    more, without the whole core: "Llama-3.1-Orca-8B" → {"orca"}; "Zephyr-Nova-7B" →
    {"nova"}. A name of one part has none."""
    parts = [p for p in re.split(r"[-_ ]", name.rsplit("/", 1)[-1]) if p]
    while len(parts) > 1 and table.variant_suffix.match(parts[-1]):
        parts.pop()
    found = set()
    for index in range(1, len(parts)):
        if re.fullmatch(r"[A-Za-z\u00c0-\u024f]{3,}", parts[index]):
            found.add(canonical("-".join(parts[index:])))
    return found
