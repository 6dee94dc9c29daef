"""Read a file of an installed upstream package (e.g. transformers) without importing it.

``importlib.util.find_spec`` on a top-level name only searches ``sys.path`` (or the folders
in ``CARDAUDIT_UPSTREAM_PATH``); nothing of the package, let alone the audited code, is
imported or executed.

It lives beside :mod:`cardaudit.rules` rather than in ``sources/``: like the rule tables it
reads reference files installed with this machine's packages, never the audited repos, and
extract/ (``code_derivation``) may use it (extract never imports sources).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from cardaudit.model import TextFile

MAX_UPSTREAM_BYTES = 4 * 1024 * 1024


#: Where to look for upstream packages instead of ``sys.path`` (os.pathsep-separated).
UPSTREAM_PATH_ENV = "CARDAUDIT_UPSTREAM_PATH"


def package_root(package: str) -> Path | None:
    """Folder of an installed top-level package, or None when it is not installed."""
    return _package_root(package, os.environ.get(UPSTREAM_PATH_ENV))


@cache
def _package_root(package: str, search: str | None) -> Path | None:
    import importlib.machinery
    import importlib.util

    if not package.isidentifier():
        return None
    try:
        if search is not None:
            paths = [p for p in search.split(os.pathsep) if p]
            spec = importlib.machinery.PathFinder.find_spec(package, paths)
        else:
            spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def upstream_file(package: str, relative: str) -> TextFile | None:
    """A text file inside an installed package, or None (absent, too big, unreadable)."""
    root = package_root(package)
    if root is None:
        return None
    path = (root / relative).resolve()
    if root.resolve() not in path.parents or not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_UPSTREAM_BYTES:
            return None
        return TextFile(f"{package}/{relative}", path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
