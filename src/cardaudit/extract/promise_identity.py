"""Which promises are the same promise: in one audit (card and code README, twice in one
file) and across audits and commits (a promise reworded keeps its identity).

A promise is identified by its artifact category and the words that name its item, the
category's own generic words left out ("the technical report" and "Paper" are both the
paper; "SFT code" and "SFT training code" are the SFT code). Matching is tolerant to
rewording: equal words, one set inside the other, or at least half shared — but names and
versions (words with a digit) must agree.
:func:`same_promise` is the one test every caller uses — the facts' grouping, the git
``first_seen`` walk and the store's timeline (:func:`cardaudit.timeline.match_promises`).
"""

from __future__ import annotations

from datetime import datetime
from functools import cache

from cardaudit.extract.markdown_prose import parse_document
from cardaudit.extract.promises import WORD, Mention, PromiseTable, keywords, mentions
from cardaudit.model import FileVersion

#: (artifact, identity words) of one promise.
Identity = tuple[str, frozenset[str]]


def _generic(artifact: str, table: PromiseTable) -> frozenset[str]:
    spec = table.artifacts.get(artifact)
    return _label_words(spec.label) if spec is not None else frozenset()


@cache
def _label_words(label: str) -> frozenset[str]:
    words = set(WORD.findall(label.lower()))
    return frozenset(words | {word.rstrip("s") for word in words})


def identity(artifact: str, item: str | None, text: str, table: PromiseTable) -> Identity:
    """(artifact, the words that tell this item from others of its category)."""
    words = keywords(item or text, table)
    generic = _generic(artifact, table)
    return artifact, frozenset(
        word for word in words if word not in generic and word.rstrip("s") not in generic
    )


def same_identity(a: Identity, b: Identity, loose: bool = False) -> bool:
    """Whether two identities are the same promise, tolerant to rewording. ``loose`` (one
    promise followed over time) also pairs an item named only by its category with one that
    names it more precisely ("the training code" → "the SFT code")."""
    if a[0] != b[0]:
        return False
    words_a, words_b = a[1], b[1]
    if words_a == words_b:
        return True
    if not words_a or not words_b:
        return loose
    if _named(words_a) != _named(words_b):
        return False  # "tokenizer-0" and "tokenizer-1", "Qwen3" and "Qwen2.5": other items
    if words_a <= words_b or words_b <= words_a:
        return True
    return len(words_a & words_b) * 2 >= len(words_a | words_b)


def _named(words: frozenset[str]) -> frozenset[str]:
    """The words with a digit: names and versions, which must agree."""
    return frozenset(word for word in words if any(char.isdigit() for char in word))


def same_promise(
    a: tuple[str, str | None, str],
    b: tuple[str, str | None, str],
    table: PromiseTable,
    loose: bool = True,
) -> bool:
    """Whether two promises given as (artifact, item, text) are the same promise (by
    default followed over time: see :func:`same_identity`)."""
    return same_identity(identity(*a, table), identity(*b, table), loose)


# --------------------------------------------------------------------------- history


def strip_front_matter(text: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                return "".join(lines[index + 1 :]), index + 2
    return text, 1


def promised_identities(
    path: str, repo: str, version: FileVersion, table: PromiseTable
) -> list[Identity]:
    """The identity of every promise of one committed version of a file."""
    body, start = strip_front_matter(version.text)
    document = parse_document(path, body, repo=repo, first_line=start)
    promised, _ = mentions(document, table)
    return [identity(m.artifact, m.item, m.text, table) for m in promised]


def first_seen(
    mention: Mention,
    versions: tuple[FileVersion, ...],
    table: PromiseTable,
    cache: dict[tuple[str, str, str], frozenset[Identity]] | None = None,
) -> datetime | None:
    """Date of the commit since which the file has promised this item without a break
    (rewordings included)."""
    cache = {} if cache is None else cache
    earliest: datetime | None = None
    wanted = identity(mention.artifact, mention.item, mention.text, table)
    for version in reversed(versions):
        slot = (mention.repo, mention.path, version.sha)
        if slot not in cache:
            cache[slot] = frozenset(promised_identities(mention.path, mention.repo, version, table))
        promised = cache[slot]
        if wanted not in promised and not any(
            same_identity(wanted, other, loose=True) for other in promised
        ):
            break
        earliest = version.date
    return earliest
