"""DRV rules: is the model what it says it is derived from?"""

from __future__ import annotations

from collections.abc import Iterator

from cardaudit.checks.base_inputs import require_bases
from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.derivation import (
    pair_bases,
    relation_of,
    structure_differences,
    tokenizer_comparison,
)
from cardaudit.extract.lineage import (
    ADAPTER,
    CONFIG,
    MERGEKIT,
    METADATA,
    PROSE,
    adapter_config,
    all_claims,
    lineage_table,
    relation_evidence,
    same_model,
)
from cardaudit.extract.structure import adapter_targets, module_exists, structure_of
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule

SOURCE_WORDS = {
    PROSE: "the card's prose",
    CONFIG: "config.json _name_or_path",
    ADAPTER: "adapter_config.json",
    "mergekit_config": "the mergekit config",
}


def _claims(evidence: Evidence, facts: Facts):
    return facts.base_models or all_claims(evidence)


@check("DRV001")
def claims_disagree(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    claims = _claims(evidence, facts)
    metadata = [ref for ref in claims if ref.source == METADATA]
    if not metadata:
        raise NotApplicable("the card declares no base_model")
    others = [ref for ref in claims if ref.source != METADATA]
    prose_agrees = any(
        ref.source == PROSE and any(same_model(ref.id, m.id) for m in metadata) for ref in others
    )
    declared = ", ".join(ref.id for ref in metadata)
    for ref in others:
        if any(same_model(ref.id, m.id) for m in metadata):
            continue
        if ref.source == PROSE and prose_agrees:
            continue  # the prose also names the declared base: this is its base, or a sibling
        severity = rule.param("config_severity") if ref.source == CONFIG else None
        yield Hit(
            f"metadata says the base is {declared}, but {SOURCE_WORDS.get(ref.source, ref.source)} "
            f"says {ref.id}",
            ref.location,
            _excerpt(evidence, ref.location),
            severity,
        )


@check("DRV002")
def base_not_declared(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    claims = _claims(evidence, facts)
    if any(ref.source == METADATA for ref in claims):
        raise NotApplicable("the card declares base_model")
    named = [ref for ref in claims if ref.source in (PROSE, ADAPTER, "mergekit_config")]
    if not named:
        raise NotApplicable("nothing names a base model")
    first = named[0]
    listing = ", ".join(
        f"{ref.id} ({ref.location.display()})" for ref in named[: int(rule.param("max_listed", 5))]
    )
    yield Hit(
        f"the repo names base model(s) {listing} but the card metadata has no base_model",
        first.location,
        _excerpt(evidence, first.location),
    )


@check("DRV003")
def family_mismatch(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    structure = structure_of(evidence)
    model_type = structure.text_model_type or structure.model_type
    if not model_type:
        raise NotApplicable("config.json has no model_type")
    metadata = [ref for ref in _claims(evidence, facts) if ref.source == METADATA]
    if not metadata:
        raise NotApplicable("the card declares no base_model")
    if relation_of(evidence) == "merge" or len(metadata) > 1:
        raise NotApplicable("a merge may mix families")
    families = lineage_table().families
    for ref in metadata:
        words = [word for word in families if word in ref.id.lower()]
        if not words:
            continue
        allowed = {t for word in words for t in families[word]}
        if model_type in allowed or (structure.model_type or "") in allowed:
            continue
        text = evidence.repo.text("config.json")
        line = text.find_line(r'"model_type"') if text else None
        yield Hit(
            f"config.json model_type {model_type!r} is not a {'/'.join(words)} architecture, "
            f"yet the card declares base_model {ref.id}",
            Location("config.json", line, "model_type"),
            text.excerpt(line) if text and line else None,
        )


def _relation_location(evidence: Evidence) -> Location:
    card = evidence.card
    if card is None:
        return Location(None)
    key = "base_model_relation" if card.key_line("base_model_relation") else "base_model"
    return Location(card.path, card.key_line(key), key)


@check("DRV004")
def structure_contradicts(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    pairs = [pair for pair in pair_bases(evidence) if pair.evidence is not None]
    if not pairs:
        require_bases(evidence, "comparing the files with the base model's")
        raise NotApplicable("no base model evidence to compare with")
    relation = relation_of(evidence)
    if relation is None:
        raise NotApplicable("no relation to the base is claimed")
    where = _relation_location(evidence)
    if relation == "merge":
        yield from _merge_parents(pairs, where)
        return
    for pair in pairs:
        differences = structure_differences(evidence, pair.evidence)
        broken = [d for d in differences if relation in d.contradicts]
        if not broken:
            continue
        limit = int(rule.param("max_listed", 4))
        listing = "; ".join(d.explanation for d in broken[:limit])
        more = f" (and {len(broken) - limit} more)" if len(broken) > limit else ""
        yield Hit(
            f"claimed {relation} of {pair.id}, but the files differ from the base: {listing}{more}",
            where,
            _excerpt(evidence, where),
        )


def _merge_parents(pairs, where: Location) -> Iterator[Hit]:
    from cardaudit.extract.structure import compare

    first = pairs[0]
    reference = structure_of(first.evidence)
    for other in pairs[1:]:
        differences = compare(structure_of(other.evidence), reference)
        broken = [d for d in differences if "finetune" in d.contradicts]
        if broken:
            yield Hit(
                f"merge parents {first.id} and {other.id} do not share shapes: "
                + "; ".join(d.explanation for d in broken[:4]),
                where,
            )


@check("DRV005")
def relation_lacks_files(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    claims = _claims(evidence, facts)
    relation = next((r.relation for r in claims if r.source == METADATA and r.relation), None)
    if relation not in ("quantized", "adapter", "merge"):
        raise NotApplicable("no quantized / adapter / merge relation declared")
    files = relation_evidence(evidence)
    where = _relation_location(evidence)
    if relation in files:
        return
    if relation == "merge" and len([r for r in claims if r.source == METADATA]) > 1:
        return  # several declared parents are the merge's evidence
    needs = {
        "quantized": "quantization_config in config.json, no quantize_config.json and no GGUF file",
        "adapter": "adapter_config.json",
        "merge": "mergekit config and names only one base model",
    }[relation]
    yield Hit(
        f"base_model_relation is {relation}, but the repo has no {needs}",
        where,
        _excerpt(evidence, where),
    )


@check("DRV006")
def adapter_targets_missing(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    adapter = adapter_config(evidence)
    if adapter is None:
        raise NotApplicable("no adapter_config.json")
    pairs = [pair for pair in pair_bases(evidence) if pair.evidence is not None]
    names = frozenset().union(*(structure_of(p.evidence).tensor_names for p in pairs))
    if not names:
        require_bases(evidence, "checking the adapter's target modules against the base model")
        raise NotApplicable("no base tensor names to compare with")
    text = evidence.repo.text("adapter_config.json")
    for target in adapter_targets(adapter):
        if module_exists(target, names):
            continue
        line = text.find_text(f'"{target}"') if text else None
        yield Hit(
            f"adapter targets module {target!r}, which the base model does not have",
            Location("adapter_config.json", line, "target_modules"),
            text.excerpt(line) if text and line else None,
        )


@check("DRV007")
def tokenizer_breaks(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    pairs = [pair for pair in pair_bases(evidence) if pair.evidence is not None]
    found = False
    for pair in pairs:
        comparison = tokenizer_comparison(evidence, pair.evidence)
        if comparison is None:
            continue
        found = True
        for problem in comparison.problems:
            yield Hit(
                f"tokenizer differs from {pair.id}'s: {problem}",
                Location("tokenizer.json", 1),
            )
    if not found:
        require_bases(evidence, "comparing the tokenizer with the base model's")
        raise NotApplicable("no tokenizer on both sides")


@check("DRV008")
def relation_value(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    card = evidence.card
    if card is None or "base_model_relation" not in card.metadata:
        raise NotApplicable("no base_model_relation")
    value = card.metadata.get("base_model_relation")
    allowed = lineage_table().relations
    where = Location(card.path, card.key_line("base_model_relation"), "base_model_relation")
    if not isinstance(value, str) or value.strip().lower() not in allowed:
        yield Hit(
            f"base_model_relation {value!r} is not one of {', '.join(allowed)}",
            where,
            _excerpt(evidence, where),
        )
    elif "base_model" not in card.metadata:
        yield Hit("base_model_relation is set but base_model is not", where)


def _excerpt(evidence: Evidence, location: Location) -> str | None:
    if location.path is None or location.line is None:
        return None
    text = evidence.repo.text(location.path)
    return text.excerpt(location.line) if text else None


@check("DRV009")
def base_fingerprint(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    config = evidence.config
    if not isinstance(config, dict):
        raise NotApplicable("no config.json")
    from cardaudit.extract.fingerprint import family_named, size_named

    with_files = {pair.ref.id for pair in pair_bases(evidence) if pair.ref and pair.evidence}
    claims = [
        ref
        for ref in _claims(evidence, facts)
        if ref.source in (METADATA, ADAPTER, MERGEKIT, CONFIG) and ref.id not in with_files
    ]
    checkable = [ref for ref in claims if family_named(ref.id) or size_named(ref.id)]
    if not checkable:
        raise NotApplicable("no claimed base without files names a fingerprinted family or a size")
    places: dict[str, list] = {}
    for ref in checkable:  # one base named in several places is one finding
        places.setdefault(ref.id.lower(), []).append(ref)
    for first, *others in places.values():
        message = _fingerprint_message(config, first.id, rule) or _size_message(
            config, first.id, rule
        )
        if message:
            also = tuple(ref.location for ref in others if ref.location != first.location)
            yield Hit(message, first.location, _excerpt(evidence, first.location), also=also)


SHAPE_FIELDS = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads")


def _fingerprint_message(config: dict, base: str, rule: Rule) -> str | None:
    """The contradiction between ``config`` and the fingerprint of the family ``base``
    names (at the size it names, when the family has it), if any."""
    from cardaudit.extract.fingerprint import (
        contradictions,
        family_named,
        matching_family,
        size_named,
    )

    family = family_named(base)
    if family is None:
        return None
    size = size_named(base)
    size = size if size in family.sizes else None
    broken = contradictions(config, family, size)
    if not broken or any(c.field == "model_type" for c in broken):
        return None  # another architecture altogether is DRV003's finding, not a second one
    limit = int(rule.param("max_listed", 6))
    listing = "; ".join(c.text() for c in broken[:limit])
    more = f" (and {len(broken) - limit} more)" if len(broken) > limit else ""
    if all(c.field in SHAPE_FIELDS for c in broken):
        fits = [
            s
            for s, shape in family.sizes.items()
            if all(config.get(k) == v for k, v in shape.items())
        ]
        hint = f"; it has the shape of {family.name} {fits[0].upper()}" if fits else ""
        return (
            f"base {base} is a {family.name} {size.upper() if size else ''} model, which "
            f"cannot have this config's shape: {listing}{more}{hint}"
        )
    other = matching_family(config, exclude=family.id)
    hint = f"; the config matches {other[0].name} {other[1].upper()}" if other else ""
    return (
        f"config.json does not have the fingerprint of {family.name}, the family of the "
        f"claimed base {base}: {listing}{more}{hint}"
    )


def _size_message(config: dict, base: str, rule: Rule) -> str | None:
    """A parent whose name states a size ("7B", "8x7B") this config's parameter count
    cannot come from, when its family's fingerprint has no such size to compare shapes
    with. Merges may stack a parent's layers (a 120B frankenmerge of 70B parents), so only a
    count beyond ``size_ratio`` times the named size (per token, for an MoE), or a total
    below its inverse, is reported."""
    from cardaudit.extract.config_count import count_from_config, text_config
    from cardaudit.extract.fingerprint import family_named, named_billions, size_named

    size = size_named(base)
    family = family_named(base)
    named = named_billions(size) if size else None
    if named is None or (family is not None and size in family.sizes):
        return None  # no size to compare, or the family's shapes were compared already
    count = count_from_config(config)
    if count is None or not count.total:
        return None
    limit = float(rule.param("size_ratio", 2.5))
    # An MoE built from dense parents (mergekit-moe: "4x7B" experts of a 7B) holds several
    # parents' worth in total but about one to two per token: too big is judged by the
    # parameters active per token, too small by the total.
    largest = count.active or count.total
    if count.total < named * 1e9 / limit:
        ratio, held = count.total / (named * 1e9), f"{count.total / 1e9:,.2f}B parameters"
    elif largest > named * 1e9 * limit:
        ratio = largest / (named * 1e9)
        held = f"{count.total / 1e9:,.2f}B parameters" + (
            f", {largest / 1e9:,.2f}B active per token" if count.active else ""
        )
    else:
        return None
    cfg = text_config(config)
    shape = ", ".join(
        f"{key} {cfg[key]:,}" for key in SHAPE_FIELDS[:2] if isinstance(cfg.get(key), int)
    )
    return (
        f"base {base} is named a {size.upper()} model, but this config holds "
        f"{held} ({shape}; counted from config.json), "
        f"{ratio:,.1f} times that size: no {size.upper()} parent has this shape"
    )
