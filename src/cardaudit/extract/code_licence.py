"""What a code repo's README says about its licence.

LIC009 must not conclude "all rights reserved" for a repo whose README states a licence in
a sentence ("released under the MIT License") or a badge (shields.io's
``/badge/License-Apache_2.0-blue`` or ``[![License: MIT](…)]``), even when no licence text
ships. Badges are read from their structure — a shields.io static badge is
``label-message-colour``, so the message of a badge whose label names a licence is the
licence —; sentences with the card's licence-sentence pattern (``extract/licence.py``).
A badge or sentence whose subject is the data, the model or its weights ("Data License",
"our models are licensed under …") says nothing about the code and is not counted.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from cardaudit.model import RepoSnapshot

README_NAMES = ("README.md", "README.rst", "README", "README.txt", "readme.md")
#: shields.io static badge: /badge/<label>-<message>-<colour>; "--" is a literal dash.
STATIC_BADGE = re.compile(
    r"img\.shields\.io/badge/(?P<label>(?:[^-/)\s]|--)+)-(?P<message>(?:[^-/)\s]|--)+)-[^/)\s]+",
    re.IGNORECASE,
)
#: Alt text of an image link: [![License: MIT](…)].
ALT_TEXT = re.compile(r"!\[(?P<alt>[^\]]{1,80})\]\(", re.IGNORECASE)
DYNAMIC_BADGE = re.compile(r"img\.shields\.io/github/license/|badge/license", re.IGNORECASE)
LICENCE_WORD = re.compile(r"licen[cs]e", re.IGNORECASE)
#: A statement whose subject is the data, the model or its weights is not about the code
#: ("Data License: CC BY-NC 4.0", "our open-weight models are licensed under …").
OTHER_SUBJECT = re.compile(r"\b(?:data(?:sets?)?|models?|weights?|checkpoints?)\b", re.I)
CODE_SUBJECT = re.compile(r"\b(?:code|software|repo(?:sitory)?|scripts?)\b", re.I)


def _about_code(words: str) -> bool:
    return not OTHER_SUBJECT.search(words) or bool(CODE_SUBJECT.search(words))


def _badge_text(value: str) -> str:
    return unquote(value.replace("--", "\x00").replace("_", " ").replace("\x00", "-"))


def readme_licence_statements(snapshot: RepoSnapshot | None) -> tuple[dict[str, Any], ...]:
    """Each licence stated in the repo's top-level README: badge or sentence, with its line;
    ``licence`` is the table's id, or None for a badge that names no licence it knows."""
    from cardaudit.extract.licence import PROSE, licence_named

    if snapshot is None:
        return ()
    path = next((name for name in README_NAMES if snapshot.text(name) is not None), None)
    if path is None:
        return ()
    found: list[dict[str, Any]] = []
    for number, line in enumerate(snapshot.text(path).lines, start=1):
        excerpt = line.strip()[:200]
        for badge in STATIC_BADGE.finditer(line):
            label, message = _badge_text(badge["label"]), _badge_text(badge["message"])
            if LICENCE_WORD.search(label) and _about_code(label):
                found.append(_statement(path, number, excerpt, "badge", licence_named(message)))
        for alt in ALT_TEXT.finditer(line):
            name = alt["alt"]
            if LICENCE_WORD.search(name) and ":" in name and _about_code(name.split(":")[0]):
                found.append(
                    _statement(path, number, excerpt, "badge", licence_named(name.split(":")[1]))
                )
        if DYNAMIC_BADGE.search(line) and not any(f["line"] == number for f in found):
            found.append(_statement(path, number, excerpt, "badge", None))
        for sentence in PROSE.finditer(line):
            licence = licence_named(sentence["name"])
            if licence is not None and _about_code(line[: sentence.start("name")]):
                found.append(_statement(path, number, excerpt, "sentence", licence))
    unique = {(f["line"], f["licence"]): f for f in found}
    return tuple(unique.values())


def _statement(path: str, line: int, text: str, kind: str, licence: str | None) -> dict:
    return {"path": path, "line": line, "text": text, "kind": kind, "licence": licence}
