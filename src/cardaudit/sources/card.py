"""Parse a model card: YAML front matter (with the line of each key) and Markdown body."""

from __future__ import annotations

from typing import Any

from cardaudit.model import Card, frozen_mapping

FENCE = "---"


def _split_front_matter(raw: str) -> tuple[str | None, str, int]:
    """(front matter text or None, body, 1-based line where the body starts)."""
    lines = raw.splitlines(keepends=True)
    if not lines or lines[0].strip() != FENCE:
        return None, raw, 1
    for index in range(1, len(lines)):
        if lines[index].strip() == FENCE:
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), index + 2
    return "".join(lines[1:]), "", len(lines) + 1


def _key_lines(front_matter: str) -> dict[str, int]:
    """Top-level key → 1-based line in the card (the front matter starts on line 2)."""
    import yaml

    try:
        node = yaml.compose(front_matter, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        str(key.value): key.start_mark.line + 2
        for key, _value in node.value
        if isinstance(key, yaml.ScalarNode)
    }


def parse_card(path: str, raw: str) -> Card:
    """Parse ``raw`` (the card's text); never raises on malformed YAML."""
    import yaml

    front_matter, body, body_start = _split_front_matter(raw)
    if front_matter is None:
        return Card(path, raw, frozen_mapping(), frozen_mapping(), body, body_start, False)
    error: str | None = None
    error_line: int | None = None
    metadata: dict[str, Any] = {}
    try:
        loaded = yaml.safe_load(front_matter)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        error_line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        error = f"front matter is not valid YAML: {problem}"
    else:
        if loaded is None:
            loaded = {}
        if isinstance(loaded, dict):
            metadata = {str(key): value for key, value in loaded.items()}
        else:
            error, error_line = "front matter is not a YAML mapping", 2
    return Card(
        path=path,
        raw=raw,
        metadata=frozen_mapping(metadata),
        metadata_lines=frozen_mapping(_key_lines(front_matter) if error is None else {}),
        body=body,
        body_start_line=body_start,
        has_front_matter=True,
        error=error,
        error_line=error_line,
    )
