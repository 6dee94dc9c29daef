"""ATT rules that compare the repo with its base model: use restrictions passed on (ATT006)
and upstream copyright kept (ATT007). A base the publisher owns is skipped (its own licence
does not bind it); a base whose licence is not known leaves the rule not_checked."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cardaudit.checks.attribution import card_location, contains, owned_base, owner_reason, texts
from cardaudit.checks.base_inputs import checked_or_missing, require_bases
from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.base_licence_state import base_licence_info
from cardaudit.extract.licence_table import same_licence
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule


@check("ATT006")
def use_restrictions_passed_on(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    what = "whether the base licence's use restrictions are passed on"
    require_bases(evidence, what)
    yield from checked_or_missing(evidence, _restriction_hits(evidence, facts), what, facts)


def _restriction_hits(evidence: Evidence, facts: Facts) -> Iterator[Hit]:
    restricted, owned = [], []
    for base in facts.license.base:
        info = base_licence_info(base)
        if info is not None and info.duty("pass_use_restrictions"):
            if owned_base(facts, base, info):
                owned.append(base["name"])
            else:
                restricted.append((base["name"], info))
    if not restricted and owned:
        raise NotApplicable(
            owner_reason(facts, owned) + ", so its use restrictions need not bind recipients "
            "of this model (LIC007 says which licence they get)"
        )
    if not restricted:
        raise NotApplicable("no base model with use restrictions")
    shipped = {m.identified.lower() for m in facts.license.files if m.identified}
    shipped |= {a.lower() for m in facts.license.files for a in m.also}
    policy = bool(evidence.repo.find("USE_POLICY.md", "use_policy.md", "USE_POLICY.txt"))
    for base_id, info in restricted:
        if any(same_licence(s, info.hub_id) for s in shipped):
            continue
        if policy and info.duty("use_policy"):
            continue
        yield Hit(
            f"the base model {base_id} is under {info.name}, whose use restrictions must bind "
            "every recipient of a derivative; this repo ships neither that licence nor its "
            "restrictions",
            card_location(evidence),
            f"license: {facts.license.declared}",
        )


COPYRIGHT = re.compile(
    r"^[^\S\n]*+(?:#[^\S\n]*)?(Copyright\s+(?:\(c\)\s*|©\s*)?\d{4}\b.*)$", re.I | re.M
)
TEMPLATE = re.compile(r"\[yyyy\]|<year>|\[name of copyright owner\]|<copyright holders>", re.I)


@check("ATT007")
def upstream_copyright_kept(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    what = "whether the base model's copyright notices are kept"
    require_bases(evidence, what)
    yield from checked_or_missing(evidence, _copyright_hits(evidence, facts), what, facts)


def _copyright_hits(evidence: Evidence, facts: Facts) -> Iterator[Hit]:
    statements: list[tuple[str, str, str]] = []
    for base, base_facts in zip(evidence.base, facts.license.base, strict=False):
        info = base_licence_info(base_facts)
        if info is None or not (info.duty("carry_notice") or info.duty("keep_attribution")):
            continue
        if owned_base(facts, base_facts, info):
            continue  # its own copyright: keeping it is hygiene, not a duty it owes
        paths = [f["path"] for f in base_facts.get("files", ())]
        if not info.duty("carry_notice"):  # a carried NOTICE is ATT002's business
            paths += list(base_facts.get("notices", ()))
        for path in paths:
            text = base.repo.text(path)
            for match in COPYRIGHT.finditer(text.text if text else ""):
                line = match.group(1).strip()
                if not TEMPLATE.search(line):
                    statements.append((base_facts["name"], path, line))
    if not statements:
        raise NotApplicable("no upstream copyright statement under an attribution duty")
    ours = texts(evidence, [m.path for m in facts.license.files] + list(facts.license.notices))
    ours += "\n" + (evidence.card.raw if evidence.card else "")
    for name, path, line in statements:
        if contains(ours, line):
            continue
        where = (
            Location(facts.license.notices[0], 1)
            if facts.license.notices
            else Location(facts.license.files[0].path, 1)
            if facts.license.files
            else card_location(evidence)
        )
        yield Hit(
            f'the base model {name} states "{line}" in its {path}; this repo\'s LICENSE, '
            "NOTICE and card do not keep it",
            where,
            line[:200],
        )
