"""Licence statements in every form, with file and line: badges, links to licence files,
restriction sentences ("for research purposes only", "非商业用途"), gating YAML and gating
text, and the additional terms beside the licence (AUP, registration, MAU, territory).

Structure first: the file (card, code README, front-matter gating keys), the Markdown
construct (badge image, link, prose sentence; code blocks and headings are never read), the
section, and the modality of the sentence (a restriction needs a restricting word near its
term, a permission near it cancels it). Words are data in ``rules/tables/licence_statements.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from cardaudit.extract.licence import licence_named
from cardaudit.extract.licence_reading import (
    about,
    is_upstream,
    no_longer_holds,
    own_clause,
    restriction_terms,
    split_sentences,
    statement_table,
)
from cardaudit.extract.markdown_prose import (
    Document,
    card_document,
    paragraphs,
    parse_document,
    readme_path,
)
from cardaudit.model import Card, Evidence, RepoSnapshot

LINKED_IMAGE = re.compile(
    r"\[!\[(?P<alt>[^\[\]]*+)\]\((?P<src>[^()\[\]\s]++)[^()\[\]]*+\)\]"
    r"\((?P<href>[^()\[\]\s]++)[^()\[\]]*+\)"
)
IMAGE = re.compile(r"!\[(?P<alt>[^\[\]]*+)\]\((?P<src>[^()\[\]\s]++)[^()\[\]]*+\)")
LINK = re.compile(r"(?<![!\]])\[(?P<text>[^\]\[]*+)\]\((?P<href>[^()\[\]\s]++)[^()\[\]]*+\)")
HTML_IMG = re.compile(
    r"(?:<a\s[^<>]*?href=[\"'](?P<href>[^\"'<>]++)[\"'][^<>]*+>\s*+)?<img\s(?P<attrs>[^<>]*+)>",
    re.I,
)
ATTR = re.compile(r"(?P<name>src|alt)\s*=\s*[\"'](?P<value>[^\"']*)[\"']", re.I)
SHIELDS_STATIC = re.compile(r"img\.shields\.io/badge/(?P<body>[^?#]+)", re.I)
HUB_FILE = re.compile(
    r"^https?://huggingface\.co/(?P<repo>[\w.-]+/[\w.-]+)/(?:blob|resolve)/[^/]+/(?P<path>.+)$",
    re.I,
)
IMG_TAG = re.compile(r"<img", re.I)


# --------------------------------------------------------------------------- collector


@dataclass
class _Collector:
    """Statements and additional terms found so far; one entry per (kind, path, line, text)."""

    statements: list[dict[str, Any]]
    terms: list[dict[str, Any]]

    def statement(self, **item: Any) -> None:
        key = (item["kind"], item["repo"], item["path"], item["line"], item.get("category"))
        if not any(
            (s["kind"], s["repo"], s["path"], s["line"], s.get("category")) == key
            for s in self.statements
        ):
            self.statements.append({k: v for k, v in item.items() if v is not None})

    def term(self, kind: str, text: str, path: str, line: int | None, repo: str) -> None:
        item = {"kind": kind, "text": text[:300], "path": path, "line": line, "repo": repo}
        if item not in self.terms:
            self.terms.append(item)

    def sentence(self, text: str, path: str, line: int | None, repo: str, section: str) -> None:
        """Read one prose sentence for restrictions and additional terms."""
        table = statement_table()
        if not table.may_hold_a_term(text):
            return  # nothing any reading looks for (most sentences)
        clean = re.sub(r"\s+", " ", text).strip()
        own = own_clause(clean)  # "Unlike the base model, this model …": about this one
        if not own or is_upstream(own):
            return
        for category, term in restriction_terms(own):
            if no_longer_holds(own, term):
                self.statement(
                    kind="restriction",
                    category=category,
                    term=term,
                    about="superseded",  # lifted, or an earlier release's: binds nobody now
                    text=clean[:300],
                    path=path,
                    line=line,
                    repo=repo,
                    section=section or None,
                )
                continue
            governs = about(own, repo)
            self.statement(
                kind="restriction",
                category=category,
                term=term,
                about=governs,
                text=clean[:300],
                path=path,
                line=line,
                repo=repo,
                section=section or None,
            )
            if governs != "data":  # the dataset's terms bind its users, not the model's
                self.term(category, clean, path, line, repo)
        if table.aup.find(own):
            self.term("aup", clean, path, line, repo)
        if table.mau.find(own) and table.mau_numbers.search(own):
            self.term("mau", clean, path, line, repo)
        for match in table.territory.find(own):
            if table.territory_markers.near(
                own, match.start(), match.end(), table.territory_window
            ):
                self.term("territory", clean, path, line, repo)
                break


# --------------------------------------------------------------------------- documents


def _badge_licence(alt: str, src: str) -> str | None:
    static = SHIELDS_STATIC.search(src)
    candidates = [alt.split(":", 1)[-1], alt]
    if static:
        body = unquote(static.group("body")).replace("--", "\0").replace("__", "\1")
        fields = [
            f.replace("_", " ").replace("\0", "-").replace("\1", "_") for f in body.split("-")
        ]
        if len(fields) >= 2:
            candidates.insert(0, fields[1] if len(fields) >= 3 else fields[0])
    for text in candidates:
        licence = licence_named(text.strip())
        if licence:
            return licence
    return None


def _link_target(href: str, snapshot: RepoSnapshot | None, own_repo: str | None) -> str | None:
    """The repo path a link points to (relative, or a Hub file URL of this very repo)."""
    href = href.split("#", 1)[0].split("?", 1)[0]
    hub = HUB_FILE.match(href)
    if hub:
        if own_repo and hub.group("repo").lower() == own_repo.lower():
            return unquote(hub.group("path"))
        return None
    if not href or re.match(r"^[a-z][a-z0-9+.-]*:", href, re.I) or href.startswith("//"):
        return None
    return unquote(href).removeprefix("./").lstrip("/")


def _is_licence_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name.startswith(statement_table().file_stems)


def _links(
    collector: _Collector,
    document: Document,
    snapshot: RepoSnapshot | None,
    own_repo: str | None,
) -> None:
    table = statement_table()
    for line in document.lines:
        if not line.prose or ("](" not in line.text and not IMG_TAG.search(line.text)):
            continue
        text = line.text
        badges: list[tuple[str, str, str | None]] = []
        for match in LINKED_IMAGE.finditer(text):
            badges.append((match.group("alt"), match.group("src"), match.group("href")))
        for match in IMAGE.finditer(text):
            if not any(match.group("src") == src for _a, src, _h in badges):
                badges.append((match.group("alt"), match.group("src"), None))
        for match in HTML_IMG.finditer(text):
            attrs = {
                m.group("name").lower(): m.group("value")
                for m in ATTR.finditer(match.group("attrs"))
            }
            badges.append((attrs.get("alt", ""), attrs.get("src", ""), match.group("href")))
        for alt, src, href in badges:
            if not (table.badge_markers.find(alt) or table.badge_markers.find(unquote(src))):
                continue
            target = _link_target(href, snapshot, own_repo) if href else None
            label = alt.strip() or src
            collector.statement(
                kind="badge",
                text=label[:200],
                licence=_badge_licence(alt, src),
                about=about(label, document.repo) if label else None,
                link=href,
                target=target,
                exists=(snapshot.has(target) if snapshot and target else None),
                path=document.path,
                line=line.number,
                repo=document.repo,
            )
        for match in LINK.finditer(text):
            target = _link_target(match.group("href"), snapshot, own_repo)
            if target is None or not _is_licence_file(target):
                continue
            collector.statement(
                kind="link",
                text=match.group(0)[:200],
                licence=licence_named(match.group("text")),
                link=match.group("href"),
                target=target,
                exists=snapshot.has(target) if snapshot else None,
                path=document.path,
                line=line.number,
                repo=document.repo,
            )


def _prose(collector: _Collector, document: Document) -> None:
    for paragraph in paragraphs(document):
        section = " / ".join(paragraph.first.section)
        for offset, sentence in split_sentences(paragraph.text):
            collector.sentence(
                sentence, document.path, paragraph.line_at(offset), document.repo, section
            )


def _field_labels(fields: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(fields, Mapping):
        yield from ((str(k), v) for k, v in fields.items())
    elif isinstance(fields, list):
        for item in fields:
            if isinstance(item, Mapping) and "label" in item:
                yield str(item["label"]), item.get("type")
            elif isinstance(item, str):
                yield item, None


def _gating(collector: _Collector, card: Card) -> None:
    table = statement_table()
    metadata = card.metadata
    for key in table.gating_keys:
        if key not in metadata or key == "extra_gated_fields":
            continue
        value = metadata.get(key)
        line = card.key_line(key)
        if key == "gated" and value in (False, None, "false"):
            continue
        text = str(value).strip()
        collector.statement(
            kind="gating", key=key, text=text[:300], path=card.path, line=line, repo="model"
        )
        if key in ("extra_gated_prompt", "gated"):  # headings and buttons are only wording
            collector.term("gating", f"{key}: {text}", card.path, line, "model")
        for _offset, sentence in split_sentences(text):
            collector.sentence(sentence, card.path, line, "model", f"front matter {key}")
    fields = metadata.get("extra_gated_fields")
    if fields:
        line = card.key_line("extra_gated_fields")
        labels = list(_field_labels(fields))
        asked = [label for label, _kind in labels if table.registration_fields.find(label)]
        collector.statement(
            kind="gating",
            key="extra_gated_fields",
            text=", ".join(label for label, _kind in labels)[:300],
            path=card.path,
            line=line,
            repo="model",
        )
        if asked:
            collector.term(
                "registration", "the gate asks for: " + ", ".join(asked), card.path, line, "model"
            )
        for label, _kind in labels:
            collector.sentence(label, card.path, line, "model", "front matter extra_gated_fields")


#: Characters of an unidentified licence file read for its terms (custom licences are a few
#: pages; a longer file is read up to this).
MAX_LICENCE_CHARS = 200_000


def _unidentified_licences(
    collector: _Collector, snapshot: RepoSnapshot | None, paths: Sequence[str]
) -> None:
    """The terms of licence files no known licence matches (a custom "community licence"):
    what they restrict or require binds the user as much as a card's rider does."""
    for path in paths:
        text = snapshot.text(path) if snapshot is not None else None
        if text is None:
            continue
        _prose(collector, parse_document(path, text.text[:MAX_LICENCE_CHARS], repo="model"))


def statement_facts(
    evidence: Evidence,
    prose: Sequence[Mapping[str, Any]],
    own_repo: str | None,
    unidentified: Sequence[str] = (),
) -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    """(licence statements, additional terms) of the card, the code README and the model
    repo's ``unidentified`` licence files."""
    collector = _Collector([], [])
    for item in prose:  # "released under X" sentences (extract/licence.py)
        collector.statement(kind="sentence", repo="model", **dict(item))
    card = evidence.card
    if card is not None and not card.error:
        _gating(collector, card)
    document = card_document(card) if card is not None else None
    if document is not None:
        _links(collector, document, evidence.repo, own_repo)
        _prose(collector, document)
    code = evidence.code
    path = readme_path(code) if code is not None else None
    if code is not None and path is not None:
        text = code.text(path)
        if text is not None:
            readme = parse_document(path, text.text[:500_000], repo="code")
            _links(collector, readme, code, None)
            _prose(collector, readme)
    _unidentified_licences(collector, evidence.repo, unidentified)
    return tuple(collector.statements), tuple(collector.terms)
