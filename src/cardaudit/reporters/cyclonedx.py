"""CycloneDX 1.6 ML-BOM: the model as a ``machine-learning-model`` component.

The model component (declared licence, Hub purl, the audited text files as ``file``
sub-components with SHA-1/SHA-256 hashes), its base models as ``pedigree.ancestors``, its
code repo as a dependency, and the ``modelCard`` (task, architecture, datasets, and the
audit's facts as properties). ``SOURCE_DATE_EPOCH`` makes it reproducible.

Written as JSON directly, in the exact form cyclonedx-python-lib serialises the same BOM
(its key order, its set orders, its licence normalisation): importing that library and
running its serialiser cost a quarter of a whole audit, for a document this small. The
library stays the reference: ``tests/cyclonedx_reference.py`` builds every fixture's BOM
with it and ``tests/test_cyclonedx_reference.py`` requires the same document, and the
tests validate every fixture's BOM with the library's strict 1.6 JSON validator.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

from cardaudit import __version__
from cardaudit.model import Report
from cardaudit.reporters.common import ancestors, build_time, hub_url
from cardaudit.safe_text import safe_url, visible_values

MODEL_REF = "model"
CODE_REF = "code-repo"
SCHEMA = "http://cyclonedx.org/schema/bom-1.6.schema.json"
#: cyclonedx-python-lib's ``XsUri``: what it refuses, and what it escapes.
_INVALID_URI = re.compile(r"%(?![0-9A-F]{2})|#.*#", re.IGNORECASE | re.MULTILINE)
_URI_ESCAPES = str.maketrans(
    {" ": "%20", '"': "%22", "'": "%27", "[": "%5B", "]": "%5D"}
    | {"<": "%3C", ">": "%3E", "{": "%7B", "}": "%7D"}
)


def _uri(value: str) -> str:
    if _INVALID_URI.search(value):
        raise ValueError(f"Supplied value '{value}' does not appear to be a valid URI.")
    return value.translate(_URI_ESCAPES)


def _after_none(*values: Any) -> tuple:
    """A sort key in the library's order: a missing value after any present one."""
    return tuple((value is None, "" if value is None else value) for value in values)


def _licence(
    acknowledgement: str,
    *,
    spdx_id: str | None = None,
    name: str | None = None,
    text: str | None = None,
    url: str | None = None,
) -> dict[str, Any]:
    """A named licence (the library's ``DisjunctiveLicense``), keys in its order."""
    entry: dict[str, Any] = {"acknowledgement": acknowledgement}
    if spdx_id is not None:
        entry["id"] = spdx_id
    if name is not None:
        entry["name"] = name
    if text is not None:
        entry["text"] = {"content": text, "contentType": "text/plain"}
    if url is not None:
        entry["url"] = url
    return entry


def _licence_list(
    expressions: list[dict[str, str]], named: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The ``licenses`` array as the library writes a licence set: its first expression
    alone when there is one, else every named licence, in the set's order."""
    if expressions:
        return [min(expressions, key=lambda e: (e["acknowledgement"], e["expression"]))]
    order = sorted(
        named,
        key=lambda e: (e["acknowledgement"], *_after_none(e.get("id"), e.get("name"))),
    )
    return [{"license": entry} for entry in order]


def _licences(
    expression: str | None,
    name: str | None = None,
    link: str | None = None,
    *,
    concluded: bool = False,
) -> list[dict[str, Any]]:
    from cardaudit.extract.licence_table import normalise_spdx

    how = "concluded" if concluded else "declared"
    if expression:
        spdx, error = normalise_spdx(expression)
        if spdx and not error:
            return _licence_list([{"acknowledgement": how, "expression": spdx}], [])
    if name:
        url = safe_url(link, relative=True)
        return _licence_list([], [_licence(how, name=name, url=_uri(url) if url else None)])
    return []


def _model_licences(report: Report) -> list[dict[str, Any]]:
    """The model component's licences: the declared one; with a shipped licence file that
    modifies its licence (LIC010/LIC011), the declared id and a concluded ``LicenseRef-``
    carrying the file's text; a declared non-SPDX model licence (``LicenseRef-llama3.1``)
    as a named licence with its text, shipped or bundled."""
    from cardaudit.extract.licence_reference import reference_for
    from cardaudit.extract.licence_table import lookup, normalise_spdx

    licence = report.facts.license
    declared = _licences(licence.declared, licence.declared_name, licence.declared_link)
    evidence = report.evidence
    modified = [m for m in licence.files if m.repo == "model" and m.modifications]
    spdx = normalise_spdx(licence.declared)[0] if licence.declared else None
    simple = bool(spdx) and " " not in spdx
    if modified and evidence is not None:
        found = []
        if simple and not spdx.startswith("LicenseRef-"):
            found.append(_licence("declared", spdx_id=spdx))
        for match in modified:
            text = evidence.repo.text(match.path)
            found.append(
                _licence(
                    "concluded",
                    name=f"LicenseRef-cardaudit-modified-{match.identified}-{match.path}",
                    text=text.text if text is not None else None,
                )
            )
        return _licence_list([], found)
    if simple and spdx.startswith("LicenseRef-"):
        info = lookup(licence.declared)
        shipped = next(
            (
                evidence.repo.text(m.path)
                for m in licence.files
                if evidence is not None
                and m.repo == "model"
                and m.identified
                and info is not None
                and lookup(m.identified) == info
            ),
            None,
        )
        reference = reference_for(info.hub_id) if info is not None else None
        text = shipped.text if shipped is not None else reference.text if reference else None
        link = licence.declared_link
        url = _uri(link) if link and link.startswith(("http://", "https://")) else None
        return _licence_list([], [_licence("declared", name=spdx, text=text or None, url=url)])
    return declared


def _code_licences(report: Report, code_licence: str | None) -> list[dict[str, Any]]:
    """The code repo's concluded licence: a ``LicenseRef-`` with the text of a licence file
    that modifies its licence, else the identified id."""
    code = report.evidence.code if report.evidence is not None else None
    files = (report.facts.license.code_repo or {}).get("files", ())
    modified = [f for f in files if f.get("modifications")]
    if not modified or code is None:
        return _licences(code_licence, concluded=True)
    found = []
    for entry in modified:
        text = code.text(entry["path"])
        found.append(
            _licence(
                "concluded",
                name=f"LicenseRef-cardaudit-modified-{entry['identified']}-code-{entry['path']}",
                text=text.text if text is not None else None,
            )
        )
    return _licence_list([], found)


def _purl(repo_id: str, revision: str | None) -> str | None:
    from packageurl import PackageURL

    if hub_url(repo_id) is None:
        return None
    namespace, name = repo_id.split("/")
    return PackageURL(
        type="huggingface", namespace=namespace, name=name, version=revision
    ).to_string()


def _web(url: str | None) -> list[dict[str, str]]:
    url = safe_url(url)
    return [{"type": "website", "url": _uri(url)}] if url else []


def _properties(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in sorted(pairs)]


def _component(kind: str, name: str, **fields: Any) -> dict[str, Any]:
    """A component with the library's key order (alphabetical) and empty fields left out."""
    entry = {key.replace("_", "-"): value for key, value in fields.items() if value}
    entry["name"] = name
    entry["type"] = kind
    return dict(sorted(entry.items()))


def _files(report: Report) -> list[dict[str, Any]]:
    evidence = report.evidence
    if evidence is None:
        return []
    files = []
    for path, text in evidence.repo.texts.items():
        data = text.text.encode("utf-8")
        hashes = [
            {"alg": "SHA-1", "content": hashlib.sha1(data).hexdigest()},
            {"alg": "SHA-256", "content": hashlib.sha256(data).hexdigest()},
        ]
        files.append(_component("file", path, bom_ref=f"file:{path}", hashes=hashes))
    return sorted(files, key=lambda c: (c["name"], c["bom-ref"]))


def _ancestor_components(report: Report) -> list[dict[str, Any]]:
    found = []
    for index, ancestor in enumerate(ancestors(report), start=1):
        relation = ancestor.relation or "not declared"
        found.append(
            _component(
                "machine-learning-model",
                ancestor.id,
                bom_ref=f"base-{index}",
                version=ancestor.revision,
                licenses=_licences(ancestor.licence),
                purl=_purl(ancestor.id, ancestor.revision),
                externalReferences=_web(ancestor.url),
                properties=_properties([("cardaudit:base_model_relation", relation)]),
            )
        )
    return sorted(found, key=lambda c: (c["name"], *_after_none(c.get("version")), c["bom-ref"]))


def build_bom(report: Report) -> dict[str, Any]:
    """The BOM as the library serialises it (without the ``modelCard``)."""
    target, licence = report.target, report.facts.license
    summary = report.summary
    ancestors_ = _ancestor_components(report)
    model = _component(
        "machine-learning-model",
        target.id,
        bom_ref=MODEL_REF,
        version=target.revision,
        licenses=_model_licences(report),
        purl=_purl(target.id, target.revision) if target.kind == "hub" else None,
        externalReferences=_web(hub_url(target.id) if target.kind == "hub" else None),
        pedigree={"ancestors": ancestors_} if ancestors_ else None,
        components=_files(report),
        properties=_properties(
            [
                ("cardaudit:errors", str(summary.error)),
                ("cardaudit:warnings", str(summary.warning)),
                ("cardaudit:info", str(summary.info)),
                ("cardaudit:suppressed", str(summary.suppressed)),
            ]
        ),
    )
    components: list[dict[str, Any]] = []
    dependencies = [{"ref": MODEL_REF}]
    code = report.evidence.code if report.evidence is not None else None
    if code is not None:
        code_licence = (licence.code_repo or {}).get("identified")
        components.append(
            _component(
                "application",
                code.id,
                bom_ref=CODE_REF,
                version=code.revision,
                licenses=_code_licences(report, code_licence),
                externalReferences=_web(code.url),
                description="Code repository behind the model (training / inference code).",
            )
        )
        dependencies = [{"ref": CODE_REF}, {"dependsOn": [CODE_REF], "ref": MODEL_REF}]
    tool = {"name": "cardaudit", "type": "application", "version": __version__}
    seed = f"{target.id}|{target.revision or ''}|{json.dumps(licence.declared)}"
    bom: dict[str, Any] = {}
    if components:
        bom["components"] = components
    bom["dependencies"] = dependencies
    bom["metadata"] = {
        "component": model,
        "timestamp": build_time().isoformat(),
        "tools": {"components": [tool]},
    }
    bom["serialNumber"] = uuid.uuid5(uuid.NAMESPACE_URL, f"cardaudit:{seed}").urn
    bom["version"] = 1
    bom.update({"$schema": SCHEMA, "bomFormat": "CycloneDX", "specVersion": "1.6"})
    return bom


def model_card(report: Report) -> dict[str, Any]:
    """The CycloneDX ``modelCard`` for the model, from its card, config and the audit's facts."""
    evidence = report.evidence
    metadata = dict(evidence.card.metadata) if evidence is not None and evidence.card else {}
    config = dict(evidence.config or {}) if evidence is not None else {}
    parameters: dict[str, Any] = {}
    task = metadata.get("pipeline_tag")
    if isinstance(task, str):
        parameters["task"] = task
    if isinstance(config.get("model_type"), str):
        parameters["architectureFamily"] = config["model_type"]
    architectures = config.get("architectures")
    if isinstance(architectures, list) and architectures and isinstance(architectures[0], str):
        parameters["modelArchitecture"] = architectures[0]
    datasets = metadata.get("datasets")
    if isinstance(datasets, str):
        datasets = [datasets]
    if isinstance(datasets, list):
        parameters["datasets"] = [
            {"type": "dataset", "name": str(name)} for name in datasets if str(name).strip()
        ]
    facts = report.facts
    properties: list[dict[str, str]] = []

    def add(name: str, value: Any) -> None:
        if value is not None:
            properties.append({"name": f"cardaudit:{name}", "value": str(value)})

    add("parameters.total", facts.parameters.total)
    add("parameters.active", facts.parameters.active)
    for dtype, count in facts.parameters.by_dtype.items():
        add(f"parameters.{dtype}", count)
    add("parameters.source", facts.parameters.source)
    add("memory.weight_bytes", facts.memory.weight_bytes)
    add("memory.kv_cache_bytes_per_token", facts.memory.kv_cache_bytes_per_token)
    add("memory.context_length", facts.memory.context_length)
    for promise in facts.promises:
        add(f"promise.{promise.status}", f"{promise.artifact} ({promise.path}:{promise.line})")
    card: dict[str, Any] = {"bom-ref": "model-card"}
    if parameters:
        card["modelParameters"] = parameters
    if properties:
        card["properties"] = properties
    return card


def render(report: Report, **_options: object) -> str:
    data = build_bom(report)
    data["metadata"]["component"]["modelCard"] = model_card(report)
    # Repo text is shown by BOM viewers: control and bidi characters become visible escapes.
    text = json.dumps(visible_values(data), indent=2, ensure_ascii=False) + "\n"
    return text
