"""LIC rules: the declared licence, the shipped licence texts, and how they agree."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cardaudit.checks.code_repo_name import code_repo_label
from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.code_licence import readme_licence_statements
from cardaudit.extract.licence import names_without_version
from cardaudit.extract.licence_reading import file_governs
from cardaudit.extract.licence_table import expression_ids, lookup, normalise_spdx, same_licence
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule

URL = re.compile(r"^https?://\S+$", re.IGNORECASE)


def _card_location(evidence: Evidence, key: str) -> Location:
    card = evidence.card
    if card is None:
        return Location(None)
    return Location(card.path, card.key_line(key) or 1, key)


def _needs_card(evidence: Evidence) -> None:
    if evidence.card is None or evidence.card.error:
        raise NotApplicable("no readable model card")


@check("LIC001")
def declared_licence_present(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_card(evidence)
    if not facts.license.declared:
        yield Hit(
            "the model card declares no licence (no `license:` in its YAML front matter)",
            Location(evidence.card.path, 1, "license"),
        )


@check("LIC002")
def declared_licence_known(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_card(evidence)
    declared = facts.license.declared
    if not declared:
        raise NotApplicable("no declared licence")
    if lookup(declared) is not None:
        return
    _spdx, error = normalise_spdx(declared)
    if error:
        yield Hit(
            f"`license: {declared}` is neither a Hugging Face licence id nor a valid SPDX "
            f"expression ({error})",
            _card_location(evidence, "license"),
            f"license: {declared}",
        )


@check("LIC003")
def other_licence_named_and_linked(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_card(evidence)
    if (facts.license.declared or "").lower() != "other":
        raise NotApplicable("licence is not `other`")
    location = _card_location(evidence, "license")
    if not facts.license.declared_name:
        yield Hit(
            "`license: other` without `license_name`: readers cannot tell which licence applies",
            location,
            "license: other",
        )
    link = facts.license.declared_link
    if not link:
        yield Hit(
            "`license: other` without `license_link`: the licence terms are not reachable",
            location,
            "license: other",
        )
    elif not URL.match(link) and not evidence.repo.has(link.removeprefix("./").lstrip("/")):
        yield Hit(
            f"`license_link: {link}` is neither a URL nor a file in the repo",
            _card_location(evidence, "license_link"),
            f"license_link: {link}",
        )


# --------------------------------------------------------------------------- shipped texts


def _declared_ids(facts: Facts) -> list[str]:
    return [i for i in expression_ids(facts.license.declared) if i.lower() not in ("other",)]


def _file_location(evidence: Evidence, path: str, repo: str = "model") -> tuple[Location, str]:
    snapshot = {"model": evidence.repo, "code": evidence.code}.get(repo) or evidence.repo
    text = snapshot.text(path)
    first = next((line.strip() for line in (text.lines if text else []) if line.strip()), "")
    return Location(path, 1, repo=repo), first[:200]


@check("LIC004")
def shipped_text_matches_declared(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    declared = _declared_ids(facts)
    if not declared or (facts.license.declared or "").lower() == "unknown":
        raise NotApplicable("no declared licence to compare with")
    if any(lookup(d) is None and normalise_spdx(d)[1] for d in declared):
        raise NotApplicable("the declared licence is not a known id (LIC002)")
    identified = [m for m in facts.license.files if m.identified]
    if not identified:
        raise NotApplicable("no identified licence file")
    # LICENSE-CODE, code/LICENSE: the code's licence, not the weights' (LIC006 reads the card)
    identified = [m for m in identified if file_governs(m.path) != "code"]
    if not identified:
        raise NotApplicable("the only identified licence files are named for the code")
    for match in identified:
        if any(same_licence(match.identified, d) for d in declared):
            continue
        location, first = _file_location(evidence, match.path)
        yield Hit(
            f"{match.path} holds the {match.identified} text (confidence {match.confidence:.2f}), "
            f"but the card declares `license: {facts.license.declared}`",
            location,
            first,
        )


@check("LIC005")
def licence_file_identified(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    files = facts.license.files
    if not files:
        raise NotApplicable("no licence file")
    for match in files:
        if match.identified or match.link or evidence.repo.text(match.path) is None:
            continue  # identified, a bare link (ATT001), or unreadable (SRC003)
        location, first = _file_location(evidence, match.path)
        reason = match.note or "no engine recognised the text"
        yield Hit(
            f"{match.path} could not be identified as a known licence ({reason}); a reviewer "
            "must read it",
            location,
            first or None,
        )


@check("LIC006")
def prose_agrees_with_declared(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    _needs_card(evidence)
    declared = _declared_ids(facts)
    if not declared or not facts.license.prose:
        raise NotApplicable("no declared licence or no licence sentence in the card")
    code_licence = (facts.license.code_repo or {}).get("identified")
    for statement in facts.license.prose:
        said = statement.get("licence") or statement.get("name")
        about = statement.get("about")
        if not said or about in ("code", "data"):
            continue  # "Code: MIT", "the dataset is CC BY": not the weights' licence
        if statement.get("licence") and any(same_licence(said, d) for d in declared):
            continue
        if not statement.get("licence") and any(names_without_version(said, d) for d in declared):
            continue  # "governed by a CC-BY-NC License" under cc-by-nc-4.0
        if (
            code_licence
            and same_licence(said, code_licence)
            and re.search(r"\bcode\b", statement["text"], re.IGNORECASE)
        ):
            continue  # "the code is released under MIT": about the code repo, not the weights
        location = Location(statement["path"], statement["line"])
        if not statement.get("licence"):  # "使用本模型需遵守《XX模型社区许可协议》"
            yield Hit(
                f"the card puts the model under {said}, a licence other than the one its front "
                f"matter declares (`license: {facts.license.declared}`): which terms govern "
                "the weights is ambiguous",
                location,
                statement["text"],
                severity="error" if about == "model" else None,
            )
            continue
        if about == "model":  # the sentence names the weights: the front matter misstates them
            yield Hit(
                f"the card gives the model weights {said}, but its front matter declares "
                f"`license: {facts.license.declared}`: the Hub shows and filters by a licence "
                "the weights do not have",
                location,
                statement["text"],
                severity="error",
            )
            continue
        yield Hit(
            f"the card says the model is under {said}, but its front matter declares "
            f"`license: {facts.license.declared}`",
            location,
            statement["text"],
        )


# --------------------------------------------------------------------------- code repo


def _card_mentions(evidence: Evidence, licence: str) -> bool:
    card = evidence.card
    if card is None:
        return False
    info = lookup(licence)
    names = {licence, *(filter(None, (info.spdx, info.name, info.hub_id) if info else ()))}
    body = card.raw.lower()
    return any(name.lower() in body for name in names)


@check("LIC008")
def code_licence_matches_model(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    code = facts.license.code_repo
    if code is None:
        raise NotApplicable("no code repo given (--code)")
    code_licence = code.get("identified")
    declared = _declared_ids(facts)
    if not code_licence or not declared:
        raise NotApplicable("code or model licence unknown")
    if any(same_licence(code_licence, d) for d in declared):
        return
    path = next(f["path"] for f in code["files"] if f["identified"] == code_licence)
    location, first = _file_location(evidence, path, "code")
    if _card_mentions(evidence, code_licence):
        return  # different, and the card says so: legitimate and visible
    yield Hit(
        f"the code repo is under {code_licence} but the weights declare "
        f"`license: {facts.license.declared}`, and the card does not say which licence "
        "covers the code",
        location,
        first,
    )


@check("LIC009")
def code_repo_licensed(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    code = facts.license.code_repo
    if code is None:
        raise NotApplicable("no code repo given (--code)")
    if code.get("identified"):
        return
    name = code_repo_label(evidence)
    if not code["files"]:
        stated = readme_licence_statements(evidence.code)
        if stated:  # the README says which licence: not all rights reserved, just no text
            first = stated[0]
            said = ", ".join(dict.fromkeys(s["licence"] or "a licence badge" for s in stated))
            yield Hit(
                f"the code repo {name} ships no licence text (no LICENSE, COPYING or "
                f"LICENSES/ file), though its {first['path']} states {said} "
                f"({first['kind']}, line {first['line']}): recipients cannot read the terms",
                Location(first["path"], first["line"], repo="code"),
                first["text"],
            )
            return
        readme = (
            next(iter(evidence.code.find("README.md", "README.rst", "README")))
            if (evidence.code and evidence.code.find("README.md", "README.rst", "README"))
            else None
        )
        yield Hit(
            f"the code repo {name} has no LICENSE file and its README states no licence for "
            "the code: its code is all rights reserved",
            Location(readme, 1 if readme else None, repo="code"),
            "no LICENSE, LICENCE, COPYING or LICENSES/ file, no licence badge or sentence",
        )
        return
    path = code["files"][0]["path"]
    location, first = _file_location(evidence, path, "code")
    if code["files"][0].get("link") or "only a link" in (code["files"][0].get("note") or ""):
        yield Hit(
            f"the code repo's {path} holds only a link, not a licence: the licence of the code "
            "is not stated in the repo",
            location,
            first or None,
        )
        return
    yield Hit(
        f"the code repo's {path} is not a licence cardaudit can identify "
        f"({code['files'][0].get('note') or 'unrecognised text'})",
        location,
        first or None,
    )
