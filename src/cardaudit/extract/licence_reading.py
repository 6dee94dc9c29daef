"""How a sentence is read for licence terms: its restriction categories (research-only,
non-commercial) by modality — a term needs a restricting word near it; a permission not
negated, or a coordination with its opposite ("commercial and non-commercial purposes"),
cancels it —, what it governs (model, code, project), and whether it is about another model.
The words are data in ``rules/tables/licence_statements.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from cardaudit.extract.model_names import CJK as CJK_RANGES
from cardaudit.rules import load_table

#: Chinese, Japanese (kana too: "のみ") and Korean: matched without word boundaries.
CJK = re.compile(f"[{CJK_RANGES}]")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；])")
ASCII_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Terms:
    """One alternation of table words: ASCII words matched on word boundaries, CJK anywhere."""

    pattern: re.Pattern[str] | None

    @classmethod
    def of(cls, words: Sequence[str]) -> Terms:
        parts = []
        for word in sorted({str(w) for w in words or ()}, key=lambda w: (-len(w), w)):
            escaped = re.escape(word).replace(r"\ ", r"[\s_-]+")
            parts.append(escaped if CJK.search(word) else rf"(?<![\w-]){escaped}(?![\w-])")
        return cls(re.compile("|".join(parts), re.IGNORECASE) if parts else None)

    def find(self, text: str) -> list[re.Match[str]]:
        return list(self.pattern.finditer(text)) if self.pattern else []

    def near(self, text: str, start: int, end: int, window: int) -> bool:
        """Whether a term occurs within ``window`` words (CJK: characters × 2) of [start, end)."""
        reach = window * 8
        lo, hi = max(0, start - reach), min(len(text), end + reach)
        return any(m.end() > lo and m.start() < hi for m in self.find(text))


@dataclass(frozen=True)
class Restriction:
    category: str
    terms: Terms
    markers: Terms
    window: int
    restrictive: bool
    unless: tuple[str, ...] = ()  # categories that, found in the sentence, state it already
    agrees_with: tuple[str, ...] = ()  # licence families that carry the restriction themselves


@dataclass(frozen=True)
class StatementTable:
    badge_markers: Terms
    file_stems: tuple[str, ...]
    restrictions: tuple[Restriction, ...]
    permissions: Terms
    negations: Terms
    opposites: Mapping[str, Terms]
    coordinators: Terms
    model_objects: Terms
    code_objects: Terms
    project_objects: Terms
    data_objects: Terms
    upstream: Terms
    governing_verbs: Terms
    licence_nouns: Terms
    contrast_leads: Terms
    contrast_tails: Terms
    relative_words: Terms
    lifted: Terms
    restriction_nouns: Terms
    lifted_window: int
    earlier_versions: Terms
    past_tense: Terms
    version_tag: re.Pattern[str]
    aup: Terms
    mau: Terms
    mau_numbers: re.Pattern[str]
    territory: Terms
    territory_markers: Terms
    territory_window: int
    registration_fields: Terms
    gating_keys: tuple[str, ...]
    licence_sections: Terms
    #: First words (ASCII) and whole terms (CJK) of every term any reading looks for: a
    #: sentence with none of them is skipped at once.
    trigger_words: frozenset[str]
    trigger_cjk: tuple[str, ...]

    def may_hold_a_term(self, text: str) -> bool:
        if any(term in text for term in self.trigger_cjk):
            return True
        return not self.trigger_words.isdisjoint(ASCII_WORD.findall(text.lower()))


@cache
def statement_table() -> StatementTable:
    data = load_table("licence_statements")
    restrictions = tuple(
        Restriction(
            category=str(spec.get("category") or name),
            terms=Terms.of(spec.get("terms")),
            markers=Terms.of(spec.get("markers") or ()),
            window=int(spec.get("window", 6)),
            restrictive=bool(spec.get("restrictive", False)),
            unless=tuple(str(c) for c in spec.get("unless") or ()),
            agrees_with=tuple(str(f) for f in spec.get("agrees_with") or ()),
        )
        for name, spec in (data.get("restrictions") or {}).items()
    )
    territory = data.get("territory") or {}
    triggers = [
        *(t for spec in (data.get("restrictions") or {}).values() for t in spec["terms"]),
        *((data.get("aup") or {}).get("terms") or ()),
        *((data.get("mau") or {}).get("terms") or ()),
        *(territory.get("terms") or ()),
    ]
    return StatementTable(
        badge_markers=Terms.of(data.get("badge_markers")),
        file_stems=tuple(str(s).lower() for s in data.get("licence_file_stems") or ()),
        restrictions=restrictions,
        permissions=Terms.of(data.get("permission_markers") or ()),
        negations=Terms.of(data.get("negations") or ()),
        opposites={k: Terms.of(v) for k, v in (data.get("opposites") or {}).items()},
        coordinators=Terms.of(data.get("coordinators") or ()),
        model_objects=Terms.of(data.get("model_objects")),
        code_objects=Terms.of(data.get("code_objects")),
        project_objects=Terms.of(data.get("project_objects")),
        data_objects=Terms.of(data.get("data_objects")),
        upstream=Terms.of(data.get("upstream_words")),
        governing_verbs=Terms.of(data.get("governing_verbs")),
        licence_nouns=Terms.of(data.get("licence_nouns")),
        contrast_leads=Terms.of(data.get("contrast_leads")),
        contrast_tails=Terms.of(data.get("contrast_tails")),
        relative_words=Terms.of(data.get("relative_words")),
        lifted=Terms.of(data.get("lifted_markers")),
        restriction_nouns=Terms.of(data.get("restriction_nouns")),
        lifted_window=int(data.get("lifted_window", 6)),
        earlier_versions=Terms.of(data.get("earlier_versions")),
        past_tense=Terms.of(data.get("past_tense")),
        version_tag=re.compile(str(data.get("version_tag") or r"(?!)")),
        aup=Terms.of((data.get("aup") or {}).get("terms")),
        mau=Terms.of((data.get("mau") or {}).get("terms")),
        mau_numbers=re.compile(str((data.get("mau") or {}).get("numbers") or r"\d")),
        territory=Terms.of(territory.get("terms")),
        territory_markers=Terms.of(territory.get("markers")),
        territory_window=int(territory.get("window", 8)),
        registration_fields=Terms.of((data.get("registration") or {}).get("fields")),
        gating_keys=tuple(data.get("gating_keys") or ()),
        licence_sections=Terms.of(data.get("licence_sections")),
        trigger_words=frozenset(
            ASCII_WORD.findall(str(t).lower())[0] for t in triggers if not CJK.search(str(t))
        ),
        trigger_cjk=tuple(str(t) for t in triggers if CJK.search(str(t))),
    )


# --------------------------------------------------------------------------- sentences


def split_sentences(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) pairs; Western and CJK sentence ends."""
    parts, start = [], 0
    for match in SENTENCE.finditer(text):
        parts.append((start, text[start : match.start()]))
        start = match.end()
    parts.append((start, text[start:]))
    return [(offset, part) for offset, part in parts if part.strip()]


def restrictions_in(sentence: str) -> list[str]:
    """The restriction categories a sentence states (research_only, non_commercial, …)."""
    return [category for category, _term in restriction_terms(sentence)]


def restriction_terms(sentence: str) -> list[tuple[str, str]]:
    """(category, the term that states it) of each restriction a sentence states, in table
    order: ("field_of_use", "military")."""
    table = statement_table()
    found: dict[str, str] = {}
    for spec in table.restrictions:
        if any(category in found for category in spec.unless):
            continue
        for term in spec.terms.find(sentence):
            marked = spec.markers.near(sentence, term.start(), term.end(), spec.window)
            if not (spec.restrictive or marked) or _permitted(sentence, term, spec.window):
                continue
            if _coordinated(sentence, term, spec.category):
                continue
            found.setdefault(spec.category, term.group(0))
            break
    return list(found.items())


def agreeing_families(category: str) -> frozenset[str]:
    """The licence families that carry a restriction category themselves (a non-commercial
    licence agrees with "non-commercial use only")."""
    return frozenset(
        family
        for spec in statement_table().restrictions
        if spec.category == category
        for family in spec.agrees_with
    )


def _coordinated(sentence: str, term: re.Match[str], category: str) -> bool:
    """Whether the term is joined by "and" / "or" to its opposite ("commercial and
    non-commercial purposes"), so that the sentence restricts nothing."""
    table = statement_table()
    opposite = table.opposites.get(category)
    if opposite is None:
        return False
    for match in opposite.find(sentence):
        if match.start() >= term.start() and match.end() <= term.end():
            continue  # "commercial" inside "non-commercial"
        lo, hi = sorted(
            (match.end(), term.start())
            if match.end() <= term.start()
            else (term.end(), match.start())
        )
        between = sentence[lo:hi]
        if len(between) <= 12 and table.coordinators.find(between):
            return True
    return False


def _permitted(sentence: str, term: re.Match[str], window: int) -> bool:
    """A permission near the term that no negation just before it turns round."""
    table = statement_table()
    reach = window * 8
    for match in table.permissions.find(sentence):
        if match.end() < term.start() - reach or match.start() > term.end() + reach:
            continue
        if not table.negations.find(sentence[max(0, match.start() - 12) : match.start()]):
            return True
    return False


def about(sentence: str, repo: str) -> str:
    """What a sentence governs: ``model``, ``project``, ``data`` or ``code`` (the first the
    sentence names, in that order; unnamed: the model in a card, the code in a code README)."""
    table = statement_table()
    if table.model_objects.find(sentence):
        return "model"
    if table.project_objects.find(sentence):
        return "project"
    if table.data_objects.find(sentence):
        return "data"
    if table.code_objects.find(sentence):
        return "code"
    return "model" if repo == "model" else "code"


def no_longer_holds(sentence: str, term: str) -> bool:
    """Whether the restriction stated by ``term`` no longer binds the model: the sentence
    says it was lifted after stating it ("…; that restriction was lifted in v0.2"), or puts
    it on an earlier release — an earlier-version subject ("Earlier versions were research
    only") or a version tag in the past tense ("v0.1 was released for research use only")."""
    table = statement_table()
    at = sentence.lower().find(term.lower())
    if at < 0:
        return False
    after, before = sentence[at + len(term) :], sentence[:at]
    for lift in table.lifted.find(after):
        if table.restriction_nouns.near(after, lift.start(), lift.end(), table.lifted_window):
            return True
    if table.earlier_versions.find(before):
        return True
    return bool(table.version_tag.search(before) and table.past_tense.find(before))


#: A Markdown link, read as its text (padded to keep offsets).
MARKDOWN_LINK = re.compile(r"\[([^\[\]\n]*+)\]\([^()\s]*+\)")
BRACKETED_TITLE = re.compile(r"[《「『](?P<title>[^《》「」『』\n]{2,80})[》」』]")
CAPITALISED_TITLE = re.compile(
    r"(?<![\w.+-])(?:the\s+)?(?P<title>[A-Z][\w.+-]*+\s++(?:[A-Z0-9][\w.+-]*+\s++){0,5}"
    r"(?:License|Licence|Agreement)"
    r"(?:\s+Agreement)?)"
)


def governing_titles(clause: str) -> list[tuple[int, str]]:
    """(offset, title) of each licence a clause puts its subject under by title, after a
    governing verb: "需遵守《XX模型社区许可协议》", "is governed by the Acme Model License"."""
    table = statement_table()
    clause = MARKDOWN_LINK.sub(lambda m: m.group(1).ljust(len(m.group(0))), clause)
    verbs = table.governing_verbs.find(clause)
    if not verbs:
        return []
    found = []
    for pattern in (BRACKETED_TITLE, CAPITALISED_TITLE):
        for match in pattern.finditer(clause, verbs[0].end()):
            title = match.group("title").strip()
            if table.licence_nouns.find(title):
                bracketed = pattern is BRACKETED_TITLE
                start, text = (
                    (match.start(), match.group(0)) if bracketed else (match.start("title"), title)
                )
                found.append((start, " ".join(text.split())))  # a link's padding collapsed
    return found


COMMA = re.compile(r"[,，、]\s*")


def own_clause(sentence: str) -> str:
    """The part of a sentence about the audited model: without a leading clause that
    contrasts another model ("Unlike the base model, this model is for research purposes
    only" → "this model is for research purposes only"); the whole sentence otherwise."""
    table = statement_table()
    lead = next(iter(table.contrast_leads.find(sentence[:40])), None)
    if lead is not None and sentence[: lead.start()].strip(" -*_>\t"):
        lead = None  # the contrast word must open the sentence
    cuts = list(COMMA.finditer(sentence))
    if lead is None:
        if not cuts:
            return sentence
        first = sentence[: cuts[0].start()].rstrip()
        if not any(first.endswith(m.group(0)) for m in table.contrast_tails.find(first)):
            return sentence
    for cut in cuts:
        rest = sentence[cut.end() :]
        opens_relative = next(iter(table.relative_words.find(rest[:12])), None)
        if opens_relative is not None and opens_relative.start() == 0:
            continue  # "…, whose licence prohibits …, this model": still the contrast
        return rest
    return sentence


def is_upstream(sentence: str) -> bool:
    return bool(statement_table().upstream.find(sentence))


def subject_of(clause: str) -> str | None:
    """What one clause governs by the first object it names — ``model``, ``code``,
    ``project`` or ``data`` — or None: "The code in this repository is MIT" is about the code
    (its subject comes first), "the model weights are CC BY-NC 4.0" about the model."""
    table = statement_table()
    named = []
    for kind, terms in (
        ("model", table.model_objects),
        ("code", table.code_objects),
        ("project", table.project_objects),
        ("data", table.data_objects),
    ):
        first = next(iter(terms.find(clause)), None)
        if first is not None:
            named.append((first.start(), first.end(), kind))
    if not named:
        return None
    named.sort(key=lambda n: (n[0], -n[1]))
    subject = named[0]
    for other in named[1:]:  # "This code repository and the model weights": both
        gap = clause[subject[1] : other[0]]
        if len(gap.split()) <= 3 and table.coordinators.find(gap) and other[2] == "model":
            return "model"
    return subject[2]


def file_governs(path: str) -> str | None:
    """What a licence file is named for: ``code`` for LICENSE-CODE, LICENSE_code.txt or
    code/LICENSE, ``model`` for LICENSE-WEIGHTS or LICENSE-MODEL, None for a plain LICENSE."""
    *folders, name = path.lower().split("/")
    stem = next((s for s in statement_table().file_stems if name.startswith(s)), "")
    rest = re.sub(r"\.(?:txt|md|rst)$", "", name[len(stem) :])
    words = " ".join([*folders, re.sub(r"[-_.]+", " ", rest)]).strip()
    return subject_of(words) if words else None
