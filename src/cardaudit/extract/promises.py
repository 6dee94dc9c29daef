"""Promises: what the card and the code README commit to releasing.

Detection starts from the commitment (future or intent around releasing, "coming soon",
"stay tuned", "TBD", unchecked roadmap boxes, and the same in Chinese, Japanese and Korean);
the promised item is the phrase the commitment governs, and only then is it put in an
artifact category (none matches: ``other``, never dropped). Patterns, categories, delivery
globs and links are data in ``rules/tables/promises.yaml``. A sentence can promise several
items ("SFT code, training instructions and backend code are coming" is three); each
becomes one mention. Whether a promise was delivered is decided in
:mod:`cardaudit.extract.promise_delivery`; which promises are the same, in
:mod:`cardaudit.extract.promise_identity`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from cardaudit.extract.literal_filter import lowered, ruled_out, search
from cardaudit.extract.markdown_blocks import TABLE_ROW
from cardaudit.extract.markdown_prose import (
    Document,
    Line,
    cleaned_sentences,
    paragraphs,
    sentences,
)
from cardaudit.extract.promise_hedges import hedged, publisher_part
from cardaudit.rules import load_table

#: Linear on any line: the text stops at a bracket (``\]`` escapes one), the target at a
#: space or bracket, and nothing is given back (a link's parts never overlap).
LINK = re.compile(r"!?\[((?:[^\[\]\\]|\\.)*+)\]\(([^)\s\[\]]*+)[^)\[\]]*+\)")
BARE_URL = re.compile(r"https?://[^\s)>\]\"']+")
MARKUP = re.compile(r"<[^<>]++>|\*\*|__|`|\\(?=[\\`*_{}\[\]()#+\-.!|])")
WORD = re.compile(r"[a-z0-9][a-z0-9.+-]*|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
#: Linear: the attributes stop at the next ``<`` and the text at the next ``<a`` or ``</a>``.
HTML_LINK = re.compile(
    r"<a\s[^<>]*?href=[\"']([^\"'<>]+)[\"'][^<>]*+>([^<]*+(?:<(?!/?a[\s>])[^<]*+)*+)</a>",
    re.IGNORECASE,
)
#: A run of word characters, dots and hyphens; names() picks the model and version names
#: out of each run (one pass: a per-position search for "a letter, then a digit later"
#: would be quadratic on a long word without digits).
NAME_RUN = re.compile(r"[\w.-]+")
VERSION = re.compile(r"(?<![\d.])\d++(?:\.\d++)+")
CAMEL = re.compile(r"(?<![a-z])[a-z]+[A-Z][\w-]*")
FIRST_LETTER = re.compile(r"[A-Za-z]")
#: Where the phrase a commitment governs ends: after it ("release the SFT code | for …"),
#: and before it ("… ; the technical report | will be released").
AFTER_STOP = re.compile(
    r"[.;:!?()\[\]。；：！？，、]|,\s|\s(?:in|on|at|by|soon|later|shortly|next|after|before|"
    r"when|once|within|for|under|via|through|as|so|with|to|from|until|upon|here|there|beyond|than|"
    r"and\s+(?:will|we|it)|which|that|if)\b",
    re.IGNORECASE,
)
BEFORE_STOP = re.compile(
    r"[.;:!?()\[\]。；：！？]|\b(?:and|but|while|because|so)\s+(?=\w+\s+will\b)"
)
#: Particles that end a CJK noun phrase ("学習コードは", "학습 코드는").
CJK_PARTICLE = re.compile(r"(?:は|を|が|も|の|은|는|을|를|이|가|도)$")
PRONOUN = re.compile(
    r"^(?:it|them|this|that|these|those|they|we|you|i|more|everything|all|details?)$", re.I
)


@dataclass(frozen=True)
class Marker:
    """A form of commitment. ``items``: where the promised phrase is ("after" the marker,
    "before" it, "either"); ``commitment``: an unknown phrase it governs is still a promise
    (``other``); ``needs_artifact``: only a known artifact makes it one."""

    id: str
    regex: re.Pattern[str]
    needs_artifact: bool
    items: str = ""
    commitment: bool = False

    @property
    def items_after(self) -> bool:
        return self.items == "after"


@dataclass(frozen=True)
class ArtifactSpec:
    name: str
    label: str
    phrases: tuple[re.Pattern[str], ...]
    files: tuple[str, ...]
    links: tuple[re.Pattern[str], ...]
    keyword_match: bool
    looked_for: str
    not_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromiseTable:
    markers: tuple[Marker, ...]
    trigger: re.Pattern[str]  # any marker: one search rules a sentence out
    excludes: tuple[re.Pattern[str], ...]
    unchecked: re.Pattern[str]
    checked: re.Pattern[str]
    roadmap_headings: re.Pattern[str]
    delivered_words: re.Pattern[str]
    artifacts: Mapping[str, ArtifactSpec]
    stopwords: frozenset[str]
    model_repo_ignore: tuple[str, ...] = ()

    def label(self, artifact: str) -> str:
        spec = self.artifacts.get(artifact)
        return spec.label if spec else "unrecognised artifact"


@cache
def promise_table() -> PromiseTable:
    raw: dict[str, Any] = load_table("promises")
    flags = re.IGNORECASE
    markers = tuple(
        Marker(
            str(entry["id"]),
            re.compile(entry["pattern"], 0 if entry.get("case_sensitive") else flags),
            bool(entry.get("needs_artifact")),
            str(entry.get("items") or ""),
            bool(entry.get("commitment")),
        )
        for entry in raw["markers"]
    )
    trigger = "|".join(
        f"(?{'' if entry.get('case_sensitive') else 'i'}:{entry['pattern']})"
        for entry in raw["markers"]
    )
    artifacts = {
        str(name): ArtifactSpec(
            name=str(name),
            label=str(spec.get("label", name)),
            phrases=tuple(re.compile(p, flags) for p in spec.get("phrases") or ()),
            files=tuple(str(glob) for glob in spec.get("files") or ()),
            links=tuple(re.compile(p, flags) for p in spec.get("links") or ()),
            keyword_match=bool(spec.get("keyword_match")),
            looked_for=str(spec.get("looked_for") or ", ".join(spec.get("files") or ())),
            not_files=tuple(str(glob) for glob in spec.get("not_files") or ()),
        )
        for name, spec in raw["artifacts"].items()
    }
    roadmap = raw["roadmap"]
    return PromiseTable(
        markers=markers,
        trigger=re.compile(trigger),
        excludes=tuple(re.compile(p, flags) for p in raw.get("exclude") or ()),
        unchecked=re.compile(roadmap["unchecked"]),
        checked=re.compile(roadmap["checked"]),
        roadmap_headings=re.compile(roadmap["headings"], flags),
        delivered_words=re.compile(raw["delivered_words"], flags),
        artifacts=artifacts,
        stopwords=frozenset(str(word).lower() for word in raw.get("stopwords") or ()),
        model_repo_ignore=tuple(str(glob) for glob in raw.get("model_repo_ignore") or ()),
    )


# --------------------------------------------------------------------------- mentions


@dataclass(frozen=True)
class Mention:
    """A promised (or delivered) item at one line of one document."""

    path: str
    repo: str
    line: int
    text: str
    artifact: str
    item: str
    marker: str


def clean(text: str) -> str:
    """Prose without Markdown links' targets, HTML tags or emphasis."""
    if "](" in text:  # what every LINK match contains: most lines have no link
        text = LINK.sub(lambda m: m.group(1), text)
    text = MARKUP.sub("", text)
    return " ".join(text.split())  # the same as re.sub(r"\s+", " ", text).strip()


def items_in(text: str, table: PromiseTable) -> list[tuple[str, str]]:
    """(artifact, item words) for every artifact named in ``text``, left to right."""
    found: list[tuple[str, str]] = []
    for _start, _end, name, item in item_spans(text, table):
        if (name, item) not in found:
            found.append((name, item))
    return found


def governed(
    text: str, marker: Marker, hit: re.Match[str], table: PromiseTable
) -> list[tuple[str, str]]:
    """The items a marker promises: the one before "(coming soon)", those after "upcoming"
    or "TODO:", otherwise every item of the sentence."""
    spans = item_spans(text, table)
    opening = text[: hit.start()].rstrip()[-1:]
    chosen: list[tuple[int, int, str, str]] = []
    if opening in "([" and opening:
        before = [span for span in spans if span[1] <= hit.start() and hit.start() - span[1] < 80]
        chosen = before[-1:]
    elif marker.items_after:
        chosen = [span for span in spans if span[0] >= hit.end()][:1]
    found: list[tuple[str, str]] = []
    for _start, _end, name, item in chosen or spans:
        if (name, item) not in found:
            found.append((name, item))
    return found


def governed_phrase(text: str, marker: Marker, hit: re.Match[str]) -> tuple[str, str]:
    """(the clause the commitment governs, its noun phrase): after an active marker ("we
    will release | the SFT code for…"), before a passive one ("the technical report | will
    be released"); "either" tries after first. The noun phrase drops leading articles."""
    after = text[hit.end() : hit.end() + 160]
    stop = AFTER_STOP.search(after)
    clause_after = after.split("\n", 1)[0]
    phrase_after = after[: stop.start()] if stop else clause_after
    head = text[max(0, hit.start() - 160) : hit.start()]
    stops = list(BEFORE_STOP.finditer(head))
    clause_before = head[stops[-1].end() :] if stops else head
    order = ("after",) if marker.items == "after" else ("before",)
    if marker.items == "either":
        order = ("after", "before")
    elif marker.items != "after" and not text[: hit.start()].strip():
        order = ("after",)
    for side in order:
        clause = clause_after if side == "after" else clause_before
        phrase = phrase_after if side == "after" else clause_before
        noun = _noun_phrase(phrase, from_end=side == "before")
        if noun:
            return clause.strip(), noun
    return "", ""


def _noun_phrase(phrase: str, from_end: bool) -> str:
    words = phrase.replace("*", " ").split()
    words = words[-8:] if from_end else words[:8]
    while words and words[0].lower().strip("'\"") in LEADING_WORDS:
        words.pop(0)
    noun = " ".join(words).strip(" ,'\"-–—")
    noun = CJK_PARTICLE.sub("", noun)
    if not noun or PRONOUN.match(noun) or not re.search(r"\w{2}", noun):
        return ""
    return noun


LEADING_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "our",
        "its",
        "their",
        "all",
        "some",
        "more",
        "further",
        "also",
        "soon",
        "then",
        "both",
        "any",
    ]
)


def item_spans(text: str, table: PromiseTable) -> list[tuple[int, int, str, str]]:
    """(start, end, artifact, item) of each artifact phrase in ``text``, left to right."""
    spans: list[tuple[int, int, str]] = []
    low = lowered(text)
    for name, spec in table.artifacts.items():
        for regex in spec.phrases:
            if ruled_out(regex, low):
                continue  # the text lacks a word every match of the phrase needs
            for match in regex.finditer(text):
                spans.append((match.start(), match.end(), name))
    spans.sort(key=lambda span: (span[0], -(span[1] - span[0])))
    chosen: list[tuple[int, int, str]] = []
    for span in spans:
        if chosen and span[0] < chosen[-1][1]:
            continue
        if chosen and chosen[-1][2] == span[2] and not text[chosen[-1][1] : span[0]].strip():
            chosen[-1] = (chosen[-1][0], span[1], span[2])  # "Quantized" + "GGUF weights"
            continue
        chosen.append(span)
    return [(start, end, name, text[start:end].strip()) for start, end, name in chosen]


def _promised_items(text: str, marker: Marker, table: PromiseTable) -> list[tuple[str, str]]:
    """What one commitment promises: the known artifacts of the clause it governs, else
    those of the sentence, else (a commitment) the noun phrase it governs as ``other``."""
    hit = marker.regex.search(text)
    if hit is None:
        return []
    opening = text[: hit.start()].rstrip()[-1:]
    clause, noun = governed_phrase(text, marker, hit)
    if clause and opening not in ("(", "["):
        found = items_in(clause, table)
        if found:
            return found
    found = governed(text, marker, hit, table)
    if found:
        return found
    if noun and (marker.commitment or not marker.needs_artifact):
        return [("other", noun[:80])]
    return []


def _roadmap_items(text: str) -> list[tuple[str, str]] | None:
    """A roadmap entry's items: its known artifacts, else, when it words its own commitment
    ("13B 版を準備中です", "a 13B version is in preparation"), the phrase that commitment
    governs rather than the whole line; None leaves the line itself as the item."""
    table = promise_table()
    found = items_in(text, table)
    if found:
        return found
    marker = next((m for m in table.markers if m.commitment and m.regex.search(text)), None)
    return (_promised_items(text, marker, table) or None) if marker else None


def _roadmap_stated(item: str, number: int, add, delivered: list, table: PromiseTable) -> bool:
    """Whether a bullet under a roadmap heading is a plan: one that says it is out ("70Bの
    指示チューニング版は公開済みです") is a delivery, a hedged or conditional one ("需要が
    あれば、1Bモデルの学習も検討します") or someone else's reported plan is no promise."""
    low = lowered(item)
    commitment = search(table.trigger, item, low)
    if commitment is None and search(table.delivered_words, item, low):
        add(delivered, number, item, "statement", bare=False)
        return False
    if commitment is None:
        return publisher_part(item, len(item)) is not None and not hedged(item)
    own = publisher_part(item, commitment.start())
    if own is None:
        return False
    again = search(table.trigger, own)
    return not hedged(own, again.end() if again else None)


def _is_roadmap_section(line: Line, table: PromiseTable) -> bool:
    return any(table.roadmap_headings.match(name) for name in line.section[-1:])


def _bullet(text: str) -> str | None:
    match = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+(.+)$", text)
    return match.group(1) if match else None


def _table_context(document: Document, line: Line, text: str, offset: int) -> str:
    """For a table row, the header of the column holding ``offset`` (what is 'coming soon')."""
    table = document.table_at(line.number)
    if table is None or not table.rows or table.rows[0][0] == line.number:
        return ""
    header = table.rows[0][1]
    column = text[:offset].count("|") - (1 if text.lstrip().startswith("|") else 0)
    return clean(header[column]) if 0 <= column < len(header) else ""


def mentions(document: Document, table: PromiseTable) -> tuple[list[Mention], list[Mention]]:
    """(promises, deliveries) stated in a document's prose."""
    promised: list[Mention] = []
    delivered: list[Mention] = []

    def add(
        target: list[Mention],
        number: int,
        text: str,
        marker: str,
        *,
        bare: bool,
        items: list[tuple[str, str]] | None = None,
    ) -> None:
        found = items if items is not None else items_in(text, table)
        if not found:
            if not bare:
                return
            found = [("other", text[:80])]
        for artifact, item in found:
            target.append(
                Mention(document.path, document.repo, number, text, artifact, item, marker)
            )

    def statements(text: str, at, split: list[tuple[int, str, str]] | None = None) -> None:
        previous, previous_promised = "", False
        parts = split if split is not None else [(o, s, clean(s)) for o, s in sentences(text)]
        for offset, sentence, cleaned in parts:
            context_sentence, previous = previous, cleaned
            repeats, previous_promised = previous_promised, False
            low = lowered(cleaned)
            if not search(table.trigger, cleaned, low):
                if search(table.delivered_words, cleaned, low):
                    add(delivered, at(offset), cleaned, "statement", bare=False)
                continue
            if any(regex.search(cleaned) for regex in table.excludes):
                continue
            marker = next((m for m in table.markers if m.regex.search(cleaned)), None)
            if marker is None:
                continue
            own = publisher_part(cleaned, marker.regex.search(cleaned).start())
            if own is not None and own is not cleaned:  # someone else's plan, then ours
                cleaned = own
                marker = next((m for m in table.markers if m.regex.search(cleaned)), None)
            if own is None or marker is None:
                continue
            if hedged(cleaned, marker.regex.search(cleaned).end()):
                continue
            hit = marker.regex.search(sentence)
            number, context = at(offset + (hit.start() if hit else 0), with_context=True)
            cleaned = f"{context}: {cleaned}" if context else cleaned
            items = _promised_items(cleaned, marker, table)
            if not items and repeats and len(cleaned) < 40:
                previous_promised = True
                continue  # "训练代码即将开源。敬请期待！": the sentence before is the promise
            if not items and context_sentence and len(cleaned) < 40:
                # "lzlvV2 is in the works. Soon(tm)." - the promise is the sentence before
                cleaned = f"{context_sentence} {cleaned}"
                items = items_in(cleaned, table)
            if marker.needs_artifact and not items:
                continue
            add(promised, number, cleaned, marker.id, bare=True, items=items)
            previous_promised = True

    for line in document.prose():
        if line.kind == TABLE_ROW:

            def row_at(offset: int, with_context: bool = False, line: Line = line):
                if not with_context:
                    return line.number
                return line.number, _table_context(document, line, line.text, offset)

            statements(line.text, row_at)

    for paragraph in paragraphs(document):
        first = paragraph.first
        box = table.unchecked.match(paragraph.text)
        done = table.checked.match(paragraph.text)
        if box:
            item = clean(box.group("item"))
            add(promised, first.number, item, "roadmap", bare=True, items=_roadmap_items(item))
            continue
        if done:
            add(delivered, first.number, clean(done.group("item")), "roadmap_checked", bare=False)
            continue
        bullet = _bullet(paragraph.text)
        if bullet and _is_roadmap_section(first, table):
            if bullet.strip().startswith("~~"):
                add(delivered, first.number, clean(bullet), "roadmap_struck", bare=False)
            else:
                item = clean(bullet)
                if _roadmap_stated(item, first.number, add, delivered, table):
                    add(
                        promised,
                        first.number,
                        item,
                        "roadmap",
                        bare=True,
                        items=_roadmap_items(item),
                    )
            continue

        def prose_at(offset: int, with_context: bool = False, paragraph=paragraph):
            number = paragraph.line_at(offset)
            return (number, "") if with_context else number

        statements(paragraph.text, prose_at, cleaned_sentences(paragraph, clean))
    promised.sort(key=lambda m: m.line)
    delivered.sort(key=lambda m: m.line)
    return promised, delivered


def keywords(item: str, table: PromiseTable) -> set[str]:
    """The words of ``item`` that say what it is (stop words dropped)."""
    return {word for word in WORD.findall(item.lower()) if word not in table.stopwords}


def names(text: str) -> set[str]:
    """Model and version names in ``text`` ("iLLaDA", "Qwen3-2507", "3.1", "vLLM"): from a
    letter on, a run with a digit after it; a dotted version; a camelCase word."""
    found: set[str] = set()
    for match in NAME_RUN.finditer(text):
        run = match.group(0)
        letter = FIRST_LETTER.search(run)
        if letter and any(char.isdigit() for char in run[letter.start() + 1 :]):
            found.add(run[letter.start() :])
            continue
        found.update(version.group(0) for version in VERSION.finditer(run))
        camel = CAMEL.search(run)
        if camel:
            found.add(camel.group(0))
    return {token.lower().strip(".-") for token in found} - {""}


def mentions_names(wanted: set[str], text: str) -> bool:
    """Whether ``text`` names one of ``wanted`` (always true when nothing is wanted)."""
    lowered = text.lower()
    return not wanted or any(name in lowered for name in wanted)
