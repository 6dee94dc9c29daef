"""Extract: turn raw evidence into facts that several checks (and the report) use."""

from __future__ import annotations

from cardaudit.model import Evidence, Facts, frozen_mapping


def build_facts(evidence: Evidence) -> Facts:
    """Every fact about ``evidence``; extractors never raise on odd input."""
    from cardaudit.extract.derivation import derivation_facts
    from cardaudit.extract.licence import licence_facts

    licence = licence_facts(evidence)
    try:
        base_models, lineage_extra = derivation_facts(evidence, licence.declared)
    except Exception:  # lineage facts are best effort; the DRV checks report what they can
        base_models, lineage_extra = (), {}
    extra = dict(lineage_extra)
    if "code_repo_choice" in evidence.notes:
        extra["code_repo_choice"] = evidence.notes["code_repo_choice"]
    return Facts(license=licence, base_models=base_models, extra=frozen_mapping(extra))
