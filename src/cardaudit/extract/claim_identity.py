"""One stated fact, one claim: a sentence that repeats scores or speed figures already stated
elsewhere (a code README's "reaches 68.2 on SWE-bench Verified" beside the card's benchmark
table) is a further location of that claim, not a claim of its own.

Claims are compared by what they state, not by their wording: a benchmark claim states
(benchmark, score) pairs — a table row "SWE-bench Verified: 68.2", or a sentence naming
SWE-bench and giving 68.2 — and a speed claim states its figures ("180 tokens/s"). A claim
whose every stated fact is stated by another claim about the same model folds into that
one. Only a full match folds: a sentence with one score the table lacks stays its own claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from cardaudit.model import Claim

_BENCHMARK_KINDS = frozenset({"benchmark", "benchmark_table"})
#: Kept claims compared with each new one at most (all sharing one of its figures): bounds
#: a hostile card repeating one figure thousands of times to a linear cost.
MAX_CANDIDATES = 64


@dataclass(frozen=True)
class _Stated:
    """What one claim states, computed once."""

    group: str  # "speed" or "benchmark"
    pairs: frozenset[tuple[str, str]]  # (benchmark, score); speed: ("", figure)
    benches: frozenset[str]  # a prose score's benchmarks (it may belong to any of them)
    scores: tuple[str, ...]  # a prose score's numbers; empty for tables and speed


def _bench_keys(text: str, table: Any) -> frozenset[str]:
    from cardaudit.extract.claim_text import benchmarks_in

    return frozenset(bench.name.pattern for bench, _ in benchmarks_in(text, table))


def _score(text: str) -> str:
    return text.strip().rstrip("%％").strip()


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


def _stated(claim: Claim, table: Any) -> _Stated | None:
    if claim.kind == "speed":
        figures = frozenset(("", _flat(value)) for value in claim.values)
        return _Stated("speed", figures, frozenset(), ())
    if claim.kind == "benchmark_table":
        pairs = set()
        for value in claim.values:
            pairs.update(_row_pairs(value, table))
        return _Stated("benchmark", frozenset(pairs), frozenset(), ())
    if claim.kind == "benchmark":
        keys = _bench_keys(claim.text, table)
        scores = tuple(_score(value) for value in claim.values)
        pairs = frozenset((key, score) for key in keys for score in scores)
        return _Stated("benchmark", pairs, keys, scores)
    return None


def _row_pairs(value: str, table: Any) -> set[tuple[str, str]]:
    """The (benchmark, score) pairs one table row states. A row is "label: cells", in one of
    the two layouts tables use: a benchmark per row ("HumanEval: 71.2 | 65.0", a score per
    model column) or a model per row with a benchmark per column ("Ours-14B: C-Eval 82.3,
    MMLU 79.1", each score after its column's name)."""
    from cardaudit.extract.claim_text import SCORE, benchmarks_in

    label, sep, rest = value.rpartition(":")
    if not sep:
        return set()
    keys = _bench_keys(label, table)
    if keys:
        return {(key, _score(m.group(0))) for key in keys for m in SCORE.finditer(rest)}
    named = sorted(
        (
            (match.start(), match.end(), bench.name.pattern)
            for bench, match in benchmarks_in(rest, table)
        ),
    )
    pairs = set()
    for index, (_start, end, key) in enumerate(named):
        stop = named[index + 1][0] if index + 1 < len(named) else len(rest)
        score = SCORE.search(rest, end, stop)
        if score:
            pairs.add((key, _score(score.group(0))))
    return pairs or {(_flat(label), _score(rest))}


def _within(small: _Stated, large: _Stated) -> bool:
    """Whether every fact ``small`` states is one ``large`` states."""
    if small.group != large.group or not small.pairs:
        return False
    if small.scores:  # a sentence: each score must be one ``large`` gives a named benchmark
        return all(any((key, s) in large.pairs for key in small.benches) for s in small.scores)
    return small.pairs <= large.pairs


def _fold(into: Claim, other: Claim) -> Claim:
    """``into`` with ``other``'s places. What ``into`` leaves undisclosed stays: the
    other place's checklist covers only what its own wording calls for (a bare figure
    needs no baseline), so it cannot show that the larger claim was disclosed."""
    places = (*into.locations, *(p for p in other.locations if p not in into.locations))
    return replace(
        into,
        locations=places,
        headline=into.headline or other.headline,
        inherited=into.inherited and other.inherited,
    )


def _subject(claim: Claim) -> str:
    """Whom a claim is about, for comparison: the audited model and the page's own subject
    (a code README's) are one."""
    return "audited" if claim.charged else claim.about


def fold_repeated_facts(claims: Sequence[Claim], table: Any) -> tuple[Claim, ...]:
    """``claims`` with each claim whose facts another claim about the same model states
    folded into that claim: a table, else the one stating more, on a tie the first. Claims
    are visited tables first, then largest first, and compared only with kept claims sharing
    a stated figure."""
    stated = [_stated(claim, table) for claim in claims]
    # tables before sentences (a sentence folds into a table, never the reverse), then the
    # claim stating more first
    order = sorted(
        range(len(claims)),
        key=lambda i: (claims[i].kind == "benchmark", -len(claims[i].values), i),
    )
    kept: dict[int, Claim] = {}
    by_figure: dict[tuple[str, str, str], list[int]] = {}
    for position in order:
        claim, mine = claims[position], stated[position]
        if mine is None or not mine.pairs:
            kept[position] = claim
            continue
        probe = min(score for _key, score in mine.pairs)
        candidates = by_figure.get((_subject(claim), mine.group, probe), [])[:MAX_CANDIDATES]
        home = next((c for c in candidates if _within(mine, stated[c])), None)
        if home is not None:
            kept[home] = _fold(kept[home], claim)
            continue
        kept[position] = claim
        for score in {score for _key, score in mine.pairs}:
            by_figure.setdefault((_subject(claim), mine.group, score), []).append(position)
    return tuple(kept[i] for i in sorted(kept))
