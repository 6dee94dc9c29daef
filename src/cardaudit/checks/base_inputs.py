"""Which named base models a base-dependent check could not see.

A check that compares the repo with its base (licence grant, notices, copyright lines, use
restrictions, shapes, tokenizer) cannot run on a base that is named in the card, an adapter or
a mergekit config but whose files were not supplied: it ends ``not_checked`` with the reason
and the fix, never ``pass`` or ``not_applicable``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from cardaudit.checks.registry import NotApplicable, NotChecked
from cardaudit.extract.base_family import missing_bases
from cardaudit.model import BaseModelRef, Evidence, Hit


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


def checked_or_missing(evidence: Evidence, hits: Iterable[Hit], what: str) -> Iterator[Hit]:
    """Yield ``hits``; when there were none (or the rule applied to none of the bases seen)
    and some named base was not supplied, the rule ends not_checked instead of passing or
    not applying (a merge checked against one parent of two)."""
    try:
        found = list(hits)
    except NotApplicable:
        missing = not_checked(evidence, what)
        if missing is not None:  # nothing applied on the bases seen: the others are unseen
            raise missing from None
        raise
    yield from found
    if not found:
        missing = not_checked(evidence, what)
        if missing is not None:
            raise missing
