"""Licence identification costs bounded time on hostile licence texts (issue 14 §2).

licenseid aligns a text shorter than a full licence character by character with every
candidate, at a cost that grows faster than the square of the text's length: a mutated
3.9 KB text took 4 s CPU. The bounds are structural, so the tests check the structure
(what licenseid is given, how often it is asked), not the clock.
"""

from __future__ import annotations

import random

import pytest

from cardaudit.extract import licence_id
from cardaudit.extract.licence_id import (
    ALIGN_MAX_CHARS,
    MAX_PARTS,
    MIN_PAIR_SHARE,
    _Answer,
    identify_text,
)

SENTENCES = (
    "Licensed under the Apache License, Version 2.0 (the License); you may not use this file",
    "If, on the Llama 3 version release date, the monthly active users of the products",
    "You may not use the Model for commercial purposes. ",
    "Copyright (c) 2024 Example Corp. All rights reserved. ",
    "Use-based restrictions as referenced in paragraph 5 MUST be included as an enforceable",
)


@pytest.fixture
def matcher_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text handed to licenseid's matcher, in order (the matcher still answers)."""
    matcher, keys = licence_id._model_matcher()
    calls: list[str] = []

    class Recording:
        def match(self, text: str):
            calls.append(text)
            return matcher.match(text=text)

    monkeypatch.setattr(licence_id, "_model_matcher", lambda: (Recording(), keys))
    return calls


def _fragment(licence: str, start: int, words: int, typo_every: int = 10) -> str:
    """``words`` words of a bundled licence from word ``start``, with a typo every so often."""
    text = licence_id.bundled_reference_texts()[licence].split()[start : start + words]
    return " ".join(w[:1] + "q" + w[2:] if i % typo_every == 5 else w for i, w in enumerate(text))


def test_pumped_licence_sentences_are_not_aligned(matcher_calls: list[str]) -> None:
    rng = random.Random(14)
    text = "".join(rng.choice(SENTENCES) for _ in range(40)) + SENTENCES[0] * 20
    assert len(text) > 3000
    assert licence_id._pair_share(text) < MIN_PAIR_SHARE
    assert licence_id._model_store(text) is None
    assert matcher_calls == []


def test_pair_share_of_a_copy_and_of_a_pumped_copy() -> None:
    llama2 = licence_id.bundled_reference_texts()["llama2"]
    assert licence_id._pair_share(llama2) == 1.0
    # repeats count: three copies hold only as many of each pair as one licence does
    assert licence_id._pair_share("\n".join([llama2] * 3)) == pytest.approx(1 / 3, abs=0.03)
    assert licence_id._pair_share("") == 0.0


@pytest.mark.parametrize(("licence", "start"), [("llama2", 200), ("Apache-2.0", 300)])
def test_a_long_fragment_is_aligned_by_its_head_and_still_identified(
    matcher_calls: list[str], licence: str, start: int
) -> None:
    text = _fragment(licence, start, 450)
    assert len(text) > 1.3 * ALIGN_MAX_CHARS  # in licenseid's character-alignment range
    answer = licence_id._model_store(text)
    assert answer is not None
    assert (answer.licence, answer.complete) == (licence, False)
    assert answer.score >= licence_id.MIN_CONFIDENCE
    assert len(matcher_calls) == 1
    assert len(matcher_calls[0]) <= ALIGN_MAX_CHARS
    assert text.startswith(matcher_calls[0])


def test_full_copies_are_given_to_licenseid_whole(matcher_calls: list[str]) -> None:
    terms = licence_id.bundled_reference_texts()["llama3.1"]
    answer = licence_id._model_store(terms)
    assert answer is not None and (answer.licence, answer.complete) == ("llama3.1", True)
    assert matcher_calls == [terms]


def test_parts_identified_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def best(text: str) -> _Answer:
        asked.append(text)
        return _Answer("Apache-2.0" if len(asked) == 1 else "MIT", 0.9, "askalono")

    monkeypatch.setattr(licence_id, "_best", best)
    part = "Permission is hereby granted, free of charge, to any person obtaining a copy " * 6
    parts = 3 * MAX_PARTS
    text = ("\n" + "-" * 20 + "\n").join([part] * parts)
    identify_text.cache_clear()
    found = identify_text(text)
    identify_text.cache_clear()
    assert len(asked) == 1 + MAX_PARTS  # the whole text, then the first MAX_PARTS parts
    assert found.also == ("MIT",)
    assert found.note == f"only the first {MAX_PARTS} of its {parts} parts identified"
