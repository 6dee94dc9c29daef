"""LocalSource on hostile input: every unreadable piece of evidence becomes a finding."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cardaudit.cli import app

runner = CliRunner()


def _audit_json(path: Path) -> dict:
    result = runner.invoke(app, ["audit", str(path), "-f", "json", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_oversized_binary_and_corrupt_files_are_reported(tmp_path: Path) -> None:
    repo = tmp_path / "model"
    repo.mkdir()
    (repo / "README.md").write_text("---\nlicense: mit\n---\n# Tiny\n")
    (repo / "LICENSE").write_text("a" * (4 * 1024 * 1024 + 1))
    (repo / "config.json").write_bytes(b"\x00\x01binary")
    (repo / "model.safetensors").write_bytes(b"\xff" * 7 + b"\x7f{}")

    data = _audit_json(repo)

    found = {(f["rule_id"], f["location"]["path"]) for f in data["findings"]}
    assert ("SRC003", "LICENSE") in found
    assert ("SRC003", "config.json") in found
    assert ("SRC003", "model.safetensors") in found
    (licence,) = [f for f in data["findings"] if f["location"]["path"] == "LICENSE"]
    assert licence["severity"] == "warning"
    assert "over the 4,194,304-byte limit" in licence["message"]


def test_nested_large_files_are_listed_but_not_flagged(tmp_path: Path) -> None:
    repo = tmp_path / "model"
    (repo / "data").mkdir(parents=True)
    (repo / "README.md").write_text("---\nlicense: mit\n---\n# Tiny\n")
    (repo / "data" / "train.json").write_text("[" + "1," * (2 * 1024 * 1024) + "1]")

    data = _audit_json(repo)

    assert not [f for f in data["findings"] if f["location"]["path"] == "data/train.json"]
