"""Extract: turn raw evidence into facts that several checks (and the report) use."""

from __future__ import annotations

from cardaudit.model import Evidence, Facts


def build_facts(evidence: Evidence) -> Facts:
    """Every fact about ``evidence``; extractors never raise on odd input."""
    from cardaudit.extract.licence import licence_facts
    from cardaudit.extract.sizing import sizing_facts

    parameters, memory, figures = sizing_facts(evidence)
    return Facts(
        license=licence_facts(evidence),
        parameters=parameters,
        memory=memory,
        extra={"figures": figures},
    )
