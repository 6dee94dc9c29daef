"""Licence facts: what the card declares and says, what the shipped texts are, what the code
repo and the base model use."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from cardaudit.extract.licence_diff import compare_file
from cardaudit.extract.licence_id import identify_text
from cardaudit.extract.licence_reading import governing_titles, own_clause, subject_of
from cardaudit.extract.licence_table import licence_table, normalise_spdx
from cardaudit.extract.reuse import reuse_facts, reuse_licence_files
from cardaudit.model import Card, Evidence, LicenceFacts, LicenceMatch, RepoSnapshot

LICENCE_STEMS = ("license", "licence", "copying")
NOTICE_STEMS = ("notice",)

#: "released under the Apache License 2.0", "licensed under MIT", ...
PROSE = re.compile(
    r"\b(?:released|licen[cs]ed|distributed|available|provided|publish(?:ed)?|made available)"
    r"\s+(?:[\w-]+\s+){0,3}?under\s+(?:the\s+(?:terms\s+of\s+(?:the\s+)?)?)?"
    r"(?P<name>(?:[^\n.;:,()]|\.(?=\d)){2,90})",
    re.IGNORECASE,
)
UPSTREAM = re.compile(
    r"\b(?:upstream|base|original(?:ly)?|parent|underlying|derived)\b", re.IGNORECASE
)
MARKDOWN_LINK = re.compile(r"\[([^\[\]]*+)\]\([^)\[\]]*+\)")
NOISE = re.compile(r"\b(?:the|licen[cs]e|agreement|version|v|terms|of|use)\b|[^a-z0-9+]", re.I)


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


def _top_level(snapshot: RepoSnapshot, stems: tuple[str, ...]) -> list[str]:
    return sorted(
        entry.path
        for entry in snapshot.files
        if "/" not in entry.path and entry.path.lower().startswith(stems)
    )


def licence_files(snapshot: RepoSnapshot) -> list[str]:
    """Top-level files named LICENSE*, LICENCE* or COPYING*, then the REUSE layout's
    ``LICENSES/<id>.txt`` texts."""
    return _top_level(snapshot, LICENCE_STEMS) + reuse_licence_files(snapshot)


def notice_files(snapshot: RepoSnapshot) -> list[str]:
    """Top-level NOTICE / Notice / NOTICE.md files, sorted."""
    return _top_level(snapshot, NOTICE_STEMS)


def identify_files(snapshot: RepoSnapshot, repo: str) -> tuple[LicenceMatch, ...]:
    matches = []
    for path in licence_files(snapshot):
        text = snapshot.text(path)
        if text is None:
            reason = snapshot.skipped.get(path, "not read")
            matches.append(LicenceMatch(path, None, 0.0, repo=repo, note=reason))
            continue
        found = identify_text(text.text)
        comparison = (
            compare_file(text.text, found.licence, found.also)
            if found.licence and found.complete
            else None
        )
        matches.append(
            LicenceMatch(
                path,
                found.licence,
                round(found.confidence, 4),
                found.also,
                repo=repo,
                note=found.note,
                engine=found.engine,
                complete=found.complete,
                link=found.link,
                modifications=comparison.modifications if comparison else (),
                compared_with=(
                    f"{comparison.reference} ({comparison.source})"
                    if comparison and not comparison.note
                    else None
                ),
                compare_note=comparison.note if comparison else None,
            )
        )
    return tuple(matches)


def _match_json(match: LicenceMatch) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": match.path,
        "identified": match.identified,
        "confidence": match.confidence,
        "also": list(match.also),
    }
    if match.note:
        data["note"] = match.note
    data.update(modification_json(match))
    return data


def modification_json(match: LicenceMatch) -> dict[str, Any]:
    """The comparison fields of a licence file in the JSON report (only those that are set)."""
    data: dict[str, Any] = {}
    if match.compared_with:
        data["compared_with"] = match.compared_with
    if match.compare_note:
        data["compare_note"] = match.compare_note
    if match.compared_with or match.modifications:
        data["modifications"] = [
            {
                "kind": m.kind,
                "text": m.text,
                "line": m.line,
                **({"reference_text": m.reference_text} if m.reference_text else {}),
                "restricts": m.restricts,
                **({"category": m.category} if m.category else {}),
            }
            for m in match.modifications
        ]
    return data


# --------------------------------------------------------------------------- prose


def _normal(text: str) -> str:
    return NOISE.sub("", MARKDOWN_LINK.sub(r"\1", text).lower())


def _name_keys() -> list[tuple[str, str]]:
    """(normalised name, hub id), longest first, from every table entry's names."""
    keys: dict[str, str] = {}
    for hub_id, info in licence_table().items():
        if hub_id in ("other", "unknown", "cc"):
            continue
        for name in (hub_id, info.spdx or "", info.name):
            key = _normal(name)
            if len(key) >= 3:
                keys.setdefault(key, hub_id)
    keys.setdefault("apache20", "apache-2.0")
    keys.setdefault("apache2", "apache-2.0")
    return sorted(keys.items(), key=lambda item: -len(item[0]))


def licence_named(phrase: str) -> str | None:
    """The table's Hub id for a licence name written in prose, or None."""
    text = _normal(phrase)
    for key, hub_id in _name_keys():
        if text.startswith(key):
            return hub_id
    return None


#: "Code: MIT", "- **Weights**: CC BY-NC 4.0" (a label naming what the licence is for).
LABELLED = re.compile(
    r"(?:^|(?<=[.;\n]))[ \t]*+(?:[-*+][ \t]++)?(?:\*\*|__)?(?P<object>[\w][\w \t-]{0,30}?)"
    r"(?:\*\*|__)?[ \t]*+[:：][ \t]*+(?:\*\*|__)?(?P<name>[^\n;:,()*]{2,40}?)(?:\*\*|__)?"
    r"[ \t]*+(?=[.;,]?(?:\s|$))",
    re.MULTILINE,
)
COLON_LINE = re.compile(r"^[^\n:：]*+[:：][^\n]*+", re.MULTILINE)
#: "The training code is Apache 2.0", "the weights are CC-BY-NC-4.0".
COPULA = re.compile(
    r"\b(?:is|are)[ \t]++(?:(?:also|all|both)[ \t]++)?(?P<name>(?:[^\n.;:,()]|\.(?=\d)){2,40}?)"
    r"[ \t]*+(?=[;,]|\.(?:\s|$)|$)",
    re.MULTILINE,
)
CLAUSE_END = re.compile(r"[.;。；]\s|\n\s*\n|[;；]")


def _clause_start(body: str, at: int) -> int:
    """Where the clause holding ``at`` begins (after a sentence end, a semicolon or a blank
    line): its subject says what the licence named in it is for."""
    ends = [m.end() for m in CLAUSE_END.finditer(body, max(0, at - 400), at)]
    return ends[-1] if ends else max(0, at - 400)


def _named_exactly(phrase: str) -> str | None:
    """The Hub id when the phrase is a licence name and nothing more ("Apache 2.0",
    "CC-BY-NC-4.0"): a label or a copula names a licence only so."""
    return _exact_keys().get(_normal(phrase))


@cache
def _exact_keys() -> dict[str, str]:
    return dict(reversed(_name_keys()))  # the first (longest-first) entry of a key wins


def _statement_matches(body: str) -> list[tuple[int, int, str, str | None]]:
    """(start, end, licence, what the clause governs) of every licence statement: "released
    / licensed under X", "Code: X", "the weights are X" (the last two name what they are for,
    and only count when they do)."""
    found: list[tuple[int, int, str, str | None]] = []
    for match in PROSE.finditer(body):
        licence = licence_named(match.group("name"))
        if licence is not None:
            start = _clause_start(body, match.start())
            found.append(
                (match.start(), match.end(), licence, subject_of(body[start : match.start()]))
            )
    labelled = (
        match
        for line in COLON_LINE.finditer(body)  # the label pattern only where a colon is
        for match in LABELLED.finditer(body, line.start(), line.end())
    )
    for match in labelled:
        licence = _named_exactly(match.group("name"))
        if licence is None:
            continue
        about = subject_of(match.group("object"))
        if about in ("model", "code"):
            found.append((match.start("object"), match.end(), licence, about))
    for match in COPULA.finditer(body):
        licence = _named_exactly(match.group("name"))
        if licence is None:
            continue
        start = _clause_start(body, match.start())
        about = subject_of(body[start : match.start()])
        if about in ("model", "code"):
            found.append((start, match.end(), licence, about))
    found.sort()
    return [
        f for i, f in enumerate(found) if not any(f[0] < e and f[1] > s for s, e, *_ in found[:i])
    ]


def _governed(body: str) -> list[tuple[int, int, str | None, str | None, str]]:
    """(start, end, licence id or None, about, title) of each clause that puts the model
    under a licence by its title ("使用本模型需遵守《XX模型社区许可协议》")."""
    found = []
    for start, end in _clauses(body):
        clause = body[start:end]
        for offset, title in governing_titles(clause):
            about = subject_of(clause[:offset])
            if about in ("code", "data"):
                continue
            inner = title.strip("《》「」『』")
            found.append(
                (start + offset, start + offset + len(title), licence_named(inner), about, title)
            )
    return found


def _clauses(body: str) -> list[tuple[int, int]]:
    """(start, end) of each clause of the body that holds a licence title: a cheap scan."""
    spans: list[tuple[int, int]] = []
    for match in re.finditer(r"[《「『]|\b(?:License|Licence|Agreement)\b", body):
        if spans and match.start() < spans[-1][1]:
            continue  # in the clause already taken: each clause is scanned once
        start = _clause_start(body, match.start())
        end_match = CLAUSE_END.search(body, match.end())
        end = end_match.start() if end_match else len(body)
        if not spans or start >= spans[-1][1]:
            spans.append((start, end))
    return spans


def names_without_version(phrase: str, hub_id: str) -> bool:
    """Whether a licence title names the licence ``hub_id`` without its version ("a
    CC-BY-NC License" for cc-by-nc-4.0): the title's name is the start of one of its names."""
    text = _normal(phrase)
    info = licence_table().get(hub_id)
    names = (hub_id, *((info.spdx or "", info.name) if info is not None else ()))
    return len(text) >= 4 and any(_normal(name).startswith(text) for name in names if name)


def prose_statements(card: Card | None) -> tuple[dict[str, Any], ...]:
    """Each licence statement in the card body — one that names a licence the table knows,
    or puts the model under a licence by its title — with its line and, when its clause
    names it, what it is for (``about``: model, code, data)."""
    if card is None or not card.body:
        return ()
    body = card.body
    body_offset = max(card.raw.find(body), 0)
    statements = [(s, e, lic, about, None) for s, e, lic, about in _statement_matches(body)]
    for item in _governed(body):
        if not any(item[0] < e and item[1] > s for s, e, *_ in statements):
            statements.append(item)
    found = []
    for start, end, licence, about, title in sorted(statements, key=lambda s: s[0]):
        line = card.file.line_at(body_offset + start)
        sentence_start = max(body.rfind(".", 0, start), body.rfind("\n\n", 0, start))
        if UPSTREAM.search(own_clause(body[sentence_start + 1 : end])):
            continue  # "the upstream model is licensed under …": about the base, not this model
        item: dict[str, Any] = {"path": card.path, "line": line, "text": card.file.excerpt(line)}
        item["licence"] = licence
        if licence is None:
            item["name"] = title
        if about is not None:
            item["about"] = about
        found.append(item)
    return tuple(found)


# --------------------------------------------------------------------------- facts


def _code_repo_facts(snapshot: RepoSnapshot) -> dict[str, Any]:
    files = identify_files(snapshot, "code")
    return {
        "id": snapshot.id,
        "revision": snapshot.revision,
        "files": [_match_json(m) for m in files],
        "identified": next((m.identified for m in files if m.identified), None),
        "notices": notice_files(snapshot),
        **({"reuse": reuse} if (reuse := reuse_facts(snapshot)) else {}),
    }


def _base_names(metadata: Any, bases: tuple[Evidence, ...]) -> list[str | None]:
    """The card's ``base_model`` name of each given base repo: the name that matches the
    repo's id, else the name in the same position when the counts line up."""
    from cardaudit.extract.lineage import same_model

    value = metadata.get("base_model") if hasattr(metadata, "get") else None
    names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names = [str(name) for name in names]
    positional = names if len(names) == len(bases) else [None] * len(bases)
    found: list[str | None] = []
    for base, fallback in zip(bases, positional, strict=True):
        ids = (base.repo.id, base.target.id)
        found.append(next((n for n in names if any(same_model(n, i) for i in ids)), fallback))
    return found


def _base_facts(base: Evidence, name: str | None) -> dict[str, Any]:
    metadata = base.card.metadata if base.card and not base.card.error else {}
    files = identify_files(base.repo, "base")
    return {
        "id": base.repo.id,
        "name": name or base.repo.id,
        "declared": declared_licence(metadata),
        "files": [_match_json(m) for m in files],
        "identified": next((m.identified for m in files if m.identified), None),
        "notices": notice_files(base.repo),
    }


def licence_facts(evidence: Evidence) -> LicenceFacts:
    card = evidence.card
    metadata = card.metadata if card is not None else {}
    declared = declared_licence(metadata)
    declared_spdx = normalise_spdx(declared)[0] if declared else None
    name = metadata.get("license_name")
    link = metadata.get("license_link")
    return LicenceFacts(
        declared=declared,
        declared_spdx=declared_spdx,
        declared_name=str(name) if name is not None else None,
        declared_link=str(link) if link is not None else None,
        files=identify_files(evidence.repo, "model"),
        code_repo=_code_repo_facts(evidence.code) if evidence.code is not None else None,
        prose=prose_statements(card),
        notices=tuple(notice_files(evidence.repo)),
        reuse=reuse_facts(evidence.repo),
        base=tuple(
            _base_facts(base, name)
            for base, name in zip(evidence.base, _base_names(metadata, evidence.base), strict=True)
        ),
    )
