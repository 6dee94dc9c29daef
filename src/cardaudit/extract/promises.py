"""Promises: what the card and the code README say is coming, and whether it came.

Patterns, artifact categories, delivery globs and links are data in
``rules/tables/promises.yaml``. A sentence can promise several items ("SFT code, training
instructions and backend code are coming" is three); each becomes one :class:`Promise`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from cardaudit.extract.markdown_blocks import HEADING, TABLE_ROW
from cardaudit.extract.markdown_prose import (
    Document,
    Line,
    card_document,
    paragraphs,
    parse_document,
    readme_path,
    sentences,
)
from cardaudit.model import Evidence, FileVersion, Promise, RepoSnapshot
from cardaudit.rules import load_table

#: Linear on any line: the text stops at a bracket (``\]`` escapes one), the target at a
#: space or bracket, and nothing is given back (a link's parts never overlap).
LINK = re.compile(r"!?\[((?:[^\[\]\\]|\\.)*+)\]\(([^)\s\[\]]*+)[^)\[\]]*+\)")
BARE_URL = re.compile(r"https?://[^\s)>\]\"']+")
MARKUP = re.compile(r"<[^<>]++>|\*\*|__|`|\\(?=[\\`*_{}\[\]()#+\-.!|])")
WORD = re.compile(r"[a-z0-9][a-z0-9.+-]*")


@dataclass(frozen=True)
class Marker:
    id: str
    regex: re.Pattern[str]
    needs_artifact: bool
    items_after: bool = False


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
            entry.get("items") == "after",
        )
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
    text = LINK.sub(lambda m: m.group(1), text)
    text = MARKUP.sub("", text)
    return re.sub(r"\s+", " ", text).strip()


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


def item_spans(text: str, table: PromiseTable) -> list[tuple[int, int, str, str]]:
    """(start, end, artifact, item) of each artifact phrase in ``text``, left to right."""
    spans: list[tuple[int, int, str]] = []
    for name, spec in table.artifacts.items():
        for regex in spec.phrases:
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

    def statements(text: str, at) -> None:
        previous = ""
        for offset, sentence in sentences(text):
            cleaned = clean(sentence)
            context_sentence, previous = previous, cleaned
            if any(regex.search(cleaned) for regex in table.excludes):
                continue
            marker = next((m for m in table.markers if m.regex.search(cleaned)), None)
            if marker is None:
                if table.delivered_words.search(cleaned):
                    add(delivered, at(offset), cleaned, "statement", bare=False)
                continue
            hit = marker.regex.search(sentence)
            number, context = at(offset + (hit.start() if hit else 0), with_context=True)
            cleaned = f"{context}: {cleaned}" if context else cleaned
            items = governed(cleaned, marker, marker.regex.search(cleaned), table)
            if not items and context_sentence and len(cleaned) < 40:
                # "lzlvV2 is in the works. Soon(tm)." - the promise is the sentence before
                cleaned = f"{context_sentence} {cleaned}"
                items = items_in(cleaned, table)
            if marker.needs_artifact and not items:
                continue
            add(promised, number, cleaned, marker.id, bare=True, items=items)

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
            add(promised, first.number, clean(box.group("item")), "roadmap", bare=True)
            continue
        if done:
            add(delivered, first.number, clean(done.group("item")), "roadmap_checked", bare=False)
            continue
        bullet = _bullet(paragraph.text)
        if bullet and _is_roadmap_section(first, table):
            if bullet.strip().startswith("~~"):
                add(delivered, first.number, clean(bullet), "roadmap_struck", bare=False)
            else:
                add(promised, first.number, clean(bullet), "roadmap", bare=True)
            continue

        def prose_at(offset: int, with_context: bool = False, paragraph=paragraph):
            number = paragraph.line_at(offset)
            return (number, "") if with_context else number

        statements(paragraph.text, prose_at)
    promised.sort(key=lambda m: m.line)
    delivered.sort(key=lambda m: m.line)
    return promised, delivered


# --------------------------------------------------------------------------- status


def keywords(item: str, table: PromiseTable) -> set[str]:
    return {word for word in WORD.findall(item.lower()) if word not in table.stopwords}


NAME_TOKEN = re.compile(
    r"(?<![\w.-])(?:[A-Za-z][\w.-]*\d[\w.-]*|\d+(?:\.\d+)+|[a-z]+[A-Z][\w-]*)"
)


def names(text: str) -> set[str]:
    """Model and version names in ``text`` ("iLLaDA", "Qwen3-2507", "3.1", "vLLM")."""
    return {token.lower().strip(".-") for token in NAME_TOKEN.findall(text)}


def mentions_names(wanted: set[str], text: str) -> bool:
    """Whether ``text`` names one of ``wanted`` (always true when nothing is wanted)."""
    lowered = text.lower()
    return not wanted or any(name in lowered for name in wanted)


@dataclass(frozen=True)
class Context:
    """What can prove a delivery: every document's deliveries and links, the code repo, and
    the model repo's own files."""

    deliveries: tuple[Mention, ...]
    links: tuple[tuple[str, str, int, str, str], ...]  # (url, anchor text, path, line, repo)
    code: RepoSnapshot | None
    documents: tuple[Document, ...]
    model: RepoSnapshot | None = None


#: Linear: the attributes stop at the next ``<`` and the text at the next ``<a`` or ``</a>``.
HTML_LINK = re.compile(
    r"<a\s[^<>]*?href=[\"']([^\"'<>]+)[\"'][^<>]*+>([^<]*+(?:<(?!/?a[\s>])[^<]*+)*+)</a>",
    re.IGNORECASE,
)


def _links(document: Document) -> list[tuple[str, str, str, int, str]]:
    """(url, anchor text, path, line, repo) of every link in the document's prose."""
    found = []
    for line in document.prose():
        text = line.text
        for match in LINK.finditer(text):
            if match.group(2):
                found.append((match.group(2), clean(match.group(1)), document.path, line.number))
        for match in HTML_LINK.finditer(text):
            found.append((match.group(1), clean(match.group(2)), document.path, line.number))
        rest = HTML_LINK.sub(" ", LINK.sub(" ", text))
        for match in BARE_URL.finditer(rest):
            found.append((match.group(0), "", document.path, line.number))
    return [(url, anchor, path, number, document.repo) for url, anchor, path, number in found]


def _where(path: str, line: int, repo: str) -> str:
    return f"{path}:{line}" if repo == "model" else f"{repo}:{path}:{line}"


def _glob_files(
    code: RepoSnapshot, globs: Iterable[str], not_globs: Iterable[str] = ()
) -> list[str]:
    patterns = [glob.lower() for glob in globs]
    excluded = [glob.lower() for glob in not_globs]
    return [
        entry.path
        for entry in code.files
        if any(fnmatch.fnmatchcase(entry.path.lower(), pattern) for pattern in patterns)
        and not any(fnmatch.fnmatchcase(entry.path.lower(), glob) for glob in excluded)
    ]


def _repo_files(
    snapshot: RepoSnapshot, globs: Iterable[str], ignore: Iterable[str], not_globs: Iterable[str]
) -> list[str]:
    ignored = [glob.lower() for glob in ignore]
    return [
        path
        for path in _glob_files(snapshot, globs, not_globs)
        if not any(fnmatch.fnmatchcase(path.lower(), glob) for glob in ignored)
    ]


def delivering_files(
    spec: ArtifactSpec,
    wanted: set[str],
    code: RepoSnapshot | None,
    model: RepoSnapshot | None,
    table: PromiseTable,
) -> tuple[str, list[str]] | None:
    """("code" or "model", files) of the first repo holding files that deliver ``spec``:
    the code repo first, then the model repo (without its weights and trainer outputs)."""
    candidates: list[tuple[str, list[str]]] = []
    if code is not None:
        candidates.append(("code", _glob_files(code, spec.files, spec.not_files)))
    if model is not None:
        candidates.append(
            ("model", _repo_files(model, spec.files, table.model_repo_ignore, spec.not_files))
        )
    for repo, files in candidates:
        if spec.keyword_match:
            files = [f for f in files if any(word in f.lower() for word in wanted)]
            files = [f for f in files if f.rsplit("/", 1)[-1].lower() != "readme.md"]
        if files:
            return repo, files
    return None


def _files_reason(repo: str, files: list[str]) -> str:
    shown = ", ".join(files[:3]) + (" …" if len(files) > 3 else "")
    return f"the {repo} repo has {shown}"


def decide(mention: Mention, context: Context, table: PromiseTable) -> tuple[str, str]:
    """(status, reason) for one promised item."""
    if mention.artifact == "other":
        return "unknown", "what is promised is not a recognised artifact; check by hand"
    spec = table.artifacts[mention.artifact]
    wanted = keywords(mention.item, table)
    named = names(mention.text)
    for done in context.deliveries:
        if done.artifact != mention.artifact:
            continue
        if (done.path, done.repo, done.line) == (mention.path, mention.repo, mention.line):
            continue
        theirs = keywords(done.item, table) | keywords(done.text, table)
        if wanted and not wanted & theirs:
            continue
        if not mentions_names(named, done.text):
            continue
        how = "a checked roadmap box" if done.marker == "roadmap_checked" else "a statement"
        return "delivered", f"{how} at {_where(done.path, done.line, done.repo)}: {done.text!r}"
    for url, anchor, path, line, repo in context.links:
        if (path, repo, line) == (mention.path, mention.repo, mention.line):
            continue
        if not mentions_names(named, f"{anchor} {url}"):
            continue
        if any(regex.search(url) for regex in spec.links):
            return "delivered", f"{_where(path, line, repo)} links {url}"
    found = delivering_files(spec, wanted, None, context.model, table) if spec.files else None
    if found:  # shipped in the audited model repo itself
        return "delivered", _files_reason(*found)
    if spec.files and context.code is not None and not has_sources(context.code):
        return "unknown", (
            f"the code repo {context.code.id} holds only documentation here; its files cannot "
            "show whether this was delivered"
        )
    if spec.files and context.code is not None:
        found = delivering_files(spec, wanted, context.code, None, table)
        if found:
            return "delivered", _files_reason(*found)
        section = _section_delivery(mention, context, wanted)
        if section:
            return "delivered", section
        return "missing", f"no {spec.label} in code repo {context.code.id} ({spec.looked_for})"
    section = _section_delivery(mention, context, wanted) if mention.artifact == "docs" else None
    if section:
        return "delivered", section
    if spec.links and not spec.files:
        return "missing", f"no link to the {spec.label} in the card or the code README"
    if spec.files:
        return "unknown", "no code repo to look in (audit with --code <repo>)"
    return "unknown", f"{spec.label} live outside these repos; not checked"


DOC_ONLY = re.compile(r"(?:^|/)(?:readme|license|licence|notice|copying)[^/]*$|\.(?:md|rst|txt)$")


def has_sources(code: RepoSnapshot) -> bool:
    """Whether a code snapshot holds more than READMEs and licences (a real checkout)."""
    return any(not DOC_ONLY.search(entry.path.lower()) for entry in code.files)


def _section_delivery(mention: Mention, context: Context, wanted: set[str]) -> str | None:
    """Docs delivered as a README section ("## Training" with several lines of prose)."""
    if mention.artifact != "docs" or not wanted:
        return None
    for document in context.documents:
        for line in document.lines:
            if line.heading is None or not wanted & set(WORD.findall(line.heading.lower())):
                continue
            body = [
                other
                for other in document.lines
                if other.section_start == line.number and other.kind != HEADING
            ]
            if any(
                other.number == mention.line and document.path == mention.path for other in body
            ):
                continue
            if sum(1 for other in body if other.text.strip()) >= 3:
                where = _where(document.path, line.number, document.repo)
                return f"section {line.heading!r} at {where}"
    return None


# --------------------------------------------------------------------------- history


def strip_front_matter(text: str) -> tuple[str, int]:
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                return "".join(lines[index + 1 :]), index + 2
    return text, 1


def _key(mention: Mention) -> tuple[str, str]:
    return mention.artifact, " ".join(mention.item.lower().split())


def promised_keys(path: str, repo: str, version: FileVersion, table: PromiseTable) -> set:
    """(artifact, item) keys promised by one committed version of a file."""
    body, start = strip_front_matter(version.text)
    document = parse_document(path, body, repo=repo, first_line=start)
    promised, _ = mentions(document, table)
    return {_key(other) for other in promised}


def first_seen(
    mention: Mention,
    versions: tuple[FileVersion, ...],
    table: PromiseTable,
    cache: dict[tuple[str, str, str], set] | None = None,
) -> datetime | None:
    """Date of the commit since which the file has promised this item without a break."""
    cache = {} if cache is None else cache
    earliest: datetime | None = None
    key = _key(mention)
    for version in reversed(versions):
        slot = (mention.repo, mention.path, version.sha)
        if slot not in cache:
            cache[slot] = promised_keys(mention.path, mention.repo, version, table)
        if key not in cache[slot]:
            break
        earliest = version.date
    return earliest


# --------------------------------------------------------------------------- facts


def documents(evidence: Evidence) -> list[tuple[Document, RepoSnapshot]]:
    """The card body and the code repo's README, with the snapshot each comes from."""
    found = []
    card = evidence.card
    if card is not None and not card.error:
        document = card_document(card)
        if document is not None:
            found.append((document, evidence.repo))
    code = evidence.code
    if code is not None:
        path = readme_path(code)
        if path is not None:
            found.append((parse_document(path, code.texts[path].text, repo="code"), code))
    return found


def promise_facts(evidence: Evidence, now: datetime | None = None) -> tuple[Promise, ...]:
    """Every promised item in the card and the code README, with status and age."""
    from cardaudit.clock import audit_now

    table = promise_table()
    docs = documents(evidence)
    promised: list[tuple[Mention, RepoSnapshot]] = []
    deliveries: list[Mention] = []
    links: list[tuple[str, str, str, int, str]] = []
    for document, snapshot in docs:
        found, done = mentions(document, table)
        promised += [(mention, snapshot) for mention in found]
        deliveries += done
        links += _links(document)
    if not promised:
        return ()
    clock = now or audit_now()
    context = Context(
        tuple(deliveries), tuple(links), evidence.code, tuple(d for d, _ in docs), evidence.repo
    )
    results = []
    parsed: dict[tuple[str, str, str], set] = {}
    for mention, snapshot in promised:
        status, reason = decide(mention, context, table)
        seen = first_seen(mention, snapshot.history.get(mention.path, ()), table, parsed)
        results.append(
            Promise(
                text=mention.text,
                artifact=mention.artifact,
                path=mention.path,
                line=mention.line,
                status=status,  # type: ignore[arg-type]
                first_seen=seen.date().isoformat() if seen else None,
                reason=reason,
                repo=mention.repo,
                item=mention.item,
                age_days=(clock.date() - seen.date()).days if seen else None,
            )
        )
    return tuple(results)


# --------------------------------------------------------------------------- deliveries

#: At most this many delivering files are kept per artifact and repo in stored evidence.
MAX_STORED_FILES = 200


def delivery_evidence(evidence: Evidence) -> dict[str, Any]:
    """What this audit can see delivered, as JSON kept with the stored audit.

    ``statements``: checked roadmap boxes, struck roadmap items and delivery statements
    ("SFT code is now available") of the card and the code README; ``files``: per artifact,
    the files of the code and model repos that deliver it. A later diff judges a promise that
    disappeared against this: removed after delivery, or dropped.
    """
    table = promise_table()
    statements = []
    for document, _snapshot in documents(evidence):
        _promised, done = mentions(document, table)
        statements += [
            {
                "artifact": m.artifact,
                "item": m.item,
                "text": m.text,
                "repo": m.repo,
                "path": m.path,
                "line": m.line,
                "how": m.marker,
            }
            for m in done
        ]
    files: dict[str, list[dict[str, str]]] = {}
    for name, spec in table.artifacts.items():
        if not spec.files:
            continue
        listed = []
        if evidence.code is not None:
            listed += [("code", p) for p in _glob_files(evidence.code, spec.files, spec.not_files)]
        listed += [
            ("model", p)
            for p in _repo_files(evidence.repo, spec.files, table.model_repo_ignore, spec.not_files)
        ]
        kept: list[dict[str, str]] = []
        for repo in ("code", "model"):
            mine = [
                p for r, p in listed if r == repo and p.rsplit("/", 1)[-1].lower() != "readme.md"
            ]
            kept += [{"repo": repo, "path": p} for p in mine[:MAX_STORED_FILES]]
        if kept:
            files[name] = kept
    return {"statements": statements, "files": files}


def delivered_by(
    artifact: str, item: str | None, text: str, deliveries: Mapping[str, Any]
) -> str | None:
    """Why a promise that is no longer stated counts as delivered, judged on a later audit's
    :func:`delivery_evidence` (the same tests as :func:`decide`); None when nothing shows it."""
    table = promise_table()
    spec = table.artifacts.get(artifact)
    if spec is None:
        return None
    wanted = keywords(item or text, table)
    named = names(text)
    for done in deliveries.get("statements") or ():
        if not isinstance(done, Mapping) or done.get("artifact") != artifact:
            continue
        theirs = keywords(str(done.get("item") or ""), table) | keywords(
            str(done.get("text") or ""), table
        )
        if wanted and not wanted & theirs:
            continue
        if not mentions_names(named, str(done.get("text") or "")):
            continue
        how = "a checked roadmap box" if done.get("how") == "roadmap_checked" else "a statement"
        where = _where(str(done.get("path")), int(done.get("line") or 0), str(done.get("repo")))
        return f"{how} at {where}: {done.get('text')!r}"
    listed = (deliveries.get("files") or {}).get(artifact) or ()
    for repo in ("code", "model"):
        files = [
            str(f.get("path"))
            for f in listed
            if isinstance(f, Mapping) and f.get("repo") == repo and f.get("path")
        ]
        if spec.keyword_match:
            files = [f for f in files if any(word in f.lower() for word in wanted)]
        if files:
            return _files_reason(repo, files)
    return None
