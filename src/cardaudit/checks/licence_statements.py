"""LIC020–LIC022: licence statements in any form (sentences, badges, links, gating) against
the declared licence."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.licence_reading import agreeing_families
from cardaudit.extract.licence_table import LicenceInfo, expression_ids, lookup, same_licence
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule

CATEGORY_WORDS = {
    "research_only": "to research use",
    "non_commercial": "to non-commercial use",
    "commercial_permission": "to non-commercial use unless the licensor permits commercial use",
    "field_of_use": "by barring a field of use ({terms})",
    "no_redistribution": "by forbidding its redistribution",
}


def _declared(facts: Facts) -> list[LicenceInfo]:
    infos = [lookup(i) for i in expression_ids(facts.license.declared)]
    return [i for i in infos if i is not None and i.hub_id not in ("other", "unknown")]


def _location(item: Mapping[str, Any]) -> Location:
    return Location(item["path"], item.get("line"), repo=item.get("repo", "model"))


def _also(items: list[Mapping[str, Any]]) -> str:
    rest = [_location(i).display() for i in items[1:]]
    return f" (also {', '.join(rest[:4])}{' …' if len(rest) > 4 else ''})" if rest else ""


@check("LIC020")
def restriction_contradicts_licence(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    declared = _declared(facts)
    restrictions = [
        s
        for s in facts.license.statements
        if s["kind"] == "restriction" and s.get("about") in ("model", "project")
    ]
    if not declared or not restrictions:
        raise NotApplicable("no declared licence, or no restriction stated about the model")
    families = {i.family for i in declared}
    # a restriction the declared licence carries itself agrees with it (non-commercial use
    # under a non-commercial licence, a banned field of use under a use-restricted one)
    restrictions = [r for r in restrictions if not agreeing_families(r["category"]) & families]
    if not restrictions:
        return
    licence = ", ".join(i.name for i in declared)
    places: list[Mapping[str, Any]] = []  # one finding: the rider, every place it is stated
    for item in restrictions:
        if not any(_location(p) == _location(item) for p in places):
            places.append(item)
    categories = list(dict.fromkeys(item["category"] for item in restrictions))
    first = places[0]
    card = evidence.card.path if evidence.card is not None else "README.md"
    where = "the code README" if first.get("repo") == "code" else "the card"
    if first.get("repo", "model") == "model" and first["path"] != card:
        where = f"the licence file {first['path']}"
    if str(first.get("section", "")).startswith("front matter"):
        where = "the gating form"
    what = " and ".join(_category_words(c, restrictions) for c in categories)
    yield Hit(
        f"{where} restricts the model {what}, but the declared licence "
        f"`{facts.license.declared}` ({licence}) grants it without that restriction"
        f"{_also(places)}",
        _location(first),
        first["text"][:200],
    )


def _category_words(category: str, restrictions: list[Mapping[str, Any]]) -> str:
    terms = dict.fromkeys(
        str(r["term"]).lower() for r in restrictions if r["category"] == category and r.get("term")
    )
    return CATEGORY_WORDS.get(category, category).format(terms=", ".join(terms))


@check("LIC021")
def badge_names_declared(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    declared = [i for i in expression_ids(facts.license.declared) if i.lower() != "other"]
    badges = [
        s
        for s in facts.license.statements
        if s["kind"] == "badge"
        and s.get("licence")
        and s.get("about") != "code"  # a "Code License" badge states the code's licence
        and (s.get("repo", "model") == "model" or s.get("about") == "model")
    ]
    if not declared or not badges:
        raise NotApplicable("no declared licence or no licence badge naming a licence")
    for badge in badges:
        if any(same_licence(badge["licence"], d) for d in declared):
            continue
        yield Hit(
            f"a licence badge says {badge['licence']}, but the front matter declares "
            f"`license: {facts.license.declared}`",
            _location(badge),
            badge["text"],
        )


@check("LIC022")
def linked_licence_exists(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    links = [
        s
        for s in facts.license.statements
        if s["kind"] in ("badge", "link") and s.get("target") and s.get("exists") is not None
    ]
    licence_links = [s for s in links if _licence_name(s["target"])]
    if not licence_links:
        raise NotApplicable("no link to a licence file of the repo")
    seen: set[tuple[str, str]] = set()
    for link in licence_links:
        key = (link.get("repo", "model"), link["target"])
        if link["exists"] or key in seen:
            continue
        seen.add(key)
        repo = "the code repo" if link.get("repo") == "code" else "the repo"
        yield Hit(
            f"{link['kind']} points to the licence file {link['target']}, which {repo} does not "
            "have: the terms it names are unreachable",
            _location(link),
            link["text"],
        )


def _licence_name(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name.startswith(("license", "licence", "copying"))
