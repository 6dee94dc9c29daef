"""Model structure (config and tensor shapes) and how it differs from a base model's.

Every difference carries a plain explanation ("vocab 151,936 → 151,937: one added token";
"text-only: vision tower dropped") and the relations it contradicts: a fine-tune, an adapter
and a quantized model keep their base's shapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cardaudit.extract.evidence_memo import EvidenceMemo
from cardaudit.extract.header_walk import header_walk, tensor_name_normaliser
from cardaudit.model import Evidence, frozen_mapping
from cardaudit.rules import load_table

SHAPE_KEEPERS = ("finetune", "adapter", "quantized")
TEXT_CONFIG_KEYS = ("text_config", "llm_config", "language_config")
VISION_CONFIG_KEYS = ("vision_config", "visual", "vision_tower_config", "audio_config")


@dataclass(frozen=True)
class Structure:
    """What a repo's config and safetensors headers say about its shape."""

    architectures: tuple[str, ...] = ()
    model_type: str | None = None
    text_model_type: str | None = None
    fields: Mapping[str, int] = field(default_factory=frozen_mapping)
    has_vision: bool = False
    tensors: Mapping[str, tuple[int, ...]] | None = None
    tensor_names: frozenset[str] = frozenset()
    quantized: bool = False

    @property
    def known(self) -> bool:
        return bool(self.architectures or self.model_type or self.fields or self.tensor_names)


@dataclass(frozen=True)
class Difference:
    field: str
    model: Any
    base: Any
    explanation: str
    contradicts: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "model": self.model,
            "base": self.base,
            "explanation": self.explanation,
            "contradicts": list(self.contradicts),
        }


def _table() -> Mapping[str, Any]:
    return load_table("lineage")


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language-model part of a (possibly multimodal) config."""
    for key in TEXT_CONFIG_KEYS:
        value = config.get(key)
        if isinstance(value, dict):
            return value
    return config


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _vision_parts() -> tuple[str, ...]:
    return tuple(str(part) for part in _table().get("vision_parts") or ())


def is_vision_tensor(name: str) -> bool:
    return any(part in name for part in _vision_parts())


def _any_vision_tensor(names: Iterable[str]) -> bool:
    """Whether any name contains a vision part: one regex search over all names joined by
    newlines (no part holds a newline, so no match spans two names)."""
    parts = _vision_parts()
    if not parts:
        return False
    pattern = re.compile("|".join(re.escape(part) for part in parts))
    return pattern.search("\n".join(names)) is not None


def structure_of(evidence: Evidence) -> Structure:
    """The structure of one repo; unknown parts stay empty (never raises on odd configs).

    Computed once per evidence object (:data:`_KNOWN`), since the derivation facts and two
    derivation checks ask for the same repo's; the entry goes when the evidence does.
    """
    return _KNOWN(evidence)


def _structure_of(evidence: Evidence) -> Structure:
    config = evidence.config if isinstance(evidence.config, Mapping) else {}
    text = text_config(config)
    fields: dict[str, int] = {}
    for name, keys in (_table().get("structure_fields") or {}).items():
        for key in keys:
            value = _int(text.get(key))
            if value is None and text is not config:
                value = _int(config.get(key))
            if value is not None:
                fields[name] = value
                break
    architectures = config.get("architectures")
    names: set[str] = set()
    normalise = tensor_name_normaliser()
    # the model's own tensors (adapter files excluded), from the repo's one header walk
    tensors = dict(header_walk(evidence).shapes) if evidence.safetensors else None
    if tensors:
        names = set(tensors)
    elif isinstance(evidence.safetensors_index, Mapping):
        weight_map = evidence.safetensors_index.get("weight_map")
        if isinstance(weight_map, Mapping):
            names = {normalise(str(name)) for name in weight_map}
    has_vision = any(
        isinstance(config.get(key), dict) for key in VISION_CONFIG_KEYS
    ) or _any_vision_tensor(names)
    model_type = config.get("model_type")
    text_type = text.get("model_type") if text is not config else model_type
    return Structure(
        architectures=tuple(str(a) for a in architectures)
        if isinstance(architectures, list)
        else (),
        model_type=model_type if isinstance(model_type, str) else None,
        text_model_type=text_type if isinstance(text_type, str) else None,
        fields=frozen_mapping(fields),
        has_vision=has_vision,
        tensors=frozen_mapping(tensors) if tensors else None,
        tensor_names=frozenset(names),
        quantized=isinstance(config.get("quantization_config"), dict),
    )


# --------------------------------------------------------------------------- comparison


def _count(n: int, word: str) -> str:
    return f"{'one' if n == 1 else f'{n:,}'} {word}{'' if n == 1 else 's'}"


def _vocab_difference(model: int, base: int) -> Difference:
    delta = model - base
    if delta > 0:
        why = f"vocab {base:,} → {model:,}: {_count(delta, 'added token')}"
        return Difference("vocab_size", model, base, why, ("quantized",))
    why = f"vocab {base:,} → {model:,}: {_count(-delta, 'token')} removed"
    return Difference("vocab_size", model, base, why, SHAPE_KEEPERS)


def _field_difference(name: str, model: int, base: int) -> Difference:
    if name == "vocab_size":
        return _vocab_difference(model, base)
    if name == "num_hidden_layers":
        verb = "added" if model > base else "removed"
        why = f"layers {base} → {model}: {_count(abs(model - base), 'layer')} {verb}"
        return Difference(name, model, base, why, SHAPE_KEEPERS)
    if name == "num_experts_per_tok":
        why = f"experts per token {base} → {model}: routing changed, weights unaffected"
        return Difference(name, model, base, why)
    label = name.replace("_", " ").replace("num ", "")
    why = f"{label} {base:,} → {model:,}: a different shape"
    return Difference(name, model, base, why, SHAPE_KEEPERS)


def compare(model: Structure, base: Structure) -> list[Difference]:
    """Every difference between ``model`` and ``base``, explained."""
    found: list[Difference] = []
    if base.has_vision and not model.has_vision:
        found.append(Difference("vision", "absent", "present", "text-only: vision tower dropped"))
    elif model.has_vision and not base.has_vision:
        found.append(
            Difference("vision", "present", "absent", "vision tower added", ("quantized",))
        )
    model_type, base_type = model.text_model_type, base.text_model_type
    if model_type and base_type and model_type != base_type:
        found.append(
            Difference(
                "model_type",
                model_type,
                base_type,
                f"model_type {base_type} → {model_type}: a different architecture family",
                SHAPE_KEEPERS,
            )
        )
    if model.architectures and base.architectures and model.architectures != base.architectures:
        same_family = model_type == base_type or not (model_type and base_type)
        why = "head class changed (same layers)" if same_family else "a different model class"
        found.append(
            Difference(
                "architectures",
                list(model.architectures),
                list(base.architectures),
                f"{', '.join(base.architectures)} → {', '.join(model.architectures)}: {why}",
                () if same_family else SHAPE_KEEPERS,
            )
        )
    for name in _table().get("structure_fields") or {}:
        mine, theirs = model.fields.get(name), base.fields.get(name)
        if mine is not None and theirs is not None and mine != theirs:
            found.append(_field_difference(name, mine, theirs))
    found += compare_tensors(model, base)
    return found


def compare_tensors(model: Structure, base: Structure) -> list[Difference]:
    """Tensor names and shapes (a quantized model's packed tensors are not compared)."""
    if not model.tensor_names or not base.tensor_names:
        return []
    found: list[Difference] = []
    missing = sorted(base.tensor_names - model.tensor_names)
    vision = [name for name in missing if is_vision_tensor(name)]
    other = [
        name for name in missing if not is_vision_tensor(name) and not name.startswith("lm_head.")
    ]
    if vision:
        found.append(
            Difference(
                "tensors",
                None,
                len(vision),
                f"{_count(len(vision), 'vision tensor')} of the base dropped (text-only)",
            )
        )
    if other and not model.quantized:
        found.append(
            Difference(
                "tensors",
                None,
                other[:5],
                f"{_count(len(other), 'base tensor')} missing, e.g. {other[0]}",
                SHAPE_KEEPERS,
            )
        )
    added = sorted(model.tensor_names - base.tensor_names)
    if added and not model.quantized:
        found.append(
            Difference(
                "tensors",
                added[:5],
                None,
                f"{_count(len(added), 'tensor')} not in the base, e.g. {added[0]}",
            )
        )
    if model.tensors is None or base.tensors is None or model.quantized:
        return found
    vocab = (model.fields.get("vocab_size"), base.fields.get("vocab_size"))
    mine_all, theirs_all = model.tensors, base.tensors
    changed = [n for n in mine_all.keys() & theirs_all.keys() if mine_all[n] != theirs_all[n]]
    for name in sorted(changed):  # sort the few that differ, not every shared name
        mine, theirs = mine_all[name], theirs_all[name]
        rows_only = (
            len(mine) == len(theirs) == 2
            and mine[1:] == theirs[1:]
            and (mine[0], theirs[0]) == vocab
        )
        if rows_only:
            found.append(
                Difference(
                    f"tensor {name}",
                    list(mine),
                    list(theirs),
                    f"{name} {list(theirs)} → {list(mine)}: rows follow the vocabulary",
                    ("quantized",) if mine[0] > theirs[0] else SHAPE_KEEPERS,
                )
            )
            continue
        found.append(
            Difference(
                f"tensor {name}",
                list(mine),
                list(theirs),
                f"{name} {list(theirs)} → {list(mine)}: a different shape",
                SHAPE_KEEPERS,
            )
        )
    return found


def adapter_targets(adapter: Mapping[str, Any]) -> list[str]:
    """Module names an adapter_config.json targets (a list, or a regex string as one item)."""
    targets = adapter.get("target_modules")
    if isinstance(targets, str):
        return [targets]
    if isinstance(targets, list):
        return [str(t) for t in targets if isinstance(t, str)]
    return []


def module_exists(target: str, tensor_names: frozenset[str]) -> bool:
    """Whether a PEFT target (a module name suffix or a full-match regex) exists in the base.

    PEFT full-matches a string ``target_modules`` as a regex. It comes from the audited repo,
    so it runs on RE2 (linear time whatever the pattern: ``(a+)+$`` cannot hang the audit);
    a pattern RE2 cannot read (look-arounds, back-references) is not evidence of a missing
    module.
    """
    modules = {name.rsplit(".", 1)[0] for name in tensor_names}
    if target == "all-linear":
        return True
    if any(ch in target for ch in "*()[]|\\^$?+{}"):
        pattern = _linear_pattern(target)
        if pattern is None:
            return True
        return any(pattern.fullmatch(module) for module in modules)
    return any(module == target or module.endswith("." + target) for module in modules)


def _linear_pattern(target: str):
    """``target`` compiled by RE2 (errors not logged), or None when RE2 cannot read it."""
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(target, options=options)
    except re2.error:
        return None


#: Structures by evidence object, for as long as it lives.
_KNOWN: EvidenceMemo[Structure] = EvidenceMemo(_structure_of)
