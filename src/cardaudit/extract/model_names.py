"""The audited model's names, and what tells another model's name apart.

Model names are recognised by shape (a word with a digit, an ``org/name`` id, a name sharing
the audited model's family stem), never from a list of models; the few words structure
cannot give are data in ``rules/tables/prose.yaml``. :mod:`cardaudit.extract.reading` asks
:class:`ModelNames` which models a block names. Hand-written because no library reads model
cards this way; every pattern here is linear-time (bounded repetition, no nested
quantifiers over overlapping classes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cardaudit.extract.name_forms import (
    CJK,
    CJK_HEAD,
    ProseTable,
    aliases_of,
    canonical,
    cjk_forms,
    core_and_sizes,
    name_stem,
    prose_table,
    short_forms,
)
from cardaudit.model import Evidence

__all__ = [
    "AUDITED",
    "CJK",
    "PAGE",
    "ModelNames",
    "ProseTable",
    "aliases_of",
    "canonical",
    "cjk_forms",
    "core_and_sizes",
    "model_names",
    "name_stem",
    "prose_table",
    "short_forms",
]

AUDITED = "audited"
PAGE = "page"

#: One part of a name: Latin letters (with accents), digits, "_" and "." — never CJK, so
#: a name written against CJK text ("基于Qwen2.5-7B-Instruct微调") ends where the name does.
_PART = r"[A-Za-z0-9_.\u00c0-\u024f]"
#: A model-name-shaped token: an optional ``org/`` and parts joined by "-" or by a space
#: before a part with a digit ("Llama 3.2 3B", "DeepSeek R1", "Qwen2.5-7B", "org/Model-1.5").
#: A name may start with CJK characters joined to a Latin part ("云雀-7B-Chat", "通义千问2");
#: as CJK text has no spaces, the run may carry the words before the name (its
#: :func:`cjk_forms` drop them).
NAME = re.compile(
    rf"(?<![\w./@-])(?:[A-Za-z0-9][\w.-]{{0,60}}/)?"
    rf"(?:[A-Za-z]{_PART}{{0,60}}|[{CJK}]{{1,16}}(?=-?[A-Za-z0-9]){_PART}{{0,60}})"
    rf"(?:(?:-| (?=\d)| (?=[A-Za-z]{{1,3}}\d)){_PART}{{1,60}}){{0,8}}"
)
LINK_TARGET = re.compile(r"\]\([^)\s]{0,500}\)|<[^>\n]{0,500}>|https?://\S{1,500}")
LEAD = re.compile(r"^[\s>*_`\-+#|\[(\"'“]{0,12}(?:\d+[.)]\s{1,4})?")
DATE_ITEM = re.compile(
    r"^[\s>*_`\-+|\[(]{0,8}(?:\d{4}[-./年]\d{1,2}(?:[-./月]\d{1,2}日?)?|\d{1,2}/\d{1,2}/\d{2,4}"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}\.?\s{1,3}\d{1,2}(?:,\s{0,2}\d{4})?)",
    re.IGNORECASE,
)
SELF = re.compile(r"\b(?:this|our)\s+(?:model|release)\b", re.IGNORECASE)
EMOJI = re.compile(r"^[^\w\s]{1,8}\s{0,3}")
DIGIT = re.compile(r"\d")
#: A letter and a digit in one part, or a digit joined by a hyphen ("Qwen2", "GPT-4o", "X-1.5").
MIXED = re.compile(r"[A-Za-z]\d|\d[A-Za-z]|-\d|\d-")


@dataclass(frozen=True)
class ModelNames:
    """The names of the audited model, and what tells another model's name apart."""

    aliases: frozenset[str]
    stems: frozenset[str]
    known_others: frozenset[str] = frozenset()
    sizes: frozenset[str] = frozenset()  # the sizes in the audited repo's name
    full: frozenset[str] = frozenset()  # the repo names in full (canonical)
    original: str | None = None  # the original model a converted repo carries the card of
    converted: bool = False
    table: ProseTable = field(default_factory=prose_table)
    memo: dict[tuple[Any, str], Any] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )
    #: The audited names without size / variant parts ("云雀" of "云雀-7B-Chat"): the same
    #: core with another size is a sibling ("云雀-72B").
    cores: frozenset[str] = frozenset()
    #: Short forms of the audited cores: their trailing parts from a word of three letters
    #: on ("orca" of "Llama-3.1-Orca-8B", "nova" of "Zephyr-Nova-7B"). With a size the
    #: audited model has, a short form is the audited model ("Orca-8B"); with another, a
    #: sibling ("Orca-70B").
    short_cores: frozenset[str] = frozenset()
    #: The card's base models as written (``base_model``), in order.
    bases: tuple[str, ...] = ()

    def is_audited(self, token: str) -> bool:
        return _is_audited(self, token)

    def is_other(self, token: str, loose: bool = False) -> bool:
        return _is_other(self, token, loose)

    def _audited(self, token: str) -> bool:
        """The audited model's name, it with a size it has ("BLOOM-176B" for "bloom"), or
        a cut-off form of its full name ("Phi-3-Mini-128K-In" in a table header)."""
        key = canonical(token)
        if key in self.aliases:
            return True
        if len(key) >= 8 and any(
            alias.startswith(key) and len(key) * 10 >= len(alias) * 6 for alias in self.full
        ):
            return True
        core, sizes = core_and_sizes(token, self.table)
        if core in self.short_cores and sizes and self.sizes:
            return sizes <= self.sizes
        if core not in self.aliases or not sizes:
            return False
        return not self.sizes or sizes <= self.sizes

    def _other(self, token: str, loose: bool = False) -> bool:
        """Whether ``token`` names another model: an ``org/name`` id, a known base, a name
        of the audited model's family with a digit, or (``loose``: news items, table
        headers) any word with a digit that is not hardware, a format or a benchmark."""
        key = canonical(token)
        if not key or key in self.aliases:
            return False
        if key in self.known_others:
            return True
        bare = token.rsplit("/", 1)[-1]
        if self.table.not_model_names.match(bare.lower()) or not DIGIT.search(bare):
            return "/" in token and not DIGIT.search(token.split("/", 1)[0][:1])
        if "/" in token:
            return True
        if name_stem(bare) in self.stems:
            return True
        if self._sibling(bare):
            return True
        if CJK_HEAD.match(bare):  # CJK words before a Latin name: judge the name
            rest = cjk_forms(bare)[-1:]
            return bool(rest) and rest[0][:1].isalpha() and self._other(rest[0], loose)
        return loose and _looks_like_model(bare)

    def _sibling(self, token: str) -> bool:
        """An audited name's core with a size the audited model does not have."""
        key = canonical(token)
        known = self.cores | self.short_cores
        if not self.sizes or not any(key.startswith(core) for core in known):
            return False
        core, sizes = core_and_sizes(token, self.table)
        return bool(sizes and self.sizes) and core in known and not sizes <= self.sizes

    def other_name(self, token: str, loose: bool = False) -> str | None:
        """The other model ``token`` names, or None: for a CJK run, the ending that is a
        sibling of the audited model, else the Latin name after it."""
        if not CJK_HEAD.match(token):
            return token if self.is_other(token, loose) else None
        for form in (token, *cjk_forms(token)):
            if self._sibling(form):
                return form
        rest = cjk_forms(token)[-1:]
        if rest and rest[0][:1].isalpha() and self.is_other(rest[0], loose):
            return rest[0]
        return None

    def named(self, text: str, loose: bool = False) -> list[tuple[int, bool, str]]:
        """(offset, is the audited model, name) of every model named in ``text``, in order;
        a self-reference ("our model", "we") counts as the audited model; ``loose``: any
        model-shaped word is a name (see :meth:`is_other`). Remembered per text (a card
        repeats its clauses: table rows, list items, boilerplate)."""
        key = ("n", loose, text)
        memo = self.memo
        known = memo.get(key)
        if known is not None:
            return list(known)
        found = self._named(text, loose)
        if len(memo) < MEMO_LIMIT and len(text) <= MEMO_TEXT_LIMIT:
            memo[key] = tuple(found)
        return found

    def _named(self, text: str, loose: bool) -> list[tuple[int, bool, str]]:
        found = [(start, False, name) for start, name in self.scan(text, loose)[1]]
        clean = LINK_TARGET.sub(lambda m: " " * len(m.group(0)), text)
        for match in NAME.finditer(clean):
            token = match.group(0).rstrip(".-")
            for form in (token, *cjk_forms(token)):
                if self.is_audited(form):
                    found.append((match.start() + len(token) - len(form), True, form))
                    break
        for match in SELF.finditer(text):
            found.append((match.start(), True, match.group(0)))
        return sorted(found)

    def scan(
        self, text: str, loose: bool = False, heading: bool = False
    ) -> tuple[bool, list[tuple[int, str]]]:
        """(whether ``text`` names the audited model, [(offset, other model name)]). In a
        heading, the audited name followed by plain words ("DeepSeek-R1-Evaluation") is it."""
        clean = LINK_TARGET.sub(lambda m: " " * len(m.group(0)), text)
        if heading and canonical(clean) in self.aliases:
            return True, []
        audited = False
        others: list[tuple[int, str]] = []
        tokens = [(m.start(), m.end(), m.group(0).rstrip(".-")) for m in NAME.finditer(clean)]
        joined: set[int] = set()
        # whether an audited name can start with each token (most cannot: no join to try)
        starts = [_starts_alias(self, token) for _start, _end, token in tokens]
        for index in range(1, len(tokens)):
            # "Reflection Llama-3.1 70B", "Devstral Small 1.1": names written with spaces
            for width in (3, 2):
                first = index - width + 1
                if (
                    first < 0
                    or not starts[first]
                    or any(
                        clean[tokens[i][1] : tokens[i + 1][0]] != " " for i in range(first, index)
                    )
                ):
                    continue
                if self.is_audited(clean[tokens[first][0] : tokens[index][1]]):
                    audited = True
                    joined |= set(range(first, index + 1))
                    break
        memo = self.memo
        kind = ("t", heading, loose)
        for index, (start, _end, token) in enumerate(tokens):
            if index in joined:
                continue
            key = (kind, token)
            found = memo.get(key)
            if found is None:
                found = _token_kind(self, token, loose, heading)
                if len(memo) < MEMO_LIMIT:
                    memo[key] = found
            if found == (AUDITED, ""):
                audited = True
            elif found:
                other = found[1]
                others.append((start + len(token) - len(other), other))
        return audited, others


def _token_kind(
    names: ModelNames, token: str, loose: bool, heading: bool
) -> tuple[str, str] | tuple[()]:
    """What one token of :meth:`ModelNames.scan` is: (AUDITED, "") when it or a form of it
    names the audited model, ("other", the name) for another model's name (a CJK run's
    ending), or () for neither."""
    if any(names.is_audited(candidate) for candidate in _prefixes(token, heading)):
        return (AUDITED, "")
    other = names.other_name(token, loose)
    return ("other", other) if other is not None else ()


#: Most words a card repeats are remembered per ModelNames, up to this many.
MEMO_LIMIT = 100_000
#: Texts up to this long are remembered by :meth:`ModelNames.named` (clauses, not pages).
MEMO_TEXT_LIMIT = 2_000


def _is_audited(names: ModelNames, token: str) -> bool:
    """:meth:`ModelNames._audited`, remembered: a card repeats its words."""
    memo = names.memo
    key = ("a", token)
    found = memo.get(key)
    if found is None:
        found = names._audited(token)
        if len(memo) < MEMO_LIMIT:
            memo[key] = found
    return found


def _starts_alias(names: ModelNames, token: str) -> bool:
    """Whether an audited name can start with ``token`` (before trying "A B C" joins)."""
    memo = names.memo
    key = ("p", token)
    found = memo.get(key)
    if found is None:
        start = canonical(token)
        found = bool(start) and any(alias.startswith(start) for alias in names.aliases)
        if len(memo) < MEMO_LIMIT:
            memo[key] = found
    return found


def _is_other(names: ModelNames, token: str, loose: bool) -> bool:
    memo = names.memo
    key = ("l" if loose else "o", token)
    found = memo.get(key)
    if found is None:
        found = names._other(token, loose)
        if len(memo) < MEMO_LIMIT:
            memo[key] = found
    return found


def _prefixes(token: str, heading: bool = False) -> list[str]:
    """``token`` and its forms without a possessive ("DeepSeek-R1's"), and in a heading
    without trailing plain words ("DeepSeek-R1-Evaluation" → "DeepSeek-R1")."""
    forms = [token, *cjk_forms(token)]
    if token.endswith(("'s", "’s")):
        forms.append(token[:-2])
    if heading:
        parts = token.split("-")
        while len(parts) > 1 and not DIGIT.search(parts[-1]):
            parts.pop()
            forms.append("-".join(parts))
    return forms


def _looks_like_model(token: str) -> bool:
    """A name with letters and a digit that is not a benchmark ("MMLU-Pro", "GSM8K")."""
    from cardaudit.extract.claims import benchmarks_in, claim_table

    if not MIXED.search(token) or not re.search(r"[A-Za-z]{2}", token):
        return False
    return not benchmarks_in(token, claim_table())


def model_names(evidence: Evidence) -> ModelNames:
    """The audited model's names: repo id, card title, ``model_name``, ``model-index`` names
    and their forms without size / format suffixes; whether the repo is a conversion of
    someone else's model, and which."""
    table = prose_table()
    names = [evidence.target.id.replace("__", "/"), evidence.repo.id.replace("__", "/")]
    card = evidence.card
    metadata: Mapping[str, Any] = card.metadata if card is not None and not card.error else {}
    if card is not None and not card.error:
        from cardaudit.extract.markdown_blocks import card_title

        title = card_title(card)
        if title:
            names.append(title.strip("*_` "))
    value = metadata.get("model_name")
    if isinstance(value, str):
        names.append(value)
    index = metadata.get("model-index")
    for entry in index if isinstance(index, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            names.append(entry["name"])
    aliases: set[str] = set()
    stems: set[str] = set()
    sizes: set[str] = set()
    cores: set[str] = set()
    short: set[str] = set()
    for position, name in enumerate(names):
        if not name or table.generic_names.match(name.rsplit("/", 1)[-1].strip()):
            continue
        aliases |= aliases_of(name, table)
        core, name_sizes = core_and_sizes(name, table)
        sizes |= name_sizes
        if name_sizes and len(core) >= (2 if CJK_HEAD.match(core) else 3):
            cores.add(core)
            short |= short_forms(name, table)
        if position < 2 or name == value:  # the repo ids and model_name, not a title
            stems.add(name_stem(name))
    bases = metadata.get("base_model")
    bases = [bases] if isinstance(bases, str) else bases if isinstance(bases, list) else []
    bases = [str(b) for b in bases if isinstance(b, str) and b.strip()]
    known = {canonical(b) for b in bases} - aliases
    # a short form that is a base's name ("Llama" of "DeepSeek-R1-Distill-Llama-8B") is not ours
    short -= {core_and_sizes(b, table)[0] for b in bases}
    converted = _is_converted(evidence, metadata, table)
    original = bases[0] if converted and bases else None
    own_org = evidence.target.id.replace("__", "/").split("/", 1)[0].lower()
    third_party = bool(original) and original.split("/", 1)[0].lower() != own_org
    if original:
        stems.add(name_stem(original))
    return ModelNames(
        frozenset(aliases),
        frozenset(s for s in stems if s),
        frozenset(known),
        frozenset(sizes),
        frozenset(canonical(name) for name in names[:2] if name),
        original if third_party else None,
        converted,
        table,
        cores=frozenset(cores),
        short_cores=frozenset(short - cores),
        bases=tuple(bases),
    )


def _is_converted(evidence: Evidence, metadata: Mapping[str, Any], table: ProseTable) -> bool:
    relation = metadata.get("base_model_relation")
    if isinstance(relation, str) and relation.strip().lower() == "quantized":
        return True
    if table.converted_name.search(evidence.target.id.rsplit("/", 1)[-1]):
        return True
    config = evidence.config if isinstance(evidence.config, Mapping) else {}
    if isinstance(config.get("quantization_config"), dict):
        return True
    return any(entry.path.lower().endswith(".gguf") for entry in evidence.repo.files)
