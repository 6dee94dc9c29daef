"""Generate docs/rules.md from the rule catalogue (rules/*.yaml).

Usage: ``python -m cardaudit.docs`` writes docs/rules.md; ``python -m cardaudit.docs --check``
exits 1 when the committed file is out of date.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from cardaudit.rules import Rule, load_rules

FAMILIES = {
    "LIC": "Licence",
    "ATT": "Attribution and notices",
    "DRV": "Derivation",
    "MEM": "Parameters and memory",
    "PRM": "Promises",
    "CLM": "Claims",
    "SRC": "Sources and evidence",
}
TARGET = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(rules: Mapping[str, Rule]) -> str:
    """The whole Markdown document."""
    out = [
        "# cardaudit rules",
        "",
        "Generated from `rules/*.yaml` by `python -m cardaudit.docs`; do not edit by hand.",
        "",
        "| id | severity | title |",
        "|---|---|---|",
    ]
    out += [
        f"| [{r.id}](#{r.id.lower()}) | {r.severity} | {_one_line(r.title)} |"
        for r in rules.values()
    ]
    family = None
    for rule in rules.values():
        if rule.family != family:
            family = rule.family
            out += ["", f"## {FAMILIES.get(family, family)} ({family})"]
        out += [
            "",
            f"### {rule.id}",
            "",
            f"**{_one_line(rule.title)}** — default severity `{rule.severity}`, {rule.lifecycle}.",
            "",
        ]
        out += [
            f"- **Checks:** {_one_line(rule.checks)}",
            f"- **Why:** {_one_line(rule.why)}",
            f"- **Fix:** {_one_line(rule.fix)}",
        ]
        if rule.references:
            out.append(f"- **References:** {'; '.join(_one_line(r) for r in rule.references)}")
        if rule.params:
            params = ", ".join(f"`{k}` = `{v}`" for k, v in rule.params.items())
            out.append(f"- **Parameters:** {params}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render(load_rules())
    if "--check" in args:
        current = TARGET.read_text(encoding="utf-8") if TARGET.is_file() else ""
        if current != text:
            print(f"{TARGET} is out of date; run `python -m cardaudit.docs`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
