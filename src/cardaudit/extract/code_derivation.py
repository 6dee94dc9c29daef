"""Code derivation: which code files derive from an upstream (e.g. Transformers) and whether
they keep its copyright and licence header and say they were modified (Apache-2.0 §4(b), (c))."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from cardaudit.model import Evidence, Location, TextFile
from cardaudit.rules import load_table

PREFIXES = ("modeling_", "configuration_", "tokenization_", "processing_", "image_processing_")
MODEL_NAME = re.compile(r"\b([A-Za-z]+\d[\w.]*(?:-[A-Za-z0-9.]+)*)")
CAPITALISED = re.compile(r"\b([A-Z][A-Za-z]+(?:-[A-Za-z0-9.]+)*)\b")


@dataclass(frozen=True)
class CodeClaim:
    """ "derived from the Hugging Face Transformers Qwen3.5-MoE implementation" """

    upstream: str
    model: str | None
    location: Location
    text: str

    @property
    def model_key(self) -> str | None:
        return re.sub(r"[.\-\s]+", "_", self.model.lower()) if self.model else None


@dataclass(frozen=True)
class DerivedFile:
    path: str
    claim: CodeClaim
    has_copyright: bool
    has_licence: bool
    licence_line: int | None
    has_notice: bool
    upstream_file: str | None
    similarity: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "upstream": self.claim.upstream,
            "upstream_file": self.upstream_file,
            "similarity": self.similarity,
            "copyright_kept": self.has_copyright,
            "licence_header_kept": self.has_licence,
            "modification_notice": self.has_notice,
        }


@cache
def _table() -> Mapping[str, Any]:
    return load_table("code_upstreams")


def _claims_in(text: TextFile, repo: str) -> list[CodeClaim]:
    """Each derivation verb followed, within the same sentence, by an upstream's name."""
    table = _table()
    verbs = re.compile(table["derivation_verbs"], re.IGNORECASE)
    found = []
    for verb in verbs.finditer(text.text):
        window = text.text[verb.end() : verb.end() + 160]
        stop = re.search(r"\.\s|\n\s*\n", window)
        sentence = " ".join((window[: stop.start()] if stop else window).split())
        for name, upstream in (table.get("upstreams") or {}).items():
            match = re.compile(upstream["claim"], re.IGNORECASE).search(sentence)
            if not match:
                continue
            model = MODEL_NAME.search(sentence, match.end()) or CAPITALISED.search(
                sentence, match.end()
            )
            line = text.line_at(verb.start())
            found.append(
                CodeClaim(
                    name,
                    model.group(1).rstrip(".") if model else None,
                    Location(text.path, line, repo=repo),
                    text.excerpt(line),
                )
            )
    return found


def code_claims(evidence: Evidence) -> list[CodeClaim]:
    """Claims that the implementation derives from upstream code (card, code README)."""
    claims: list[CodeClaim] = []
    if evidence.card is not None:
        claims += _claims_in(evidence.card.file, "model")
    if evidence.code is not None:
        for path in evidence.code.find("README.md", "README.rst", "README"):
            text = evidence.code.text(path)
            if text is not None:
                claims += _claims_in(text, "code")
    return claims


def _is_candidate(path: str, text: TextFile, claim: CodeClaim) -> bool:
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".py") or name == "__init__.py" or "test" in path.lower():
        return False
    if name.startswith(PREFIXES):
        return True
    head = "\n".join(text.lines[: int(_table().get("header_lines", 40))]).lower()
    key = claim.model_key
    return bool(key and (key in head or key.replace("_", "") in head.replace("_", "")))


def _upstream_counterpart(path: str, claim: CodeClaim) -> TextFile | None:
    from cardaudit.upstream import upstream_file

    upstream = (_table().get("upstreams") or {}).get(claim.upstream) or {}
    key = claim.model_key
    if not key or not upstream.get("package"):
        return None
    name = path.rsplit("/", 1)[-1]
    prefix = next((p for p in PREFIXES if name.startswith(p)), "modeling_")
    folder = str(upstream.get("module_dir", "")).format(model=key)
    return upstream_file(upstream["package"], f"{folder}/{prefix}{key}.py")


def _meaningful(text: TextFile) -> list[str]:
    """Stripped lines that carry code or words (blank and bracket-only lines say nothing)."""
    return [s for line in text.lines if len(s := line.strip()) > 3 and re.search(r"\w", s)]


def similarity(upstream: TextFile, derived: TextFile) -> float:
    """Share of the derived file's meaningful lines found, in order, in the upstream file."""
    import difflib

    mine = _meaningful(derived)
    theirs = _meaningful(upstream)
    if not mine:
        return 0.0
    matcher = difflib.SequenceMatcher(None, theirs, mine, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    return round(same / len(mine), 3)


def derived_files(evidence: Evidence) -> list[DerivedFile]:
    """Every code file that the claims make derived, with its header facts."""
    if evidence.code is None:
        return []
    claims = code_claims(evidence)
    table = _table()
    limit = int(table.get("header_lines", 40))
    notice = re.compile(table["modification_notice"], re.IGNORECASE)
    out: list[DerivedFile] = []
    seen: set[str] = set()
    for claim in claims:
        upstream = (table.get("upstreams") or {}).get(claim.upstream) or {}
        copyright_re = re.compile(upstream.get("copyright", r"copyright"), re.IGNORECASE)
        licence_re = re.compile(upstream.get("licence_header", r"licen[cs]e"), re.IGNORECASE)
        for path, text in sorted(evidence.code.texts.items()):
            if path in seen or not _is_candidate(path, text, claim):
                continue
            seen.add(path)
            head = "\n".join(text.lines[:limit])
            licence = licence_re.search(head)
            counterpart = _upstream_counterpart(path, claim)
            out.append(
                DerivedFile(
                    path=path,
                    claim=claim,
                    has_copyright=copyright_re.search(head) is not None,
                    has_licence=licence is not None,
                    licence_line=text.line_at(licence.start()) if licence else None,
                    has_notice=notice.search(head) is not None,
                    upstream_file=counterpart.path if counterpart else None,
                    similarity=similarity(counterpart, text) if counterpart else None,
                )
            )
    return out
