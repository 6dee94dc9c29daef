"""Which .gguf files of a repo make up the model that is counted: pure path logic, shared by
the Hub source (which headers to fetch) and the parameter count (which headers add up)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

_SPLIT = re.compile(r"-\d{5}-of-\d{5}\.gguf$")


def gguf_stem(path: str) -> str:
    """The model a .gguf file belongs to: split parts (``-00001-of-00003``) share a stem."""
    return _SPLIT.sub("", path.lower())


def main_gguf_group(paths: Iterable[str]) -> list[str]:
    """The files of the model whose parameters are counted: the first (in path order) group
    of split parts that is not a vision projector (``mmproj``); the other groups are
    other quantizations of it, or projectors."""
    groups: dict[str, list[str]] = {}
    for path in sorted(paths):
        groups.setdefault(gguf_stem(path), []).append(path)
    if not groups:
        return []
    language = [g for stem, g in groups.items() if "mmproj" not in PurePosixPath(stem).name]
    return (language or list(groups.values()))[0]
