"""The licence facts that need lineage: who publishes (licensor or redistributor), every
licence statement and additional term, and the obligations they add up to."""

from __future__ import annotations

from dataclasses import replace

from cardaudit.extract.base_family import likely_parents
from cardaudit.extract.licence_statements import statement_facts
from cardaudit.extract.licensor import publisher_facts, repo_name
from cardaudit.extract.obligations import obligation_facts
from cardaudit.model import BaseModelRef, Evidence, LicenceFacts


def licence_duty_facts(
    evidence: Evidence, licence: LicenceFacts, bases: tuple[BaseModelRef, ...]
) -> LicenceFacts:
    unidentified = [m.path for m in licence.files if m.repo == "model" and m.identified is None]
    statements, terms = statement_facts(evidence, licence.prose, repo_name(evidence), unidentified)
    licence = replace(licence, publisher=publisher_facts(evidence, licence, bases))
    return replace(
        licence,
        statements=statements,
        additional_terms=terms,
        obligations=obligation_facts(licence, terms, likely_parents(evidence)),
    )
