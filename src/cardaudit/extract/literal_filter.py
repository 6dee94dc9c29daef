"""The literal text a regular expression cannot match without: a test that rules a text out
before the pattern runs.

Python's ``re`` tries a pattern at every position of a text, and the card extractors run
dozens of patterns (benchmark names, artifact phrases, speed figures, disclosure items)
over every sentence of a card. Most sentences contain none of the words those patterns
need. :func:`required_literals` reads a pattern's parse tree (``re._parser``, the parser
``re.compile`` itself uses) and returns strings such that every match contains at least
one of them, lower-cased; :func:`may_match` checks the lower-cased text with ``in`` (a C
substring search) and only a text that passes needs the pattern. The test is a necessary
condition, never a guess: it answers "may match" whenever it cannot tell (a pattern with
no required literal, a text with non-ASCII cased letters, which ``re.IGNORECASE`` folds
in ways lower-casing does not).

Hand-written because no library derives required literals from a Python pattern (the
idea is that of the "required factor" prefilters in grep engines).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

try:  # Python 3.11+
    from re import _constants as sre_constants
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

LITERAL = sre_constants.LITERAL
IN = sre_constants.IN
BRANCH = sre_constants.BRANCH
SUBPATTERN = sre_constants.SUBPATTERN
ATOMIC_GROUP = getattr(sre_constants, "ATOMIC_GROUP", None)
REPEATS = tuple(
    op
    for op in (
        sre_constants.MAX_REPEAT,
        sre_constants.MIN_REPEAT,
        getattr(sre_constants, "POSSESSIVE_REPEAT", None),
    )
    if op is not None
)
#: Zero-width items: the characters on either side of them are adjacent in the text.
ZERO_WIDTH = (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT)

Literals = frozenset[str]


def _safe(char: str) -> bool:
    """A pattern character whose case-insensitive matches all lower-case to its own lower
    case: ASCII, or a character without case (CJK). ``re.IGNORECASE`` lets the Kelvin sign
    match "k" and "ſ" match "s", so cased non-ASCII characters are not used."""
    return char.isascii() or char.lower() == char.upper()


def _better(a: Literals | None, b: Literals | None) -> Literals | None:
    """The more selective of two requirements (longer shortest string, then fewer)."""
    if a is None:
        return b
    if b is None:
        return a
    key_a = (min(map(len, a)), -len(a))
    key_b = (min(map(len, b)), -len(b))
    return b if key_b > key_a else a


def _single_char(av: Any) -> str | None:
    """The one (lower-case) character a class like ``[Gg]`` stands for, or None."""
    chars = set()
    for op, value in av:
        if op is not LITERAL:
            return None
        char = chr(value)
        if not _safe(char):
            return None
        chars.add(char.lower())
    return chars.pop() if len(chars) == 1 else None


def _sequence(items: Any) -> Literals | None:
    """What every match of a sequence of parsed items must contain."""
    best: Literals | None = None
    run: list[str] = []

    def flush() -> None:
        nonlocal best
        if run:
            best = _better(best, frozenset({"".join(run)}))
            run.clear()

    for op, av in items:
        if op is LITERAL and _safe(chr(av)):
            run.append(chr(av).lower())
        elif op is IN and (char := _single_char(av)) is not None:
            run.append(char)
        elif op in ZERO_WIDTH:
            continue  # the characters around it stay adjacent
        else:
            flush()
            if op is SUBPATTERN:
                best = _better(best, _sequence(av[-1]))
            elif ATOMIC_GROUP is not None and op is ATOMIC_GROUP:
                best = _better(best, _sequence(av))
            elif op in REPEATS and av[0] >= 1:
                best = _better(best, _sequence(av[2]))
            elif op is BRANCH:
                branches = [_sequence(branch) for branch in av[1]]
                if all(branch is not None for branch in branches):
                    best = _better(best, frozenset().union(*branches))
    flush()
    return best


@lru_cache(maxsize=1024)
def _required(pattern: str, flags: int) -> Literals | None:
    try:
        return _sequence(sre_parse.parse(pattern, flags))
    except Exception:
        return None


def required_literals(regex: re.Pattern[str]) -> Literals | None:
    """Lower-case strings one of which every match of ``regex`` contains, or None."""
    found = _required(regex.pattern, regex.flags)
    return found if found and all(found) else None


def lowered(text: str) -> str | None:
    """``text`` lower-cased for :func:`may_match`, or None when lower-casing could miss a
    case-insensitive match (non-ASCII text)."""
    return text.lower() if text.isascii() else None


def may_match(literals: Literals | None, low: str | None) -> bool:
    """False only when a pattern with these ``literals`` cannot match the text whose
    :func:`lowered` form is ``low``."""
    if literals is None or low is None:
        return True
    return any(literal in low for literal in literals)


#: Per pattern (by identity: hashing a compiled pattern hashes its whole program), the
#: pattern itself (so the identity stays its own) and None (no filter), its literals (a
#: few: ``in`` each) or one compiled alternation of many (a C scan of the text instead of a
#: Python loop over dozens).
_BY_REGEX: dict[int, tuple[re.Pattern[str], tuple[str, ...] | re.Pattern[str] | None]] = {}
#: More literals than this are searched as one alternation.
MANY_LITERALS = 4


def _filter(regex: re.Pattern[str]) -> tuple[str, ...] | re.Pattern[str] | None:
    entry = _BY_REGEX.get(id(regex))
    if entry is not None and entry[0] is regex:
        return entry[1]
    literals = required_literals(regex)
    found: tuple[str, ...] | re.Pattern[str] | None
    if literals is None:
        found = None
    elif len(literals) > MANY_LITERALS:
        found = re.compile("|".join(re.escape(x) for x in sorted(literals)))
    else:
        found = tuple(literals)
    _BY_REGEX[id(regex)] = (regex, found)
    return found


def ruled_out(regex: re.Pattern[str], low: str | None) -> bool:
    """Whether ``regex`` cannot match the text whose :func:`lowered` form is ``low``."""
    if low is None:
        return False
    found = _filter(regex)
    if found is None:
        return False
    if isinstance(found, tuple):
        return not any(literal in low for literal in found)
    return found.search(low) is None


def search(regex: re.Pattern[str], text: str, low: str | None = None) -> re.Match[str] | None:
    """``regex.search(text)``, skipped when the filter rules ``text`` out (``low``: the
    text's :func:`lowered` form, when the caller has it for several patterns)."""
    if _filter(regex) is not None and ruled_out(regex, lowered(text) if low is None else low):
        return None
    return regex.search(text)
