"""Extract: turn raw evidence into facts that several checks (and the report) use."""

from __future__ import annotations

from cardaudit.model import Evidence, Facts, frozen_mapping


def build_facts(evidence: Evidence) -> Facts:
    """Every fact about ``evidence``; extractors never raise on odd input."""
    from cardaudit.extract.licence import licence_facts

    extra = {}
    if "code_repo_choice" in evidence.notes:
        extra["code_repo_choice"] = evidence.notes["code_repo_choice"]
    return Facts(license=licence_facts(evidence), extra=frozen_mapping(extra))
