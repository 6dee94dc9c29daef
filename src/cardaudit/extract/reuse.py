"""The REUSE layout (https://reuse.software/spec-3.3/): licence texts in
``LICENSES/<SPDX-id>.txt``, and which licence covers which files in ``REUSE.toml``
(``[[annotations]]`` with ``SPDX-License-Identifier``) or the older ``.reuse/dep5`` (a
Debian machine-readable copyright file).

A repo laid out this way ships its licence texts even without a top-level LICENSE file.
``REUSE.toml`` is read with the standard library's ``tomllib``; ``dep5`` is deb822 — only
its ``License:`` fields are needed, read line by line rather than adding python-debian for
two fields.
"""

from __future__ import annotations

import re
from typing import Any

from cardaudit.model import RepoSnapshot

#: Files of the REUSE layout that the sources read (one level under LICENSES/).
REUSE_PATH = re.compile(r"^(?:LICENSES/[^/]+|REUSE\.toml|\.reuse/dep5)$")
LICENCE_TEXT = re.compile(r"^LICENSES/([^/]+?)(?:\.txt|\.md)?$")


def is_reuse_path(path: str) -> bool:
    return bool(REUSE_PATH.match(path))


def reuse_licence_files(snapshot: RepoSnapshot) -> list[str]:
    """``LICENSES/<id>.txt`` files, sorted."""
    return sorted(e.path for e in snapshot.files if LICENCE_TEXT.match(e.path))


def _toml_expressions(text: str) -> tuple[list[str], str | None]:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [], f"REUSE.toml is not valid TOML: {exc}"
    found = []
    for annotation in data.get("annotations") or ():
        value = annotation.get("SPDX-License-Identifier") if isinstance(annotation, dict) else None
        values = value if isinstance(value, list) else [value]
        found += [str(v).strip() for v in values if isinstance(v, str) and v.strip()]
    return found, None


def _dep5_expressions(text: str) -> list[str]:
    return [
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.lower().startswith("license:") and line.split(":", 1)[1].strip()
    ]


def reuse_facts(snapshot: RepoSnapshot) -> dict[str, Any] | None:
    """What the repo's REUSE layout says, or None when it has none."""
    texts = reuse_licence_files(snapshot)
    config = next((p for p in ("REUSE.toml", ".reuse/dep5") if snapshot.has(p)), None)
    if not texts and config is None:
        return None
    expressions: list[str] = []
    note = None
    if config is not None:
        text = snapshot.text(config)
        if text is None:
            note = f"{config} was not read"
        elif config == "REUSE.toml":
            expressions, note = _toml_expressions(text.text)
        else:
            expressions = _dep5_expressions(text.text)
    return {
        "config": config,
        "licence_files": texts,
        "licences": [m.group(1) for p in texts if (m := LICENCE_TEXT.match(p))],
        "expressions": list(dict.fromkeys(expressions)),
        **({"note": note} if note else {}),
    }
