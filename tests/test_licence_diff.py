"""Modified licence texts (LIC010/LIC011): the diff against the reference text, the
findings with rule, severity, file and line, and what the SBOMs conclude."""

from __future__ import annotations

import json
import re
import textwrap
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.extract.licence_diff import compare, compare_file
from cardaudit.extract.licence_reference import reference_for
from cardaudit.reporters import render
from scenarios import scenario_json, scenario_report

runner = CliRunner()
Row = tuple[str, str, str | None, int | None]


@cache
def diff_findings(name: str) -> set[Row]:
    return {
        (f["rule_id"], f["severity"], f["location"]["path"], f["location"]["line"])
        for f in scenario_json(name)["findings"]
        if f["rule_id"] in ("LIC010", "LIC011")
    }


EXPECTED: dict[str, set[Row]] = {
    "licence-apache-nc-rider": {("LIC010", "error", "LICENSE", 77)},
    "licence-mit-field-of-use": {("LIC010", "error", "LICENSE", 9)},
    "licence-llama-paragraph-removed": {("LIC011", "warning", "LICENSE", 33)},
    "licence-openrail-restriction-deleted": {("LIC011", "warning", "LICENSE", 76)},
    # formatting only, and the Apache appendix filled in: nothing to report
    "licence-reformatted": set(),
    "licence-apache-appendix-filled": set(),
    "clean-apache": set(),
    "clean-llama": set(),
    "clover": set(),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_modified_licence_findings(name: str) -> None:
    assert diff_findings(name) == EXPECTED[name]


def test_facts_carry_the_diff() -> None:
    (licence,) = scenario_json("licence-apache-nc-rider")["facts"]["license"]["files"]
    assert licence["compared_with"].startswith("Apache-2.0 (SPDX License List")
    (mod,) = licence["modifications"]
    assert mod["kind"] == "added" and mod["line"] == 77
    assert mod["restricts"] is True and mod["category"] == "commercial"
    assert "may not be used for commercial purposes" in mod["text"]

    (removed,) = scenario_json("licence-openrail-restriction-deleted")["facts"]["license"]["files"][
        0
    ]["modifications"]
    assert removed["kind"] == "removed" and removed["restricts"] is False
    assert "defame" in removed["text"] and removed["category"] == "other"

    (llama,) = scenario_json("licence-llama-paragraph-removed")["facts"]["license"]["files"][0][
        "modifications"
    ]
    assert llama["text"].startswith("Additional Commercial Terms")
    assert llama["category"] == "commercial"

    clean = scenario_json("licence-reformatted")["facts"]["license"]["files"][0]
    assert clean["modifications"] == [] and "compared_with" in clean


def test_every_reporter_shows_the_modification() -> None:
    report = scenario_report("licence-apache-nc-rider")
    phrase = "may not be used for commercial purposes"
    for name in ("text", "markdown", "html", "sarif", "json"):
        assert phrase in render(report, name), name
    sarif = json.loads(render(report, "sarif"))
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "LIC010"]
    region = result["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"].endswith("LICENSE")
    assert region["region"]["startLine"] == 77
    assert "passing" not in render(report, "badge")


def test_spdx_and_cyclonedx_conclude_the_modified_text() -> None:
    report = scenario_report("licence-apache-nc-rider")
    spdx = json.loads(render(report, "spdx"))
    model = spdx["packages"][0]
    assert model["licenseDeclared"] == "Apache-2.0"
    assert model["licenseConcluded"].startswith("LicenseRef-cardaudit-modified-Apache-2.0")
    assert "not the unmodified licence" in model["licenseComments"]
    (info,) = [
        e for e in spdx["hasExtractedLicensingInfos"] if e["licenseId"] == model["licenseConcluded"]
    ]
    assert "may not be\nused for commercial purposes" in info["extractedText"]

    bom = json.loads(render(report, "cyclonedx"))
    licences = [entry["license"] for entry in bom["metadata"]["component"]["licenses"]]
    concluded = [lic for lic in licences if lic["acknowledgement"] == "concluded"]
    assert concluded and concluded[0]["name"].startswith("LicenseRef-cardaudit-modified-")
    assert "used for commercial purposes" in concluded[0]["text"]["content"]
    assert not any(
        lic.get("id") == "Apache-2.0" and lic["acknowledgement"] == "concluded" for lic in licences
    )


# --------------------------------------------------------------------------- the diff itself


def _rewrap(text: str, width: int) -> str:
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
    return "\n\n".join(textwrap.fill(p, width) for p in paragraphs if p)


def _markdown(text: str) -> str:
    lines = text.splitlines()
    return (
        "# "
        + lines[0]
        + "\n\n"
        + "\n".join(re.sub(r"^(\s*)(\d+)\.", r"\1\2)", line) for line in lines[1:]).replace(
            '"', "“"
        )
    )


SPDX_IDS = ("Apache-2.0", "MIT", "BSD-3-Clause", "GPL-3.0-only", "MPL-2.0", "CC-BY-4.0")


@pytest.mark.parametrize("licence", SPDX_IDS)
@pytest.mark.parametrize("variant", ["rewrap", "markdown", "copyright"])
def test_formatting_variants_are_not_modifications(licence: str, variant: str) -> None:
    reference = reference_for(licence)
    assert reference is not None
    text = reference.text
    if variant == "rewrap":
        text = _rewrap(text, 52)
    elif variant == "markdown":
        text = _markdown(text)
    else:
        text = "Copyright (c) 2026 Example Research Institute. All rights reserved.\n\n" + text
    modifications, note = compare(text, reference.text)
    assert note is None
    assert modifications == ()


def test_a_changed_permission_is_a_restriction() -> None:
    mit = reference_for("MIT").text
    changed = mit.replace("without restriction", "for non-commercial research purposes only")
    (mod,) = compare(changed, mit)[0]
    assert mod.kind == "changed" and mod.restricts and mod.category == "commercial"
    assert "without restriction" in (mod.reference_text or "")


def test_a_chinese_restriction_is_read_from_its_form() -> None:
    mit = reference_for("MIT").text
    rider = "\n\n本软件不得用于任何商业用途。\n"
    (mod,) = compare(mit + rider, mit)[0]
    assert mod.restricts and mod.category == "commercial"
    assert mod.line == len(mit.splitlines()) + 3


def test_a_non_restricting_addition_is_a_plain_modification() -> None:
    mit = reference_for("MIT").text
    text = mit + "\n\nWe would be glad to hear about projects that use this software.\n"
    (mod,) = compare(text, mit)[0]
    assert mod.kind == "added" and not mod.restricts


def test_an_unknown_licence_has_no_reference() -> None:
    assert compare_file("some text", "not-a-licence-id") is None


# --------------------------------------------------------------------------- hostile input


def _audit_json(repo: Path) -> dict:
    result = runner.invoke(app, ["audit", str(repo), "-f", "json", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _repo(tmp_path: Path, licence: bytes) -> Path:
    repo = tmp_path / "model"
    repo.mkdir(parents=True)
    (repo / "README.md").write_text("---\nlicense: mit\n---\n\n# A model\n")
    (repo / "LICENSE").write_bytes(licence)
    return repo


def test_a_huge_licence_is_an_src_outcome(tmp_path: Path) -> None:
    mit = reference_for("MIT").text.encode()
    data = _audit_json(_repo(tmp_path, mit * (5 * 1024 * 1024 // len(mit) + 1)))
    assert any(
        f["rule_id"] == "SRC003" and f["location"]["path"] == "LICENSE" for f in data["findings"]
    )


def test_a_long_licence_under_the_limit_is_not_compared_forever(tmp_path: Path) -> None:
    mit = reference_for("MIT").text
    data = _audit_json(_repo(tmp_path, (mit + "\n\n").encode() * 1500))
    (licence,) = data["facts"]["license"]["files"]
    assert licence.get("modifications", []) == [] or "compare_note" in licence


def test_a_binary_licence_is_an_src_outcome(tmp_path: Path) -> None:
    data = _audit_json(_repo(tmp_path, bytes(range(256)) * 64))
    assert any(f["rule_id"] == "SRC003" for f in data["findings"])


def test_mixed_encodings_and_one_line_licences(tmp_path: Path) -> None:
    mit = reference_for("MIT").text.encode()
    mixed = mit.replace(b"Permission", "Permissión".encode("latin-1"), 1)
    data = _audit_json(_repo(tmp_path, mixed))
    assert data["facts"]["license"]["files"][0]["identified"] == "MIT"
    one_line = _audit_json(_repo(tmp_path / "one", b"Licensed under the MIT licence.\n"))
    (licence,) = one_line["facts"]["license"]["files"]
    assert licence["identified"] is None  # not "openrail++ at 0.90" from a fuzzy ranking
    found = {(f["rule_id"], f["location"]["path"]) for f in one_line["findings"]}
    assert ("LIC005", "LICENSE") in found and not {r for r, _ in found} & {"LIC004", "LIC010"}


# --------------------------------------------------------------------------- REUSE, LIC009


def test_reuse_layout_counts_as_a_shipped_licence() -> None:
    data = scenario_json("reuse-layout")
    licence = data["facts"]["license"]
    assert [(m["path"], m["identified"]) for m in licence["files"]] == [
        ("LICENSES/Apache-2.0.txt", "Apache-2.0")
    ]
    assert licence["reuse"]["config"] == "REUSE.toml"
    assert licence["reuse"]["expressions"] == ["Apache-2.0"]
    code = licence["code_repo"]
    assert code["identified"] == "Apache-2.0"
    assert code["reuse"]["config"] == ".reuse/dep5"
    assert code["reuse"]["expressions"] == ["Apache-2.0"]
    rules = {f["rule_id"] for f in data["findings"]}
    assert not rules & {"ATT001", "LIC009", "LIC005", "LIC010", "LIC011"}, rules


def test_the_hub_fetches_the_reuse_layout() -> None:
    from cardaudit.model import FileEntry
    from cardaudit.sources.hub import wanted_file

    assert wanted_file(FileEntry("LICENSES/Apache-2.0.txt", 11_000))
    assert wanted_file(FileEntry("REUSE.toml", 200))
    assert wanted_file(FileEntry(".reuse/dep5", 200))
    assert not wanted_file(FileEntry("LICENSES/nested/MIT.txt", 1_000))
    assert not wanted_file(FileEntry("docs/LICENSE", 1_000))


def test_lic009_reads_a_readme_badge_and_names_the_repo() -> None:
    (finding,) = [
        f for f in scenario_json("code-licence-badge")["findings"] if f["rule_id"] == "LIC009"
    ]
    assert finding["severity"] == "warning"
    assert finding["location"] == {"path": "README.md", "line": 3, "repo": "code"}
    assert "rushlight-labs/tiny-train" in finding["message"]
    assert "states mit" in finding["message"]
    assert "all rights reserved" not in finding["message"]


def test_lic009_without_any_statement_is_all_rights_reserved(tmp_path: Path) -> None:
    model = _repo(tmp_path, reference_for("MIT").text.encode())
    code = tmp_path / "code"
    code.mkdir()
    (code / "README.md").write_text("# tools\n\nScripts.\n")
    result = runner.invoke(
        app, ["audit", str(model), "--code", str(code), "-f", "json", "--fail-on", "never"]
    )
    (finding,) = [f for f in json.loads(result.stdout)["findings"] if f["rule_id"] == "LIC009"]
    assert "all rights reserved" in finding["message"]
    assert "folder 'code'" in finding["message"]


def test_spdx_custom_licence_carries_the_shipped_text(tmp_path: Path) -> None:
    repo = tmp_path / "model"
    repo.mkdir()
    front = "license: other\nlicense_name: Fenland Model Licence\nlicense_link: LICENSE\n"
    (repo / "README.md").write_text(f"---\n{front}---\n\n# A model\n")
    own_terms = "FENLAND MODEL LICENCE\n\nYou may run this model on your own computers.\n"
    (repo / "LICENSE").write_text(own_terms)
    result = runner.invoke(app, ["audit", str(repo), "-f", "spdx", "--fail-on", "never"])
    data = json.loads(result.stdout)
    (info,) = data["hasExtractedLicensingInfos"]
    assert info["licenseId"] == "LicenseRef-Fenland-Model-Licence"
    assert info["extractedText"] == own_terms


def test_an_appended_third_party_licence_is_not_a_modification() -> None:
    apache = reference_for("Apache-2.0").text
    bsd = reference_for("BSD-3-Clause").text.replace("<year> <owner>", "2020 Tern Tokenizers")
    text = apache + "\n\nThis model bundles a tokenizer under the following licence:\n\n" + bsd
    comparison = compare_file(text, "Apache-2.0")
    assert comparison is not None and comparison.modifications == ()


def test_a_modified_code_licence_is_found_and_concluded(tmp_path: Path) -> None:
    model = _repo(tmp_path, reference_for("MIT").text.encode())
    code = tmp_path / "code"
    code.mkdir()
    rider = "\n\nThis software shall be used solely for academic research.\n"
    (code / "LICENSE").write_text(reference_for("MIT").text + rider)
    args = ["audit", str(model), "--code", str(code), "--fail-on", "never"]
    data = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    (finding,) = [f for f in data["findings"] if f["rule_id"] == "LIC010"]
    assert finding["location"]["repo"] == "code" and finding["location"]["path"] == "LICENSE"
    assert "research only" in finding["message"]
    spdx = json.loads(runner.invoke(app, [*args, "-f", "spdx"]).stdout)
    (package,) = [p for p in spdx["packages"] if p["SPDXID"] == "SPDXRef-Package-code"]
    assert package["licenseConcluded"] == "LicenseRef-cardaudit-modified-MIT-code-LICENSE"
    bom = json.loads(runner.invoke(app, [*args, "-f", "cyclonedx"]).stdout)
    (component,) = bom["components"]
    (entry,) = component["licenses"]
    assert entry["license"]["name"].startswith("LicenseRef-cardaudit-modified-MIT")


def test_creative_commons_preamble_and_closing_notice_are_optional() -> None:
    reference = reference_for("CC-BY-NC-4.0").text
    body = reference[
        reference.index("By exercising the Licensed Rights") : reference.index(
            "Creative Commons is not a party"
        )
    ]
    assert compare(body, reference)[0] == ()
    definition = "NonCommercial means not primarily intended for or directed towards commercial"
    start = body.index(definition)
    cut = body[:start] + body[body.index(".", start) + 1 :]
    (mod,) = compare(cut, reference)[0]
    assert mod.kind == "removed" and mod.category == "commercial"


def test_readme_statements_about_data_or_models_are_not_the_code_licence() -> None:
    from cardaudit.extract.code_licence import readme_licence_statements
    from cardaudit.model import FileEntry, RepoSnapshot, TextFile

    readme = "\n".join(
        [
            "# tools",
            "[![Code License](https://img.shields.io/badge/Code%20License-Apache_2.0-green.svg)](x)",
            "[![Data License](https://img.shields.io/badge/Data%20License-CC%20By%20NC%204.0-red)](y)",
            "All our open-weight models are licensed under Apache 2.0.",
            "The training scripts are released under the MIT License.",
        ]
    )
    snapshot = RepoSnapshot(
        kind="local",
        id="tools",
        path="/nowhere",
        revision=None,
        files=(FileEntry("README.md", len(readme)),),
        texts={"README.md": TextFile("README.md", readme)},
    )
    found = [(s["line"], s["kind"], s["licence"]) for s in readme_licence_statements(snapshot)]
    assert found == [(2, "badge", "apache-2.0"), (5, "sentence", "mit")]
