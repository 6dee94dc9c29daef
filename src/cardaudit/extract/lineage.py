"""Claimed lineage: every place a repo says what it was derived from, with file and line.

Sources of claims, each a :class:`BaseModelRef` with its ``source``:

- ``metadata``: ``base_model`` (string or list) and ``base_model_relation`` in the card;
- ``prose``: "fine-tuned from X", "based on X", "merge of X and Y"… (patterns in
  ``rules/tables/lineage.yaml``);
- ``config``: ``_name_or_path`` in config.json when it is a Hub id;
- ``adapter_config``: ``base_model_name_or_path`` in adapter_config.json;
- ``mergekit_config``: the models of mergekit_config.yml, or of a mergekit YAML block in
  the card.

Quantization configs name no base but prove the ``quantized`` relation: see
:func:`relation_evidence`.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from cardaudit.extract import markdown_blocks
from cardaudit.extract.literal_filter import lowered, ruled_out, search
from cardaudit.model import BaseModelRef, Card, Evidence, Location, TextFile
from cardaudit.rules import load_table

METADATA = "metadata"
PROSE = "prose"
CONFIG = "config"
ADAPTER = "adapter_config"
MERGEKIT = "mergekit_config"
QUANT_FILES = ("quantize_config.json", "quant_config.json", "quantization_config.json")
MERGEKIT_FILES = ("mergekit_config.yml", "mergekit_config.yaml")
ADAPTER_FILE = "adapter_config.json"
SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]])\.\s|[;:!?]\s|\n")
NAME_TOKEN = re.compile(r"[A-Za-z0-9][\w.+-]*")
ANY_DIGIT = re.compile(r"\d")
BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
SIMPLE_NAME = re.compile(r"^[A-Za-z]+\d+(?:\.\d+)?[bBmM]?$")


@dataclass(frozen=True)
class LineageTable:
    prose: tuple[tuple[re.Pattern[str], str | None], ...]
    lists: tuple[tuple[re.Pattern[str], str | None], ...]
    hub_link: re.Pattern[str]
    hub_id: re.Pattern[str]
    not_models: frozenset[str]
    relations: tuple[str, ...]
    families: Mapping[str, tuple[str, ...]]
    raw: Mapping[str, Any]


@cache
def lineage_table() -> LineageTable:
    data = load_table("lineage")
    return LineageTable(
        prose=tuple(
            (re.compile(item["pattern"], re.IGNORECASE), item.get("relation"))
            for item in data.get("prose") or ()
        ),
        lists=tuple(
            (re.compile(item["pattern"], re.IGNORECASE), item.get("relation"))
            for item in data.get("lists") or ()
        ),
        hub_link=re.compile(data["hub_link"], re.IGNORECASE),
        hub_id=re.compile(data["hub_id"]),
        not_models=frozenset(str(word).lower() for word in data.get("not_models") or ()),
        relations=tuple(data.get("relations") or ()),
        families={
            str(key).lower(): tuple(values) for key, values in (data.get("families") or {}).items()
        },
        raw=data,
    )


# --------------------------------------------------------------------------- names


def normalise(model_id: str) -> str:
    """A comparable key: the name part of an ``org/name`` id, lower case, no separators."""
    name = model_id.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    return re.sub(r"[\s_\-]+", "", name)


def _tokens(model_id: str) -> list[str]:
    name = model_id.strip().rstrip("/").rsplit("/", 1)[-1].lower()
    return re.findall(r"[a-z]+|\d+", name)


def same_model(a: str, b: str) -> bool:
    """Whether two ids plausibly name the same model.

    Equal names match ("Qwen3.6-35B-A3B" ~ "Qwen/Qwen3.6-35B-A3B"), and so does a shorter
    name whose words, including a version number, run unbroken inside the longer one
    ("Llama 3.1 70B" ~ "Meta-Llama-3.1-70B-Instruct", but not "Meta-Llama-3-70B-Instruct").
    """
    na, nb = normalise(a), normalise(b)
    if not na or not nb:
        return False
    if na == nb:
        return True
    short, long_ = sorted((_tokens(a), _tokens(b)), key=len)
    if len(short) < 2 or not any(token.isdigit() for token in short):
        return False
    width = len(short)
    return any(long_[i : i + width] == short for i in range(len(long_) - width + 1))


def is_hub_id(value: Any) -> bool:
    """``org/name`` shaped, not a local path or URL."""
    if not isinstance(value, str) or value.count("/") != 1:
        return False
    if value.startswith((".", "/", "~")) or ":" in value or "\\" in value:
        return False
    return all(re.fullmatch(r"[A-Za-z0-9][\w.-]*", part) for part in value.split("/"))


def _name_after(text: str) -> str | None:
    """The model named at the start of ``text`` (after a lineage phrase), or None."""
    table = lineage_table()
    head = text[:200]
    stop = SENTENCE_END.search(head)
    clause = head[: stop.start() + 1] if stop else head
    clause = clause.lstrip("*_`\"'“ ")
    bracket = re.match(r"\[([^\]]+)\](?:\(([^)\s]+)\))?", clause)
    if bracket:
        link = table.hub_link.match(bracket.group(2) or "")
        if link:
            return link.group(1).rstrip(".)")
        clause = bracket.group(1).strip("*_` ")
    link = table.hub_link.match(clause)
    if link:
        return link.group(1).rstrip(".)")
    hub = table.hub_id.match(clause)
    if hub and is_hub_id(hub.group(1)):
        return hub.group(1).rstrip(".")
    tokens = []
    for match in NAME_TOKEN.finditer(clause):
        gap = clause[(tokens[-1][1] if tokens else 0) : match.start()]
        if tokens and gap.strip():
            break
        word = match.group(0).rstrip(".")
        if tokens and not ANY_DIGIT.search(word):
            break
        tokens.append((word, match.end()))
        if len(tokens) == 1 and not word[:1].isalpha():
            return None
    name = " ".join(word for word, _ in tokens)
    if not name or not ANY_DIGIT.search(name) or name.lower() in table.not_models:
        return None
    if not name[:1].isupper() and "-" not in name:
        return None
    if " " not in name and not re.search(r"[-_.]", name) and not SIMPLE_NAME.match(name):
        return None  # "C4AI" is an organisation, "Qwen3" / "Mistral7B" are models
    return name


def _prose_lines(card: Card) -> Iterator[tuple[int, str]]:
    """(line number, text) of the card body outside code blocks and HTML comments."""
    lines = card.body.splitlines()
    shape = markdown_blocks.structure(lines, card.body_start_line)
    for offset, line in enumerate(lines):
        number = card.body_start_line + offset
        if shape.is_prose(number):
            yield number, line


# --------------------------------------------------------------------------- claims


def metadata_claims(card: Card | None) -> list[BaseModelRef]:
    if card is None:
        return []
    value = card.metadata.get("base_model")
    relation = card.metadata.get("base_model_relation")
    relation = str(relation).strip().lower() if isinstance(relation, str) else None
    values = value if isinstance(value, list) else [value]
    line = card.key_line("base_model")
    refs = []
    for item in values:
        if isinstance(item, str) and item.strip():
            refs.append(
                BaseModelRef(
                    item.strip(), relation, METADATA, Location(card.path, line, "base_model")
                )
            )
    return refs


def prose_claims(
    card: Card | None,
    own_names: tuple[str, ...] = (),
    about_other: Callable[[int], bool] | None = None,
) -> list[BaseModelRef]:
    """Bases named in the card's prose. ``about_other(line)`` tells a line whose block is
    about another model or inherited from an original card (extract/reading.py): its lineage
    sentences are that model's ("the 70B sibling is fine-tuned from X") and are skipped; a
    list of merged models is read whatever its items' subjects."""
    if card is None:
        return []
    refs: list[BaseModelRef] = []
    own = {normalise(name) for name in own_names}

    titles = [n.rsplit("/", 1)[-1].lower() for n in own_names if len(n.rsplit("/", 1)[-1]) >= 4]
    about_self: list[BaseModelRef] = []

    seen: set[str] = set()  # normalised names already taken
    # same_model needs the shorter name's tokens to run inside the longer one's, so its
    # first two tokens are a pair of the longer: refs are indexed by their first pair and by
    # every pair, and a long card is not names x names.
    by_first: dict[tuple[str, ...], list[BaseModelRef]] = {}
    by_any: dict[tuple[str, ...], list[BaseModelRef]] = {}

    def pairs(name: str) -> list[tuple[str, ...]]:
        tokens = _tokens(name)
        return [tuple(tokens[i : i + 2]) for i in range(max(len(tokens) - 1, 0))]

    def known(name: str) -> bool:
        """Whether ``name`` is a ref already."""
        if normalise(name) in seen:
            return True
        mine = pairs(name)
        candidates: dict[int, BaseModelRef] = {}
        for pair in mine:
            candidates.update((id(ref), ref) for ref in by_first.get(pair, ()))
        if mine:
            candidates.update((id(ref), ref) for ref in by_any.get(mine[0], ()))
        return any(same_model(name, ref.id) for ref in candidates.values())

    def remember(ref: BaseModelRef) -> None:
        seen.add(normalise(ref.id))
        theirs = pairs(ref.id)
        if theirs:
            by_first.setdefault(theirs[0], []).append(ref)
        for pair in set(theirs):
            by_any.setdefault(pair, []).append(ref)

    def add(name: str | None, relation: str | None, line_no: int, before: str = "") -> None:
        if not name or normalise(name) in own:
            return
        if not known(name):
            refs.append(BaseModelRef(name, relation, PROSE, Location(card.path, line_no)))
            remember(refs[-1])
            if _is_subject(before, titles):
                about_self.append(refs[-1])

    list_relation: str | None = None
    in_list = False
    for line_no, line in _prose_lines(card):
        bullet = BULLET.match(line)
        if in_list:
            if bullet:
                add(_name_after(line[bullet.end() :]), list_relation, line_no)
                continue
            if line.strip():
                in_list = False
        low = lowered(line)  # the literal pre-filter rules most patterns out in one test
        for pattern, relation in lineage_table().lists:
            if search(pattern, line, low):
                in_list, list_relation = True, relation
        if about_other is not None and about_other(line_no):
            continue
        for pattern, relation in lineage_table().prose:
            if ruled_out(pattern, low):
                continue
            for match in pattern.finditer(line):
                names = [_name_after(line[match.end() :])]
                if relation == "merge":
                    names = _merge_names(line[match.end() :])
                for name in names:
                    add(name, relation, line_no, line[: match.start()])
    # A card that says "<this model> is based on X" is about itself there; its other
    # lineage sentences describe siblings (e.g. distilled variants) and are set aside.
    return about_self or refs


def _is_subject(before: str, titles: list[str]) -> bool:
    """Whether the sentence before a lineage phrase starts with one of the model's names."""
    sentence = re.split(r"[.!?]\s", before)[-1].lower().lstrip("-*#|> ")
    head = " ".join(sentence.split()[:4])
    return any(re.search(rf"(?<![\w-]){re.escape(title)}(?![\w-])", head) for title in titles)


def _merge_names(text: str) -> list[str | None]:
    """Every model in "X and Y" / "X, Y and Z" after "merge of"."""
    head = text[:300]
    stop = SENTENCE_END.search(head)
    clause = head[: stop.start() + 1] if stop else head
    parts = re.split(r",\s*|\s+and\s+|\s*\+\s*|\s+with\s+", clause)
    return [_name_after(part) for part in parts if part.strip()]


def own_names(evidence: Evidence) -> tuple[str, ...]:
    """Names the repo goes by: its id (``org__name`` folders too) and the card's title."""
    names = [evidence.target.id.replace("__", "/"), evidence.repo.id.replace("__", "/")]
    card = evidence.card
    if card is not None:
        title = markdown_blocks.card_title(card)
        if title:
            names.append(title.strip("*_` "))
    return tuple(name for name in names if name)


def config_claims(evidence: Evidence) -> list[BaseModelRef]:
    config = evidence.config or {}
    value = config.get("_name_or_path")
    if not is_hub_id(value):
        return []
    own = {evidence.target.id, evidence.repo.id}
    if any(same_model(value, name.replace("__", "/")) for name in own if name):
        return []
    text = evidence.repo.text("config.json")
    line = text.find_line(r'"_name_or_path"') if text else None
    return [BaseModelRef(value, None, CONFIG, Location("config.json", line, "_name_or_path"))]


def adapter_config(evidence: Evidence) -> Mapping[str, Any] | None:
    data = evidence.json_file(ADAPTER_FILE)
    return data if isinstance(data, dict) else None


def adapter_claims(evidence: Evidence) -> list[BaseModelRef]:
    data = adapter_config(evidence)
    if data is None:
        return []
    value = data.get("base_model_name_or_path")
    if not isinstance(value, str) or not value.strip():
        return []
    text = evidence.repo.text(ADAPTER_FILE)
    line = text.find_line(r'"base_model_name_or_path"') if text else None
    return [
        BaseModelRef(
            value.strip(),
            "adapter",
            ADAPTER,
            Location(ADAPTER_FILE, line, "base_model_name_or_path"),
        )
    ]


def _mergekit_models(data: Any) -> list[str]:
    """Model ids of a mergekit config (``models``, ``slices[].sources``, ``base_model``)."""
    if not isinstance(data, dict) or not ({"merge_method", "models", "slices"} & set(data)):
        return []
    found: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, dict):
            value = value.get("model")
        if isinstance(value, str) and value.strip() and value.strip() not in found:
            found.append(value.strip())

    for item in data.get("models") or ():
        add(item)
    for piece in data.get("slices") or ():
        for source in (piece or {}).get("sources") or () if isinstance(piece, dict) else ():
            add(source)
    add(data.get("base_model"))
    return found


def _yaml(text: str) -> Any:
    import yaml

    from cardaudit.bounded import BoundsError, load_yaml

    try:
        return load_yaml(text)
    except (yaml.YAMLError, BoundsError):
        return None


def mergekit_claims(evidence: Evidence) -> list[BaseModelRef]:
    refs: list[BaseModelRef] = []
    blocks: list[tuple[TextFile, str, int]] = []
    for name in MERGEKIT_FILES:
        text = evidence.repo.text(name)
        if text is not None:
            blocks.append((text, text.text, 1))
    card = evidence.card
    if card is not None:
        blocks += [(card.file, block, start) for start, block in _yaml_blocks(card)]
    for text, body, start in blocks:
        for model_id in _mergekit_models(_yaml(body)):
            line = _line_of(text, model_id, start)
            if not any(ref.id == model_id for ref in refs):
                refs.append(BaseModelRef(model_id, "merge", MERGEKIT, Location(text.path, line)))
    return refs


def _line_of(text: TextFile, needle: str, start_line: int) -> int:
    lines = text.lines
    for index in range(max(start_line - 1, 0), len(lines)):
        if needle in lines[index]:
            return index + 1
    return start_line


def _yaml_blocks(card: Card) -> Iterator[tuple[int, str]]:
    """(first line, text) of each fenced block in the card that looks like YAML."""
    shape = markdown_blocks.text_structure(card.body, card.body_start_line)
    for block in shape.of_kind(markdown_blocks.CODE):
        if block.fenced and "merge_method" in block.content:
            yield block.start + 1, block.content


def relation_evidence(evidence: Evidence) -> dict[str, Location]:
    """Files that prove a relation by themselves: relation → where."""
    found: dict[str, Location] = {}
    config = evidence.config or {}
    if isinstance(config.get("quantization_config"), dict):
        text = evidence.repo.text("config.json")
        line = text.find_line(r'"quantization_config"') if text else None
        found["quantized"] = Location("config.json", line, "quantization_config")
    else:
        for name in QUANT_FILES:
            if evidence.repo.has(name):
                found["quantized"] = Location(name)
                break
        else:
            gguf = [entry.path for entry in evidence.repo.files if entry.path.endswith(".gguf")]
            if gguf:
                found["quantized"] = Location(gguf[0])
    if evidence.repo.has(ADAPTER_FILE):
        found["adapter"] = Location(ADAPTER_FILE)
    for name in MERGEKIT_FILES:
        if evidence.repo.has(name):
            found["merge"] = Location(name)
    return found


#: ``all_claims`` per live Evidence (by id; an entry goes when its Evidence is collected).
_CLAIMS: dict[int, tuple[BaseModelRef, ...]] = {}


def all_claims(evidence: Evidence) -> tuple[BaseModelRef, ...]:
    """Every lineage claim of the model repo, metadata first.

    Several facts and checks ask for them: they are read once per (immutable) Evidence.
    """
    key = id(evidence)
    claims = _CLAIMS.get(key)
    if claims is None:
        claims = _CLAIMS[key] = _read_claims(evidence)
        weakref.finalize(evidence, _CLAIMS.pop, key, None)
    return claims


def _about_other(evidence: Evidence) -> Callable[[int], bool] | None:
    """Whether a card line is about another model, from the card's reading (the original
    card a converted repo carries tells the original's lineage, not this repo's)."""
    from cardaudit.extract.reading import read_evidence

    card = evidence.card
    for reading, _snapshot in read_evidence(evidence):
        if card is not None and reading.document.repo == "model":
            return lambda line: not reading.at(line).charged or reading.at(line).inherited
    return None


def _read_claims(evidence: Evidence) -> tuple[BaseModelRef, ...]:
    claims: list[BaseModelRef] = []
    for extractor in (
        lambda: metadata_claims(evidence.card),
        lambda: adapter_claims(evidence),
        lambda: mergekit_claims(evidence),
        lambda: config_claims(evidence),
        lambda: prose_claims(evidence.card, own_names(evidence), _about_other(evidence)),
    ):
        try:
            claims += extractor()
        except Exception:  # an odd file never stops the other extractors
            continue
    return tuple(claims)


def claimed_relation(evidence: Evidence, claims: tuple[BaseModelRef, ...]) -> str | None:
    """The relation the repo claims: metadata first, then files, then prose.

    Files alone (a natively FP8 release has a quantization_config) imply no relation when
    nothing names a base.
    """
    if not claims:
        return None
    for ref in claims:
        if ref.source == METADATA and ref.relation:
            return ref.relation
    files = relation_evidence(evidence)
    for relation in ("adapter", "merge", "quantized"):
        if relation in files:
            return relation
    metadata = [ref for ref in claims if ref.source == METADATA]
    if len(metadata) > 1:
        return "merge"
    for ref in claims:
        if (
            ref.source == PROSE
            and ref.relation
            and (not metadata or any(normalise(ref.id) == normalise(m.id) for m in metadata))
        ):
            return ref.relation
    return None


def declared_bases(claims: tuple[BaseModelRef, ...]) -> list[BaseModelRef]:
    """The bases the repo most authoritatively names: metadata, else files, else prose."""
    for sources in ((METADATA,), (ADAPTER, MERGEKIT), (CONFIG,), (PROSE,)):
        refs = [ref for ref in claims if ref.source in sources]
        if refs:
            return refs
    return []
