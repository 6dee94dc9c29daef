"""``concise`` (one finding per line, the default off a terminal) and ``github`` (workflow
commands) formats, and the Action's annotations."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app, default_format
from cardaudit.model import Finding, Location, Report
from cardaudit.reporters import render
from scenarios import FIXTURES, ROOT, scenario_report

runner = CliRunner()
CLOVER = [
    "audit",
    str(FIXTURES / "clover" / "model"),
    "--code",
    str(FIXTURES / "clover" / "code"),
    "--base",
    str(FIXTURES / "clover" / "base"),
]
LINE = re.compile(
    r"^(?P<path>[^:\s]+):(?P<line>\d+): (?P<rule>[A-Z]{3}\d{3}) (error|warning|info) \S"
)
HOSTILE = "bad\n::error file=x::forged\r\u202eevil\x1b]0;title\x07 100% done, ok: yes"


def hostile_report() -> Report:
    report = scenario_report("clean-card")
    finding = Finding(
        "LIC001", "error", HOSTILE, Location("we,ird:name.md", 3), evidence="e\n::add-mask::x"
    )
    return dataclasses.replace(report, findings=(finding,))


def _clover_findings() -> int:
    import json

    result = runner.invoke(app, [*CLOVER, "-f", "json"])
    return len(json.loads(result.stdout)["findings"])


def test_concise_is_the_default_off_a_terminal() -> None:
    result = runner.invoke(app, CLOVER)
    lines = result.stdout.splitlines()
    found = _clover_findings()  # all warnings
    # one line per finding, then the summary line
    assert result.exit_code == 0 and len(lines) == found + 1 > 1
    for line in lines[:-1]:
        assert LINE.match(line), line
    assert "fixtures/clover/code/README.md:17: PRM001 warning promised" in result.stdout
    assert "fixtures/clover/model/README.md:36: CLM001 warning" in result.stdout
    assert lines[-1] == f"Found 0 errors, {found} warnings, 0 info."
    assert "┃" not in result.stdout and "│" not in result.stdout  # no box tables


def test_text_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert default_format(to_stdout=True) == "text"
    assert default_format(to_stdout=False) == "concise"
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    assert default_format(to_stdout=True) == "concise"


def test_concise_paths_of_a_hub_or_cloned_repo_name_the_repo() -> None:
    report = scenario_report("clean-card")
    hub = dataclasses.replace(
        report,
        target=dataclasses.replace(report.target, kind="hub", id="org/model", path=None),
        findings=(Finding("LIC001", "error", "m", Location("README.md", 2)),),
    )
    assert render(hub, "concise").startswith("org/model:README.md:2: LIC001 error m\n")


def test_concise_keeps_each_finding_on_one_visible_line() -> None:
    text = render(hostile_report(), "concise")
    first, summary = text.splitlines()
    assert summary == "Found 1 error, 0 warnings, 0 info."
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text
    assert "\\u202e" in first and "\\u001b" in first


def test_github_workflow_commands_are_escaped() -> None:
    text = render(hostile_report(), "github")
    (line,) = text.splitlines()
    assert re.match(r"::error file=[^,:]+/we%2Cird%3Aname\.md,line=3,title=", line), line
    assert "title=LIC001 " in line
    data = line.split("::", 2)[2]
    assert "\n" not in data and "\r" not in data and "::" not in data
    assert "bad%0A: :error file=x: :forged%0D" in data
    assert "100%25 done" in data and "%0Aevidence: e%0A: :add-mask: :x" in data


def test_github_levels_and_files_relative_to_the_workspace() -> None:
    result = runner.invoke(app, [*CLOVER, "-f", "github"])
    lines = result.stdout.splitlines()
    assert len(lines) == _clover_findings() > 0 and all(
        line.startswith(f"::warning file={FIXTURES}/clover/") for line in lines
    )
    report = dataclasses.replace(
        scenario_report("clean-card"),
        findings=(Finding("PRM001", "info", "m", Location(None)),),
    )
    assert render(report, "github").startswith("::notice title=PRM001 ")


def test_the_action_annotates_the_pull_request(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    shutil.copytree(FIXTURES / "licence-typo" / "model", workspace / "models" / "m")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "INPUT_MODEL": "models/m",
    }
    done = subprocess.run(
        [sys.executable, "-m", "cardaudit.github_action"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "::error file=models/m/README.md,line=2,title=LIC002 " in done.stdout
    off = subprocess.run(
        [sys.executable, "-m", "cardaudit.github_action"],
        cwd=workspace,
        env=env | {"INPUT_ANNOTATIONS": "false"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "::error file=" not in off.stdout


def test_every_format_gives_the_other_places_of_a_repeated_claim_with_their_lines() -> None:
    """Clover's benchmark table is restated in the code README (line 13): the message names
    the file, and each reporter gives the place with its line."""
    import json

    from cardaudit.reporters.from_json import report_from_json

    report = scenario_report("clover")
    (table,) = [f for f in report.findings if f.rule_id == "CLM001"]
    assert [place.display() for place in table.also] == ["code:README.md:13"]
    concise = render(report, "concise")
    assert "README.md:36: CLM001 warning" in concise
    assert "[also at code:README.md:13]" in concise
    assert "also at: code:README.md:13" in render(report, "github")
    assert "also at:" in render(report, "text") and "code:README.md:13" in render(report, "text")
    sarif = json.loads(render(report, "sarif"))
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "CLM001"]
    (related,) = result["relatedLocations"]
    assert related["physicalLocation"]["region"] == {"startLine": 13}
    assert "code:README.md:13" in render(report, "markdown")
    # a report read back from its JSON keeps the places
    again = report_from_json(json.loads(render(report, "json")))
    (restored,) = [f for f in again.findings if f.rule_id == "CLM001"]
    assert restored.also == table.also
