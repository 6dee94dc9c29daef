"""Reader-facing reporters: badge verdicts, HTML self-containment, SARIF, SPDX and Markdown
details, and the CLI writing several formats at once."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.model import (
    BaseModelRef,
    Claim,
    Finding,
    Location,
    MemoryFacts,
    ParameterFacts,
    Promise,
    Report,
)
from cardaudit.reporters import REPORTERS, render
from cardaudit.reporters.badge import badge_svg
from cardaudit.reporters.common import verdict
from scenarios import FIXTURES, scenario_report

runner = CliRunner()


def with_findings(report: Report, *severities: str) -> Report:
    findings = tuple(
        Finding("LIC001", severity, f"problem {i}", Location("README.md", i + 1))  # type: ignore[arg-type]
        for i, severity in enumerate(severities)
    )
    return dataclasses.replace(report, findings=findings)


@pytest.fixture(scope="module")
def clean() -> Report:
    return scenario_report("clean-card")


@pytest.mark.parametrize(
    ("severities", "message", "colour"),
    [
        ((), "passing", "brightgreen"),
        (("info",), "passing", "green"),
        (("warning",), "1 warning", "yellow"),
        (("warning", "warning", "info"), "2 warnings", "yellow"),
        (("error", "warning"), "failing", "red"),
    ],
)
def test_badge_verdict_and_colour(clean: Report, severities, message, colour) -> None:
    report = with_findings(clean, *severities)
    assert (verdict(report).message, verdict(report).colour) == (message, colour)
    endpoint = json.loads(render(report, "shields"))
    assert endpoint == {
        "schemaVersion": 1,
        "label": "model audit",
        "message": message,
        "color": colour,
    }
    svg = ET.fromstring(render(report, "badge"))
    assert svg.get("aria-label") == f"model audit: {message}"
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert texts.count(message) == 2 and texts.count("model audit") == 2


@pytest.mark.parametrize(
    ("severities", "fail_on", "message", "colour"),
    [
        (("warning",), "warning", "failing", "red"),
        (("info",), "info", "failing", "red"),
        (("error", "warning"), "never", "1 error", "red"),
        (("warning", "info"), "never", "1 warning", "yellow"),
        (("info",), "warning", "passing", "green"),
    ],
)
def test_badge_follows_fail_on(clean: Report, severities, fail_on, message, colour) -> None:
    report = with_findings(clean, *severities)
    endpoint = json.loads(render(report, "shields", fail_on=fail_on))
    assert (endpoint["message"], endpoint["color"]) == (message, colour)
    svg = ET.fromstring(render(report, "badge", fail_on=fail_on))
    assert svg.get("aria-label") == f"model audit: {message}"


@pytest.mark.parametrize(
    ("fail_on", "code", "message"), [("warning", 1, "failing"), ("never", 0, "1 error")]
)
def test_cli_badge_says_what_the_exit_code_says(fail_on: str, code: int, message: str) -> None:
    model = str(FIXTURES / "licence-typo" / "model")
    result = runner.invoke(app, ["audit", model, "-f", "shields", "--fail-on", fail_on])
    assert result.exit_code == code
    assert json.loads(result.stdout)["message"] == message


def test_cli_output_files_are_named_with_a_verdict_on_stderr(tmp_path: Path) -> None:
    model = str(FIXTURES / "licence-typo" / "model")
    out = tmp_path / "reports"
    result = runner.invoke(app, ["audit", model, "-f", "sarif,badge", "--output-dir", str(out)])
    assert result.exit_code == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[-3:] == [
        f"cardaudit: wrote {out / 'cardaudit.sarif'}",
        f"cardaudit: wrote {out / 'cardaudit-badge.svg'}",
        "cardaudit: 1 error, 0 warnings, 0 info: exit 1, findings at or above --fail-on error",
    ]
    single = runner.invoke(
        app, ["audit", model, "-o", str(tmp_path / "r.json"), "-f", "json", "--fail-on", "never"]
    )
    assert single.exit_code == 0 and single.stdout == ""
    assert single.stderr.splitlines()[-2:] == [
        f"cardaudit: wrote {tmp_path / 'r.json'}",
        "cardaudit: 1 error, 0 warnings, 0 info: exit 0, --fail-on never",
    ]
    piped = runner.invoke(app, ["audit", model, "-f", "json"])
    assert "cardaudit: wrote" not in piped.stderr and "exit 1" not in piped.stderr


def test_badge_escapes_and_widens_with_text() -> None:
    short, wide = badge_svg("a", "b", "red"), badge_svg("model audit", "12 warnings & <x>", "red")
    width = lambda svg: int(re.search(r'width="(\d+)"', svg).group(1))  # noqa: E731
    assert width(wide) > width(short)
    assert "&amp; &lt;x&gt;" in wide and ET.fromstring(wide) is not None


def full_facts(report: Report) -> Report:
    facts = dataclasses.replace(
        report.facts,
        parameters=ParameterFacts(
            total=7_241_732_096, by_dtype={"BF16": 7_241_732_096}, source="safetensors"
        ),
        memory=MemoryFacts(
            weight_bytes=14_483_464_192, kv_cache_bytes_per_token=131_072, context_length=32_768
        ),
        base_models=(BaseModelRef("acme/base-7b", "finetune", "card"),),
        promises=(
            Promise(
                "Weights for the 70B model coming soon",
                "70B weights",
                "README.md",
                12,
                "missing",
                first_seen="2025-02-01",
            ),
            Promise(
                "Paper to follow", "paper", "README.md", 14, "delivered", first_seen="2024-11-20"
            ),
        ),
        claims=(Claim("benchmark", "SOTA on MMLU", "README.md", 20, missing=("eval setup",)),),
        extra={"gguf": {"files": 2}},
    )
    return dataclasses.replace(report, facts=facts)


def test_html_escapes_card_text(clean: Report) -> None:
    report = dataclasses.replace(
        clean,
        findings=(
            Finding(
                "LIC001",
                "error",
                "<script>alert(1)</script>",
                Location("README.md", 1),
                evidence='license: "<b>"',
            ),
        ),
    )
    page = render(report, "html")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page


def test_sarif_result_points_at_the_card_line_with_rule_help() -> None:
    report = scenario_report("licence-typo")
    sarif = json.loads(render(report, "sarif"))
    run = sarif["runs"][0]
    (result,) = run["results"]
    assert result["ruleId"] == "LIC002" and result["level"] == "error"
    rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["id"] == "LIC002" and "How to fix" in rule["help"]["text"]
    assert rule["defaultConfiguration"]["level"] == "error"
    physical = result["locations"][0]["physicalLocation"]
    assert physical["region"]["startLine"] == 2
    # an absolute target path: URIs relative to a declared MODEL base
    assert physical["artifactLocation"] == {"uri": "README.md", "uriBaseId": "MODEL"}
    assert run["originalUriBaseIds"]["MODEL"]["uri"].startswith("file:///")


def test_sarif_marks_suppressed_results() -> None:
    sarif = json.loads(render(scenario_report("waived"), "sarif"))
    results = sarif["runs"][0]["results"]
    suppressed = [r for r in results if "suppressions" in r]
    assert [r["ruleId"] for r in suppressed] == ["ATT001"]
    assert suppressed[0]["suppressions"][0]["status"] == "accepted"
    assert "accepted-risk" in suppressed[0]["suppressions"][0]["justification"]


def card_repo(tmp_path: Path, front_matter: str, licence: str | None = None) -> Path:
    repo = tmp_path / "model"
    repo.mkdir()
    (repo / "README.md").write_text(f"---\n{front_matter}---\n\n# A model\n")
    if licence:
        (repo / "LICENSE").write_text(licence)
    return repo


def spdx_of(repo: Path) -> dict:
    result = runner.invoke(app, ["audit", str(repo), "-f", "spdx", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_spdx_hub_only_licence_becomes_licenseref_with_extracted_info(tmp_path: Path) -> None:
    data = spdx_of(card_repo(tmp_path, "license: llama3.1\n"))
    model = data["packages"][0]
    assert model["licenseDeclared"] == "LicenseRef-llama3.1"
    (info,) = data["hasExtractedLicensingInfos"]
    assert info["licenseId"] == "LicenseRef-llama3.1"
    assert info["name"] == "Llama 3.1 Community License"
    # not shipped: the licence's own text as cardaudit bundles it, not a placeholder
    assert "LLAMA 3.1 COMMUNITY LICENSE AGREEMENT" in info["extractedText"]


def test_spdx_custom_licence_named_by_the_card(tmp_path: Path) -> None:
    front = "license: other\nlicense_name: Acme Model Licence v2\nlicense_link: https://acme.example/l\n"
    data = spdx_of(card_repo(tmp_path, front))
    assert data["packages"][0]["licenseDeclared"] == "LicenseRef-Acme-Model-Licence-v2"
    (info,) = data["hasExtractedLicensingInfos"]
    assert info["seeAlsos"] == ["https://acme.example/l"]


def test_spdx_concludes_nothing_when_texts_contradict_the_card(tmp_path: Path) -> None:
    apache_text = (FIXTURES / "clover" / "model" / "LICENSE").read_text()
    assert "Apache License" in apache_text
    data = spdx_of(card_repo(tmp_path, "license: mit\n", licence=apache_text))
    model = data["packages"][0]
    assert model["licenseDeclared"] == "MIT"
    assert model["licenseConcluded"] == "NOASSERTION"
    assert "Apache-2.0" in model["licenseComments"]
    names = {f["fileName"]: f for f in data["files"]}
    assert set(names) == {"./LICENSE", "./README.md"}
    algorithms = {c["algorithm"] for c in names["./LICENSE"]["checksums"]}
    assert algorithms == {"SHA1", "SHA256"}


def test_cli_writes_one_file_per_format(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    model = str(FIXTURES / "licence-typo" / "model")
    result = runner.invoke(
        app, ["audit", model, "-f", ",".join(REPORTERS), "--output-dir", str(out)]
    )
    assert result.exit_code == 1 and result.stdout == ""
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "cardaudit.txt",
            "cardaudit.concise.txt",
            "cardaudit.github.txt",
            "cardaudit.json",
            "cardaudit.sarif",
            "cardaudit.md",
            "cardaudit.html",
            "cardaudit.spdx.json",
            "cardaudit.cdx.json",
            "cardaudit-badge.svg",
            "cardaudit-badge.json",
        ]
    )
    assert json.loads((out / "cardaudit.json").read_text())["summary"]["error"] == 1


def test_cli_several_formats_need_an_output_dir() -> None:
    model = str(FIXTURES / "clover" / "model")
    result = runner.invoke(app, ["audit", model, "-f", "json", "-f", "sarif"])
    assert result.exit_code == 2 and "--output-dir" in result.output
    result = runner.invoke(app, ["audit", model, "-f", "json,pdf", "--output-dir", "x"])
    assert result.exit_code == 2 and "unknown --format 'pdf'" in result.output


def test_cli_unwritable_output_dir_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    model = str(FIXTURES / "clover" / "model")
    result = runner.invoke(app, ["audit", model, "-f", "badge", "--output-dir", str(blocker / "d")])
    assert result.exit_code == 2 and "cannot create" in result.output


def test_every_format_renders_a_repo_with_an_unreadable_card(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "malformed" / "model", tmp_path / "m")
    for fmt in REPORTERS:
        result = runner.invoke(app, ["audit", str(tmp_path / "m"), "-f", fmt, "--fail-on", "never"])
        assert result.exit_code == 0, (fmt, result.output)
        assert result.stdout.strip(), fmt


def test_every_format_renders_a_report_without_evidence(clean: Report) -> None:
    """Reports rebuilt from stored JSON carry no evidence; every format still renders."""
    bare = dataclasses.replace(full_facts(with_findings(clean, "warning")), evidence=None)
    for fmt in REPORTERS:
        assert render(bare, fmt).strip(), fmt
