"""Rows of the text report about lineage: the chain, structure differences, derived code."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def _link(link: Mapping[str, Any]) -> str:
    licence = link.get("licence") or "licence unknown"
    relation = link.get("relation") or "relation unknown"
    return f"{link.get('id')} [{licence}] ({relation}, from {link.get('source')})"


def chain_text(links: list[Mapping[str, Any]]) -> str:
    """model [licence] → base [licence] (relation) → base's base…, one line per link."""
    if not links:
        return ""
    root = links[0]
    lines = [f"{root.get('id')} [{root.get('licence') or 'licence unknown'}]"]
    for link in links[1:]:
        depth = int(link.get("depth") or 1)
        lines.append(f"{'  ' * (depth - 1)}→ {_link(link)}")
    return "\n".join(lines)


def lineage_rows(extra: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(label, value) rows for the facts table."""
    links = extra.get("lineage") or []
    if len(links) > 1:
        yield "lineage", chain_text(links)
    for item in extra.get("derivation") or []:
        notes = [d["explanation"] for d in item.get("differences") or ()]
        tokenizer = item.get("tokenizer") or {}
        notes += list(tokenizer.get("explanations") or ()) + list(tokenizer.get("problems") or ())
        yield f"vs {item.get('base')}", "\n".join(notes) or "same structure"
    for item in extra.get("code_derivation") or []:
        state = []
        state.append("header kept" if item.get("copyright_kept") else "copyright missing")
        if item.get("modification_notice"):
            state.append("marked modified")
        if item.get("similarity") is not None:
            state.append(f"{item['similarity']:.0%} like {item.get('upstream_file')}")
        yield (
            f"derived code {item.get('path')}",
            f"from {item.get('upstream')}: " + ", ".join(state),
        )
