"""Licensor or redistributor: who publishes the audited repo, with the evidence for it.

Distribution duties (ship a copy of the licence, carry a Notice, keep upstream copyright) bind
whoever redistributes another party's work, not the licensor publishing its own model. The
publisher is the licensor when one of these holds, in this order:

1. the licence table names the repo's organisation among the licence's ``licensor_orgs``;
2. a copyright holder in the repo's own LICENSE / NOTICE is the publishing organisation;
3. the model is original (no base named in metadata, prose, config, adapter or mergekit
   config) and published by a known organisation under a licence that is not a third party's;
4. every base it names is published by the same organisation (an org's own fine-tune).

A declared licence whose table entry names other licensor organisations (Llama, Gemma)
makes the publisher a redistributor whatever else holds. Without a known organisation (a
local folder not named ``owner__name``) the role is ``unknown`` and duties apply as to a
redistributor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

from cardaudit.extract.licence_table import LicenceInfo, expression_ids, lookup
from cardaudit.model import BaseModelRef, Evidence, LicenceFacts, RepoSnapshot
from cardaudit.rules import load_table

COPYRIGHT = re.compile(
    r"^[^\w\n]*+(?:copyright|©|\(c\))[ \t]*(?:\(c\)|©)?[ \t]*"
    r"(?:\d{4}(?:[ \t]*[-–,][ \t]*\d{4})*+,?[ \t]*)?(?P<holder>[^\n]+)$",
    re.IGNORECASE | re.MULTILINE,
)
WORD = re.compile(r"[a-z0-9]+")
TEMPLATE = re.compile(r"\[yyyy\]|<year>|\[name of copyright owner\]|<copyright holders>", re.I)


@cache
def _noise() -> frozenset[str]:
    return frozenset(str(word).lower() for word in load_table("licensor").get("holder_noise", ()))


def repo_org(evidence: Evidence) -> str:
    """The Hub organisation of the audited repo ('' when unknown): ``org/name`` ids, and local
    copies named ``owner__name``."""
    ident = evidence.repo.id.replace("\\", "/").rstrip("/")
    folder = ident.rsplit("/", 1)[-1]
    if "__" in folder:
        return folder.split("__", 1)[0].lower()
    if evidence.repo.kind == "hub" and "/" in ident:
        return ident.split("/")[-2].lower()
    return ""


def repo_name(evidence: Evidence) -> str | None:
    """``org/name`` of the audited repo when known."""
    org = repo_org(evidence)
    if not org:
        return None
    folder = evidence.repo.id.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return f"{org}/{folder.split('__', 1)[-1]}"


def _compact(words: Iterable[str]) -> str:
    return "".join(words)


def holder_matches(holder: str, org: str) -> bool:
    """Whether a copyright holder names the organisation ``org`` (see the module docstring)."""
    org_words = WORD.findall(org.lower())
    if not org_words:
        return False
    for part in re.split(r",|;|\band\b|&", holder.lower()):
        words = [w for w in WORD.findall(part) if w not in _noise() and not w.isdigit()]
        key = _compact(words)
        if len(key) >= 3 and key in (_compact(org_words), org_words[0]):
            return True
    return False


def _copyright_lines(
    snapshot: RepoSnapshot, paths: Iterable[str]
) -> Iterable[tuple[str, int, str]]:
    for path in paths:
        text = snapshot.text(path)
        if text is None:
            continue
        for match in COPYRIGHT.finditer(text.text[:200_000]):
            holder = match.group("holder").strip()
            if holder and not TEMPLATE.search(match.group(0)):
                yield path, text.line_at(match.start()), match.group(0).strip()[:200]


def _org_of(model_id: str) -> str:
    return model_id.split("/")[0].lower() if model_id.count("/") == 1 else ""


def _third_party(infos: list[LicenceInfo], org: str) -> LicenceInfo | None:
    return next((i for i in infos if i.licensor_orgs and org not in _lower(i.licensor_orgs)), None)


def _lower(items: Iterable[str]) -> set[str]:
    return {item.lower() for item in items}


def publisher_facts(
    evidence: Evidence, licence: LicenceFacts, bases: tuple[BaseModelRef, ...]
) -> dict[str, Any]:
    """``{org, role, evidence: [{kind, text, path?, line?}]}`` for the audited repo."""
    from cardaudit.extract.lineage import declared_bases

    org = repo_org(evidence)
    infos = [i for i in map(lookup, expression_ids(licence.declared)) if i is not None]
    found: list[dict[str, Any]] = []
    if not org:
        found.append(
            {
                "kind": "no_org",
                "text": "the publishing organisation is not known (a local "
                "folder not named owner__name, and no Hub id)",
            }
        )
        return {"org": None, "role": "unknown", "evidence": found}
    table = [i for i in infos if org in _lower(i.licensor_orgs)]
    if table:
        found.append(
            {
                "kind": "licence_table",
                "text": f"{org} is a licensor organisation of {table[0].name} "
                "(rules/tables/licences.yaml)",
            }
        )
        return {"org": org, "role": "licensor", "evidence": found}
    other = _third_party(infos, org)
    if other is not None:
        found.append(
            {
                "kind": "third_party_licence",
                "text": f"{other.name} is the licence of {', '.join(other.licensor_orgs)}, "
                f"not of {org}",
            }
        )
        return {"org": org, "role": "redistributor", "evidence": found}
    own_files = [m.path for m in licence.files] + list(licence.notices)
    for path, line, statement in _copyright_lines(evidence.repo, own_files):
        holder = COPYRIGHT.match(statement)
        if holder and holder_matches(holder.group("holder"), org):
            found.append({"kind": "copyright", "text": statement, "path": path, "line": line})
            return {"org": org, "role": "licensor", "evidence": found}
    named = declared_bases(bases)
    if not named:
        found.append(
            {
                "kind": "original",
                "text": f"no base model is named in the metadata, prose, config, adapter or "
                f"mergekit config: an original model published by {org}",
            }
        )
        return {"org": org, "role": "licensor", "evidence": found}
    if all(_org_of(ref.id) == org for ref in named):
        ids = ", ".join(dict.fromkeys(ref.id for ref in named))
        found.append(
            {
                "kind": "own_base",
                "text": f"the base model(s) it names ({ids}) are published by {org} itself",
                **_where(named[0]),
            }
        )
        return {"org": org, "role": "licensor", "evidence": found}
    outside = next(ref for ref in named if _org_of(ref.id) != org)
    found.append(
        {
            "kind": "other_base",
            "text": f"it derives from {outside.id}, which {org} does not publish",
            **_where(outside),
        }
    )
    return {"org": org, "role": "redistributor", "evidence": found}


def _where(ref: BaseModelRef) -> dict[str, Any]:
    if ref.location.path is None:
        return {}
    return {"path": ref.location.path, "line": ref.location.line}


def is_licensor(publisher: Any, info: LicenceInfo) -> bool:
    """Whether the publisher is the licensor of ``info`` (its own licence, or one without a
    named licensor organisation that it applies to its own work)."""
    if not publisher or publisher.get("role") != "licensor":
        return False
    orgs = _lower(info.licensor_orgs)
    return not orgs or publisher.get("org") in orgs


def owns_base(publisher: Any, base_name: str | None, info: LicenceInfo | None) -> bool:
    """Whether the publisher is the rights holder of a base model it derives from: it is the
    licensor (see the module docstring), the base ``org/name`` is published by that same
    organisation, and the base's licence, when it names licensor organisations, is that
    organisation's own. A rights holder is not bound by its own public licence: it may
    relicense its own model, so the base licence's derivative and notice duties do not bind
    it. A licensor role found from the repo's own copyright line says nothing about a base
    of another organisation, hence the per-base test."""
    if not publisher or publisher.get("role") != "licensor":
        return False
    org = publisher.get("org")
    if not org or _org_of(str(base_name or "")) != org:
        return False
    return info is None or not info.licensor_orgs or org in _lower(info.licensor_orgs)


def basis(publisher: Any) -> str:
    """The evidence for the publisher's role, in one clause for a finding's message."""
    items = (publisher or {}).get("evidence") or ()
    if not items:
        return "no evidence"
    first = items[0]
    where = f" ({first['path']}:{first['line']})" if first.get("path") else ""
    return f"{first['text']}{where}"


def link_into_repo(evidence: Evidence, link: str | None) -> str | None:
    """The repo path the card's ``license_link`` points to, when it points into this repo (a
    relative path, or a Hub file URL of this very repo); None otherwise."""
    if not link:
        return None
    link = link.strip().split("#", 1)[0].split("?", 1)[0]
    hub = re.match(
        r"^https?://huggingface\.co/(?P<repo>[\w.-]+/[\w.-]+)/(?:blob|resolve)/[^/]+/(?P<path>.+)$",
        link,
        re.I,
    )
    if hub:
        own = repo_name(evidence)
        return hub.group("path") if own and hub.group("repo").lower() == own.lower() else None
    if re.match(r"^[a-z][a-z0-9+.-]*:", link, re.I) or link.startswith("//"):
        return None
    return link.removeprefix("./").lstrip("/") or None


def duty_context(evidence: Evidence, publisher: Any) -> str:
    """Who owes the duty, with the evidence, for a redistributor's (or unknown) finding."""
    role = (publisher or {}).get("role")
    if role == "redistributor":
        return f" ({(publisher or {}).get('org')} redistributes it: {basis(publisher)})"
    if role == "unknown":
        return " (publisher not known, so the duty is applied as to a redistributor)"
    return ""
