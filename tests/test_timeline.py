"""History and diff from real audits of a model repo whose card changes over three revisions.

The model repo and its code repo are real git repos built in the test; promises come from the
real extractor (PRM rules), their first_seen from the card's git history.

Revision 1 declares Apache-2.0 without shipping its text (ATT001) and promises training code
and evaluation scripts, neither in the code repo (PRM001); revision 2 adds LICENSE (ATT001
resolved) while the code repo gains train.py, so the training-code promise is delivered — and,
still announced, PRM003; revision 3 switches to CC-BY-NC-4.0 (LIC050) and drops the evaluation
promise (its PRM001 resolved).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.sources import AuditRequest
from cardaudit.store import Store, key_for_argument
from cardaudit.timeline import build_history, diff_audits, pick_audit
from cardaudit.tracking import audit_and_record
from scenarios import FIXTURES, ROOT

TIMELINE_SCHEMA = json.loads((ROOT / "docs" / "timeline.schema.json").read_text())

CARD = """---
license: {licence}
pipeline_tag: text-generation
---

# Finch-2B

A two-billion-parameter text generator.

Training code coming soon.
{eval_line}
## License

See the `license` field above.
"""
EVAL_LINE = "Evaluation scripts will be released.\n"


def git(repo: Path, *args: str, date: str = "2026-03-01T00:00:00+00:00") -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def commit(repo: Path, date: str, licence: str, *, eval_promise: bool, files: dict) -> str:
    (repo / "README.md").write_text(
        CARD.format(licence=licence, eval_line=EVAL_LINE if eval_promise else "")
    )
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A", date=date)
    git(repo, "commit", "-q", "-m", f"release {date[:10]}", date=date)
    return git(repo, "rev-parse", "HEAD")


REVISION_DATES = ("2026-03-01", "2026-04-01", "2026-05-01")
CODE_README = "# finch\n\nModelling code for Finch-2B.\n"


@pytest.fixture
def model_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "finch"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


@pytest.fixture
def code_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "finch-code"
    (repo / "finch").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text(CODE_README)
    (repo / "finch" / "modeling.py").write_text("class FinchModel:\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "modelling code")
    return repo


def audit_revisions(
    store: Store, repo: Path, code: Path, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """Commit and audit the three revisions, each audited (and its promises aged) the day
    after its commit."""
    apache = (FIXTURES / "clover" / "model" / "LICENSE").read_text()
    cc_by_nc = (FIXTURES / "licence-changed" / "model" / "LICENSE").read_text()
    steps = [
        ("apache-2.0", True, {}, {}),
        ("apache-2.0", True, {"LICENSE": apache}, {"train.py": "print('train')\n"}),
        ("cc-by-nc-4.0", False, {"LICENSE": cc_by_nc}, {}),
    ]
    shas = []
    for day, (licence, eval_promise, files, code_files) in zip(REVISION_DATES, steps, strict=True):
        when = f"{day}T12:00:00+00:00"
        if code_files:
            for name, text in code_files.items():
                (code / name).write_text(text)
            git(code, "add", "-A", date=when)
            git(code, "commit", "-q", "-m", f"code {day}", date=when)
        sha = commit(repo, when, licence, eval_promise=eval_promise, files=files)
        audited_at = datetime.fromisoformat(when).replace(day=2)
        monkeypatch.setenv("CARDAUDIT_NOW", audited_at.isoformat())
        audit_and_record(store, AuditRequest(str(repo), code=str(code)), audited_at=audited_at)
        shas.append(sha)
    return shas


@pytest.fixture
def recorded(store_url: str, model_repo: Path, code_repo: Path, monkeypatch: pytest.MonkeyPatch):
    with Store.open(store_url) as store:
        shas = audit_revisions(store, model_repo, code_repo, monkeypatch)
        audits = store.audits(key_for_argument(str(model_repo)))
    return shas, audits


def test_each_revision_is_recorded_in_order(recorded) -> None:
    shas, audits = recorded
    assert [a.revision for a in audits] == shas
    assert [a.audited_at.date().isoformat() for a in audits] == [
        "2026-03-02",
        "2026-04-02",
        "2026-05-02",
    ]
    assert [a.licence_declared for a in audits] == ["apache-2.0", "apache-2.0", "cc-by-nc-4.0"]
    assert [[(p.artifact, p.status) for p in a.promises] for a in audits] == [
        [("training_code", "missing"), ("evaluation_code", "missing")],
        [("training_code", "delivered"), ("evaluation_code", "missing")],
        [("training_code", "delivered")],
    ]
    # first_seen is the card's first commit promising it, in every later audit too
    assert {p.first_seen for a in audits for p in a.promises} == {"2026-03-01"}
    (delivered,) = [p for p in audits[1].promises if p.status == "delivered"]
    assert delivered.reason == "the code repo has train.py"


def test_prm_findings_follow_the_promises(recorded) -> None:
    _shas, audits = recorded
    prm = [
        sorted(
            (f.rule_id, f.severity, f.path, f.line) for f in a.findings if f.rule_id[:3] == "PRM"
        )
        for a in audits
    ]
    assert prm == [
        [("PRM001", "info", "README.md", 10), ("PRM001", "info", "README.md", 11)],
        # the evaluation promise is 32 days old by git history: a warning now
        [("PRM001", "warning", "README.md", 11), ("PRM003", "info", "README.md", 10)],
        [("PRM003", "info", "README.md", 10)],
    ]


def test_licence_change_is_an_error_finding_in_the_recorded_audit(recorded) -> None:
    shas, audits = recorded
    assert not any(f.rule_id == "LIC050" for a in audits[:2] for f in a.findings)
    (finding,) = [f for f in audits[2].findings if f.rule_id == "LIC050"]
    assert (finding.severity, finding.path, finding.line) == ("error", "README.md", 2)
    assert f"audit #{audits[1].id} of {shas[1][:12]}, 2026-04-02" in finding.message
    assert "from `apache-2.0`" in finding.message and "to `cc-by-nc-4.0`" in finding.message


def test_history_timeline(recorded) -> None:
    _shas, audits = recorded
    history = build_history(audits[0].target_key, audits)
    events = [(e.audit_id, e.kind, e.where, e.severity, e.rule_id) for e in history.events]
    first, second, third = (a.id for a in audits)
    # Date order: both promises date from the card's commit of 2026-03-01 (git), the day
    # before the first audit that saw them.
    assert events == [
        (first, "promise_appeared", "README.md:10", None, None),
        (first, "promise_appeared", "README.md:11", None, None),
        (first, "first_audit", None, None, None),
        (second, "promise_delivered", "README.md:10", None, None),
        (second, "finding_added", "README.md:10", "info", "PRM003"),
        # the evaluation promise aged past 30 days between the audits: PRM001 info → warning
        (second, "finding_escalated", "README.md:11", "warning", "PRM001"),
        (second, "finding_resolved", "README.md:2", None, "ATT001"),
        (second, "finding_resolved", "README.md:10", None, "PRM001"),
        (third, "licence_changed", "README.md:2", "error", "LIC050"),
        (third, "promise_dropped", "README.md:11", None, None),
        (third, "finding_resolved", "README.md:11", None, "PRM001"),
    ]
    assert [e.at for e in history.events] == sorted(e.at for e in history.events)
    appeared = history.events[0]
    assert appeared.at == datetime(2026, 3, 1, tzinfo=UTC)  # first_seen, not the audit time
    assert (appeared.detail["artifact"], appeared.detail["first_seen"]) == (
        "training_code",
        "2026-03-01",
    )
    assert history.events[3].detail["previous_status"] == "missing"
    assert "the code repo has train.py" in history.events[3].message
    assert "still announced as coming, but delivered: Training code" in history.events[4].message
    escalated = history.events[5]
    assert escalated.detail["previous_severity"] == "info"
    assert escalated.message.startswith("PRM001 info → warning: promised but not delivered: ")
    dropped = history.events[9]
    assert "never delivered" in dropped.message
    assert dropped.detail["artifact"] == "evaluation_code"
    assert "Evaluation scripts" in history.events[10].message  # its PRM001 went with it
    assert history.events[2].message.startswith("first audit: licence apache-2.0; 1 error(s)")


def test_diff_between_any_two_audits(recorded) -> None:
    shas, audits = recorded
    whole = diff_audits(pick_audit(audits, shas[0][:7]), pick_audit(audits, f"#{audits[2].id}"))
    assert whole.licence_change is not None
    assert (whole.licence_change.before, whole.licence_change.after) == (
        "Apache-2.0",
        "CC-BY-NC-4.0",
    )
    assert [p.artifact for p in whole.promises_dropped] == ["evaluation_code"]
    assert [c.after.artifact for c in whole.promises_delivered] == ["training_code"]
    assert whole.promises_changed == () and whole.promises_appeared == ()
    assert sorted((f.rule_id, f.line) for f in whole.findings_resolved) == [
        ("ATT001", 2),
        ("PRM001", 10),
        ("PRM001", 11),
    ]
    assert [(f.rule_id, f.line) for f in whole.findings_added] == [("PRM003", 10)]
    quiet = diff_audits(audits[0], audits[1])
    assert quiet.licence_change is None and quiet.findings == ()
    assert [c.after.artifact for c in quiet.promises_delivered] == ["training_code"]


def test_cli_history_and_diff(recorded, store_url: str, model_repo: Path) -> None:
    shas, audits = recorded
    runner = CliRunner()
    target = str(model_repo)
    result = runner.invoke(app, ["history", target, "--db", store_url, "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [a["revision"] for a in data["audits"]] == shas
    jsonschema.validate(data, TIMELINE_SCHEMA)
    (finding,) = data["findings"]
    assert (finding["rule_id"], finding["severity"]) == ("LIC050", "error")
    assert finding["location"] == {"path": "README.md", "line": 2, "repo": "model"}
    kinds = [event["kind"] for event in data["events"]]
    assert kinds.count("licence_changed") == 1
    assert data["events"][kinds.index("licence_changed")]["audit_id"] == audits[2].id
    (appeared, _) = [e for e in data["events"] if e["kind"] == "promise_appeared"]
    assert appeared["at"].startswith("2026-03-01")

    text = runner.invoke(app, ["history", target, "--db", store_url])
    assert text.exit_code == 0
    assert "licence changed (ERROR LIC050)" in text.stdout
    assert "promise delivered" in text.stdout

    latest = runner.invoke(app, ["diff", target, "--db", store_url, "--format", "json"])
    assert latest.exit_code == 1  # the licence changed between the last two audits
    diff = json.loads(latest.stdout)
    jsonschema.validate(diff, TIMELINE_SCHEMA)
    assert (diff["from"]["revision"], diff["to"]["revision"]) == (shas[1], shas[2])
    assert diff["licence"] == {"before": "Apache-2.0", "after": "CC-BY-NC-4.0", "changed": True}
    assert [f["rule_id"] for f in diff["findings"]] == ["LIC050"]
    assert [p["artifact"] for p in diff["promises"]["dropped"]] == ["evaluation_code"]

    early = runner.invoke(
        app, ["diff", target, "--db", store_url, "--from", shas[0][:8], "--to", shas[1][:8]]
    )
    assert early.exit_code == 0, early.output
    assert "✓ delivered" in early.stdout and "resolved" in early.stdout
    assert "licence unchanged: Apache-2.0" in early.stdout

    unknown = runner.invoke(app, ["diff", target, "--db", store_url, "--from", "deadbeef"])
    assert unknown.exit_code == 2
    assert "no stored audit at revision 'deadbeef'" in unknown.output


def test_history_of_an_unknown_model_is_a_one_line_error(store_url: str) -> None:
    from cardaudit.store import Store

    Store.open(store_url).close()  # an existing store that never saw this model
    result = CliRunner().invoke(app, ["history", "org/never-audited", "--db", store_url])
    assert result.exit_code == 2
    assert "no stored audit of org/never-audited" in result.output
    assert "Traceback" not in result.output


def test_audit_record_compares_with_the_previous_audit(model_repo: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    runner = CliRunner()
    commit(model_repo, "2026-03-01T12:00:00+00:00", "mit", eval_promise=False, files={})
    first = runner.invoke(app, ["audit", str(model_repo), "--record", "--db", db, "-f", "json"])
    checks = {c["rule_id"]: c["outcome"] for c in json.loads(first.stdout)["checks"]}
    assert checks["LIC050"] == "not_applicable"  # nothing to compare with yet
    assert "recorded audit #1" in first.stderr
    commit(model_repo, "2026-04-01T12:00:00+00:00", "bsd-3-clause", eval_promise=False, files={})
    second = runner.invoke(app, ["audit", str(model_repo), "--record", "--db", db, "-f", "json"])
    assert second.exit_code == 1
    assert "recorded audit #2 (previous: #1)" in second.stderr
    (finding,) = [f for f in json.loads(second.stdout)["findings"] if f["rule_id"] == "LIC050"]
    assert finding["severity"] == "error"
    assert finding["location"] == {"path": "README.md", "line": 2, "key": "license"}
    assert finding["evidence"] == "license: bsd-3-clause"


def test_track_run_history_of_the_clover_promises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end through the CLI: the clover fixture's model and code repos replayed into git,
    tracked, re-audited with `track run` before and after the SFT code is released, and the
    promise's story read back with `history`."""
    from fixture_history import build_history_repo

    db = str(tmp_path / "store.db")
    model, code = tmp_path / "clover-model", tmp_path / "clover-code"
    build_history_repo(FIXTURES / "clover" / "model-history", model)
    build_history_repo(FIXTURES / "clover" / "code-history", code, upto=2)
    runner = CliRunner()
    added = runner.invoke(app, ["track", "add", str(model), "--code", str(code), "--db", db])
    assert added.exit_code == 0, added.output
    for now, upto in (("2026-03-10", 2), ("2026-06-15", None)):
        if upto is None:  # the code repo's next commit releases the SFT code
            shutil.rmtree(code)
            build_history_repo(FIXTURES / "clover" / "code-history", code)
        monkeypatch.setenv("CARDAUDIT_NOW", now)
        run = runner.invoke(app, ["track", "run", "--db", db, "--fail-on", "never", "-f", "json"])
        assert run.exit_code == 0, run.output
        (result,) = json.loads(run.stdout)
        assert result["error"] is None

    history = runner.invoke(app, ["history", str(model), "--db", db, "--format", "json"])
    assert history.exit_code == 0, history.output
    data = json.loads(history.stdout)
    jsonschema.validate(data, TIMELINE_SCHEMA)
    first, second = (audit["id"] for audit in data["audits"])
    events = {(e["audit_id"], e["kind"], e["where"], e["rule_id"]) for e in data["events"]}

    appeared = [e for e in data["events"] if e["kind"] == "promise_appeared"]
    # one promise per item however often it is stated: the SFT code and the training
    # instructions of the card are also the code README's (lines 17 and 20), its setup
    # guides are stated twice (lines 17 and 21)
    assert {(e["where"], e["detail"]["artifact"]) for e in appeared} == {
        ("README.md:48", "training_code"),
        ("README.md:48", "docs"),
        ("code:README.md:17", "docs"),
        ("code:README.md:17", "inference_code"),
    }
    # dated by the commit that added the roadmap to each README, not by the audit
    assert {e["at"] for e in appeared} == {"2026-03-02T00:00:00+00:00"}

    delivered = [e for e in data["events"] if e["kind"] == "promise_delivered"]
    assert [e["where"] for e in delivered] == ["README.md:48"]
    (event,) = delivered
    assert event["audit_id"] == second
    assert event["detail"]["artifact"] == "training_code"
    assert event["detail"]["previous_status"] == "missing"
    assert event["detail"]["first_seen"] == "2026-03-02"
    assert "a checked roadmap box at code:README.md:20" in event["detail"]["reason"]
    assert not any(e["kind"] == "promise_dropped" for e in data["events"])
    # still announced: PRM003; the other items of the code README stay missing
    assert (second, "finding_added", "README.md:48", "PRM003") in events
    (still_missing,) = [
        e
        for e in data["events"]
        if (e["kind"], e["where"], e["rule_id"])
        == ("finding_escalated", "code:README.md:17", "PRM001")
    ]
    assert "backend code (inference / serving code)" in still_missing["message"]
    assert "SFT code" not in still_missing["message"]
    assert (second, "finding_resolved", "README.md:48", "PRM001") in events
    assert not any(e["kind"] == "licence_changed" for e in data["events"])
    assert data["events"][0]["audit_id"] == first

    # The promise ledger (same store, same matching): the SFT code promised in the card and in
    # the code README's roadmap is one promise (at its first place, the card's line 48),
    # delivered by the checked box; the other code README items still open 105 days after
    # 2026-03-02.
    ledger = {
        (e["location"]["path"], e["location"]["line"], e["artifact"]): e for e in data["ledger"]
    }
    assert len(ledger) == len(data["ledger"]) == 4
    box_entry = ledger[("README.md", 48, "training_code")]
    assert (box_entry["state"], box_entry["delivered_on"][:10], box_entry["days_open"]) == (
        "delivered",
        "2026-06-15",
        105,
    )
    assert box_entry["first_promised"][:10] == "2026-03-02"
    assert "checked roadmap box" in box_entry["reason"]
    still_open = {k for k, e in ledger.items() if e["state"] == "open"}
    assert ("README.md", 17, "inference_code") in still_open
    assert all(
        ledger[k]["days_open"] == 105 and ledger[k]["delivered_on"] is None for k in still_open
    )
    assert [e["first_promised"] for e in data["ledger"]] == sorted(
        e["first_promised"] for e in data["ledger"]
    )
    assert [e["at"] for e in data["events"]] == sorted(e["at"] for e in data["events"])


def test_promise_ledger_of_the_three_revisions(recorded) -> None:
    """Training code delivered by the second audit; evaluation scripts dropped by the third."""
    from cardaudit.ledger import LedgerSummary, promise_ledger

    _shas, audits = recorded
    ledger = promise_ledger(audits, now=datetime(2026, 6, 1, tzinfo=UTC))
    rows = [(e.artifact, e.state, e.first_promised.date().isoformat(), e.days_open) for e in ledger]
    assert sorted(rows) == [
        ("evaluation_code", "dropped", "2026-03-01", 62),
        ("training_code", "delivered", "2026-03-01", 32),
    ]
    by_artifact = {e.artifact: e for e in ledger}
    assert by_artifact["training_code"].delivered_on == audits[1].audited_at
    assert by_artifact["training_code"].last_audit_id == audits[2].id  # still stated
    assert by_artifact["evaluation_code"].dropped_on == audits[2].audited_at
    assert by_artifact["evaluation_code"].delivered_on is None
    assert LedgerSummary.of(ledger) == LedgerSummary(0, 1, 1, None)
    # Up to the second audit only: the evaluation promise is open, aged to "now".
    early = promise_ledger(audits[:2], now=datetime(2026, 6, 1, tzinfo=UTC))
    (evaluation,) = [e for e in early if e.artifact == "evaluation_code"]
    assert (evaluation.state, evaluation.days_open, evaluation.where()) == (
        "open",
        92,
        "README.md:11",
    )
    assert LedgerSummary.of(early).oldest_open_days == 92


def test_ledger_over_runs_of_unchanged_audits(recorded) -> None:
    """Re-audits of unchanged content share one records tuple in the store; the ledger skips
    them (only the last audit id moves on) and equals the ledger of unshared copies."""
    from dataclasses import replace
    from datetime import timedelta

    from cardaudit.ledger import promise_ledger

    _shas, audits = recorded
    repeated = []
    for audit in audits:
        repeated.append(audit)
        for hour in range(1, 4):  # three re-audits sharing the records, as the store loads them
            repeated.append(
                replace(
                    audit,
                    id=audit.id * 100 + hour,
                    audited_at=audit.audited_at + timedelta(hours=hour),
                )
            )
    copies = [replace(a, promises=tuple(replace(p) for p in a.promises)) for a in repeated]
    assert repeated[1].promises is repeated[0].promises
    assert copies[1].promises is not copies[0].promises
    now = datetime(2026, 6, 1, tzinfo=UTC)
    shared, unshared = promise_ledger(repeated, now=now), promise_ledger(copies, now=now)
    assert shared == unshared
    by_artifact = {e.artifact: e for e in shared}
    assert by_artifact["training_code"].last_audit_id == audits[2].id * 100 + 3


def test_cli_history_ledger_formats(recorded, store_url: str, model_repo: Path) -> None:
    import csv
    import io

    runner = CliRunner()
    target = str(model_repo)
    as_csv = runner.invoke(app, ["history", target, "--db", store_url, "--format", "csv"])
    assert as_csv.exit_code == 0, as_csv.output
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [(r["artifact"], r["state"], r["first_promised"], r["delivered_on"]) for r in rows] == [
        ("training_code", "delivered", "2026-03-01", "2026-04-02"),
        ("evaluation_code", "dropped", "2026-03-01", ""),
    ]
    assert rows[1]["dropped_on"] == "2026-05-02" and rows[1]["days_open"] == "62"
    markdown = runner.invoke(app, ["history", target, "--db", store_url, "--format", "markdown"])
    assert markdown.exit_code == 0, markdown.output
    assert (
        "| item | artifact | first promised | delivered on | days open | where |" in markdown.stdout
    )
    assert "dropped 2026-05-02" in markdown.stdout
    assert markdown.stdout.index("Promise ledger") < markdown.stdout.index("### Timeline")
    text = runner.invoke(app, ["history", target, "--db", store_url])
    assert "Promise ledger" in text.stdout
    assert "0 open; 1 delivered, 1 dropped." in text.stdout
    wrong = runner.invoke(app, ["history", target, "--db", store_url, "--format", "yaml"])
    assert wrong.exit_code == 2 and "markdown, csv" in wrong.stderr


def test_track_list_counts_open_promises(tmp_path: Path, model_repo: Path, monkeypatch) -> None:
    runner = CliRunner()
    db = str(tmp_path / "list.db")
    commit(model_repo, "2026-03-01T12:00:00+00:00", "apache-2.0", eval_promise=True, files={})
    assert runner.invoke(app, ["track", "add", str(model_repo), "--db", db]).exit_code == 0
    monkeypatch.setenv("CARDAUDIT_NOW", "2026-04-15")
    run = runner.invoke(app, ["track", "run", "--db", db, "--fail-on", "never"])
    assert run.exit_code == 0, run.output
    listed = runner.invoke(app, ["track", "list", "--db", db, "--format", "json"])
    (entry,) = json.loads(listed.stdout)
    assert entry["promises"] == {"open": 2, "oldest_open_days": 45, "delivered": 0, "dropped": 0}
    table = runner.invoke(app, ["track", "list", "--db", db])
    assert "open promises" in table.stdout and "2 (oldest 45 d)" in table.stdout
