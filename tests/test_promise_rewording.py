"""A promise keeps its identity through rewording, delivery and removal (one story in
`history`), walked through a real git repo built from fixtures/prm-reworded."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.extract.promise_identity import same_promise
from cardaudit.extract.promises import promise_table
from cardaudit.sources import AuditRequest
from cardaudit.store import Store
from cardaudit.tracking import audit_and_record
from fixture_history import build_history_repo
from scenarios import FIXTURES

HISTORY = FIXTURES / "prm-reworded" / "model-history"
DATES = ("2026-01-06", "2026-01-21", "2026-02-04", "2026-02-18", "2026-03-03")


def test_rewording_is_the_same_promise_but_another_item_is_not() -> None:
    table = promise_table()
    sft = ("training_code", "SFT code", "Our SFT code is coming soon.")
    assert same_promise(
        sft, ("training_code", "SFT scripts", "- [ ] Publish the SFT scripts"), table
    )
    assert same_promise(
        sft, ("training_code", "training code", "We will release the training code."), table
    )
    assert not same_promise(sft, ("training_code", "RL code", "RL code is coming."), table)
    assert not same_promise(sft, ("docs", "SFT guide", "An SFT guide is coming."), table)


@pytest.fixture()
def walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """The repo rebuilt commit by commit, audited and recorded after each one."""
    for name in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{name}_NAME", "Fixture Author")
        monkeypatch.setenv(f"{name}_EMAIL", "fixture@example.org")
    db = str(tmp_path / "store.db")
    model = tmp_path / "juniper"
    with Store.open(f"sqlite:///{db}") as store:
        for upto, day in enumerate(DATES, start=1):
            if model.exists():
                import shutil

                shutil.rmtree(model)
            build_history_repo(HISTORY, model, upto=upto)
            monkeypatch.setenv("CARDAUDIT_NOW", f"{day}T12:00:00Z")
            audit_and_record(
                store,
                AuditRequest(str(model)),
                audited_at=datetime.fromisoformat(f"{day}T12:00:00").replace(tzinfo=UTC),
            )
    return model, db


def test_history_tells_one_promise_through_rewording_delivery_and_removal(walked) -> None:
    model, db = walked
    result = CliRunner().invoke(app, ["history", str(model), "--db", db, "--format", "json"])
    assert result.exit_code == 0, result.output
    events = [e for e in json.loads(result.stdout)["events"] if e["kind"].startswith("promise_")]
    kinds = [e["kind"] for e in events]
    # appeared once (first wording), delivered once, removed after delivery: the two
    # rewordings are neither "dropped, never delivered" nor a new promise
    assert kinds == ["promise_appeared", "promise_delivered", "promise_dropped"], kinds
    appeared, delivered, removed = events
    assert appeared["detail"]["artifact"] == "training_code"
    assert appeared["at"].startswith("2026-01-05")  # the commit that first promised it
    assert delivered["audit_id"] == 4
    assert "sft/train_sft.py" in delivered["detail"]["reason"]
    assert "after delivery" in removed["message"]
    assert removed["audit_id"] == 5


def test_first_seen_survives_rewording(walked) -> None:
    """Audited at the third commit, the roadmap box is dated by the first wording's commit."""
    model, db = walked
    with Store.open(f"sqlite:///{db}") as store:
        audits = store.audits(f"local:{model.resolve()}")
    third = audits[2]
    (promise,) = third.promises
    assert (promise.item, promise.first_seen) == ("SFT scripts", "2026-01-05")


def test_names_and_versions_tell_promises_apart() -> None:
    table = promise_table()
    zero = ("other", "tokenizer-0 vocabulary", "- [ ] Publish the tokenizer-0 vocabulary")
    one = ("other", "tokenizer-1 vocabulary", "- [ ] Publish the tokenizer-1 vocabulary")
    assert not same_promise(zero, one, table)
    assert same_promise(zero, ("other", "the tokenizer-0 vocabulary files", "…"), table)
