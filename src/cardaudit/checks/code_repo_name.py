"""How findings name a code repo: as a reader knows it, not by the folder it was read from."""

from __future__ import annotations

import re

from cardaudit.model import Evidence

GITHUB = re.compile(r"github\.com[/:](?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$")
CARD_LINK = re.compile(r"github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w-]+(?:\.[\w-]+)*)")
NOT_REPOS = {"orgs", "features", "apps", "sponsors", "topics", "settings", "marketplace"}


def code_repo_label(evidence: Evidence) -> str:
    """``owner/name`` from the code repo's URL or the link the audit cloned; for a local
    folder, the card's GitHub repository when it links exactly one (a guess between
    several would name the wrong repo); else the folder it was read from, said as such
    (its name only: reports stay the same on every machine)."""
    code = evidence.code
    if code is None:
        return "the code repo"
    choice = evidence.notes.get("code_repo_choice") or {}
    for url in (code.url, choice.get("chosen") if isinstance(choice, dict) else None):
        match = GITHUB.search(str(url or ""))
        if match:
            return f"{match['owner']}/{match['name']}"
    if code.kind in ("hub", "git") and "/" in code.id:
        return code.id
    if evidence.card is not None:
        repos = {
            f"{m['owner']}/{m['name'].removesuffix('.git')}"
            for m in CARD_LINK.finditer(evidence.card.raw)
            if m["owner"].lower() not in NOT_REPOS
        }
        if len(repos) == 1:
            return repos.pop()
    return f"in the folder {code.id!r} (no URL known)"
