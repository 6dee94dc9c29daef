"""`cardaudit track add|list|remove|run` through the real CLI (in-process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from scenarios import FIXTURES

runner = CliRunner()


def copy_model(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / name / "model", tmp_path / name))


def test_track_add_list_run_remove(tmp_path: Path) -> None:
    db = str(tmp_path / "store.db")
    clean = copy_model("apache-link-only", tmp_path)
    gone = copy_model("licence-typo", tmp_path)
    added = runner.invoke(app, ["track", "add", str(clean), str(gone), "--db", db])
    assert added.exit_code == 0, added.output
    assert f"tracking {clean.resolve()}" in added.stdout
    again = runner.invoke(app, ["track", "add", str(clean), "--db", db])
    assert f"updated {clean.resolve()}" in again.stdout

    listed = json.loads(runner.invoke(app, ["track", "list", "--db", db, "-f", "json"]).stdout)
    assert [(t["target"], t["latest_audit"]) for t in listed] == [
        (str(clean.resolve()), None),
        (str(gone.resolve()), None),
    ]

    shutil.rmtree(gone)  # an audit that cannot run must not stop the others
    run = runner.invoke(app, ["track", "run", "--db", db, "--jobs", "2", "-f", "json"])
    assert run.exit_code == 2
    results = {Path(r["target"]).name: r for r in json.loads(run.stdout)}
    assert "path not found" in results["licence-typo"]["error"]
    report = results["apache-link-only"]["report"]
    assert [(f["rule_id"], f["location"]["line"]) for f in report["findings"]] == [("ATT001", 2)]

    text = runner.invoke(app, ["track", "list", "--db", db])
    assert "#1" in text.stdout and "apache-2.0" in text.stdout and "never" in text.stdout

    removed = runner.invoke(app, ["track", "remove", str(gone), "--db", db])
    assert removed.exit_code == 0, removed.output  # a folder that is gone can be untracked
    missing = runner.invoke(app, ["track", "remove", "org/never-tracked", "--db", db])
    assert missing.exit_code == 2 and "not tracked: org/never-tracked" in missing.output
    removed = runner.invoke(app, ["track", "remove", str(clean), "--db", db])
    assert removed.exit_code == 0 and "no longer tracking" in removed.stdout


def test_track_run_text_output_and_fail_on(tmp_path: Path) -> None:
    db = str(tmp_path / "store.db")
    model = copy_model("apache-link-only", tmp_path)
    runner.invoke(app, ["track", "add", str(model), "--db", db])
    run = runner.invoke(app, ["track", "run", "--db", db])
    assert run.exit_code == 1  # ATT001 is an error and --fail-on defaults to error
    assert "1 audit(s) recorded, 0 failed." in run.stdout
    quiet = runner.invoke(app, ["track", "run", "--db", db, "--fail-on", "never"])
    assert quiet.exit_code == 0


def test_track_usage_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "store.db")
    bad = runner.invoke(app, ["track", "add", "not a hub id", "--db", db])
    assert bad.exit_code == 2
    assert "neither an existing path nor a Hub id" in bad.output
    empty = runner.invoke(app, ["track", "run", "--db", db])
    assert empty.exit_code == 2 and "nothing tracked" in empty.output
    hub = runner.invoke(app, ["track", "add", "org/model-name", "--db", db])
    assert hub.exit_code == 0 and "tracking org/model-name" in hub.stdout
    broken = runner.invoke(app, ["track", "list", "--db", "nosuchdriver://x"])
    assert broken.exit_code == 2 and "Traceback" not in broken.output


def test_track_run_applies_each_repos_waivers(tmp_path: Path) -> None:
    """Re-audits judge a repo by its own .cardaudit.toml, as `cardaudit audit` does."""
    db = str(tmp_path / "store.db")
    model = copy_model("waived", tmp_path)
    runner.invoke(app, ["track", "add", str(model), "--db", db])
    run = runner.invoke(app, ["track", "run", "--db", db, "-f", "json"])
    (result,) = json.loads(run.stdout)
    report = result["report"]
    assert [f["rule_id"] for f in report["findings"]] == ["SRC030"]
    assert [f["rule_id"] for f in report["suppressed_findings"]] == ["ATT001"]
    assert run.exit_code == 0  # the config's fail-on is not reached by a warning
    from cardaudit.store import Store, key_for_argument

    with Store.open(db) as store:
        (stored,) = store.audits(key_for_argument(str(model)))
    assert [(f.rule_id, f.suppressed_by is not None) for f in stored.findings] == [
        ("SRC030", False),
        ("ATT001", True),
    ]


READ_COMMANDS = [
    ["track", "list"],
    ["track", "run"],
    ["track", "remove", "acme/model"],
    ["history", "acme/model"],
    ["diff", "acme/model"],
]


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_store_that_does_not_exist_is_an_error_naming_it(tmp_path: Path, command) -> None:
    db = tmp_path / "never-created.db"
    result = runner.invoke(app, [*command, "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert f"no tracking store at sqlite:///{db}" in result.stderr
    assert "Traceback" not in result.output
    assert not db.exists()


def test_an_empty_database_is_no_store_for_reading(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    db.touch()
    result = runner.invoke(app, ["history", "acme/model", "--db", str(db)])
    assert result.exit_code == 2 and "no tracking store at" in result.stderr


def test_the_default_store_is_named_when_missing(tmp_path: Path) -> None:
    result = runner.invoke(app, ["track", "list"])
    assert result.exit_code == 2
    assert str(tmp_path / "xdg-data" / "cardaudit") in result.stderr


def test_every_store_command_says_which_store_it_uses(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    model = copy_model("apache-link-only", tmp_path)
    said = f"cardaudit: store sqlite:///{db}"
    for command in (
        ["track", "add", str(model)],
        ["track", "list"],
        ["track", "run"],
        ["history", str(model)],
        ["track", "remove", str(model)],
    ):
        result = runner.invoke(app, [*command, "--db", str(db)])
        assert result.exit_code in (0, 1), result.output
        assert said in result.stderr, command
        assert said not in result.stdout


def test_audit_record_names_its_store_once(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    model = copy_model("apache-link-only", tmp_path)
    result = runner.invoke(app, ["audit", str(model), "--record", "--db", str(db), "-f", "json"])
    assert result.exit_code in (0, 1), result.output
    assert result.stderr.count(f"sqlite:///{db}") == 1
    assert f"recorded audit #1 in sqlite:///{db}" in result.stderr
