"""The command line: exit codes, formats and one-line errors (run in-process via typer)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from scenarios import FIXTURES

runner = CliRunner()


def test_missing_path_is_a_one_line_error() -> None:
    result = runner.invoke(app, ["audit", "does/not/exist"])
    assert result.exit_code == 2
    assert "path not found" in result.output
    assert "Traceback" not in result.output


def test_unknown_format_is_usage_error() -> None:
    result = runner.invoke(app, ["audit", str(FIXTURES / "clover" / "model"), "--format", "xml"])
    assert result.exit_code == 2


def test_unknown_select_pattern_is_rejected() -> None:
    result = runner.invoke(app, ["audit", str(FIXTURES / "clover" / "model"), "--select", "XYZ"])
    assert result.exit_code == 2
    assert "no rule matches" in result.output


def test_json_to_file_and_fail_on_never(tmp_path) -> None:
    out = tmp_path / "report.json"
    result = runner.invoke(
        app,
        [
            "audit",
            str(FIXTURES / "clover" / "model"),
            "-f",
            "json",
            "-o",
            str(out),
            "--fail-on",
            "never",
        ],
    )
    assert result.exit_code == 0
    data = json.loads(out.read_text())
    assert data["schema_version"] == "1"


def test_rules_lists_and_explains() -> None:
    listing = runner.invoke(app, ["rules"])
    assert listing.exit_code == 0 and "LIC001" in listing.output
    one = runner.invoke(app, ["rules", "lic001"])
    assert one.exit_code == 0 and "Why it matters" in one.output
    unknown = runner.invoke(app, ["rules", "NOPE999"])
    assert unknown.exit_code == 2


def test_version() -> None:
    from cardaudit import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"cardaudit {__version__}"


def test_kv_batch_chooses_the_batch_the_kv_cache_is_shown_for() -> None:
    result = runner.invoke(
        app, ["audit", str(FIXTURES / "clover" / "model"), "-f", "json", "--kv-batch", "32"]
    )
    at_context = json.loads(result.output)["facts"]["memory"]["details"]["kv_cache"]["at_context"]
    assert sorted(at_context) == ["batch_1", "batch_32", "tokens"]
    assert at_context["batch_32"]["bytes"] == 32 * at_context["batch_1"]["bytes"]
    assert (
        runner.invoke(
            app, ["audit", str(FIXTURES / "clover" / "model"), "--kv-batch", "0"]
        ).exit_code
        == 2
    )


def test_help_has_examples() -> None:
    for command in ([], ["audit"]):
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0
        assert "Examples" in result.output and "cardaudit audit ./my-model" in result.output
        assert "-f github" in result.output


def test_rules_as_json() -> None:
    from cardaudit.rules import load_rules

    result = runner.invoke(app, ["rules", "--format", "json"])
    assert result.exit_code == 0
    rules = json.loads(result.stdout)
    assert [rule["id"] for rule in rules] == list(load_rules())
    lic004 = next(rule for rule in rules if rule["id"] == "LIC004")
    assert lic004["family"] == "LIC" and lic004["severity"] == "error"
    assert {"title", "checks", "why", "fix", "references", "parameters"} <= set(lic004)
    one = json.loads(runner.invoke(app, ["rules", "lic004", "-f", "json"]).stdout)
    assert one == lic004
    assert runner.invoke(app, ["rules", "-f", "yaml"]).exit_code == 2


def test_shell_completion_script() -> None:
    """Through the installed entry point in its own process: completion reads the program
    name and environment of a real process, which in-process runs of other tests disturb."""
    import subprocess
    import sys
    from pathlib import Path

    entry = Path(sys.executable).parent / "cardaudit"
    if not entry.exists():
        pytest.skip("not running from a venv with cardaudit installed")
    done = subprocess.run(
        [str(entry), "--show-completion", "bash"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "_CARDAUDIT_COMPLETE=complete_bash" in done.stdout


def test_rules_listing_is_one_line_per_rule_off_a_terminal() -> None:
    import re

    from cardaudit.rules import load_rules

    lines = runner.invoke(app, ["rules"]).stdout.splitlines()
    assert len(lines) == len(load_rules())
    assert all(re.match(r"^[A-Z]{3}\d{3} (error|warning|info) \S", line) for line in lines)
