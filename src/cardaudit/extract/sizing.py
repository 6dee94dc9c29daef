"""Parameters, memory and the figures the card states, computed together (never raising)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cardaudit.model import Evidence, MemoryFacts, ParameterFacts

if TYPE_CHECKING:
    from cardaudit.extract.figures import Figure


def sizing_facts(
    evidence: Evidence, figures: Sequence[Figure], kv_batch: int, kv_dtype: str | None = None
) -> tuple[ParameterFacts, MemoryFacts]:
    """(parameter facts, memory facts); ``figures`` are the card's stated figures,
    ``kv_batch`` the batch size the KV cache is shown for beside batch 1 and ``kv_dtype``
    the cache dtype asked for (None: the serving default)."""
    from cardaudit.extract.memory import memory_facts
    from cardaudit.extract.parameters import parameter_facts

    try:
        parameters = parameter_facts(evidence)
    except Exception as exc:
        parameters = ParameterFacts(details={"error": f"{type(exc).__name__}: {exc}"})
    if evidence.base and parameters.total is not None:
        parameters = _with_bases(evidence, parameters)
    stated = [
        f.value for f in figures if f.kind == "context" and f.repo == "model" and f.about_model
    ]
    try:
        memory = memory_facts(
            evidence,
            parameters,
            int(max(stated)) if stated else None,
            kv_batch=kv_batch,
            kv_dtype=kv_dtype,
        )
    except Exception as exc:
        memory = MemoryFacts(details={"error": f"{type(exc).__name__}: {exc}"})
    return parameters, memory


def _with_bases(evidence: Evidence, parameters: ParameterFacts) -> ParameterFacts:
    """Add each base model's count to ``details.base_models`` (for lineage comparisons)."""
    from dataclasses import replace

    from cardaudit.extract.parameters import parameter_facts

    bases = []
    for base in evidence.base:
        try:
            facts = parameter_facts(base)
        except Exception:  # a base we cannot count must not lose the model's facts
            continue
        if facts.total is None:
            continue
        details = facts.details
        bases.append(
            {
                "id": base.target.id,
                "total": facts.total,
                "source": facts.source,
                "language_model": details.get("language_model", facts.total),
                "vision": details.get("vision", 0),
            }
        )
    if not bases:
        return parameters
    return replace(parameters, details={**parameters.details, "base_models": bases})
