"""The subject of one clause: which model a figure or score in a sentence is about.

A block (paragraph, list item) has one subject (:mod:`cardaudit.extract.reading`), but a
sentence can speak of several models: "We distilled Qwen2.5-72B (72.7B parameters) into a
7B student", "Mistral-7B was advertised with 8k context; our fine-tune supports 32k". The
subject of what a clause says at an offset comes from its structure:

- a parenthetical right after a model's name is about that model ("Qwen2.5-72B (72.7B
  parameters, 128K context)");
- a clause that opens with another model's name, with a reference to the model this one was
  made from ("The base Mistral-7B…", "The teacher model…", "基座模型…"), or with a
  self-reference carrying another size of the family ("Our 70B model…") is about that model;
- a clause with only a pronoun for its subject ("it", "它") keeps the previous clause's;
- a clause that attributes its figures to someone else ("according to the Qwen team",
  "as reported by Meta", "官方数据") is *reported*: not the audited model's own result.

The few words structure cannot give are data in ``rules/tables/prose.yaml``
(``base_reference``, ``reported_by``, ``pronoun``, ``self_reference``). Hand-written: no
library parses model-card sentences into clauses with subjects; every pattern is linear.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from cardaudit.extract.model_names import AUDITED, MEMO_LIMIT, MEMO_TEXT_LIMIT, ModelNames
from cardaudit.extract.subject import Subject

#: Where a clause ends: a sentence end, a semicolon, a paragraph break, an HTML paragraph,
#: and the CJK commas ("，", "、": Chinese and Japanese join clauses with them).
CLAUSE_END = re.compile(r"[.!?](?=\s|\*|$)|[;；。！？，、]|\n\s*\n|</p>|<br\s*/?>", re.IGNORECASE)
#: A clause after one of these continues the one before unless it names its own subject.
SOFT_END = frozenset("，、")
#: How many soft-joined clauses back a subject is looked for.
MAX_CONTINUED = 4
#: How far before and after an offset its clause is looked for (characters).
REACH = 1000
#: Markup, HTML tags and a FAQ label ("**A:**", "Q:") before a clause's first word.
CLAUSE_LEAD = re.compile(
    r"^(?:\s|[*_`>#|\-+\"'“(\[]|<[^>\n]{0,100}>|(?<![\w])[A-Z][:：](?=[\s*_]))*",
)
OPEN = "(（"
CLOSE = ")）"
BRACKET = re.compile(r"[()（）\n]")
WORD = re.compile(r"\S+")


def clause_span(text: str, offset: int) -> tuple[int, int]:
    """(start, end) of the clause of ``text`` holding ``offset``; a clause end inside
    brackets does not end the clause ("(5-shot; greedy)")."""
    start, end, _soft = _clause(text, offset)
    return start, end


def _clause(text: str, offset: int) -> tuple[int, int, bool]:
    """(start, end, whether a CJK comma opens it) of the clause holding ``offset``: one
    pass over at most ``REACH`` characters each side, keeping the bracket depth (a long
    paragraph must not make every figure cost its length)."""
    low = max(0, offset - REACH)
    depth = 0
    start, soft = low, False
    position = low
    for match in CLAUSE_END.finditer(text, low, offset):
        depth = _depth(text, position, match.start(), depth)
        position = match.start()
        if depth == 0:
            start, soft = match.end(), match.group(0) in SOFT_END
    depth = _depth(text, position, offset, depth)
    position = offset
    end = min(len(text), offset + REACH)
    for match in CLAUSE_END.finditer(text, offset, end):
        depth = _depth(text, position, match.start(), depth)
        position = match.start()
        if depth == 0:
            end = match.start()
            break
    return start, end, soft


def _depth(text: str, start: int, end: int, depth: int) -> int:
    """The bracket depth at ``end``, given ``depth`` at ``start``; a line break closes all."""
    for match in BRACKET.finditer(text, start, end):
        char = match.group(0)
        if char in OPEN:
            depth += 1
        elif char == "\n":
            depth = 0
        else:
            depth = max(0, depth - 1)
    return depth


def _open_bracket(text: str, start: int, offset: int) -> int | None:
    """The position of the innermost bracket open at ``offset`` (within the clause)."""
    stack: list[int] = []
    for index in range(start, offset):
        char = text[index]
        if char in OPEN:
            stack.append(index)
        elif char in CLOSE and stack:
            stack.pop()
    return stack[-1] if stack else None


def clause_subject(
    names: ModelNames,
    block: Subject,
    text: str,
    offset: int,
    previous: Subject | None = None,
    continued: int = 0,
) -> Subject:
    """The subject of what ``text`` (a sentence or paragraph of a block about ``block``)
    says at ``offset``; ``previous`` is the subject of the clause before it, if any."""
    if not block.charged:
        return block
    # a pure function of its arguments, remembered for texts a card repeats (table rows,
    # list items, boilerplate paragraphs)
    key = ("clause", text, offset, block, previous, continued)
    memo = names.memo
    found = memo.get(key)
    if found is None:
        start, end, soft = _clause(text, offset)
        found = _clause_subject(names, block, text, offset, previous, continued, start, end, soft)
        if len(memo) < MEMO_LIMIT and len(text) <= MEMO_TEXT_LIMIT:
            memo[key] = found
    return found


def _clause_subject(
    names: ModelNames,
    block: Subject,
    text: str,
    offset: int,
    previous: Subject | None,
    continued: int,
    start: int,
    end: int,
    soft: bool,
) -> Subject:
    table = names.table
    clause = text[start:end]
    reported = bool(table.reported_by.search(clause))
    bracket = _open_bracket(text, start, offset)
    if bracket is not None:
        attached = _name_before(names, text[start:bracket])
        if attached is not None:
            return _subject(block, attached, reported)
    lead = CLAUSE_LEAD.match(clause)
    head_start = lead.end() if lead else 0
    head = clause[head_start:]
    named = _named(names, head)
    base = table.base_reference.match(head)
    if base:  # the name right after the reference, if any ("The base Mistral-7B")
        known = names.named(head)  # a known model, not any model-shaped words
        right_after = [n for at, a, n in known if not a and at <= base.end() + 1]
        return _subject(block, base_name(names, right_after), reported)
    sibling = _other_size(names, head)
    if sibling is not None:
        return _subject(block, sibling, reported)
    if named and not named[0][1] and _only_markup(head[: named[0][0]]):
        return _subject(block, named[0][2], reported)
    if (
        previous is not None
        and not previous.charged
        and not any(audited for _, audited, _ in named)
        and table.pronoun.search(head[: max(0, offset - start - head_start)])
    ):
        return replace(previous, reported=previous.reported or reported)
    own = table.self_reference.match(head) or any(audited for _, audited, _ in named)
    if soft and not own and continued < MAX_CONTINUED and start > 0:
        # "基座模型X在MMLU上得分74.2、在GSM8K上得分80.1": the clause goes on about X
        before = clause_subject(names, block, text, start - 1, previous, continued + 1)
        return replace(before, reported=True) if reported else before
    return replace(block, reported=True) if reported else block


def _subject(block: Subject, about: str, reported: bool) -> Subject:
    return replace(block, about=about, reported=reported or block.reported)


def _only_markup(text: str) -> bool:
    return not text.strip(" *_[`\"'“:>|-")


def _named(names: ModelNames, text: str) -> list[tuple[int, bool, str]]:
    """The models ``text`` names: known ones (bases, siblings, the audited model) and any
    other model-shaped word written as a name ("Falcon-40B"); a loose match across a space
    ("The Q4_K_M", "with 8K") is words, not a name."""
    return [
        found
        for found in names.named(text, loose=True)
        if found[1] or _one_word_name(found[2]) or names.is_other(found[2])
    ]


def _one_word_name(token: str) -> bool:
    """A model-shaped word written as a name: one word, with a capital or a hyphen
    ("Falcon-40B", "GPT4o-mini"; not "bfloat16", "fp8")."""
    return not any(char.isspace() for char in token) and (
        "-" in token or any(char.isupper() for char in token)
    )


def _name_before(names: ModelNames, text: str) -> str | None:
    """The model named right before a bracket ("Qwen2.5-72B (…"): AUDITED, its name, or None."""
    stripped = text.rstrip(" *_`]")
    for position, audited, name in reversed(_named(names, stripped)):
        if position + len(name) >= len(stripped) - 1:
            return AUDITED if audited else name
        break
    return None


def base_name(names: ModelNames, others: Sequence[str]) -> str:
    """The model a base reference ("the base model", a "Teacher" column) stands for: the
    original a converted repo carries, else the first other model named with it, else the
    card's first base model."""
    if names.original:
        return names.original
    if others:
        return others[0]
    return names.bases[0] if names.bases else "base model"


def _other_size(names: ModelNames, head: str) -> str | None:
    """A self-reference ("Our 70B model" on an 8B card) whose next words carry a size the
    audited model does not have: about that sibling."""
    if not names.sizes or not names.table.self_reference.match(head):
        return None
    words = WORD.findall(head)[1:3]
    for index, word in enumerate(words):
        size = word.strip("*_`,.").lower()
        if size.endswith("k"):
            continue  # "128K": a context or token count, never a model's size
        if names.table.size_part.match(size) and size not in names.sizes:
            noun = words[index + 1] if index + 1 < len(words) else ""
            return f"{word.strip('*_`,.')} {noun}".strip()
    return None
