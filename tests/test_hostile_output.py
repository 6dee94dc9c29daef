"""Nothing from an audited repo reaches the reader raw (issue 14 §3).

A hostile repo carries terminal escapes (window title, clear screen, OSC 8 links), bidi
overrides and GitHub workflow commands in every string it controls: licence name and link,
base model, promise and claim texts, file and folder names, its own config's keys. Each test
renders it in one output and checks that none of those characters survives.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.pipeline import audit_evidence
from cardaudit.policy import Policy
from cardaudit.reporters import REPORTERS, render
from cardaudit.safe_text import no_workflow_commands, one_line, visible
from cardaudit.sources import local_evidence
from scenarios import ROOT

runner = CliRunner()
TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
LINK = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
BIDI = "\u202e"
HTML = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>"
PAYLOAD = f"{TITLE}{CLEAR}{LINK}{BIDI}{HTML}\r::error::forged"
#: What may not appear in text output: any ESC (no colour) / any ESC but SGR colour codes.
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
NOT_COLOUR = re.compile(r"\x1b(?!\[[0-9;]*m)|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f\u202a-\u202e]")


def _yaml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


def hostile_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    card = "\n".join(
        [
            "---",
            "license: other",
            f"license_name: {_yaml_string('evil' + PAYLOAD)}",
            f"license_link: {_yaml_string('https://example.com/' + chr(1) + 'x y')}",
            f"base_model: {_yaml_string('org/base' + PAYLOAD)}",
            f"datasets: [{_yaml_string('data' + PAYLOAD)}]",
            "---",
            f"# Model {PAYLOAD}",
            "",
            f"We will release the training code {PAYLOAD} soon.",
            "",
            f"It scores 91.2 on MMLU {PAYLOAD}.",
            "",
        ]
    )
    (root / "README.md").write_text(card, encoding="utf-8")
    (root / f"LICENSE{TITLE}{BIDI}.txt").write_text("All rights reserved.\n", encoding="utf-8")
    folder = root / f"docs{CLEAR}"
    folder.mkdir()
    (folder / f"NOTICE{BIDI}.md").write_text("Built with something.\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = hostile_repo(tmp_path_factory.mktemp("hostile") / "model")
    return audit_evidence(local_evidence(str(root)), Policy())


def test_the_payload_is_in_the_report_facts(report) -> None:
    """The test is meaningful: the hostile strings did reach the facts."""
    data = render(report, "json")
    assert "\\u001b]0;pwned" in data and BIDI in data


@pytest.mark.parametrize("color", [False, True])
def test_text_report_shows_no_control_or_bidi_character(report, color: bool) -> None:
    text = render(report, "text", color=color, width=120)
    assert "pwned" in text  # the hostile text is shown, made visible
    pattern = NOT_COLOUR if color else RAW
    assert not pattern.findall(text), sorted(set(pattern.findall(text)))
    assert "\\x1b]0;pwned\\x07" in text and "\\u202e" in text


def test_text_report_on_a_pipe_and_in_a_file(tmp_path: Path) -> None:
    root = hostile_repo(tmp_path / "model")
    piped = runner.invoke(app, ["audit", str(root), "--fail-on", "never"])
    assert piped.exit_code == 0 and not RAW.findall(piped.output)
    out = tmp_path / "report.txt"
    written = runner.invoke(app, ["audit", str(root), "-o", str(out), "--fail-on", "never"])
    assert written.exit_code == 0 and not RAW.findall(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["sarif", "spdx", "cyclonedx"])
def test_machine_formats_carry_no_control_or_bidi_character(report, name: str) -> None:
    data = json.loads(render(report, name))
    strings: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(data)
    assert strings and not [s for s in strings if RAW.search(s)]


def test_multi_format_run_survives_a_control_character_in_a_licence_link(tmp_path) -> None:
    root = hostile_repo(tmp_path / "model")
    out = tmp_path / "out"
    formats = ",".join(REPORTERS)
    result = runner.invoke(
        app, ["audit", str(root), "-f", formats, "--output-dir", str(out), "--fail-on", "never"]
    )
    assert result.exit_code == 0, result.output
    assert len(list(out.iterdir())) == len(REPORTERS)
    bom = json.loads((out / "cardaudit.cdx.json").read_text())
    licence = bom["metadata"]["component"]["licenses"][0]["license"]
    assert "url" not in licence  # an unsafe link is dropped, the licence kept


def test_one_failing_format_does_not_lose_the_others(tmp_path, monkeypatch) -> None:
    import cardaudit.reporters.cyclonedx as cyclonedx

    def broken(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(cyclonedx, "render", broken)
    root = hostile_repo(tmp_path / "model")
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["audit", str(root), "-f", "json,cyclonedx,html", "--output-dir", str(out)]
    )
    assert result.exit_code == 2
    assert "cyclonedx: boom" in result.output
    assert (out / "cardaudit.json").is_file() and (out / "cardaudit.html").is_file()


def test_repo_config_key_cannot_forge_a_workflow_command(tmp_path: Path) -> None:
    root = hostile_repo(tmp_path / "model")
    (root / ".cardaudit.toml").write_text(
        '[severity]\n"LIC001\\n::error file=x::forged\\n::add-mask::x" = "loud"\n'
    )
    result = runner.invoke(app, ["audit", str(root)])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert len(lines) == 1 and "forged" in lines[0]
    assert not any(line.lstrip().startswith("::") for line in lines)


def test_action_output_cannot_carry_a_workflow_command(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    root = hostile_repo(workspace / "m")
    (root / ".cardaudit.toml").write_text('[severity]\n"X\\n::stop-commands::t" = "loud"\n')
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "INPUT_MODEL": "m",
    }
    result = subprocess.run(
        [sys.executable, "-m", "cardaudit.github_action"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    logged = (result.stdout + result.stderr).splitlines()
    assert any("stop-commands" in line for line in logged)
    assert not any(line.lstrip().startswith("::") for line in logged)


def test_safe_text_helpers() -> None:
    assert visible("a\x1b[2Jb\u202ec\nd") == "a\\x1b[2Jb\\u202ec\nd"
    assert one_line("a\nb\tc\r") == "a\\x0ab\\x09c\\x0d"
    assert no_workflow_commands("ok\n  ::error::x\n::add-mask::y") == (
        "ok\n  :\\:error::x\n:\\:add-mask::y"
    )


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)
        self.attributes += attrs


def test_html_report_escapes_every_field(report) -> None:
    """Every string of the report, in every field, carries HTML that would run or inject
    elements; none of it becomes markup, no handler attribute or script appears, and control
    and bidi characters are shown as escapes."""
    from dataclasses import replace

    page = render(report, "html")
    clean_tags = _Tags()
    clean_tags.feed(render(replace(report, findings=(), suppressed=()), "html"))
    parsed = _Tags()
    parsed.feed(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not [name for name, _value in parsed.attributes if name.startswith("on")]
    assert not [v for name, v in parsed.attributes if name == "href" and v and "evil" in v]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    for finding in report.findings:  # every finding's message and evidence shown escaped
        assert "<script>" not in finding.message or "&lt;script&gt;" in page
    assert not RAW.findall(page)
