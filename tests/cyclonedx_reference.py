"""The reference CycloneDX BOM, built and serialised by cyclonedx-python-lib.

``cardaudit.reporters.cyclonedx`` writes the same document as JSON directly (the library's
import and serialiser cost a quarter of an audit); ``tests/test_cyclonedx_reference.py``
requires both to agree on every fixture. This is the previous run-time reporter, kept as
the oracle: the model component (declared licence, Hub purl, the audited text files as
``file`` sub-components with SHA-1/SHA-256 hashes), its base models as
``pedigree.ancestors`` and its code repo as a dependency; the ``modelCard`` object, which
the library does not model, is the reporter's own.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from cardaudit import __version__
from cardaudit.model import Report
from cardaudit.reporters.common import ancestors, build_time, hub_url
from cardaudit.reporters.cyclonedx import model_card
from cardaudit.safe_text import safe_url, visible_values

MODEL_REF = "model"
CODE_REF = "code-repo"


def _licences(
    expression: str | None,
    name: str | None = None,
    link: str | None = None,
    *,
    concluded: bool = False,
):
    from cyclonedx.model import XsUri
    from cyclonedx.model.license import (
        DisjunctiveLicense,
        LicenseAcknowledgement,
        LicenseExpression,
    )

    from cardaudit.extract.licence_table import normalise_spdx

    how = LicenseAcknowledgement.CONCLUDED if concluded else LicenseAcknowledgement.DECLARED
    if expression:
        spdx, error = normalise_spdx(expression)
        if spdx and not error:
            return [LicenseExpression(spdx, acknowledgement=how)]
    if name:
        return [
            DisjunctiveLicense(
                name=name,
                url=XsUri(url) if (url := safe_url(link, relative=True)) else None,
                acknowledgement=how,
            )
        ]
    return []


def _model_licences(report: Report) -> list[Any]:
    """The model component's licences: the declared one; with a shipped licence file that
    modifies its licence (LIC010/LIC011), the declared id and a concluded ``LicenseRef-``
    carrying the file's text; a declared non-SPDX model licence (``LicenseRef-llama3.1``)
    as a named licence with its text, shipped or bundled."""
    from cyclonedx.model import AttachedText, XsUri
    from cyclonedx.model.license import DisjunctiveLicense, LicenseAcknowledgement

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
            found.append(
                DisjunctiveLicense(id=spdx, acknowledgement=LicenseAcknowledgement.DECLARED)
            )
        for match in modified:
            text = evidence.repo.text(match.path)
            found.append(
                DisjunctiveLicense(
                    name=f"LicenseRef-cardaudit-modified-{match.identified}-{match.path}",
                    text=AttachedText(content=text.text) if text is not None else None,
                    acknowledgement=LicenseAcknowledgement.CONCLUDED,
                )
            )
        return found
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
        return [
            DisjunctiveLicense(
                name=spdx,
                text=AttachedText(content=text) if text else None,
                url=XsUri(link) if link and link.startswith(("http://", "https://")) else None,
                acknowledgement=LicenseAcknowledgement.DECLARED,
            )
        ]
    return declared


def _code_licences(report: Report, code_licence: str | None) -> list[Any]:
    """The code repo's concluded licence: a ``LicenseRef-`` with the text of a licence file
    that modifies its licence, else the identified id."""
    from cyclonedx.model import AttachedText
    from cyclonedx.model.license import DisjunctiveLicense, LicenseAcknowledgement

    code = report.evidence.code if report.evidence is not None else None
    files = (report.facts.license.code_repo or {}).get("files", ())
    modified = [f for f in files if f.get("modifications")]
    if not modified or code is None:
        return _licences(code_licence, concluded=True)
    found = []
    for entry in modified:
        text = code.text(entry["path"])
        found.append(
            DisjunctiveLicense(
                name=f"LicenseRef-cardaudit-modified-{entry['identified']}-code-{entry['path']}",
                text=AttachedText(content=text.text) if text is not None else None,
                acknowledgement=LicenseAcknowledgement.CONCLUDED,
            )
        )
    return found


def _purl(repo_id: str, revision: str | None):
    from packageurl import PackageURL

    if hub_url(repo_id) is None:
        return None
    namespace, name = repo_id.split("/")
    return PackageURL(type="huggingface", namespace=namespace, name=name, version=revision)


def _web(url: str | None) -> list[Any]:
    from cyclonedx.model import ExternalReference, ExternalReferenceType, XsUri

    url = safe_url(url)
    return [ExternalReference(type=ExternalReferenceType.WEBSITE, url=XsUri(url))] if url else []


def _files(report: Report) -> list[Any]:
    from cyclonedx.model import HashAlgorithm, HashType
    from cyclonedx.model.component import Component, ComponentType

    evidence = report.evidence
    if evidence is None:
        return []
    files = []
    for path, text in sorted(evidence.repo.texts.items()):
        data = text.text.encode("utf-8")
        files.append(
            Component(
                type=ComponentType.FILE,
                name=path,
                bom_ref=f"file:{path}",
                hashes=[
                    HashType(alg=HashAlgorithm.SHA_1, content=hashlib.sha1(data).hexdigest()),
                    HashType(alg=HashAlgorithm.SHA_256, content=hashlib.sha256(data).hexdigest()),
                ],
            )
        )
    return files


def _ancestor_components(report: Report) -> list[Any]:
    from cyclonedx.model import Property
    from cyclonedx.model.component import Component, ComponentType

    found = []
    for index, ancestor in enumerate(ancestors(report), start=1):
        found.append(
            Component(
                type=ComponentType.MACHINE_LEARNING_MODEL,
                name=ancestor.id,
                bom_ref=f"base-{index}",
                version=ancestor.revision,
                licenses=_licences(ancestor.licence),
                purl=_purl(ancestor.id, ancestor.revision),
                external_references=_web(ancestor.url),
                properties=[
                    Property(
                        name="cardaudit:base_model_relation",
                        value=ancestor.relation or "not declared",
                    )
                ],
            )
        )
    return found


def build_bom(report: Report) -> Any:
    from cyclonedx.model import Property
    from cyclonedx.model.bom import Bom, BomMetaData
    from cyclonedx.model.component import Component, ComponentType, Pedigree
    from cyclonedx.model.dependency import Dependency
    from cyclonedx.model.tool import ToolRepository

    target, licence = report.target, report.facts.license
    summary = report.summary
    ancestors_ = _ancestor_components(report)
    model = Component(
        type=ComponentType.MACHINE_LEARNING_MODEL,
        name=target.id,
        bom_ref=MODEL_REF,
        version=target.revision,
        licenses=_model_licences(report),
        purl=_purl(target.id, target.revision) if target.kind == "hub" else None,
        external_references=_web(hub_url(target.id) if target.kind == "hub" else None),
        pedigree=Pedigree(ancestors=ancestors_) if ancestors_ else None,
        components=_files(report),
        properties=[
            Property(name="cardaudit:errors", value=str(summary.error)),
            Property(name="cardaudit:warnings", value=str(summary.warning)),
            Property(name="cardaudit:info", value=str(summary.info)),
            Property(name="cardaudit:suppressed", value=str(summary.suppressed)),
        ],
    )
    components, dependencies = [], []
    code = report.evidence.code if report.evidence is not None else None
    if code is not None:
        code_licence = (licence.code_repo or {}).get("identified")
        components.append(
            Component(
                type=ComponentType.APPLICATION,
                name=code.id,
                bom_ref=CODE_REF,
                version=code.revision,
                licenses=_code_licences(report, code_licence),
                external_references=_web(code.url),
                description="Code repository behind the model (training / inference code).",
            )
        )
        dependencies.append(
            Dependency(ref=model.bom_ref, dependencies=[Dependency(ref=components[0].bom_ref)])
        )
    tool = Component(type=ComponentType.APPLICATION, name="cardaudit", version=__version__)
    seed = f"{target.id}|{target.revision or ''}|{json.dumps(licence.declared)}"
    return Bom(
        serial_number=uuid.uuid5(uuid.NAMESPACE_URL, f"cardaudit:{seed}"),
        metadata=BomMetaData(
            timestamp=build_time(),
            component=model,
            tools=ToolRepository(components=[tool]),
        ),
        components=components,
        dependencies=dependencies,
    )


def render(report: Report, **_options: object) -> str:
    from cyclonedx.output.json import JsonV1Dot6

    data = json.loads(JsonV1Dot6(build_bom(report)).output_as_string())
    data["metadata"]["component"]["modelCard"] = model_card(report)
    # Repo text is shown by BOM viewers: control and bidi characters become visible escapes.
    text = json.dumps(visible_values(data), indent=2, ensure_ascii=False) + "\n"
    return text
