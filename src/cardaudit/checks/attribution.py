"""ATT rules: notice and attribution duties that the licence puts on redistributors."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from cardaudit.checks.base_inputs import checked_or_missing, require_bases, unread_base_licences
from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.base_licence_state import base_licence_info
from cardaudit.extract.licence_table import LicenceInfo, expression_ids, lookup, same_licence
from cardaudit.extract.licensor import (
    basis,
    duty_context,
    is_licensor,
    link_into_repo,
    owns_base,
    repo_org,
)
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule

WORD = re.compile(r"[a-z0-9]+")


def card_location(evidence: Evidence, key: str = "license") -> Location:
    card = evidence.card
    if card is None:
        return Location(None)
    return Location(card.path, card.key_line(key) or 1, key)


def _declared_infos(facts: Facts) -> list[LicenceInfo]:
    infos = [lookup(i) for i in expression_ids(facts.license.declared)]
    return [info for info in infos if info is not None]


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("©", " c "))


def contains(haystack: str, needle: str) -> bool:
    """Whether ``needle``'s words appear, in order and contiguous, in ``haystack``
    (case, punctuation and line breaks ignored)."""
    words = _words(needle)
    return bool(words) and " ".join(words) in " ".join(_words(haystack))


def _is_licensor(evidence: Evidence, facts: Facts, info: LicenceInfo) -> bool:
    """Whether the publisher is the licensor of ``info`` (extract/licensor.py decides, with
    evidence; the licence table's licensor orgs when that fact is missing)."""
    if facts.license.publisher is not None:
        return is_licensor(facts.license.publisher, info)
    return repo_org(evidence) in {org.lower() for org in info.licensor_orgs}


def _licensor_note(evidence: Evidence, facts: Facts, what: str) -> str:
    """The licensor's version of a missing-terms finding: a warning that says why."""
    publisher = facts.license.publisher or {}
    note = (
        f"; recipients can't find the terms. {publisher.get('org') or 'The publisher'} is the "
        f"licensor ({basis(publisher)}), so the licence's redistribution duty does not bind "
        f"this repo, but {what} tells recipients what they may do"
    )
    return note + _link_note(evidence, facts)


def _link_note(evidence: Evidence, facts: Facts) -> str:
    """Where the card's ``license_link`` points, when it points into this repo."""
    target = link_into_repo(evidence, facts.license.declared_link)
    if target is None:
        return ""
    if not evidence.repo.has(target):
        return f"; the card's `license_link` points to {target} in this repo, which is not there"
    return f"; the card's `license_link` points to {target} in this repo"


def owned_base(facts: Facts, base: dict, info: LicenceInfo | None) -> bool:
    """Whether the publisher owns this base (its own licence's duties do not bind it)."""
    return owns_base(facts.license.publisher, base.get("name"), info)


def owner_reason(facts: Facts, names: Sequence[str]) -> str:
    publisher = facts.license.publisher or {}
    return (
        f"{publisher.get('org')} publishes the base model {', '.join(names)} itself and is its "
        f"licensor ({basis(publisher)}): a rights holder is not bound by its own public licence"
    )


def texts(evidence: Evidence, paths: Sequence[str]) -> str:
    return "\n".join(t.text for p in paths if (t := evidence.repo.text(p)) is not None)


@check("ATT001")
def licence_text_shipped(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    infos = [i for i in _declared_infos(facts) if i.duty("ship_text")]
    if not infos:
        raise NotApplicable("declared licence does not require shipping its text")
    declared = _declared_infos(facts)
    files = facts.license.files
    if any(evidence.repo.text(m.path) is None for m in files):
        raise NotApplicable("a licence file could not be read (SRC003)")
    for info in infos:
        licensor = _is_licensor(evidence, facts, info)
        for hit in _copy_hits(evidence, facts, info, declared):
            if licensor:  # the licensor's own repo: hygiene, not a breach
                note = _licensor_note(evidence, facts, f"a copy of the {info.name}")
                yield replace(hit, message=hit.message + note, severity="warning")
            else:
                context = duty_context(evidence, facts.license.publisher)
                yield replace(hit, message=hit.message + context + _link_note(evidence, facts))


def _copy_hits(
    evidence: Evidence, facts: Facts, info: LicenceInfo, declared: list[LicenceInfo]
) -> Iterator[Hit]:
    """What is missing of ``info``'s text: a link, a part, no file, another licence."""
    files = facts.license.files
    full = [m for m in files if m.complete and not m.link and (m.identified or m.note is None)]
    if any(m.identified and same_licence(m.identified, info.hub_id) and m.complete for m in files):
        return
    if any(m.identified is None and m.link is None and m.confidence > 0 for m in files):
        return  # an unidentified text (LIC005) may be the licence: not claimed missing
    if any(
        m.identified and not any(same_licence(m.identified, d.hub_id) for d in declared)
        for m in full
    ):
        return  # an undeclared licence ships instead: LIC004 reports the mismatch
    link = next((m for m in files if m.link), None)
    part = next((m for m in files if m.identified and not m.complete), None)
    if link is not None:
        yield Hit(
            f"{link.path} holds only a link ({link.link}); {info.name} requires a full copy "
            "of the licence text, and a link is not a copy",
            Location(link.path, 1),
            link.link,
        )
    elif part is not None:
        yield Hit(
            f"{part.path} holds only part of the {info.name} text; a full copy must ship",
            Location(part.path, 1),
        )
    elif not files:
        yield Hit(
            f"{info.name} requires a full copy of the licence with the model, but the repo "
            "ships no LICENSE file",
            card_location(evidence),
            f"license: {facts.license.declared}",
        )
    else:
        shipped = ", ".join(f"{m.path} ({m.identified})" for m in files)
        yield Hit(
            f"{info.name} requires a full copy of the licence with the model; the repo ships "
            f"{shipped} but no copy of {info.name}",
            card_location(evidence),
            f"license: {facts.license.declared}",
        )


def _upstream_notices(evidence: Evidence, facts: Facts) -> list[tuple[str, str, str, str]]:
    """(repo, id, path, text) of each NOTICE shipped by a base model or the code repo whose
    licence carries a NOTICE duty."""
    found = []
    for base, base_facts in zip(evidence.base, facts.license.base, strict=False):
        info = base_licence_info(base_facts)
        if info is None or not info.duty("carry_notice") or info.duty("notice_text"):
            continue
        if owned_base(facts, base_facts, info):
            continue
        for path in base_facts.get("notices", ()):
            text = base.repo.text(path)
            if text is not None and text.text.strip():
                found.append(("base", base_facts["name"], path, text.text))
    return found


@check("ATT002")
def upstream_notice_carried(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    what = "whether the base model's NOTICE is carried"
    upstream = list(_upstream_notices(evidence, facts))
    if not upstream and not (facts.license.code_repo and evidence.code is not None):
        require_bases(evidence, what)
    yield from checked_or_missing(evidence, _notice_hits(evidence, facts, upstream), what, facts)


def _notice_hits(
    evidence: Evidence, facts: Facts, upstream: list[tuple[str, str, str, str]]
) -> Iterator[Hit]:
    code = facts.license.code_repo
    if code and evidence.code is not None:
        info = lookup(code.get("identified"))
        if info is not None and info.duty("carry_notice"):
            for path in code.get("notices", ()):
                text = evidence.code.text(path)
                if text is not None and text.text.strip():
                    upstream.append(("code", evidence.code.id, path, text.text))
    if not upstream:
        raise NotApplicable("no upstream NOTICE under a licence that requires carrying it")
    ours = texts(evidence, facts.license.notices)
    for repo, ident, path, text in upstream:
        lines = [line.strip() for line in text.splitlines() if len(_words(line)) >= 3]
        missing = [line for line in lines if not contains(ours, line)]
        if not missing:
            continue
        where = (
            Location(facts.license.notices[0], 1)
            if facts.license.notices
            else card_location(evidence)
        )
        what = "ships no NOTICE file" if not facts.license.notices else "omits its notices"
        yield Hit(
            f"the {repo} repo {ident} ships {path}, which Apache-2.0 §4(d) requires derivatives "
            f"to carry, but this model "
            f"{what}: {len(missing)} of {len(lines)} attribution line(s) are missing",
            where,
            missing[0][:200],
        )


def _model_name(evidence: Evidence) -> tuple[str, Location]:
    """The model's name: card ``model_name``, else the Hub repo name (a Hub id, or a local
    copy named ``owner__name``), else the card's first heading, else the folder name."""
    card = evidence.card
    folder = evidence.repo.id.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    if card is not None:
        value = card.metadata.get("model_name")
        if isinstance(value, str) and value.strip():
            return value.strip(), Location(card.path, card.key_line("model_name"), "model_name")
    if evidence.repo.kind == "hub" or "__" in folder:
        return folder.split("__", 1)[-1], Location(card.path if card else None, 1)
    if card is not None:
        match = re.search(r"^#\s+(.+?)\s*#*\s*$", card.body, re.MULTILINE)
        if match:
            line = card.file.line_at(max(card.raw.find(card.body), 0) + match.start())
            return match.group(1).strip(), Location(card.path, line)
    return folder, Location(card.path if card else None, 1)


def _is_derivative(evidence: Evidence) -> bool:
    card = evidence.card
    return bool(evidence.base) or bool(card is not None and card.metadata.get("base_model"))


def _duty_infos(evidence: Evidence, facts: Facts, duty: str) -> list[LicenceInfo]:
    """Licences (declared, or of a base) that put ``duty`` on this repo."""
    infos = [i for i in _declared_infos(facts) if i.duty(duty)]
    for base in facts.license.base:
        info = base_licence_info(base)
        if info is not None and info.duty(duty) and info not in infos:
            infos.append(info)
    return [i for i in infos if not _is_licensor(evidence, facts, i)]


def _unless_base_licence_unread(evidence: Evidence, facts: Facts, what: str) -> None:
    """A duty no known licence puts on this derivative may still come from a supplied base
    whose licence is not known: then the rule is not_checked, not not_applicable."""
    if _is_derivative(evidence):
        missing = unread_base_licences(evidence, facts, what)
        if missing is not None:
            raise missing


@check("ATT003")
def name_prefix(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    infos = _duty_infos(evidence, facts, "name_prefix")
    if not infos or not _is_derivative(evidence):
        _unless_base_licence_unread(evidence, facts, "whether a licence requires a name prefix")
        raise NotApplicable("no naming duty, or not a derivative")
    name, location = _model_name(evidence)
    for info in infos:
        prefix = info.duty("name_prefix")
        if not name.lower().startswith(prefix.lower()):
            yield Hit(
                f'{info.name} requires a derivative model\'s name to begin with "{prefix}"; '
                f'this model is named "{name}"',
                location,
                name,
            )


@check("ATT004")
def attribution_phrase(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    infos = _duty_infos(evidence, facts, "attribution_phrase")
    if not infos or not _is_derivative(evidence):
        _unless_base_licence_unread(evidence, facts, "whether a licence requires an attribution")
        raise NotApplicable("no attribution phrase required, or not a derivative")
    card = evidence.card
    text = card.raw if card else ""
    for info in infos:
        phrase = info.duty("attribution_phrase")
        if not contains(text, phrase):
            yield Hit(
                f'{info.name} requires "{phrase}" to be displayed prominently; the model '
                "card does not show it",
                card_location(evidence),
                f"license: {facts.license.declared}",
            )


@check("ATT005")
def notice_file(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    infos = _duty_infos(evidence, facts, "notice_text")
    own = [  # the licensor's repo: a Notice matters only when its licence text is absent too
        i
        for i in _declared_infos(facts)
        if i.duty("notice_text")
        and _is_licensor(evidence, facts, i)
        and not any(
            m.identified and same_licence(m.identified, i.hub_id) for m in facts.license.files
        )
    ]
    if not infos and not own:
        _unless_base_licence_unread(evidence, facts, "whether a licence prescribes a Notice")
        raise NotApplicable("no licence prescribes a Notice text, or the licensor ships its terms")
    ours = texts(evidence, facts.license.notices)
    for info in own:
        notice = info.duty("notice_text")
        if not contains(ours, notice):
            what = f"the {info.name} Notice (or the licence itself)"
            yield Hit(
                f"{info.name} prescribes a Notice text; neither it nor the licence ships"
                + _licensor_note(evidence, facts, what),
                card_location(evidence),
                notice[:200],
                severity="warning",
            )
    for info in infos:
        notice = info.duty("notice_text")
        if contains(ours, notice):
            continue
        if facts.license.notices:
            where = Location(facts.license.notices[0], 1)
            message = f"{facts.license.notices[0]} does not contain the notice {info.name} requires"
        else:
            where = card_location(evidence)
            message = f'{info.name} requires a "Notice" text file holding its notice; none ships'
        yield Hit(message + duty_context(evidence, facts.license.publisher), where, notice[:200])
