"""Configuration and waivers: parsing, discovery, CLI overrides, suppression and expiry."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.config import ConfigError, parse_config
from cardaudit.model import Finding, Location
from cardaudit.policy import apply_waivers, policy_from
from scenarios import FIXTURES

runner = CliRunner()
NO_LICENCE_FILE = FIXTURES / "waived" / "model" / "README.md"

VALID = """
select = ["LIC", "ATT"]
ignore = ["LIC003"]
fail-on = "warning"

[severity]
ATT001 = "warning"

[[waivers]]
rule = "att001"
path = "docs/*.md"
reason = "false-positive"
comment = "Vendored copy."
expires = 2030-06-30

[[waivers]]
rule = "LIC002"
reason = "legal-approved"
expires = "2024-01-01"
"""


def model_repo(tmp_path: Path, config: str | None = None) -> Path:
    """A model repo whose card declares Apache-2.0 but ships no LICENSE (ATT001 error)."""
    repo = tmp_path / "model"
    repo.mkdir()
    shutil.copy(NO_LICENCE_FILE, repo / "README.md")
    if config is not None:
        (repo / ".cardaudit.toml").write_text(config)
    return repo


def audit_json(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["audit", *args, "-f", "json"])
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout) if result.exit_code != 2 else {}


def test_parse_valid_config_with_waiver_lines() -> None:
    config = parse_config(VALID, source=".cardaudit.toml", in_repo=True)
    assert config is not None
    assert config.select == ("LIC", "ATT") and config.ignore == ("LIC003",)
    assert config.fail_on == "warning" and config.severity == {"ATT001": "warning"}
    first, second = config.waivers
    assert (first.rule, first.path, first.reason, first.expires) == (
        "ATT001",
        "docs/*.md",
        "false-positive",
        date(2030, 6, 30),
    )
    assert (first.line, second.line) == (9, 16)
    assert second.expires == date(2024, 1, 1) and second.expired(date(2024, 1, 2))
    assert not second.expired(date(2024, 1, 1))  # valid through its expiry day


def test_pyproject_without_table_is_not_a_config() -> None:
    assert parse_config("[project]\nname = 'x'\n", source="pyproject.toml") is None
    config = parse_config("[tool.cardaudit]\nfail-on = 'info'\n", source="pyproject.toml")
    assert config is not None and config.fail_on == "info"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("select = [", "invalid TOML"),
        ("selcet = ['LIC']", "unknown setting 'selcet'"),
        ("fail-on = 'sometimes'", "`fail-on` must be one of"),
        ("[severity]\nLIC001 = 'fatal'", "severity of 'LIC001'"),
        ("[[waivers]]\nrule = 'LIC001'\nreason = 'because'\nexpires = 2030-01-01", "`reason`"),
        ("[[waivers]]\nrule = 'LIC001'\nreason = 'accepted-risk'", "`expires` is required"),
        ("[[waivers]]\nrule = 'LIC001'\nreason = 'accepted-risk'\nexpires = 'soon'", "a date"),
        ("[[waivers]]\nrule = 'licence'\nreason = 'accepted-risk'\nexpires = 2030-01-01", "rule"),
        (
            "[[waivers]]\nrule = 'LIC001'\nreason = 'accepted-risk'\n"
            "expires = 2030-01-01\nowner = 1",
            "owner",
        ),
    ],
)
def test_bad_config_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(text, source=".cardaudit.toml")


def test_bad_config_in_repo_exits_2_with_one_line(tmp_path: Path) -> None:
    repo = model_repo(tmp_path, "fail-on = 'sometimes'\n")
    result = runner.invoke(app, ["audit", str(repo)])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert ".cardaudit.toml: `fail-on` must be one of" in result.output


def test_missing_config_file_exits_2(tmp_path: Path) -> None:
    repo = model_repo(tmp_path)
    result = runner.invoke(app, ["audit", str(repo), "--config", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2 and "cannot read config" in result.output


def test_config_selecting_an_unknown_rule_is_rejected(tmp_path: Path) -> None:
    repo = model_repo(tmp_path, "select = ['XYZ']\n")
    result = runner.invoke(app, ["audit", str(repo)])
    assert result.exit_code == 2 and "no rule matches 'XYZ'" in result.output


def test_active_waiver_suppresses_and_is_counted(tmp_path: Path) -> None:
    repo = model_repo(
        tmp_path,
        "[[waivers]]\nrule = 'ATT001'\npath = 'README.*'\nreason = 'accepted-risk'\n"
        "comment = 'Text in legal repo.'\nexpires = 2099-01-01\n",
    )
    code, data = audit_json(str(repo))
    assert code == 0
    assert data["findings"] == []
    assert data["summary"]["suppressed"] == 1
    (hidden,) = data["suppressed_findings"]
    assert hidden["rule_id"] == "ATT001" and hidden["location"]["path"] == "README.md"
    assert hidden["location"]["line"] == 2
    assert (
        "accepted-risk" in hidden["suppressed_by"]
        and "Text in legal repo." in (hidden["suppressed_by"])
    )


def test_waiver_for_another_path_does_not_apply(tmp_path: Path) -> None:
    repo = model_repo(
        tmp_path,
        "[[waivers]]\nrule = 'ATT001'\npath = 'docs/*'\nreason = 'accepted-risk'\n"
        "expires = 2099-01-01\n",
    )
    code, data = audit_json(str(repo))
    assert code == 1
    assert [f["rule_id"] for f in data["findings"]] == ["ATT001"]
    assert data["summary"]["suppressed"] == 0


def test_expired_waiver_stops_applying_and_is_reported_on_its_line(tmp_path: Path) -> None:
    repo = model_repo(
        tmp_path,
        "# lapsed\n[[waivers]]\nrule = 'ATT001'\nreason = 'legal-approved'\n"
        "comment = 'Preview only.'\nexpires = 2024-01-31\n",
    )
    code, data = audit_json(str(repo))
    assert code == 1
    found = {
        (f["rule_id"], f["severity"], f["location"]["path"], f["location"]["line"])
        for f in data["findings"]
    }
    assert found == {
        ("ATT001", "error", "README.md", 2),
        ("SRC030", "warning", ".cardaudit.toml", 2),
    }
    assert data["summary"]["suppressed"] == 0


def test_expired_waiver_in_external_config_is_reported_too(tmp_path: Path) -> None:
    repo = model_repo(tmp_path)
    config = tmp_path / "audit.toml"
    config.write_text(
        "[[waivers]]\nrule = 'ATT001'\nreason = 'accepted-risk'\nexpires = 2020-05-05\n"
    )
    code, data = audit_json(str(repo), "--config", str(config))
    src030 = [f for f in data["findings"] if f["rule_id"] == "SRC030"]
    assert code == 1 and len(src030) == 1
    assert src030[0]["location"] == {
        "path": str(config),
        "line": 1,
        "key": "waivers",
        "repo": "config",
    }
    assert "expired on 2020-05-05" in src030[0]["message"]


def test_pyproject_in_working_directory_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = model_repo(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'm'\n\n[tool.cardaudit]\n\n[tool.cardaudit.severity]\nATT001 = 'info'\n"
    )
    monkeypatch.chdir(project)
    code, data = audit_json(str(repo))
    assert code == 0  # info is below the default fail-on (error)
    assert [(f["rule_id"], f["severity"]) for f in data["findings"]] == [("ATT001", "info")]


def test_cli_flags_override_config(tmp_path: Path) -> None:
    repo = model_repo(tmp_path, "fail-on = 'never'\nignore = ['ATT']\n")
    code, data = audit_json(str(repo))
    assert code == 0 and data["findings"] == []
    code, data = audit_json(str(repo), "--fail-on", "error", "--ignore", "LIC003")
    assert code == 1
    assert [f["rule_id"] for f in data["findings"]] == ["ATT001"]


def test_show_suppressed_lists_them_in_text_and_markdown() -> None:
    repo = str(FIXTURES / "waived" / "model")
    plain = runner.invoke(app, ["audit", repo])
    assert "Suppressed by waivers" not in plain.output and "1 suppressed" in plain.output
    shown = runner.invoke(app, ["audit", repo, "--show-suppressed"])
    assert "Suppressed by waivers" in shown.output and "LEGAL-42" in shown.output
    markdown = runner.invoke(app, ["audit", repo, "-f", "markdown", "--show-suppressed"])
    assert "### Suppressed by waivers" in markdown.output
    assert "accepted-risk" in markdown.output


def test_apply_waivers_is_pure_and_keeps_everything() -> None:
    config = parse_config(VALID, source=".cardaudit.toml")
    assert config is not None
    in_docs = Finding("ATT001", "error", "m", Location("docs/a.md", 3))
    elsewhere = Finding("ATT001", "error", "m", Location("README.md", 3))
    expired = Finding("LIC002", "error", "m", Location("README.md", 2))
    kept, suppressed = apply_waivers(
        [in_docs, elsewhere, expired], config.waivers, date(2026, 1, 1)
    )
    assert kept == (elsewhere, expired)
    assert [f.location.path for f in suppressed] == ["docs/a.md"]
    assert policy_from(config, fail_on="never").fail_on == "never"
    assert policy_from(config).fail_on == "warning"


def test_report_with_external_waiver_fits_the_json_schema(tmp_path: Path) -> None:
    import jsonschema

    from scenarios import ROOT

    repo = model_repo(tmp_path)
    config = tmp_path / "audit.toml"
    config.write_text(
        "[[waivers]]\nrule = 'ATT001'\nreason = 'accepted-risk'\nexpires = 2020-05-05\n"
        "[[waivers]]\nrule = 'ATT001'\nreason = 'fixed-upstream'\nexpires = 2099-05-05\n"
    )
    _, data = audit_json(str(repo), "--config", str(config))
    assert data["summary"]["suppressed"] == 1 and data["suppressed_findings"][0]["suppressed_by"]
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    jsonschema.validate(data, schema)


def test_severity_override_for_unknown_rule_is_rejected(tmp_path: Path) -> None:
    repo = model_repo(tmp_path, "[severity]\nLIC = 'info'\n")
    result = runner.invoke(app, ["audit", str(repo)])
    assert result.exit_code == 2 and "unknown rule 'LIC'" in result.output


def test_no_repo_config_ignores_the_audited_repos_own_waivers() -> None:
    model = Path(__file__).resolve().parents[1] / "fixtures" / "waived" / "model"

    trusted = json.loads(runner.invoke(app, ["audit", str(model), "-f", "json"]).output)
    untrusted = json.loads(
        runner.invoke(app, ["audit", str(model), "-f", "json", "--no-repo-config"]).output
    )

    assert trusted["summary"]["suppressed"] == 1
    assert untrusted["summary"]["suppressed"] == 0
    waived = {f["rule_id"] for f in trusted["suppressed_findings"]}
    assert waived <= {f["rule_id"] for f in untrusted["findings"]}
