"""Compiled regular expressions kept across runs in the user cache, as ``.pyc`` files keep
compiled Python.

A warm audit compiles some 500 patterns (the extractors, the rules tables, markdown-it,
PyYAML), about a fifth of its CPU: ``re`` parses and compiles each one in pure Python on
every start. :func:`install` (called by the console entry point, never on import) wraps
``re._compiler.compile``, the step behind ``re``'s own in-process cache, so that a pattern
an earlier run compiled is rebuilt from its stored SRE code by ``_sre.compile``. What is
stored is exactly what ``re`` built: a new pattern is compiled by ``re`` as always, rebuilt
from the derived code, and kept only when the two compare equal (a ``Pattern`` compares
its source, flags and code). The file keeps the patterns used in the last
:data:`KEEP_RUNS` runs that compiled a new one (different commands need different
patterns; one built from a set's iteration order is new in every run), is keyed by the
interpreter build and the SRE engine's magic number and code size, and starts with the
SHA-256 of the rest: anything unreadable, damaged or foreign is ignored and rewritten —
the cache can make a run faster, never different.
``CARDAUDIT_NO_CACHE=1`` turns it off. It relies on CPython's ``re._parser``,
``re._compiler._code`` and ``_sre.compile`` (3.11 on); without them nothing is installed.
Hand-written because it is the point: the standard library persists no compiled pattern
(pickling one keeps only its source).
"""

from __future__ import annotations

import atexit
import hashlib
import marshal
import sys
import threading
from pathlib import Path
from typing import Any

from cardaudit import disk_cache

NAMESPACE = "regex"
#: Bump when the entry layout changes.
FORMAT = "2"
#: A pattern no run has used in this many saves is dropped.
KEEP_RUNS = 20
#: At most this many patterns are kept (a run that compiles more, such as a long
#: ``track run`` building patterns from many cards' names, is not a start-up cost).
MAX_PATTERNS = 4000

_lock = threading.Lock()
_state: dict[str, Any] = {"installed": False}


def _file() -> Path | None:
    try:
        import _sre
    except ImportError:
        return None
    identity = f"{FORMAT}|{sys.version}|{_sre.MAGIC}|{_sre.CODESIZE}|{sys.maxunicode}"
    key = hashlib.sha256(identity.encode()).hexdigest()[:32]
    return disk_cache.cache_root() / NAMESPACE / f"{key}.bin"


def _code_type() -> str:
    import _sre
    from array import array

    return next(kind for kind in "IL" if array(kind).itemsize == _sre.CODESIZE)


def _load(path: Path) -> tuple[int, dict[tuple[str, int], tuple]]:
    """The save counter and the stored entries by (pattern, flags), each ``(run last used,
    payload)`` with the code as bytes; nothing when absent or damaged.

    The digest is checked before ``marshal`` reads anything (marshal is for data this
    process wrote; a damaged file fails the digest). An entry of the wrong shape only
    fails when it is used, and is then compiled afresh."""
    try:
        data = path.read_bytes()
    except OSError:
        return 0, {}
    digest, _, body = data.partition(b"\n")
    if digest != hashlib.sha256(body).hexdigest().encode():
        return 0, {}
    try:
        content = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return 0, {}
    if not isinstance(content, dict):
        return 0, {}
    run, entries = content.get("run"), content.get("entries")
    if not isinstance(run, int) or not isinstance(entries, dict):
        return 0, {}
    return run, entries


def _derived(pattern: str, flags: int) -> tuple:
    """The arguments ``re._compiler.compile`` passes to ``_sre.compile`` after ``pattern``."""
    from re import _compiler, _parser

    parsed = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]
    groupindex = {str(name): int(index) for name, index in parsed.state.groupdict.items()}
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (
        int(flags | parsed.state.flags),
        code,
        int(parsed.state.groups - 1),
        groupindex,
        tuple(indexgroup),
    )


def _stored_form(derived: tuple) -> tuple:
    from array import array

    final, code, groups, groupindex, indexgroup = derived
    return (final, array(_code_type(), code).tobytes(), groups, groupindex, indexgroup)


def _arguments(found: tuple) -> tuple:
    from array import array

    final, code, groups, groupindex, indexgroup = found
    words = array(_code_type())
    words.frombytes(code)
    return (final, words.tolist(), groups, dict(groupindex), tuple(indexgroup))


def install() -> bool:
    """Route ``re``'s compilation through the stored patterns (once per process); False
    when the cache is off or this interpreter lacks the internals it needs."""
    with _lock:
        if _state["installed"]:
            return True
        if not disk_cache.enabled():
            return False
        try:
            import _sre
            from re import _compiler, _parser  # noqa: F401  (present, or nothing to do)
        except ImportError:
            return False
        path = _file()
        if path is None or not hasattr(_compiler, "_code") or not hasattr(_sre, "compile"):
            return False
        original = _compiler.compile
        run, stored = _load(path)
        used: dict[tuple[str, int], tuple] = {}
        state = {"new": False}

        def compile_cached(p: Any, flags: int = 0) -> Any:
            if not isinstance(p, str) or flags & _compiler.SRE_FLAG_DEBUG:
                return original(p, flags)
            entry = (p, int(flags))
            found = stored.get(entry)
            if found is not None:
                try:
                    compiled = _sre.compile(p, *_arguments(found[1]))
                except Exception:  # an entry the engine refuses: compile afresh
                    stored.pop(entry, None)
                else:
                    used[entry] = found[1]
                    return compiled
            compiled = original(p, flags)
            try:
                derived = _derived(p, int(flags))
                if _sre.compile(p, *derived) == compiled:
                    used[entry] = _stored_form(derived)
                    state["new"] = True
            except Exception:  # not reproducible here: simply not kept
                pass
            return compiled

        _compiler.compile = compile_cached
        _state.update(
            installed=True,
            path=path,
            run=run,
            stored=stored,
            used=used,
            state=state,
            original=original,
        )
        atexit.register(save)
        return True


def save() -> None:
    """Store the patterns this run used, when it compiled one the file did not hold, with
    those earlier runs used in the last :data:`KEEP_RUNS` saves."""
    with _lock:
        if not _state.get("installed") or not _state["state"]["new"]:
            return
        run = _state["run"] + 1
        kept = {
            entry: found
            for entry, found in _state["stored"].items()
            if isinstance(found, tuple) and len(found) == 2 and found[0] > run - KEEP_RUNS
        }
        kept.update((entry, (run, payload)) for entry, payload in _state["used"].items())
        if len(kept) > MAX_PATTERNS:  # the most recently used first
            order = sorted(kept, key=lambda entry: kept[entry][0], reverse=True)
            kept = {entry: kept[entry] for entry in order[:MAX_PATTERNS]}
        body = marshal.dumps({"run": run, "entries": kept})
        digest = hashlib.sha256(body).hexdigest().encode()
        disk_cache.write_bytes(_state["path"], digest + b"\n" + body)
        _state.update(run=run, stored=kept)
        _state["state"]["new"] = False
