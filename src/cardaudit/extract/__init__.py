"""Extract: turn raw evidence into facts that several checks (and the report) use."""

from __future__ import annotations

from cardaudit.model import Evidence, Facts


def build_facts(evidence: Evidence) -> Facts:
    """Every fact about ``evidence``; extractors never raise on odd input."""
    from cardaudit.extract.claims import claim_facts
    from cardaudit.extract.licence import licence_facts
    from cardaudit.extract.promises import promise_facts

    return Facts(
        license=licence_facts(evidence),
        promises=promise_facts(evidence),
        claims=claim_facts(evidence),
    )
