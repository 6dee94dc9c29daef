"""Issue 11 §4: base-dependent rules end not_checked (never pass) when a named base is not
supplied; the likely licence of such a parent (LIC030); several --base; MIT / BSD notice
retention as an attribution duty; not_checked in every reporter."""

from __future__ import annotations

import json
from functools import cache

from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from scenarios import FIXTURES, ROOT, scenario_json


def rows(report: dict, prefixes: tuple[str, ...] = ("LIC", "ATT")) -> set[tuple]:
    return {
        (
            f["rule_id"],
            f["severity"],
            f["location"].get("repo", "model"),
            f["location"]["path"],
            f["location"]["line"],
        )
        for f in report["findings"]
        if f["rule_id"].startswith(prefixes)
    }


@cache
def fixture(name: str) -> dict:
    return scenario_json(name)


def audit_json(request: AuditRequest) -> dict:
    from cardaudit.reporters.json_report import report_to_json

    return json.loads(json.dumps(report_to_json(audit(request, Policy()))))


def outcomes(report: dict) -> dict[str, dict]:
    return {c["rule_id"]: c for c in report["checks"]}


def test_named_but_unsupplied_bases_are_not_checked_never_passed() -> None:
    report = fixture("llama2-merge-relabelled")
    runs = outcomes(report)
    for rule_id in ("LIC007", "ATT002", "ATT006", "ATT007", "DRV004", "DRV007"):
        assert runs[rule_id]["outcome"] == "not_checked", rule_id
        assert "meta-llama/Llama-2-70b-hf" in runs[rule_id]["reason"]
        assert "--base" in runs[rule_id]["fix"]
    assert report["summary"]["not_checked"] == 6
    assert rows(report) == {("LIC030", "info", "model", "README.md", 2)}
    (lic030,) = report["findings"]
    assert lic030["message"].startswith("likely Llama 2 derivative; base not verified")
    assert "cc-by-nc-2.0" in lic030["message"]


def test_supplying_the_parents_upgrades_the_guess_to_the_real_check() -> None:
    folder = FIXTURES / "llama2-merge-relabelled"
    parents = tuple(str(folder / "parents" / name) for name in ("llama-2-70b", "hermes-llama2-70b"))
    report = audit_json(AuditRequest(target=str(folder / "model"), base=parents))
    assert ("LIC007", "error", "model", "README.md", 2) in rows(report)
    assert outcomes(report)["LIC030"]["outcome"] == "not_applicable"
    assert [b["name"] for b in report["facts"]["license"]["base"]] == [
        "meta-llama/Llama-2-70b-hf",
        "NousResearch/Nous-Hermes-Llama2-70b",
    ]
    assert report["summary"]["not_checked"] == 0


def test_one_parent_of_two_supplied_leaves_the_other_not_checked() -> None:
    folder = FIXTURES / "mit-merge-relabelled"
    report = audit_json(AuditRequest(target=str(folder / "model"), base=(str(folder / "alpha"),)))
    assert ("ATT007", "warning", "model", "LICENSE", 1) in rows(report)
    assert outcomes(report)["LIC007"]["outcome"] == "not_checked"
    assert "beta-research/Beta-3B" in outcomes(report)["LIC007"]["reason"]
    assert "checked against" in outcomes(report)["LIC007"]["reason"]


def test_mit_parents_relabelled_apache_must_keep_their_notices() -> None:
    report = fixture("mit-merge-relabelled")
    assert rows(report) == {("ATT007", "warning", "model", "LICENSE", 1)}
    evidence = sorted(f["evidence"] for f in report["findings"] if f["rule_id"] == "ATT007")
    assert evidence == ["Copyright (c) 2023 Beta Research", "Copyright (c) 2024 Alpha Lab"]
    assert report["summary"]["not_checked"] == 0


def test_several_base_options_on_the_cli_none_dropped(tmp_path) -> None:
    from typer.testing import CliRunner

    from cardaudit.cli import app

    folder = FIXTURES / "mit-merge-relabelled"
    result = CliRunner().invoke(
        app,
        [
            "audit",
            str(folder / "model"),
            "--base",
            str(folder / "alpha"),
            "--base",
            str(folder / "beta"),
            "--format",
            "json",
            "-q",
        ],
        env={"NO_COLOR": "1", "COLUMNS": "120"},
    )
    data = json.loads(result.stdout)
    assert [b["name"] for b in data["facts"]["license"]["base"]] == [
        "alpha-lab/Alpha-3B",
        "beta-research/Beta-3B",
    ]


def test_not_checked_in_every_reporter() -> None:
    import jsonschema

    from cardaudit.pipeline import audit_evidence
    from cardaudit.reporters import render
    from cardaudit.sources import acquire
    from scenarios import scenario_request

    report = audit_evidence(acquire(scenario_request("llama2-merge-relabelled")), Policy())
    data = json.loads(render(report, "json", color=False))
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    jsonschema.validate(data, schema)
    text = render(report, "text", color=False, width=200)
    assert "Not checked (6):" in text and "6 not checked" in text
    markdown = render(report, "markdown", color=False)
    assert "### Not checked" in markdown and "6 not checked" in markdown
    html = render(report, "html", color=False)
    assert "<h2>Not checked</h2>" in html
    sarif = json.loads(render(report, "sarif", color=False))
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert {n["descriptor"]["id"] for n in notes} >= {"LIC007", "ATT006"}
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is True
    badge = render(report, "badge", color=False)
    assert "passing" not in badge and "not checked" in badge
    shields = json.loads(render(report, "shields", color=False))
    assert "passing" not in shields["message"]


def test_clean_fixtures_stay_clean_and_fully_checked() -> None:
    for name in ("clean-apache", "clean-llama"):
        report = fixture(name)
        assert report["findings"] == [], name
        assert report["summary"]["not_checked"] == 0, name
