"""Extract: turn raw evidence into facts that several checks (and the report) use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from cardaudit.model import Evidence, Facts, LicenceFacts, MemoryFacts, ParameterFacts

T = TypeVar("T")


class _Attempts:
    """Run extractors so that one failing extractor costs only its own facts, visibly."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def run(self, name: str, extractor: Callable[[], T], fallback: T) -> T:
        try:
            return extractor()
        except Exception as exc:  # recorded in facts.extract_errors, never silently lost
            self.errors.append(f"{name}: {type(exc).__name__}: {exc}")
            return fallback


@dataclass(frozen=True)
class FactOptions:
    """User choices that shape facts (not evidence): the batch the KV cache is shown for
    beside batch 1 (`--kv-batch`) and the dtype it is served in (`--kv-dtype`; None or
    "auto": the serving default, see :func:`cardaudit.extract.memory.cache_dtype`)."""

    kv_batch: int = 8
    kv_dtype: str | None = None


def build_facts(evidence: Evidence, options: FactOptions | None = None) -> Facts:
    """Every fact about ``evidence``; an extractor that fails is listed in ``extract_errors``.

    The cyclic garbage collector is paused meanwhile (:mod:`cardaudit.gc_pause`): parsing and
    reading a card builds some fifty small objects per line (tokens, lines, paragraphs,
    matches), none in a cycle, and with the collector on every collection rescans the ever
    larger heap, so a 50,000-line card cost 10% more per line than a 1,000-line one.
    """
    from cardaudit.gc_pause import gc_paused

    with gc_paused():
        return _build_facts(evidence, options)


def _build_facts(evidence: Evidence, options: FactOptions | None) -> Facts:
    from cardaudit.clock import audit_now
    from cardaudit.extract.claims import claim_facts
    from cardaudit.extract.derivation import derivation_facts
    from cardaudit.extract.figures import stated_figures
    from cardaudit.extract.licence import licence_facts
    from cardaudit.extract.licence_duties import licence_duty_facts
    from cardaudit.extract.promise_facts import promise_facts
    from cardaudit.extract.sizing import sizing_facts

    now = audit_now()  # an invalid CARDAUDIT_NOW is a usage error, not a lost fact
    attempts = _Attempts()
    licence = attempts.run("licence", lambda: licence_facts(evidence), LicenceFacts())
    base_models, lineage_extra = attempts.run(
        "derivation", lambda: derivation_facts(evidence, licence.declared), ((), {})
    )
    licence = attempts.run(
        "licence duties", lambda: licence_duty_facts(evidence, licence, base_models), licence
    )
    options = options or FactOptions()
    figures = attempts.run("figures", lambda: stated_figures(evidence), [])
    parameters, memory = attempts.run(
        "sizing",
        lambda: sizing_facts(evidence, figures, options.kv_batch, options.kv_dtype),
        (ParameterFacts(), MemoryFacts()),
    )
    promises = attempts.run("promises", lambda: promise_facts(evidence, now), ())
    claims = attempts.run("claims", lambda: claim_facts(evidence), ())
    extra: dict[str, Any] = {**lineage_extra, "figures": [f.to_json() for f in figures]}
    if "code_repo_choice" in evidence.notes:
        extra["code_repo_choice"] = evidence.notes["code_repo_choice"]
    if attempts.errors:
        extra["extract_errors"] = attempts.errors
    return Facts(
        license=licence,
        parameters=parameters,
        memory=memory,
        base_models=base_models,
        promises=promises,
        claims=claims,
        extra=extra,
    )
