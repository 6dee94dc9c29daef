"""Every licence clause a rule cites (§… in its ``why`` and ``references``) is listed in the
rule's ``citations`` and found in the licence's own text, where it says what the rule relies
on (the Llama 3.1 Notice duty is §1.b.iii, not §1.b.ii)."""

from __future__ import annotations

import re

import pytest

from cardaudit.extract.licence_reference import reference_for
from cardaudit.rules import _load_yaml, rules_dir

CITED = re.compile(r"§\s*(\d+(?:[.(][\w]+\)?)*)")
ROMAN = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x")


def components(clause: str) -> list[str]:
    """``1.b.iii`` / ``4(a)`` / ``3(a)(1)`` → ``['1', 'b', 'iii']`` …"""
    return [part for part in re.split(r"[.()]+", clause) if part]


def _successor(part: str, roman: bool) -> str:
    if part.isdigit():
        return str(int(part) + 1)
    if roman and part in ROMAN[:-1]:
        return ROMAN[ROMAN.index(part) + 1]
    return chr(ord(part) + 1)


def _marker(part: str, top: bool) -> re.Pattern[str]:
    """A clause's own marker; the letter's case counts (Creative Commons letters §2(a) "a."
    and its sub-clauses §2(a)(1)(B) "B.")."""
    prefix = r"(?i:Section\s+)?" if top else ""
    return re.compile(rf"^\s*{prefix}\(?{re.escape(part)}(?:[.)]|\s+[–-])(?:\s|$)")


def find_clause(text: str, clause: str) -> str | None:
    """The text of ``clause`` in ``text``, found from the licence's own numbering.

    A dotted number that is a heading of its own ("3.1 Distribution") is taken whole;
    otherwise each level is found inside its parent, up to its next sibling. A level the
    text does not letter (OpenRAIL-M's §4 sub-paragraphs lost their "a." in the plain-text
    copy) is the n-th paragraph of its parent.
    """
    lines = text.splitlines()
    parts = components(clause)
    if len(parts) > 1 and all(p.isdigit() for p in parts):
        heading = re.compile(rf"^\s*{re.escape('.'.join(parts))}\s")
        start = next((i for i, line in enumerate(lines) if heading.match(line)), None)
        if start is not None:
            sibling = re.compile(r"^\s*\d+\.\d+\s")
            end = next(
                (i for i in range(start + 1, len(lines)) if sibling.match(lines[i])), len(lines)
            )
            return "\n".join(lines[start:end])
    lo, hi = 0, len(lines)
    for depth, part in enumerate(parts):
        roman = depth > 0 and not parts[depth - 1].isdigit() and part in ROMAN
        marker = _marker(part, depth == 0)
        section = re.compile(rf"^\s*Section\s+{re.escape(part)}\b", re.IGNORECASE)
        by_section = depth == 0 and any(section.match(line) for line in lines)
        if by_section:  # "Section 3 –" headings (Creative Commons): a "3." inside is not §3
            marker = section
        first = lo if depth == 0 else lo + 1
        start = next((i for i in range(first, hi) if marker.match(lines[i])), None)
        if start is None:
            if part.isdigit() or depth == 0:
                return None
            paragraphs = [i for i in range(lo + 1, hi) if lines[i].strip()]
            index = ord(part.lower()) - ord("a")
            if not 0 <= index < len(paragraphs):
                return None
            return lines[paragraphs[index]]
        following = _successor(part, roman)
        sibling = (
            re.compile(rf"^\s*Section\s+{following}\b", re.IGNORECASE)
            if by_section
            else _marker(following, depth == 0)
        )
        end = next((i for i in range(start + 1, hi) if sibling.match(lines[i])), hi)
        lo, hi = start, end
    return "\n".join(lines[lo:hi])


def _rules() -> list[tuple[str, dict]]:
    return [
        (path.stem, _load_yaml(path))
        for path in sorted(rules_dir().glob("*.yaml"))
        if re.match(r"^[A-Z]{3}\d{3}$", path.stem)
    ]


CITATIONS = [
    (rule_id, entry) for rule_id, data in _rules() for entry in data.get("citations") or ()
]


@pytest.mark.parametrize(
    ("rule_id", "entry"),
    CITATIONS,
    ids=[f"{r}-{e['licence']}-{e['clause']}" for r, e in CITATIONS],
)
def test_cited_clause_says_what_the_rule_relies_on(rule_id: str, entry: dict) -> None:
    reference = reference_for(entry["licence"])
    assert reference is not None, f"{rule_id}: no bundled text for {entry['licence']}"
    found = find_clause(reference.text, str(entry["clause"]))
    assert found is not None, f"{rule_id}: §{entry['clause']} not in {entry['licence']}"
    assert entry["says"].lower() in " ".join(found.split()).lower(), (
        f"{rule_id}: {entry['licence']} §{entry['clause']} does not say {entry['says']!r}: "
        f"{found[:300]}"
    )


@pytest.mark.parametrize(("rule_id", "data"), _rules(), ids=[r for r, _ in _rules()])
def test_every_cited_clause_is_listed(rule_id: str, data: dict) -> None:
    text = " ".join([str(data.get("why", "")), *map(str, data.get("references") or ())])
    listed = {tuple(components(str(c["clause"]))) for c in data.get("citations") or ()}
    for clause in CITED.findall(text):
        assert tuple(components(clause)) in listed, f"{rule_id}: §{clause} has no citation"


def test_the_finder_tells_neighbouring_clauses_apart() -> None:
    llama = reference_for("llama3.1").text
    assert "Notice" in find_clause(llama, "1.b.iii")
    assert "integrated end user product" in find_clause(llama, "1.b.ii")
    assert "Notice" not in find_clause(llama, "1.b.ii")
    apache = reference_for("Apache-2.0").text
    assert "NOTICE" in find_clause(apache, "4(d)")
    assert "NOTICE" not in find_clause(apache, "4(a)")
    assert find_clause(apache, "42") is None
    nd = reference_for("CC-BY-NC-ND-4.0").text
    assert "but not Share, Adapted Material" in find_clause(nd, "2(a)(1)(B)")
    assert "Adapted Material" not in find_clause(nd, "2(a)(1)(A)")
