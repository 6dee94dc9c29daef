"""Extract: turn raw evidence into facts that several checks (and the report) use."""

from __future__ import annotations

from cardaudit.model import Evidence, Facts


def build_facts(evidence: Evidence) -> Facts:
    """Every fact about ``evidence``; extractors never raise on odd input."""
    from cardaudit.extract.claims import claim_facts
    from cardaudit.extract.derivation import derivation_facts
    from cardaudit.extract.licence import licence_facts
    from cardaudit.extract.promises import promise_facts

    licence = licence_facts(evidence)
    try:
        base_models, lineage_extra = derivation_facts(evidence, licence.declared)
    except Exception:  # lineage facts are best effort; the DRV checks report what they can
        base_models, lineage_extra = (), {}
    return Facts(
        license=licence,
        base_models=base_models,
        extra=lineage_extra,
        promises=promise_facts(evidence),
        claims=claim_facts(evidence),
    )
