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


#: A front-matter string longer than this is cut (a licence text pasted into
#: ``extra_gated_prompt`` is ~30 KB); extractors never scan a megabyte value.
MAX_VALUE_CHARS = 100_000


def _key_lines(node: Any) -> dict[str, int]:
    """Top-level key → 1-based line in the card (the front matter starts on line 2)."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        str(key.value): key.start_mark.line + 2
        for key, _value in node.value
        if isinstance(key, yaml.ScalarNode)
    }


def _cut_long_strings(metadata: dict[str, Any]) -> tuple[str, ...]:
    """Cut every string value over :data:`MAX_VALUE_CHARS` in place; the top-level keys cut."""
    cut: list[str] = []
    for key in metadata:
        stack: list[Any] = [(metadata, key)]
        while stack:
            container, slot = stack.pop()
            item = container[slot]
            if isinstance(item, str) and len(item) > MAX_VALUE_CHARS:
                container[slot] = item[:MAX_VALUE_CHARS] + "…"
                if key not in cut:
                    cut.append(key)
            elif isinstance(item, dict):
                stack.extend((item, child) for child in item)
            elif isinstance(item, list):
                stack.extend((item, index) for index in range(len(item)))
    return tuple(cut)


def parse_card(path: str, raw: str) -> Card:
    """Parse ``raw`` (the card's text); never raises on malformed or hostile YAML.

    The front matter is loaded within :mod:`cardaudit.bounded`'s limits (aliases, nodes,
    depth): a card past them is reported like invalid YAML.
    """
    import yaml

    from cardaudit.bounded import BoundsError, compose_yaml, construct_yaml

    front_matter, body, body_start = _split_front_matter(raw)
    if front_matter is None:
        return Card(path, raw, frozen_mapping(), frozen_mapping(), body, body_start, False)
    error: str | None = None
    error_line: int | None = None
    metadata: dict[str, Any] = {}
    node = None
    cut: tuple[str, ...] = ()
    try:
        node = compose_yaml(front_matter)
        loaded = construct_yaml(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        error_line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        error = f"front matter is not valid YAML: {problem}"
    except BoundsError as exc:
        error, error_line = f"front matter refused: {exc}", 2
    else:
        if loaded is None:
            loaded = {}
        if isinstance(loaded, dict):
            metadata = {str(key): value for key, value in loaded.items()}
            cut = _cut_long_strings(metadata)
        else:
            error, error_line = "front matter is not a YAML mapping", 2
    return Card(
        path=path,
        raw=raw,
        metadata=frozen_mapping(metadata),
        metadata_lines=frozen_mapping(_key_lines(node) if error is None else {}),
        body=body,
        body_start_line=body_start,
        has_front_matter=True,
        error=error,
        error_line=error_line,
        cut_keys=cut,
    )
