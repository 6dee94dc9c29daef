"""The parsed rule catalogue kept in the user cache, keyed by the catalogue files' hashes.

Parsing the 70-odd YAML files of ``rules/`` (even with libyaml) costs more than a tenth of
a warm audit; reading them and loading one JSON entry costs about a millisecond. The key
is a SHA-256 of every file's name and bytes, PyYAML's version and the loader used, so an
edited, added or removed file is a different key (a miss, then a new entry). A file whose
parsed value does not survive JSON unchanged (dates, non-string keys) is left out of the
entry and parsed on every run; a file that does not parse is never cached, so its error is
raised when it is asked for, as without the cache. Any unreadable, corrupt or foreign
entry is a miss (:mod:`cardaudit.disk_cache`): the cache never changes a result.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cardaudit import disk_cache

NAMESPACE = "catalogue"
#: Bump when the entry's layout changes.
FORMAT = "1"


def _survives_json(value: Any) -> bool:
    try:
        return json.loads(json.dumps(value, allow_nan=False)) == value
    except (TypeError, ValueError):
        return False


def _key(contents: dict[str, bytes], parser_id: str) -> str:
    digest = hashlib.sha256(f"{FORMAT}\0{parser_id}\0".encode())
    for name, data in contents.items():
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def parsed_catalogue(
    files: list[Path], root: Path, parse: Callable[[Path], Any], parser_id: str
) -> dict[str, Any]:
    """Parsed values of ``files`` (by path relative to ``root``) that the cache holds or
    that parsed now; a file that could not be read or parsed is absent (the caller parses
    it itself and reports its error)."""
    contents: dict[str, bytes] = {}
    for path in files:
        try:
            contents[path.relative_to(root).as_posix()] = path.read_bytes()
        except OSError:
            return {}
    key = _key(contents, parser_id)
    entry = disk_cache.read(NAMESPACE, key)
    if isinstance(entry, dict) and isinstance(entry.get("files"), dict):
        cached = entry["files"]
        if set(cached) <= set(contents) and set(entry.get("uncached", ())) | set(cached) == set(
            contents
        ):
            return {name: value for name, value in cached.items()}
    parsed: dict[str, Any] = {}
    for path in files:
        try:
            parsed[path.relative_to(root).as_posix()] = parse(path)
        except Exception:  # reported by the caller when this file is asked for
            return parsed
    storable = {name: value for name, value in parsed.items() if _survives_json(value)}
    uncached = sorted(set(parsed) - set(storable))
    disk_cache.write(NAMESPACE, key, {"files": storable, "uncached": uncached})
    return parsed
