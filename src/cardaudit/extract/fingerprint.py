"""Base-family fingerprints: does a config look like the generation a claimed base belongs to?

A claimed base's name ("meta-llama/Meta-Llama-3.1-70B-Instruct") picks a family of
``rules/tables/base_fingerprints.yaml`` (the first whose name pattern matches); the config is
compared with that family's fields (rope theta and scaling type, positions, vocabulary) and,
when the name states a size the family has, with that size's layers / hidden / heads. Used
only when the base's own files are not available (with them, the structure comparison of
:mod:`cardaudit.extract.structure` is exact and this adds nothing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from cardaudit.extract.config_count import text_config
from cardaudit.rules import load_table

#: The config keys families use for their routed-expert count.
EXPERT_COUNT_KEYS = ("num_experts", "num_local_experts", "n_routed_experts")

SIZE = re.compile(r"(?<![\w.])(\d+x\d+b|\d+(?:\.\d+)?b(?:-a\d+(?:\.\d+)?b)?|\d+b-\d+e)(?![\w])")


@dataclass(frozen=True)
class Family:
    id: str
    name: str
    names: tuple[re.Pattern[str], ...]
    model_types: frozenset[str]
    fields: Mapping[str, tuple[Any, ...]]
    sizes: Mapping[str, Mapping[str, int]]
    verified_by: tuple[str, ...]


@dataclass(frozen=True)
class Contradiction:
    """One config field that a family (or a size of it) does not have."""

    field: str
    config: Any
    family: tuple[Any, ...]

    def text(self) -> str:
        expected = " or ".join(_show(value) for value in self.family)
        return f"{self.field} {_show(self.config)} (the family has {expected})"


@cache
def families() -> tuple[Family, ...]:
    data = load_table("base_fingerprints")
    return tuple(
        Family(
            id=str(item["id"]),
            name=str(item["name"]),
            names=tuple(re.compile(p, re.IGNORECASE) for p in item.get("names") or ()),
            model_types=frozenset(str(t).lower() for t in item.get("model_type") or ()),
            fields={k: tuple(v) for k, v in (item.get("fields") or {}).items()},
            sizes={str(k).lower(): dict(v) for k, v in (item.get("sizes") or {}).items()},
            verified_by=tuple(item.get("verified_by") or ()),
        )
        for item in data.get("families") or ()
    )


@cache
def vocab_slack() -> int:
    return int(load_table("base_fingerprints").get("vocab_slack", 0))


def family_named(model_id: str) -> Family | None:
    """The family a model id names (the first pattern that matches), if any."""
    lowered = model_id.lower()
    return next((f for f in families() if any(p.search(lowered) for p in f.names)), None)


def size_named(model_id: str) -> str | None:
    """The size a model id states ("70b", "8x22b", "30b-a3b"), lower-cased."""
    found = SIZE.findall(model_id.lower().replace("_", "-"))
    return found[-1] if found else None


def named_billions(size: str) -> float | None:
    """The total a stated size names, in billions ("8x7b" is 56, "30b-a3b" 30), or None for
    a size that states active parameters only ("17b-16e")."""
    experts = re.fullmatch(r"(\d+)x(\d+)b", size)
    if experts:
        return float(experts.group(1)) * float(experts.group(2))
    plain = re.fullmatch(r"(\d+(?:\.\d+)?)b(?:-a\d+(?:\.\d+)?b)?", size)
    return float(plain.group(1)) if plain and float(plain.group(1)) > 0 else None


def config_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint fields of ``config`` (its language model's, for a multimodal one)."""
    cfg = text_config(config)
    scaling = cfg.get("rope_scaling")
    params = cfg.get("rope_parameters")
    rope = (
        scaling if isinstance(scaling, Mapping) else params if isinstance(params, Mapping) else {}
    )
    theta = cfg.get("rope_theta", rope.get("rope_theta"))
    kind = str(rope.get("rope_type") or rope.get("type") or "none").lower()
    fields: dict[str, Any] = {
        "model_type": str(cfg.get("model_type") or "").lower() or None,
        "rope_theta": float(theta) if isinstance(theta, int | float) else None,
        "rope_type": "none" if kind == "default" else kind,
        "max_position_embeddings": cfg.get("max_position_embeddings"),
        "vocab_size": cfg.get("vocab_size"),
    }
    for key in ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads"):
        fields[key] = cfg.get(key)
    fields["num_experts"] = next(
        (cfg[k] for k in EXPERT_COUNT_KEYS if _positive_int(cfg.get(k))), None
    )
    return fields


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _agrees(field: str, value: Any, allowed: tuple[Any, ...]) -> bool:
    if value is None:
        return True  # a field the config leaves out contradicts nothing
    if field == "vocab_size" and isinstance(value, int):
        return any(isinstance(a, int) and a <= value <= a + vocab_slack() for a in allowed)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return any(isinstance(a, int | float) and float(a) == float(value) for a in allowed)
    return value in allowed


def contradictions(
    config: Mapping[str, Any], family: Family, size: str | None
) -> list[Contradiction]:
    """Every fingerprint field of ``config`` that ``family`` (at ``size``) does not have."""
    fields = config_fields(config)
    found: list[Contradiction] = []
    if fields["model_type"] and fields["model_type"] not in family.model_types:
        found.append(
            Contradiction("model_type", fields["model_type"], tuple(sorted(family.model_types)))
        )
    for field, allowed in family.fields.items():
        if not _agrees(field, fields.get(field), allowed):
            found.append(Contradiction(field, fields.get(field), allowed))
    shape = family.sizes.get(size) if size else None
    for field, expected in (shape or {}).items():
        value = fields.get(field)
        if value is not None and value != expected:
            found.append(Contradiction(field, value, (expected,)))
    return found


def matching_family(
    config: Mapping[str, Any], exclude: str | None = None
) -> tuple[Family, str] | None:
    """A family (and size) whose every field and one size's shape the config has."""
    fields = config_fields(config)
    for family in families():
        if family.id == exclude or contradictions(config, family, None):
            continue
        for size, shape in family.sizes.items():
            if all(fields.get(k) == v for k, v in shape.items()):
                return family, size
    return None


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return f"{int(value):,}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return repr(value) if isinstance(value, str) else str(value)
