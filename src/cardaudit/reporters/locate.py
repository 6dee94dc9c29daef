"""File paths for line-oriented formats (``concise``, ``github``): a finding's file as the
reader's shell or the CI workspace sees it."""

from __future__ import annotations

import posixpath
import unicodedata
from pathlib import Path

from cardaudit.model import Finding, Report


def _root(path: str | None) -> str | None:
    if not path:
        return None
    root = posixpath.normpath(Path(path).as_posix())
    return "" if root == "." else root


def repo_roots(report: Report) -> dict[str, str | None]:
    """Local folder of each audited repo as given on the command line (None for a Hub repo or
    a clone the audit made itself, whose files the reader does not have)."""
    roots: dict[str, str | None] = {
        "model": _root(report.target.path) if report.target.kind == "local" else None
    }
    evidence = report.evidence
    if evidence is not None and evidence.code is not None and evidence.code.kind != "hub":
        roots["code"] = _root(evidence.code.path) if evidence.code.url is None else None
    if evidence is not None and evidence.base and evidence.base[0].target.kind == "local":
        roots["base"] = _root(evidence.base[0].target.path)
    return roots


def local_file(finding: Finding, roots: dict[str, str | None]) -> str | None:
    """The finding's file under its repo's local folder, or None when there is no local copy."""
    location = finding.location
    if location.path is None:
        return None
    root = roots.get(location.repo)
    if root is None:
        return None
    return posixpath.join(root, location.path) if root else location.path


def also_at(finding: Finding) -> str:
    """The other places of a repeated promise or claim, with their lines
    ("README.md:19, code:README.md:4"); empty when there are none."""
    return ", ".join(place.display() for place in finding.also)


def one_line(text: str) -> str:
    """``text`` on one line, every control, format (bidi) or line-separator character shown
    as ``\\uXXXX`` so a card cannot forge lines or reorder what the reader sees."""
    out = []
    for ch in text:
        if ch in "\r\n\t":
            out.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)
