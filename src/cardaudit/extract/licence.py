"""Licence facts: what the card declares, what the shipped texts are, what the code repo uses."""

from __future__ import annotations

from typing import Any

from cardaudit.extract.licence_id import identify_text
from cardaudit.extract.licence_table import normalise_spdx
from cardaudit.model import Evidence, LicenceFacts, LicenceMatch, RepoSnapshot

LICENCE_STEMS = ("license", "licence", "copying")


def declared_licence(metadata: Any) -> str | None:
    """The card's ``license`` value as one string (a list becomes an AND expression)."""
    value = metadata.get("license") if hasattr(metadata, "get") else None
    if value is None:
        return None
    if isinstance(value, list):
        parts = [str(item).strip() for item in value if str(item).strip()]
        return " AND ".join(parts) or None
    text = str(value).strip()
    return text or None


def licence_files(snapshot: RepoSnapshot) -> list[str]:
    """Top-level files named LICENSE*, LICENCE* or COPYING*, sorted."""
    return sorted(
        entry.path
        for entry in snapshot.files
        if "/" not in entry.path and entry.path.lower().startswith(LICENCE_STEMS)
    )


def identify_files(snapshot: RepoSnapshot, repo: str) -> tuple[LicenceMatch, ...]:
    matches = []
    for path in licence_files(snapshot):
        text = snapshot.text(path)
        if text is None:
            reason = snapshot.skipped.get(path, "not read")
            matches.append(LicenceMatch(path, None, 0.0, repo=repo, note=reason))
            continue
        found = identify_text(text.text)
        matches.append(
            LicenceMatch(path, found.licence, round(found.confidence, 4), found.also, repo=repo)
        )
    return tuple(matches)


def licence_facts(evidence: Evidence) -> LicenceFacts:
    metadata = evidence.card.metadata if evidence.card else {}
    declared = declared_licence(metadata)
    declared_spdx = normalise_spdx(declared)[0] if declared else None
    code_repo = None
    if evidence.code is not None:
        files = identify_files(evidence.code, "code")
        code_repo = {
            "id": evidence.code.id,
            "revision": evidence.code.revision,
            "files": [
                {"path": m.path, "identified": m.identified, "confidence": m.confidence}
                for m in files
            ],
            "identified": next((m.identified for m in files if m.identified), None),
        }
    name = metadata.get("license_name")
    link = metadata.get("license_link")
    return LicenceFacts(
        declared=declared,
        declared_spdx=declared_spdx,
        declared_name=str(name) if name is not None else None,
        declared_link=str(link) if link is not None else None,
        files=identify_files(evidence.repo, "model"),
        code_repo=code_repo,
    )
