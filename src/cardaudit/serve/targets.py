"""How stored targets are named in URLs, and what card text may contain on a page.

A Hub repo is ``org/name`` (as on the Hub). A local folder is ``local/<digest>``: its path
never appears in a URL, and nothing over HTTP can make the server audit a local path.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
LOCAL_ORG = "local"
#: Bidirectional-text controls (Trojan Source) and other invisible format characters.
_INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
)


def slug(key: str) -> str:
    """``hub:org/name`` → ``org/name``; ``local:/path`` → ``local/<12 hex digits>``."""
    kind, _, rest = key.partition(":")
    if kind == "hub":
        return rest
    return f"{LOCAL_ORG}/{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def is_hub_id(text: str) -> bool:
    return bool(HUB_ID.match(text)) and ".." not in text


def visible(text: str) -> str:
    """``text`` with bidi controls and other invisible characters shown as ``<U+202E>``, so
    hostile card text cannot reorder what a reader sees (HTML escaping happens after)."""
    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def visible_data(value: Any) -> Any:
    """:func:`visible` applied to every string of parsed JSON."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, Mapping):
        return {key: visible_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [visible_data(item) for item in value]
    return value
