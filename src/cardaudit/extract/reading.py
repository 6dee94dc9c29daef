"""Reading prose: which model each block of a card or code README is about.

Every block of a parsed document (heading, paragraph, list item, table row) gets a
:class:`Subject`: the audited model, another named model, or the page in general — the
mechanism DESIGN.md calls "Reading prose", shared by promises, claims, figures and lineage.
Subjects come from structure first:

- a heading's subject covers its section (a heading naming the audited model, another model,
  or opening a news list / model zoo / pasted original card);
- a block that names the audited model is about it; a block that starts with another model's
  name ("Sibling-7B is trained on…"), or a news item or a family-section block that names
  another model and not the audited one, is about that other model;
- a table's subject comes from its header and row labels: a table whose named models are all
  others is theirs, one that names the audited model is the audited model's;
- in a converted repo (a quantization or format conversion by someone else), the original
  card it carries is the original's: its blocks are marked ``inherited``.

Model names are recognised by shape (a word with a digit, an ``org/name`` id, a name sharing
the audited model's family stem), never from a list of models; the few words structure
cannot give are data in ``rules/tables/prose.yaml``. Hand-written because no library reads
model cards this way; every pattern here is linear-time (bounded repetition, no nested
quantifiers over overlapping classes).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from cardaudit.extract.markdown_prose import (
    Document,
    Table,
    card_document,
    paragraphs,
    parse_document,
    readme_path,
    tables,
)
from cardaudit.model import Evidence, RepoSnapshot
from cardaudit.rules import load_table

AUDITED = "audited"
PAGE = "page"

#: A model-name-shaped token: an optional ``org/`` and parts joined by "-" or by a space
#: before a part with a digit ("Llama 3.2 3B", "DeepSeek R1", "Qwen2.5-7B", "org/Model-1.5").
NAME = re.compile(
    r"(?<![\w./@-])(?:[A-Za-z0-9][\w.-]{0,60}/)?[A-Za-z][\w.]{0,60}"
    r"(?:(?:-| (?=\d)| (?=[A-Za-z]{1,3}\d))[\w.]{1,60}){0,8}"
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
class Subject:
    """What a block is about: ``about`` is "audited", "page" or another model's name;
    ``inherited`` marks the original card a converted repo carries."""

    about: str = PAGE
    inherited: bool = False

    @property
    def charged(self) -> bool:
        """Whether a finding may charge the audited model with this block."""
        return self.about in (AUDITED, PAGE)


PAGE_SUBJECT = Subject()


@dataclass(frozen=True)
class ProseTable:
    variant_suffix: re.Pattern[str]
    size_part: re.Pattern[str]
    converted_name: re.Pattern[str]
    family_sections: re.Pattern[str]
    original_card: re.Pattern[str]
    self_reference: re.Pattern[str]
    not_model_names: re.Pattern[str]
    generic_names: re.Pattern[str]


@cache
def prose_table() -> ProseTable:
    raw: dict[str, Any] = load_table("prose")
    flags = re.IGNORECASE
    return ProseTable(
        **{key: re.compile(str(raw[key]), flags) for key in ProseTable.__dataclass_fields__}
    )


def canonical(name: str) -> str:
    """A comparable form of a model name: no org, lower case, no separators or dots."""
    name = name.strip().strip("*_`.,;:!?\"'()[]").rsplit("/", 1)[-1].lower()
    return re.sub(r"[\s_.\-]+", "", name)


def _stem(name: str) -> str:
    match = re.match(r"[a-z]+", name.rsplit("/", 1)[-1].lower())
    return match.group(0) if match and len(match.group(0)) >= 3 else ""


def aliases_of(name: str, table: ProseTable) -> set[str]:
    """``name`` and the names it goes by without trailing size / format / variant parts."""
    found = {canonical(name)}
    parts = re.split(r"[-_ ]", name.rsplit("/", 1)[-1])
    while len(parts) > 1 and table.variant_suffix.match(parts[-1]):
        parts.pop()
        found.add(canonical("-".join(parts)))
    return {alias for alias in found if len(alias) >= 3}


def core_and_sizes(name: str, table: ProseTable) -> tuple[str, frozenset[str]]:
    """(the name without trailing size / format / variant parts, the sizes among them)."""
    parts = re.split(r"[-_ ]", name.rsplit("/", 1)[-1])
    sizes = set()
    while len(parts) > 1 and table.variant_suffix.match(parts[-1]):
        part = parts.pop().lower()
        if table.size_part.match(part):
            sizes.add(part)
    return canonical("-".join(parts)), frozenset(sizes)


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
    memo: dict[tuple[str, str], bool] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

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
        if _stem(bare) in self.stems:
            return True
        return loose and _looks_like_model(bare)

    def named(self, text: str) -> list[tuple[int, bool, str]]:
        """(offset, is the audited model, name) of every model named in ``text``, in order;
        a self-reference ("our model", "we") counts as the audited model."""
        found = [(start, False, name) for start, name in self.scan(text)[1]]
        clean = LINK_TARGET.sub(lambda m: " " * len(m.group(0)), text)
        for match in NAME.finditer(clean):
            token = match.group(0).rstrip(".-")
            if self.is_audited(token):
                found.append((match.start(), True, token))
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
            if found is AUDITED:
                audited = True
            elif found:
                others.append((start, token))
        return audited, others


def _token_kind(names: ModelNames, token: str, loose: bool, heading: bool) -> str | bool:
    """What one token of :meth:`ModelNames.scan` is: AUDITED (it or a form of it names the
    audited model), True (another model's name) or False."""
    if any(names.is_audited(candidate) for candidate in _prefixes(token, heading)):
        return AUDITED
    return names.is_other(token, loose)


#: Most words a card repeats are remembered per ModelNames, up to this many.
MEMO_LIMIT = 100_000


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
    forms = [token]
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
    for position, name in enumerate(names):
        if not name or table.generic_names.match(name.rsplit("/", 1)[-1].strip()):
            continue
        aliases |= aliases_of(name, table)
        sizes |= core_and_sizes(name, table)[1]
        if position < 2 or name == value:  # the repo ids and model_name, not a title
            stems.add(_stem(name))
    bases = metadata.get("base_model")
    bases = [bases] if isinstance(bases, str) else bases if isinstance(bases, list) else []
    bases = [str(b) for b in bases if isinstance(b, str) and b.strip()]
    known = {canonical(b) for b in bases} - aliases
    converted = _is_converted(evidence, metadata, table)
    original = bases[0] if converted and bases else None
    own_org = evidence.target.id.replace("__", "/").split("/", 1)[0].lower()
    third_party = bool(original) and original.split("/", 1)[0].lower() != own_org
    if original:
        stems.add(_stem(original))
    return ModelNames(
        frozenset(aliases),
        frozenset(s for s in stems if s),
        frozenset(known),
        frozenset(sizes),
        frozenset(canonical(name) for name in names[:2] if name),
        original if third_party else None,
        converted,
        table,
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


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Reading:
    """A document with the subject of every prose line and of every table."""

    document: Document
    subjects: Mapping[int, Subject]
    table_subjects: Mapping[int, Subject]  # table start line → subject
    tables: tuple[Table, ...] = ()
    names: ModelNames | None = None

    def at(self, line: int) -> Subject:
        return self.subjects.get(line, PAGE_SUBJECT)

    def table_subject(self, table: Table) -> Subject:
        return self.table_subjects.get(table.start, self.at(table.start))


def _section_subject(title: str, parent: Subject, names: ModelNames) -> Subject:
    """A heading naming the audited model makes its section the audited model's; one that
    starts with another model's name ("DeepSeek-R1-Distill Models"), that model's."""
    audited, others = names.scan(title, loose=True, heading=True)
    if audited:
        return Subject(AUDITED, parent.inherited)
    if others and _leads(title, others[0][0]):
        return Subject(others[0][1], parent.inherited)
    if names.table.family_sections.search(title):
        return Subject(PAGE, parent.inherited)
    return parent


def _block_subject(text: str, section: Subject, family: bool, names: ModelNames) -> Subject:
    """The subject of one block (paragraph, list item, table row) in a section."""
    dated = bool(DATE_ITEM.match(text))
    loose = family or dated
    audited, others = names.scan(text, loose=loose)
    if audited:
        return Subject(AUDITED, section.inherited)
    if not others:
        return section
    head = EMOJI.sub("", LEAD.sub("", text), count=1).lstrip("*_[`")
    if names.table.self_reference.match(head):
        return section
    first_offset, first_name = others[0]
    if loose or _leads(text, first_offset):
        return Subject(first_name, section.inherited)
    return section


def _leads(text: str, offset: int) -> bool:
    """Whether nothing but markup comes before ``offset`` of ``text``."""
    lead = LEAD.match(text)
    start = lead.end() if lead else 0
    return not text[start:offset].strip(" *_[`\"'“:>|-")


def subject_near(reading: Reading, line: int, text: str, offset: int) -> Subject:
    """The subject of what ``text`` says at ``offset``: the block's, unless the nearest model
    named before it in the sentence is another model ("…our Sibling-405B, which will be
    the top-performing LLM" is the sibling's)."""
    subject = reading.at(line)
    if not subject.charged or reading.names is None:
        return subject
    nearest: tuple[int, bool, str] | None = None
    for start, audited, name in reading.names.named(text[:offset]):
        nearest = (start, audited, name)
    if nearest is None or nearest[1]:
        return subject
    return Subject(nearest[2], subject.inherited)


def read(document: Document, names: ModelNames) -> Reading:
    """The subject of every prose line and table of ``document``."""
    table = names.table
    section_of: dict[int, tuple[Subject, bool]] = {}  # heading line → (subject, family)
    stack: list[tuple[int, Subject, bool]] = []  # (depth, subject, family)
    in_original = False
    seen_heading = False
    subjects: dict[int, Subject] = {}
    for line in document.lines:
        if line.heading is None:
            continue
        depth = len(line.section)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent, family = (stack[-1][1], stack[-1][2]) if stack else (PAGE_SUBJECT, False)
        if names.original and not in_original:
            in_original = _opens_original(line.heading, depth, seen_heading, names)
        seen_heading = True
        if in_original and not parent.inherited:
            parent = Subject(parent.about, True)
        subject = _section_subject(line.heading, parent, names)
        family = family or bool(table.family_sections.search(line.heading))
        stack.append((depth, subject, family))
        section_of[line.number] = (subject, family)
        subjects[line.number] = subject

    def section_for(start: int) -> tuple[Subject, bool]:
        return section_of.get(start, (PAGE_SUBJECT, False))

    for paragraph in paragraphs(document):
        section, family = section_for(paragraph.first.section_start)
        subject = _block_subject(paragraph.text, section, family, names)
        for line in paragraph.lines:
            subjects[line.number] = subject
    found_tables = tuple(tables(document))
    table_subjects: dict[int, Subject] = {}
    for block in found_tables:
        first = document.line(block.start)
        section, family = section_for(first.section_start if first else 0)
        table_subjects[block.start] = _table_subject(block, section, names)
        for number, cells in block.rows:
            subjects[number] = _block_subject(" | ".join(cells), section, True, names)
    for line in document.lines:
        if line.number not in subjects:
            subjects[line.number] = section_for(line.section_start)[0]
    return Reading(document, subjects, table_subjects, found_tables, names)


def _opens_original(title: str, depth: int, seen_heading: bool, names: ModelNames) -> bool:
    """Whether a heading opens the original card a converted repo carries: it says so
    ("Original model card"), or it is a later top-level heading naming the original's family."""
    if names.table.original_card.search(title):
        return True
    if not seen_heading or depth != 1 or names.original is None:
        return False
    audited, others = names.scan(title, loose=True)
    stem = _stem(names.original)
    return bool(stem) and not audited and any(_stem(name) == stem for _, name in others)


def _table_subject(block: Table, section: Subject, names: ModelNames) -> Subject:
    """A table naming the audited model (header or row label) is its; one whose named
    models are all others is the first other's; otherwise the section's."""
    cells = list(block.rows[0][1][1:]) if block.rows else []
    cells += [row[0] for _, row in block.rows[1:] if row]
    others: list[str] = []
    for cell in cells:
        audited, named = names.scan(cell, loose=True)
        if audited:
            return Subject(AUDITED, section.inherited)
        others += [name for _, name in named]
    if others and section.charged:
        return Subject(others[0], section.inherited)
    return section


# --------------------------------------------------------------------------- evidence


#: ``read_evidence`` per live Evidence (by id; an entry goes when its Evidence is collected).
_READINGS: dict[int, tuple[tuple[Reading, RepoSnapshot], ...]] = {}


def read_evidence(evidence: Evidence) -> tuple[tuple[Reading, RepoSnapshot], ...]:
    """The card body and the code repo's README, read once per (immutable) Evidence."""
    key = id(evidence)
    found = _READINGS.get(key)
    if found is None:
        found = _READINGS[key] = _read_evidence(evidence)
        weakref.finalize(evidence, _READINGS.pop, key, None)
    return found


def _read_evidence(evidence: Evidence) -> tuple[tuple[Reading, RepoSnapshot], ...]:
    names = model_names(evidence)
    found = []
    card = evidence.card
    if card is not None and not card.error:
        document = card_document(card)
        if document is not None:
            found.append((read(document, names), evidence.repo))
    code = evidence.code
    if code is not None:
        path = readme_path(code)
        if path is not None:
            document = parse_document(path, code.texts[path].text, repo="code")
            found.append((read(document, names), code))
    return tuple(found)


def subject_json(subject: Subject) -> dict[str, Any]:
    """``about`` (and ``inherited`` when true) as facts carry them."""
    data: dict[str, Any] = {"about": subject.about}
    if subject.inherited:
        data["inherited"] = True
    return data
