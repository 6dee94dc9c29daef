"""A Hub target through the other commands: every report format, and tracking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.reporters import REPORTERS
from hub_repos import card, publish_model
from hub_server import FakeHub

runner = CliRunner()


def test_every_format_renders_a_hub_target(hub: FakeHub, tmp_path: Path) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    sha = publish_model(hub, "org/model", tmp_path / "shards")
    out = tmp_path / "reports"
    result = runner.invoke(
        app,
        [
            "audit",
            "org/model",
            "--no-code-discovery",
            "--quiet",
            "--fail-on",
            "never",
            "-f",
            ",".join(REPORTERS),
            "--output-dir",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert {"json", "sarif", "markdown", "html", "spdx", "cyclonedx", "badge"} <= set(REPORTERS)
    assert len(list(out.iterdir())) == len(REPORTERS)

    data = json.loads((out / "cardaudit.json").read_text())
    assert data["target"] == {"kind": "hub", "id": "org/model", "path": None, "revision": sha}

    # SPDX: the endpoint 127.0.0.1:PORT is no valid SPDX download location -> NOASSERTION;
    # the purl still pins the repo and commit.
    document = parse_file(str(out / "cardaudit.spdx.json"))
    assert validate_full_spdx_document(document) == []
    model = document.packages[0]
    assert str(model.download_location) == "NOASSERTION"
    assert [ref.locator for ref in model.external_references] == [
        f"pkg:huggingface/org/model@{sha}"
    ]

    cdx = (out / "cardaudit.cdx.json").read_text()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(cdx) is None
    assert json.loads(cdx)["metadata"]["component"]["type"] == "machine-learning-model"

    sarif = json.loads((out / "cardaudit.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert "org/model" in (out / "cardaudit.md").read_text()
    assert "org/model" in (out / "cardaudit.html").read_text()
    assert (out / "cardaudit-badge.svg").read_text().startswith("<svg")
    assert json.loads((out / "cardaudit-badge.json").read_text())["schemaVersion"] == 1


def test_spdx_keeps_a_valid_hub_download_location() -> None:
    from cardaudit.reporters.spdx import _location

    sha = "a" * 40
    assert _location("https://huggingface.co/org/model", sha) == (
        f"git+https://huggingface.co/org/model@{sha}"
    )
    assert str(_location("http://127.0.0.1:8080/org/model", sha)) == "NOASSERTION"
    assert str(_location("file:///tmp/code.git", sha)) == "NOASSERTION"
    assert str(_location(None, sha)) == "NOASSERTION"


def test_a_hub_target_is_tracked_and_re_audited(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CARDAUDIT_DB", raising=False)
    first = publish_model(hub, "org/model", tmp_path / "a", readme=card(licence="mit"))
    added = runner.invoke(app, ["track", "add", "org/model"])
    assert added.exit_code == 0, added.output
    assert "tracking org/model" in added.stdout
    # The store's SQLite default, under the test's own XDG_DATA_HOME.
    store = tmp_path / "xdg-data" / "cardaudit" / "cardaudit.db"
    assert store.is_file()

    def run() -> dict:
        result = runner.invoke(app, ["track", "run", "-f", "json", "--fail-on", "never"])
        assert result.exit_code == 0, result.output
        [one] = json.loads(result.stdout)
        assert one["target"] == "org/model" and not one.get("error")
        return one["report"]

    report = run()
    assert report["target"]["revision"] == first
    assert report["facts"]["license"]["declared"] == "mit"

    second = hub.commit("org/model", {"README.md": card(licence="apache-2.0")})
    hub.log.clear()
    report = run()
    assert report["target"]["revision"] == second != first
    assert report["facts"]["license"]["declared"] == "apache-2.0"
    assert hub.weight_bytes() < 100_000  # headers only, never weights

    listed = json.loads(runner.invoke(app, ["track", "list", "-f", "json"]).stdout)
    assert [(t["target"], t["latest_audit"] is not None) for t in listed] == [("org/model", True)]
    history = runner.invoke(app, ["history", "org/model", "-f", "json"])
    assert history.exit_code == 0, history.output
    timeline = json.loads(history.stdout)
    assert [a["revision"] for a in timeline["audits"]] == [first, second]
    licence = [e for e in timeline["events"] if "licen" in json.dumps(e).lower()]
    assert licence, timeline["events"]
