"""Identify what a licence text really is, with a real licence-identification engine."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Identification:
    licence: str | None
    confidence: float
    also: tuple[str, ...] = ()
    engine: str = "askalono"


#: Below this askalono score the answer is not trusted.
MIN_CONFIDENCE = 0.8


def identify_text(text: str) -> Identification:
    """Identify ``text``; ``licence`` is an SPDX id / Hub id, or None when unknown."""
    if not text.strip():
        return Identification(None, 0.0)
    import askalono

    result = askalono.identify(text)
    if result is None or result.score < MIN_CONFIDENCE:
        return Identification(None, float(result.score) if result else 0.0)
    return Identification(str(result.name), float(result.score))
