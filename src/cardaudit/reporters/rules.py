"""Render the rule catalogue (``cardaudit rules``)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping

from cardaudit.rules import Rule


def _console(color: bool, width: int):
    from cardaudit.reporters.common import text_console

    buffer = io.StringIO()
    return buffer, text_console(buffer, color, width)


def render_rule_list(rules: Mapping[str, Rule], *, color: bool = False, width: int = 100) -> str:
    from rich.table import Table

    buffer, console = _console(color, width)
    table = Table(title="cardaudit rules", expand=True)
    table.add_column("id", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("title", overflow="fold")
    for rule in rules.values():
        table.add_row(rule.id, rule.severity, rule.title)
    console.print(table)
    return buffer.getvalue()


def render_rule_lines(rules: Mapping[str, Rule]) -> str:
    """``LIC001 error title``, one rule per line: the listing for a pipe (grep, cut)."""
    return "".join(f"{rule.id} {rule.severity} {rule.title}\n" for rule in rules.values())


def render_rule(rule: Rule, *, color: bool = False, width: int = 100) -> str:
    from rich.markup import escape
    from rich.panel import Panel

    buffer, console = _console(color, width)
    parts = [
        f"[bold]{rule.id}[/bold] — {escape(rule.title)}",
        f"default severity: {rule.severity}    lifecycle: {rule.lifecycle}",
        f"\n[bold]What it checks[/bold]\n{escape(rule.checks)}",
        f"\n[bold]Why it matters[/bold]\n{escape(rule.why)}",
        f"\n[bold]How to fix[/bold]\n{escape(rule.fix)}",
    ]
    if rule.references:
        parts.append(
            "\n[bold]References[/bold]\n" + "\n".join(f"- {escape(r)}" for r in rule.references)
        )
    if rule.params:
        parts.append(
            "\n[bold]Parameters[/bold]\n"
            + "\n".join(f"- {escape(str(k))}: {escape(str(v))}" for k, v in rule.params.items())
        )
    console.print(Panel("\n".join(parts), expand=False))
    return buffer.getvalue()


def rule_to_json(rule: Rule) -> dict[str, object]:
    """Every field of a rule, as ``cardaudit rules --format json`` prints it."""
    from cardaudit.model import to_jsonable

    return {
        "id": rule.id,
        "family": rule.family,
        "title": rule.title,
        "severity": rule.severity,
        "lifecycle": rule.lifecycle,
        "checks": rule.checks,
        "why": rule.why,
        "fix": rule.fix,
        "references": list(rule.references),
        "parameters": to_jsonable(dict(rule.params)),
    }


def rules_json(rules: Iterable[Rule], *, single: bool = False) -> str:
    """A JSON array of rules (an object for ``cardaudit rules ID --format json``)."""
    data = [rule_to_json(rule) for rule in rules]
    return json.dumps(data[0] if single else data, indent=2, ensure_ascii=False) + "\n"
