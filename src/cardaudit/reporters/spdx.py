"""SPDX 2.3 JSON: the model as a package, its base models and code repo as related packages.

Built with spdx-tools and checked by its validator before it is written. The model package
carries the declared licence (the card's ``license``), the concluded licence (what the
shipped licence texts support), its download location and revision, and one SPDX file per
audited text file with SHA-1 and SHA-256 checksums (of the text as audited, UTF-8 encoded).
Hub licence ids with no SPDX id (``llama3.1``…) become ``LicenseRef-…`` with an
``ExtractedLicensingInfo``. Set ``SOURCE_DATE_EPOCH`` for a reproducible document.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

from cardaudit import __version__
from cardaudit.errors import AuditError
from cardaudit.model import Report
from cardaudit.reporters.common import ancestors, build_time, hub_url
from cardaudit.safe_text import safe_url, visible_values

NAMESPACE_ROOT = "https://cardaudit.invalid/spdx"
MODEL_ID = "SPDXRef-Package-model"
CODE_ID = "SPDXRef-Package-code"
DESCENDANT_RELATIONS = {"quantized": "VARIANT_OF", "merge": "DESCENDANT_OF"}


class SpdxError(AuditError):
    """The SPDX document failed validation (a bug: reported in one line, exit 2)."""


def _ref_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", text).strip("-") or "unknown"


class _Licences:
    """Parses expressions; collects the LicenseRefs that need an ExtractedLicensingInfo."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.refs: dict[str, tuple[str, str, list[str]]] = {}

    def expression(self, text: str | None, *, name: str | None = None, link: str | None = None):
        """An SPDX expression for a Hub id / SPDX expression; NOASSERTION when unusable."""
        from spdx_tools.common.spdx_licensing import spdx_licensing
        from spdx_tools.spdx.model import SpdxNoAssertion

        from cardaudit.extract.licence_table import lookup, normalise_spdx

        if not text:
            return SpdxNoAssertion()
        info = lookup(text)
        if info is not None and info.spdx is None:  # "other", "unknown": a named custom licence
            if not name:
                return SpdxNoAssertion()
            expression = f"LicenseRef-{_ref_id(name)}"
        else:
            expression, error = normalise_spdx(text)
            if error or not expression:
                return SpdxNoAssertion()
        try:
            parsed = spdx_licensing.parse(expression)
        except Exception:  # license-expression raises several error types
            return SpdxNoAssertion()
        for symbol in spdx_licensing.license_symbols(parsed):
            key = str(symbol.key)
            if key.startswith("LicenseRef-") and key not in self.refs:
                self._add_ref(key, name, link)
        return parsed

    def _add_ref(self, key: str, name: str | None, link: str | None) -> None:
        from cardaudit.extract.licence_reference import reference_for
        from cardaudit.extract.licence_table import lookup

        info = lookup(key)
        title = name or (info.name if info else key.removeprefix("LicenseRef-"))
        text = self._shipped_text(key) or (self._custom_text() if name else None)
        if text is None:  # the licence's own text as cardaudit bundles it (Llama, Gemma…)
            reference = reference_for(info.hub_id if info else key.removeprefix("LicenseRef-"))
            text = reference.text if reference is not None else None
        if text is None:
            where = link or "the licence named by the model card"
            text = f"The full text of {title} is not shipped with the model; see {where}."
        # SPDX cross references must be URLs; a repo-relative link is named in the text instead.
        self.refs[key] = (title, text, [url] if (url := safe_url(link)) else [])

    def ref(self, key: str) -> Any:
        """A parsed LicenseRef that ``modified`` registered."""
        from spdx_tools.common.spdx_licensing import spdx_licensing

        return spdx_licensing.parse(key)

    def modified(self, match: Any, repo: str = "model") -> str:
        """A LicenseRef for a shipped licence file that modifies its licence, whose extracted
        text is the file as shipped (never the unmodified id: LIC010/LIC011). ``match`` is a
        LicenceMatch (model repo) or a code repo file's facts (a mapping)."""
        identified, path = (
            (match["identified"], match["path"])
            if isinstance(match, dict)
            else (match.identified, match.path)
        )
        where = "" if repo == "model" else f"{repo}-"
        key = f"LicenseRef-cardaudit-modified-{_ref_id(identified)}-{where}{_ref_id(path)}"
        evidence = self.report.evidence
        snapshot = None if evidence is None else evidence.repo if repo == "model" else evidence.code
        text = snapshot.text(path) if snapshot is not None else None
        if key not in self.refs:
            in_repo = path if repo == "model" else f"the {repo} repo's {path}"
            self.refs[key] = (
                f"{identified} as modified in {in_repo}",
                text.text if text is not None else f"The modified text of {in_repo}.",
                [],
            )
        return key

    def _custom_text(self) -> str | None:
        """The text of a custom licence the card names: its one unidentified licence file."""
        evidence = self.report.evidence
        files = [m for m in self.report.facts.license.files if m.repo == "model"]
        if evidence is None or len(files) != 1 or files[0].identified or files[0].link:
            return None
        text = evidence.repo.text(files[0].path)
        return text.text if text is not None and text.text.strip() else None

    def _shipped_text(self, key: str) -> str | None:
        """The model repo's unmodified licence file text when it was identified as ``key``."""
        evidence = self.report.evidence
        for match in self.report.facts.license.files:
            if match.repo != "model" or evidence is None or match.modifications:
                continue
            if match.identified and match.identified.lower() in {
                key.lower(),
                key.lower().removeprefix("licenseref-"),
            }:
                text = evidence.repo.text(match.path)
                if text is not None:
                    return text.text
        return None

    def extracted(self) -> list[Any]:
        from spdx_tools.spdx.model import ExtractedLicensingInfo

        return [
            ExtractedLicensingInfo(
                license_id=key, extracted_text=text, license_name=title, cross_references=refs
            )
            for key, (title, text, refs) in sorted(self.refs.items())
        ]


def _files(report: Report) -> list[Any]:
    from spdx_tools.spdx.model import Checksum, ChecksumAlgorithm, File

    evidence = report.evidence
    if evidence is None:
        return []
    files = []
    for index, (path, text) in enumerate(sorted(evidence.repo.texts.items()), start=1):
        data = text.text.encode("utf-8")
        files.append(
            File(
                name=f"./{path}",
                spdx_id=f"SPDXRef-File-{index}-{_ref_id(path)}",
                checksums=[
                    Checksum(ChecksumAlgorithm.SHA1, hashlib.sha1(data).hexdigest()),
                    Checksum(ChecksumAlgorithm.SHA256, hashlib.sha256(data).hexdigest()),
                ],
            )
        )
    return files


def _concluded(report: Report, licences: _Licences, declared: Any) -> tuple[Any, str]:
    """The concluded licence: the declaration when the shipped texts agree with it; a
    LicenseRef with the shipped text when a licence file modifies its licence."""
    from spdx_tools.common.spdx_licensing import spdx_licensing
    from spdx_tools.spdx.model import SpdxNoAssertion

    from cardaudit.extract.licence_table import expression_ids, same_licence

    facts = report.facts.license
    model_files = [m for m in facts.files if m.repo == "model" and m.identified]
    modified = [m for m in model_files if m.modifications]
    if modified:
        refs = list(dict.fromkeys(licences.modified(m) for m in modified))
        which = "; ".join(
            f"{m.path} modifies {m.identified} ({len(m.modifications)} passage(s) differ, "
            f"{sum(x.restricts for x in m.modifications)} restricting use)"
            for m in modified
        )
        return spdx_licensing.parse(" AND ".join(refs)), (
            f"Concluded from the shipped licence text, not the unmodified licence: {which}. "
            f"The card declares {facts.declared!r}."
        )
    shipped = sorted({m.identified for m in model_files})
    declared_ids = expression_ids(facts.declared)
    agrees = all(any(same_licence(s, d) for d in declared_ids) for s in shipped)
    if not isinstance(declared, SpdxNoAssertion) and agrees:
        why = "licence file agrees" if shipped else "no licence file ships to contradict it"
        return declared, f"Concluded from the model card's declaration ({why})."
    if isinstance(declared, SpdxNoAssertion) and len(shipped) == 1:
        return (
            licences.expression(shipped[0]),
            f"Concluded from the shipped licence text; the card declares {facts.declared!r}.",
        )
    if shipped:
        return SpdxNoAssertion(), (
            f"No conclusion: the card declares {facts.declared!r} but the shipped licence "
            f"texts identify as {', '.join(shipped)}."
        )
    return SpdxNoAssertion(), "No conclusion: no usable declaration and no licence text."


def _location(url: str | None, revision: str | None) -> Any:
    """An SPDX download location: ``git+URL@REV`` when pinned, NOASSERTION when unknown.

    SPDX 2.3 (7.7) allows only a download location of its grammar or NOASSERTION: a URL
    the spec's validator rejects (a Hub served from ``127.0.0.1:PORT`` or ``localhost``, a
    ``file://`` clone) becomes NOASSERTION; the purl external reference still names the repo.
    """
    from spdx_tools.spdx.model import SpdxNoAssertion
    from spdx_tools.spdx.validation.uri_validators import validate_download_location

    if not url:
        return SpdxNoAssertion()
    location = f"git+{url}@{revision}" if revision else url
    return SpdxNoAssertion() if validate_download_location(location) else location


def _download_location(report: Report) -> Any:
    target = report.target
    url = report.evidence.repo.url if report.evidence is not None else None
    if target.kind == "hub":
        url = url or hub_url(target.id)
    return _location(url, target.revision)


def build_document(report: Report) -> Any:
    from spdx_tools.common.spdx_licensing import spdx_licensing
    from spdx_tools.spdx.model import (
        Actor,
        ActorType,
        CreationInfo,
        Document,
        ExternalPackageRef,
        ExternalPackageRefCategory,
        Package,
        PackagePurpose,
        Relationship,
        RelationshipType,
        SpdxNoAssertion,
    )
    from spdx_tools.spdx.spdx_element_utils import calculate_package_verification_code

    target, facts = report.target, report.facts.license
    licences = _Licences(report)
    declared = licences.expression(
        facts.declared, name=facts.declared_name, link=facts.declared_link
    )
    concluded, conclusion = _concluded(report, licences, declared)
    files = _files(report)
    from_files = [
        licences.ref(licences.modified(m))
        if m.modifications and m.repo == "model"
        else licences.expression(m.identified)
        for m in facts.files
        if m.identified
    ]
    refs = []
    if target.kind == "hub":
        purl = f"pkg:huggingface/{target.id}" + (f"@{target.revision}" if target.revision else "")
        refs.append(ExternalPackageRef(ExternalPackageRefCategory.PACKAGE_MANAGER, "purl", purl))
    model = Package(
        spdx_id=MODEL_ID,
        name=target.id,
        download_location=_download_location(report),
        version=target.revision,
        files_analyzed=bool(files),
        verification_code=calculate_package_verification_code(files) if files else None,
        homepage=hub_url(target.id) if target.kind == "hub" else None,
        license_declared=declared,
        license_concluded=concluded,
        # SPDX allows licence info from files only when the files are listed (analysed)
        license_info_from_files=(from_files or [SpdxNoAssertion()]) if files else [],
        license_comment=conclusion,
        copyright_text=SpdxNoAssertion(),
        primary_package_purpose=PackagePurpose.OTHER,
        comment="A machine-learning model repository audited by cardaudit; file checksums "
        "cover the text files read, never the weights.",
        external_references=refs,
    )
    packages = [model]
    relationships = [Relationship("SPDXRef-DOCUMENT", RelationshipType.DESCRIBES, MODEL_ID)]
    relationships += [Relationship(MODEL_ID, RelationshipType.CONTAINS, f.spdx_id) for f in files]
    for index, ancestor in enumerate(ancestors(report), start=1):
        spdx_id = f"SPDXRef-Package-base-{index}"
        packages.append(
            Package(
                spdx_id=spdx_id,
                name=ancestor.id,
                download_location=_location(ancestor.url, ancestor.revision),
                version=ancestor.revision,
                files_analyzed=False,
                license_declared=licences.expression(ancestor.licence),
                license_concluded=SpdxNoAssertion(),
                copyright_text=SpdxNoAssertion(),
                primary_package_purpose=PackagePurpose.OTHER,
                comment="Base model (machine-learning model).",
            )
        )
        kind = DESCENDANT_RELATIONS.get(ancestor.relation or "", "DESCENDANT_OF")
        relationships.append(
            Relationship(
                MODEL_ID,
                RelationshipType[kind],
                spdx_id,
                comment=f"base_model_relation: {ancestor.relation or 'not declared'}",
            )
        )
    code = report.evidence.code if report.evidence is not None else None
    if code is not None:
        code_licence = (facts.code_repo or {}).get("identified")
        code_modified = [
            f for f in (facts.code_repo or {}).get("files", ()) if f.get("modifications")
        ]
        code_concluded = (
            spdx_licensing.parse(
                " AND ".join(dict.fromkeys(licences.modified(f, "code") for f in code_modified))
            )
            if code_modified
            else licences.expression(code_licence)
        )
        packages.append(
            Package(
                spdx_id=CODE_ID,
                name=code.id,
                download_location=_location(code.url, code.revision),
                version=code.revision,
                files_analyzed=False,
                license_declared=SpdxNoAssertion(),
                license_concluded=code_concluded,
                copyright_text=SpdxNoAssertion(),
                primary_package_purpose=PackagePurpose.SOURCE,
                comment="Code repository behind the model (training / inference code).",
            )
        )
        relationships.append(
            Relationship(
                MODEL_ID,
                RelationshipType.OTHER,
                CODE_ID,
                comment="the model's code repository (training / inference code)",
            )
        )
    seed = "|".join(
        [target.id, target.revision or "", model.verification_code.value if files else ""]
    )
    namespace = f"{NAMESPACE_ROOT}/{_ref_id(target.id)}-{uuid.uuid5(uuid.NAMESPACE_URL, seed)}"
    creation = CreationInfo(
        spdx_version="SPDX-2.3",
        spdx_id="SPDXRef-DOCUMENT",
        name=f"cardaudit-{target.id}",
        document_namespace=namespace,
        creators=[Actor(ActorType.TOOL, f"cardaudit-{__version__}")],
        created=build_time(),
        data_license="CC0-1.0",
    )
    return Document(
        creation_info=creation,
        packages=packages,
        files=files,
        relationships=relationships,
        extracted_licensing_info=licences.extracted(),
    )


def validate(document: Any) -> None:
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    messages = validate_full_spdx_document(document)
    if messages:
        raise SpdxError(f"SPDX document is invalid: {messages[0].validation_message}")


def render(report: Report, **_options: object) -> str:
    from spdx_tools.spdx.jsonschema.document_converter import DocumentConverter

    document = build_document(report)
    validate(document)
    data = DocumentConverter().convert(document)
    # Repo text is shown by SBOM viewers: control and bidi characters become visible escapes.
    return json.dumps(visible_values(data), indent=2, ensure_ascii=False) + "\n"
