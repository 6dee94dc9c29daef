"""Which named base models a base-dependent check could not see, and whose licence it could
not read.

A check that compares the repo with its base (licence grant, notices, copyright lines, use
restrictions, shapes, tokenizer) cannot run on a base that is named in the card, an adapter or
a mergekit config but whose files were not supplied: it ends ``not_checked`` with the reason
and the fix, never ``pass`` or ``not_applicable``. A licence-dependent check likewise cannot
judge a supplied base whose licence is not one the licence table knows (none at all, ``other``
with a text no known licence matches, an unknown id), unless the publisher owns that base
(``extract.licensor.owns_base``: its own licence does not bind it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from cardaudit.checks.registry import NotApplicable, NotChecked
from cardaudit.extract.base_family import missing_bases
from cardaudit.extract.base_licence_state import base_licence_info, base_without_licence
from cardaudit.extract.licensor import owns_base
from cardaudit.model import BaseModelRef, Evidence, Facts, Hit, RepoSnapshot


def unread_licence_files(base: Mapping[str, Any], snapshot: RepoSnapshot | None) -> list[str]:
    """The base's licence files that could not be read at all (too large, not captured)."""
    if snapshot is None:
        return []
    return [str(f["path"]) for f in base.get("files") or () if snapshot.text(f["path"]) is None]


def base_licence_gap(base: Mapping[str, Any], snapshot: RepoSnapshot | None = None) -> str | None:
    """Why the base's licence is not one the table knows (for a reason), or None."""
    if base_licence_info(base) is not None:
        return None
    if base_without_licence(base):
        return "declares no licence and ships no licence file (all rights reserved)"
    declared = base.get("declared")
    stated = f"declares `license: {declared}`" if declared else "declares no licence"
    unread = unread_licence_files(base, snapshot)
    if unread:
        return f"{stated} and its {', '.join(unread)} could not be read"
    files = [str(f["path"]) for f in base.get("files") or ()]
    if files:
        return f"{stated} and its {', '.join(files)} matches no known licence"
    return f"{stated}, which is not a licence cardaudit knows, and ships no licence file"


def unread_base_licences(evidence: Evidence, facts: Facts, what: str) -> NotChecked | None:
    """A NotChecked naming every supplied base (not the publisher's own) whose licence is not
    known, or None."""
    publisher = facts.license.publisher
    snapshots = [base.repo for base in evidence.base]
    snapshots += [None] * (len(facts.license.base) - len(snapshots))
    gaps = [
        f"{base.get('name')} {gap}"
        for base, snapshot in zip(facts.license.base, snapshots, strict=False)
        if (gap := base_licence_gap(base, snapshot)) is not None
        and not owns_base(publisher, base.get("name"), None)
    ]
    if not gaps:
        return None
    return NotChecked(
        f"{what} needs the base model's licence; the base {'; '.join(gaps)}",
        "read the base model's licence terms (ask its publisher for them when it states none) "
        "and check this by hand, then waive the rule with that reason",
    )


def _where(ref: BaseModelRef) -> str:
    location = ref.location.display()
    return f"{ref.id} ({ref.source}, {location})" if location != "-" else f"{ref.id} ({ref.source})"


def not_checked(evidence: Evidence, what: str) -> NotChecked | None:
    """A NotChecked naming every base that is named but not supplied, or None."""
    missing = missing_bases(evidence)
    if not missing:
        return None
    names = "; ".join(_where(ref) for ref in missing)
    supplied = [base.target.id for base in evidence.base]
    checked = f" (checked against {', '.join(supplied)} only)" if supplied else ""
    ids = " ".join(f"--base {ref.id}" for ref in missing)
    return NotChecked(
        f"{what} needs the base model's files; named but not supplied: {names}{checked}",
        f"audit again with {ids} (a local copy or the Hub id; repeat --base for each parent of "
        "a merge), or audit the model by its Hub id so its bases are fetched (--base-depth)",
    )


def require_bases(evidence: Evidence, what: str) -> None:
    """Raise NotChecked when no base evidence is available but bases are named."""
    if evidence.base:
        return
    missing = not_checked(evidence, what)
    if missing is not None:
        raise missing


def checked_or_missing(
    evidence: Evidence, hits: Iterable[Hit], what: str, facts: Facts | None = None
) -> Iterator[Hit]:
    """Yield ``hits``; when there were none (or the rule applied to none of the bases seen)
    and some named base was not supplied — or, given ``facts``, some supplied base's licence
    could not be read — the rule ends not_checked instead of passing or not applying (a merge
    checked against one parent of two; a base that states no licence)."""

    def unseen() -> NotChecked | None:
        missing = not_checked(evidence, what)
        if missing is None and facts is not None:
            missing = unread_base_licences(evidence, facts, what)
        return missing

    try:
        found = list(hits)
    except NotApplicable:
        missing = unseen()
        if missing is not None:  # nothing applied on the bases seen: the others are unseen
            raise missing from None
        raise
    yield from found
    if not found:
        missing = unseen()
        if missing is not None:
            raise missing
