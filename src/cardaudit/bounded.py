"""Parse untrusted JSON and YAML within bounds: nesting depth, node count, string length.

Every JSON or YAML document cardaudit reads comes from the audited repo, so an attacker
chooses it. ``json.loads`` and PyYAML are well-kept parsers, but left alone they recurse
once per nesting level (a 100,000-deep ``[[[…]]]`` raises ``RecursionError``, which no
caller expects) and PyYAML expands aliases without limit (a 1 KB "billion laughs" card
builds 9^9 leaves). The functions here keep the parsers and add the bounds the parsers lack:

- JSON: ``RecursionError`` becomes :class:`BoundsError` (a ``ValueError``, which every
  caller already handles as "not valid JSON"); a document nested deeper than
  :data:`MAX_DEPTH` is refused after parsing, by an iterative walk (so no later recursive
  walker meets it); ``NaN``/``Infinity`` can be refused where numbers must be finite.
- YAML: the document is composed into its node graph first (aliases stay shared nodes,
  so the graph of a bomb is small), its *expanded* size and depth are counted on the
  graph with memoisation, and only a graph within :data:`MAX_NODES` and
  :data:`MAX_DEPTH` is constructed into Python values. This works with the pure-Python
  ``SafeLoader`` and the libyaml ``CSafeLoader`` alike (both expose ``get_single_node``
  and ``construct_document``).

Hand-written because it is the point: no parser offers these limits.
"""

from __future__ import annotations

import json
from typing import Any

#: Deepest nesting accepted (real configs, headers and cards nest fewer than 12 levels).
MAX_DEPTH = 64
#: Most YAML nodes a document may expand to, aliases counted at every use.
MAX_NODES = 100_000


class BoundsError(ValueError):
    """A document exceeds a bound (too deep, too many nodes, a non-finite number)."""


def _refuse_constant(name: str) -> Any:
    raise BoundsError(f"non-finite number {name} (JSON has no NaN or Infinity)")


def json_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a parsed JSON value, walked iteratively; stops past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def loads_json(
    text: str | bytes, *, finite: bool = False, max_depth: int | None = MAX_DEPTH
) -> Any:
    """``json.loads`` that raises only ``ValueError`` (incl. :class:`BoundsError`) on bad input.

    ``finite=True`` refuses ``NaN``, ``Infinity`` and ``-Infinity``, which Python's json
    accepts but the JSON standard does not. ``max_depth=None`` skips the depth walk (for
    big files read flat, such as ``tokenizer.json``): only ``RecursionError`` is caught.
    """
    try:
        value = json.loads(text, parse_constant=_refuse_constant) if finite else json.loads(text)
    except RecursionError:
        raise BoundsError(f"nested deeper than {max_depth or MAX_DEPTH} levels") from None
    if max_depth is None:
        return value
    if isinstance(value, dict | list) and _may_be_deep(text, max_depth):
        depth = json_depth(value, max_depth)
        if depth > max_depth:
            raise BoundsError(f"nested deeper than {max_depth} levels")
    return value


def _may_be_deep(text: str | bytes, max_depth: int) -> bool:
    """Cheap pre-check: fewer opening brackets than the bound cannot nest past it."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{") > max_depth
    return text.count("[") + text.count("{") > max_depth


# --------------------------------------------------------------------------- YAML


#: Which PyYAML safe loader parses: "python" (``SafeLoader``, the clearest error messages)
#: or "c" (libyaml's ``CSafeLoader`` when PyYAML has it). The bounds hold for both.
YAML_LOADER = "python"


def _yaml_loader() -> type:
    import yaml

    if YAML_LOADER == "c" and getattr(yaml, "CSafeLoader", None) is not None:
        return yaml.CSafeLoader
    return yaml.SafeLoader


def check_yaml_graph(node: Any, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`BoundsError` when ``node`` expands past ``max_nodes`` or ``max_depth``.

    Sizes are computed once per distinct node (an alias is the same node object), so a
    graph that expands to billions of nodes is measured in the time of its few real ones.
    """
    import yaml

    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    # Post-order, iterative: (node, children visited?)
    stack: list[tuple[Any, bool]] = [(node, False)]
    on_path: set[int] = set()
    while stack:
        current, done = stack.pop()
        key = id(current)
        if done:
            on_path.discard(key)
            children = _children(current, yaml)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            depths[key] = 1 + max((depths[id(child)] for child in children), default=0)
            if sizes[key] > max_nodes:
                raise BoundsError(
                    f"expands to more than {max_nodes:,} values (YAML aliases repeat data)"
                )
            if depths[key] > max_depth:
                raise BoundsError(f"nested deeper than {max_depth} levels")
            continue
        if key in sizes:
            continue
        if key in on_path:  # a recursive alias (PyYAML's own constructor refuses it too)
            raise BoundsError("a YAML alias refers to itself")
        on_path.add(key)
        stack.append((current, True))
        if len(on_path) > max_depth:
            raise BoundsError(f"nested deeper than {max_depth} levels")
        stack.extend((child, False) for child in _children(current, yaml) if id(child) not in sizes)


def _children(node: Any, yaml: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def compose_yaml(text: str) -> Any:
    """The checked node graph of a YAML document (None when empty).

    Raises ``yaml.YAMLError`` for invalid YAML and :class:`BoundsError` past the bounds.
    """
    loader = _yaml_loader()(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise BoundsError(f"nested deeper than {MAX_DEPTH} levels") from None
        if node is not None:
            check_yaml_graph(node)
        return node
    finally:
        loader.dispose()


def construct_yaml(node: Any) -> Any:
    """Python values of a node graph checked by :func:`compose_yaml`.

    PyYAML's constructors raise plain ``ValueError`` on values that look like a type but
    are not (``2024-13-45``, ``!!float abc``): those become ``yaml.constructor.
    ConstructorError`` (a ``YAMLError``) with the value's position, like any invalid YAML.
    """
    import yaml

    if node is None:
        return None
    loader = _yaml_loader()("")
    try:
        return loader.construct_document(node)
    except RecursionError:
        raise BoundsError(f"nested deeper than {MAX_DEPTH} levels") from None
    except (ValueError, OverflowError, TypeError) as exc:
        raise yaml.constructor.ConstructorError(
            None, None, f"cannot read a value: {str(exc)[:200]}", _failing_mark(node, exc)
        ) from None
    finally:
        loader.dispose()


def _failing_mark(node: Any, exc: BaseException) -> Any:
    """The start of the first scalar whose text the error names (else the document's)."""
    import yaml

    message = str(exc)
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.ScalarNode) and current.value and current.value in message:
            return current.start_mark
        stack.extend(reversed(_children(current, yaml)))
    return node.start_mark


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` within the bounds (raises ``yaml.YAMLError`` or ``BoundsError``)."""
    return construct_yaml(compose_yaml(text))
