"""ATT020+: derived code keeps its upstream's copyright and licence header and says it changed."""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.code_derivation import code_claims, derived_files
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule


def _files(evidence: Evidence):
    if evidence.code is None:
        raise NotApplicable("no code repo")
    if not code_claims(evidence):
        raise NotApplicable("no claim that the code derives from upstream code")
    files = derived_files(evidence)
    if not files:
        raise NotApplicable("no code file matches the claimed upstream")
    return files


def _first_line(evidence: Evidence, path: str) -> str | None:
    text = evidence.code.text(path) if evidence.code else None
    return text.excerpt(1) if text else None


@check("ATT020")
def upstream_header_kept(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    for item in _files(evidence):
        missing = []
        if not item.has_copyright:
            missing.append("the upstream copyright notice")
        if not item.has_licence:
            missing.append("the Apache-2.0 licence header")
        if not missing:
            continue
        claim = item.claim
        source = f"{claim.upstream} {claim.model}" if claim.model else claim.upstream
        measured = (
            f"; {item.similarity:.0%} of its lines match {item.upstream_file}"
            if item.similarity is not None
            else ""
        )
        yield Hit(
            f"{item.path} derives from {source} ({claim.location.display()}) but lacks "
            f"{' and '.join(missing)}{measured}",
            Location(item.path, 1, repo="code"),
            _first_line(evidence, item.path),
        )


@check("ATT021")
def modification_stated(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    for item in _files(evidence):
        if not (item.has_copyright and item.has_licence) or item.has_notice:
            continue
        if item.similarity is not None and item.similarity >= float(
            rule.param("unchanged_similarity", 0.999)
        ):
            continue  # an unmodified copy needs no change notice
        line = item.licence_line or 1
        text = evidence.code.text(item.path) if evidence.code else None
        yield Hit(
            f"{item.path} carries the upstream header but does not say it was modified",
            Location(item.path, line, repo="code"),
            text.excerpt(line) if text else None,
        )
