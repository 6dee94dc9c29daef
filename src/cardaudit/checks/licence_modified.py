"""LIC010/LIC011: a licence file that differs from the text of the licence it is called.

The comparison itself is a fact (``extract/licence_diff.py``: ``LicenceMatch.modifications``);
these checks only turn each modified passage into a finding at its line: one that restricts
use is LIC010 (error), any other substantive difference LIC011 (warning).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.model import Evidence, Facts, Hit, Location, Modification
from cardaudit.rules import Rule

#: Quoted passages in messages are cut to this many characters (the evidence has more).
QUOTE = 240


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return f"“{text if len(text) <= QUOTE else text[: QUOTE - 1] + '…'}”"


def _edit(reference: str, text: str) -> str:
    """The words a changed passage replaced, "“700” → “7”", so that a long sentence cut in
    the quote still shows what changed (the first differing run of words)."""
    old, new = reference.split(), text.split()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            was, now = " ".join(old[i1:i2]), " ".join(new[j1:j2])
            return f"{_quote(was) if was else 'nothing'} → {_quote(now) if now else 'nothing'}"
    return ""


def _compared_files(
    facts: Facts,
) -> Iterator[tuple[str, str, str, str, tuple[Modification, ...]]]:
    """(repo, path, licence, reference, modifications) of every licence file compared."""
    for match in facts.license.files:
        if match.compared_with:
            yield (
                match.repo,
                match.path,
                match.identified or "",
                match.compared_with,
                match.modifications,
            )
    code: Any = facts.license.code_repo or {}
    for entry in code.get("files", ()):
        if entry.get("compared_with"):
            mods = tuple(Modification(**m) for m in entry.get("modifications", ()))
            yield "code", entry["path"], entry.get("identified") or "", entry["compared_with"], mods


def _where(repo: str, path: str) -> str:
    return path if repo == "model" else f"the code repo's {path}"


@check("LIC010")
def licence_not_restricted(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    files = list(_compared_files(facts))
    if not files:
        raise NotApplicable("no licence file identified with a reference text to compare")
    for repo, path, licence, reference, modifications in files:
        for mod in modifications:
            if not mod.restricts:
                continue
            what = "adds" if mod.kind == "added" else "changes the text to"
            category = (mod.category or "other").replace("_", " ")
            message = (
                f"{_where(repo, path)} is not the unmodified {licence} text: it {what} a passage "
                f"that restricts use ({category}) at line {mod.line}: {_quote(mod.text)}"
            )
            if mod.reference_text:
                message += f"; the original reads {_quote(mod.reference_text)}"
                edit = _edit(mod.reference_text, mod.text)
                message += f" ({edit})" if edit else ""
            message += f" (compared with {reference})"
            yield Hit(message, Location(path, mod.line, repo=repo), mod.text)


@check("LIC011")
def licence_matches_reference(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    files = list(_compared_files(facts))
    if not files:
        raise NotApplicable("no licence file identified with a reference text to compare")
    for repo, path, licence, reference, modifications in files:
        for mod in modifications:
            if mod.restricts:
                continue  # LIC010
            where = _where(repo, path)
            if mod.kind == "removed":
                dropped = (
                    f", a {mod.category.replace('_', ' ')} term"
                    if mod.category and mod.category != "other"
                    else ", a use restriction"
                    if mod.category
                    else ""
                )
                message = (
                    f"{where} drops a passage of the {licence} text{dropped} (at line "
                    f"{mod.line}): {_quote(mod.text)}; the file is not the {licence} text it "
                    f"is identified as, so the id {licence} misdescribes it — a recipient "
                    f"relying on that id should obtain the unmodified {licence} text"
                )
            elif mod.kind == "added":
                message = (
                    f"{where} adds a passage to the {licence} text at line {mod.line}: "
                    f"{_quote(mod.text)}"
                )
            else:
                message = (
                    f"{where} changes the {licence} text at line {mod.line}: "
                    f"{_quote(mod.text)}, where the original reads "
                    f"{_quote(mod.reference_text or '')}"
                )
                edit = _edit(mod.reference_text or "", mod.text)
                message += f" ({edit})" if edit else ""
            message += f" (compared with {reference})"
            yield Hit(message, Location(path, mod.line, repo=repo), mod.text)
