"""A small JSON cache in the user cache directory, for results that are pure functions of
their input (licence identifications by text hash), so warm runs and ``track run`` skip
the work.

``CARDAUDIT_CACHE`` names the folder, else the platform's user cache dir for cardaudit;
``CARDAUDIT_NO_CACHE=1`` turns it off. Entries are written atomically (a temporary file
renamed into place), so concurrent processes and threads never read half an entry. Any
error — an unwritable folder, a corrupt or foreign entry — only means a miss: the cache can
make a run faster, never different.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

ROOT_VAR = "CARDAUDIT_CACHE"
OFF_VAR = "CARDAUDIT_NO_CACHE"
#: Namespaces and keys are the caller's (hex digests, version strings), never audited text.
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def cache_root() -> Path:
    """``CARDAUDIT_CACHE``, else the platform's user cache dir for cardaudit."""
    if os.environ.get(ROOT_VAR):
        return Path(os.environ[ROOT_VAR]).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("cardaudit"))


def installed_identity(module: str) -> str:
    """What identifies the installed build of top-level package ``module`` for a cache key:
    the name, size and modification time of each file in its folder (a reinstall or an
    upgrade changes them), without importing it or ``importlib.metadata`` (whose import,
    email and zip parsers included, costs a tenth of a warm audit); ``"none"`` when absent."""
    from importlib.util import find_spec

    try:
        spec = find_spec(module)
    except (ImportError, ValueError):
        return "none"
    if spec is None or not spec.origin:
        return "none"
    folders = list(spec.submodule_search_locations or ()) or [os.path.dirname(spec.origin)]
    parts = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_file():
                        stat = entry.stat()
                        parts.append(f"{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
        except OSError:
            continue
    return f"{spec.origin}|" + ",".join(sorted(parts))


def enabled() -> bool:
    return os.environ.get(OFF_VAR, "").strip().lower() not in ("1", "true", "yes")


def _entry(namespace: str, key: str) -> Path:
    if not (SAFE_NAME.match(namespace) and SAFE_NAME.match(key)):
        raise ValueError(f"unsafe cache name {namespace!r}/{key!r}")
    return cache_root() / namespace / f"{key}.json"


def read(namespace: str, key: str) -> Any | None:
    """The JSON value stored under ``namespace/key``; None when absent or unreadable."""
    if not enabled():
        return None
    try:
        return json.loads(_entry(namespace, key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write(namespace: str, key: str, value: Any) -> None:
    """Store ``value`` (JSON) under ``namespace/key``; failures are ignored."""
    if not enabled():
        return
    try:
        data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):
        return
    write_bytes(_entry(namespace, key), data)


def write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (a temporary file renamed into place);
    failures are ignored."""
    if not enabled():
        return
    import tempfile  # only a write needs it

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError:
        return
