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

Which models a block names comes from :mod:`cardaudit.extract.model_names`.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardaudit.extract.clause_subject import base_name
from cardaudit.extract.markdown_prose import (
    Document,
    Table,
    card_document,
    paragraphs,
    parse_document,
    readme_path,
    tables,
)
from cardaudit.extract.model_names import (
    AUDITED,
    DATE_ITEM,
    EMOJI,
    LEAD,
    PAGE,
    ModelNames,
    aliases_of,
    canonical,
    core_and_sizes,
    model_names,
    name_stem,
    prose_table,
)
from cardaudit.extract.subject import PAGE_SUBJECT, Subject
from cardaudit.model import Evidence, RepoSnapshot

__all__ = [
    "AUDITED",
    "PAGE",
    "PAGE_SUBJECT",
    "ModelNames",
    "Reading",
    "Subject",
    "aliases_of",
    "canonical",
    "column_subjects",
    "core_and_sizes",
    "model_names",
    "prose_table",
    "read",
    "read_evidence",
    "subject_json",
    "subject_near",
]


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
    first_offset, first_name = others[0]
    if names.table.self_reference.match(head):
        lead = text[len(text) - len(head) : first_offset] if first_offset >= 0 else ""
        if names.table.possessive_lead.match(lead):  # "Our sibling Heron 70B …"
            return Subject(first_name, section.inherited)
        return section
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
    stem = name_stem(names.original)
    return bool(stem) and not audited and any(name_stem(name) == stem for _, name in others)


def _table_subject(block: Table, section: Subject, names: ModelNames) -> Subject:
    """A table naming the audited model (header or row label, or a self-labelled column:
    "Ours", "This model", "本模型") is its; one whose named models are all others is the
    first other's; otherwise the section's."""
    cells = list(block.rows[0][1][1:]) if block.rows else []
    if any(_self_column(cell, names) for cell in cells):
        return Subject(AUDITED, section.inherited)
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


def _self_column(cell: str, names: ModelNames) -> bool:
    """Whether a header cell names the audited model by a self-reference ("**Ours**")."""
    return bool(names.table.self_column.match(cell.strip(" *_`()[]:")))


def column_subjects(block: Table, section: Subject, names: ModelNames) -> tuple[Subject, ...]:
    """The subject of each column of a table, from its header cell: the audited model's
    name or a self-reference ("Ours") make it the audited model's, another model's name or
    a base reference ("Teacher", "Base model") that model's; any other header (a label
    column, "Student", "Value") keeps the section's subject."""
    if not block.rows:
        return ()
    found = []
    for cell in block.rows[0][1]:
        text = cell.strip(" *_`")
        audited, named = names.scan(text, loose=True)
        if audited or _self_column(text, names):
            found.append(Subject(AUDITED, section.inherited))
        elif named and _leads(text, named[0][0]):
            found.append(Subject(named[0][1], section.inherited))
        elif text and names.table.base_reference.match(text):
            found.append(Subject(base_name(names, [name for _, name in named]), section.inherited))
        else:
            found.append(section)
    return tuple(found)


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
    if subject.reported:
        data["reported"] = True
    return data
