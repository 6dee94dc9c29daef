"""Parameters, memory and the figures the card states, computed together (never raising)."""

from __future__ import annotations

from typing import Any

from cardaudit.model import Evidence, MemoryFacts, ParameterFacts


def sizing_facts(evidence: Evidence) -> tuple[ParameterFacts, MemoryFacts, list[dict[str, Any]]]:
    """(parameter facts, memory facts, stated figures as JSON-ready dicts)."""
    from cardaudit.extract.figures import stated_figures
    from cardaudit.extract.memory import memory_facts
    from cardaudit.extract.parameters import parameter_facts

    try:
        figures = stated_figures(evidence)
    except Exception:  # prose is arbitrary text: a pattern bug must not lose the audit
        figures = []
    try:
        parameters = parameter_facts(evidence)
    except Exception as exc:
        parameters = ParameterFacts(details={"error": f"{type(exc).__name__}: {exc}"})
    if evidence.base and parameters.total is not None:
        parameters = _with_bases(evidence, parameters)
    stated = [f.value for f in figures if f.kind == "context" and f.repo == "model"]
    try:
        memory = memory_facts(evidence, parameters, int(max(stated)) if stated else None)
    except Exception as exc:
        memory = MemoryFacts(details={"error": f"{type(exc).__name__}: {exc}"})
    return parameters, memory, [figure.to_json() for figure in figures]


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
