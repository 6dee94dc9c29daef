"""Assemble :class:`Evidence` from a repo snapshot, whatever source it came from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cardaudit.bounded import loads_json
from cardaudit.model import (
    Card,
    Evidence,
    Location,
    Problem,
    RepoSnapshot,
    SafetensorsHeader,
    Target,
)
from cardaudit.sources.card import MAX_VALUE_CHARS, parse_card

CARD_NAMES = ("README.md",)
INDEX_NAME = "model.safetensors.index.json"
BIN_INDEX_NAME = "pytorch_model.bin.index.json"


def find_card(snapshot: RepoSnapshot) -> tuple[Card | None, list[Problem]]:
    """Parse the model card; a missing, empty or malformed card becomes a problem."""
    for name in CARD_NAMES:
        text = snapshot.text(name)
        if text is None:
            continue
        card = parse_card(name, text.text)
        problems = []
        if not text.text.strip():
            problems.append(
                Problem("SRC001", "the model card README.md is empty", Location(name, 1))
            )
        elif card.error:
            problems.append(
                Problem(
                    "SRC002",
                    card.error,
                    Location(name, card.error_line),
                    card.file.excerpt(card.error_line or 1),
                )
            )
        elif not card.has_front_matter:
            problems.append(
                Problem(
                    "SRC002",
                    "the model card has no YAML front matter "
                    "(licence, base_model and tags are unknown)",
                    Location(name, 1),
                )
            )
        problems += [
            Problem(
                "SRC003",
                f"front matter key {key!r} holds a string over {MAX_VALUE_CHARS:,} characters; "
                "only its start was audited",
                Location(name, card.key_line(key), key=key),
            )
            for key in card.cut_keys
        ]
        return card, problems
    return None, [Problem("SRC001", "no model card (README.md) in the repo", Location(None))]


def load_json(snapshot: RepoSnapshot, path: str) -> tuple[Any, list[Problem]]:
    """Parse a JSON file of the snapshot; invalid JSON becomes a problem."""
    text = snapshot.text(path)
    if text is None:
        return None, []
    try:
        return loads_json(text.text), []
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        return None, [Problem("SRC003", f"{path} is not valid JSON: {exc}", Location(path, line))]


def assemble(
    target: Target,
    snapshot: RepoSnapshot,
    *,
    headers: Sequence[SafetensorsHeader] = (),
    code: RepoSnapshot | None = None,
    base: Sequence[Evidence] = (),
    problems: Sequence[Problem] = (),
) -> Evidence:
    """Build the evidence tree; every problem met on the way is kept."""
    found: list[Problem] = list(problems)
    card, card_problems = find_card(snapshot)
    found += card_problems
    config, config_problems = load_json(snapshot, "config.json")
    found += config_problems
    if config is not None and not isinstance(config, dict):
        found.append(Problem("SRC003", "config.json is not a JSON object", Location("config.json")))
        config = None
    index, index_problems = load_json(snapshot, INDEX_NAME)
    found += index_problems
    bin_index = _bin_index(snapshot, found)
    for header in headers:
        if header.error:
            found.append(Problem("SRC003", f"{header.path}: {header.error}", Location(header.path)))
    return Evidence(
        target=target,
        repo=snapshot,
        card=card,
        config=config,
        safetensors=tuple(headers),
        safetensors_index=index if isinstance(index, dict) else None,
        bin_index=bin_index,
        code=code,
        base=tuple(base),
        problems=tuple(found),
    )


def _bin_index(snapshot: RepoSnapshot, found: list[Problem]) -> dict[str, Any] | None:
    """``pytorch_model.bin.index.json`` parsed as JSON (the index of .bin shards: evidence of
    their total size and tensor names; the shards are pickles and are never opened)."""
    index, problems = load_json(snapshot, BIN_INDEX_NAME)
    found += problems
    if index is not None and not isinstance(index, dict):
        found.append(
            Problem("SRC003", f"{BIN_INDEX_NAME} is not a JSON object", Location(BIN_INDEX_NAME))
        )
        return None
    return index
