"""Whether a promise was delivered: files of the code and model repos, links, checked
roadmap boxes and delivery statements; and the delivery evidence kept with a stored audit.

An item of a known category is looked for where that category is delivered
(``rules/tables/promises.yaml``); an ``other`` item by its own words in links and file names.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cardaudit.extract.markdown_blocks import HEADING
from cardaudit.extract.markdown_prose import Document
from cardaudit.extract.promises import (
    BARE_URL,
    HTML_LINK,
    LINK,
    WORD,
    ArtifactSpec,
    Mention,
    PromiseTable,
    clean,
    keywords,
    mentions,
    mentions_names,
    names,
    promise_table,
)
from cardaudit.model import Evidence, RepoSnapshot


@dataclass(frozen=True)
class Context:
    """What can prove a delivery: every document's deliveries and links, the code repo, and
    the model repo's own files."""

    deliveries: tuple[Mention, ...]
    links: tuple[tuple[str, str, int, str, str], ...]  # (url, anchor text, path, line, repo)
    code: RepoSnapshot | None
    documents: tuple[Document, ...]
    model: RepoSnapshot | None = None


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
        return _other_delivery(mention, context, table)
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


def _other_delivery(mention: Mention, context: Context, table: PromiseTable) -> tuple[str, str]:
    """An item of no known category, looked for by its own words in the links and the
    file names of the code and model repos."""
    wanted = {
        word.strip(".-+") for word in keywords(mention.item, table) if len(word.strip(".-+")) >= 3
    }
    if not wanted:
        return "unknown", "what is promised is not a recognised artifact; check by hand"
    for url, anchor, path, line, repo in context.links:
        if (path, repo, line) == (mention.path, mention.repo, mention.line):
            continue
        if wanted <= keywords(f"{anchor} {url}", table) | _url_words(url):
            return "delivered", f"{_where(path, line, repo)} links {url}"
    for repo, snapshot in (("code", context.code), ("model", context.model)):
        if snapshot is None:
            continue
        files = [
            entry.path
            for entry in snapshot.files
            if wanted <= set(re.findall(r"[a-z0-9]+", entry.path.lower()))
        ]
        if files:
            return "delivered", _files_reason(repo, files)
    shown = ", ".join(sorted(wanted))
    return "unknown", (
        f"not a recognised artifact; no link or file name has its words ({shown}): check by hand"
    )


def _url_words(url: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", url.lower()))


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


# --------------------------------------------------------------------------- stored evidence

#: At most this many delivering files are kept per artifact and repo in stored evidence.
MAX_STORED_FILES = 200


def delivery_evidence(evidence: Evidence) -> dict[str, Any]:
    """What this audit can see delivered, as JSON kept with the stored audit.

    ``statements``: checked roadmap boxes, struck roadmap items and delivery statements
    ("SFT code is now available") of the card and the code README; ``files``: per artifact,
    the files of the code and model repos that deliver it. A later diff judges a promise that
    disappeared against this: removed after delivery, or dropped.
    """
    from cardaudit.extract.reading import read_evidence

    table = promise_table()
    statements = []
    for reading, _snapshot in read_evidence(evidence):
        _promised, done = mentions(reading.document, table)
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
