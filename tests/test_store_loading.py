"""How the store reads audits back: only what history and diff show, content once per run
of equal audits, and the same history and diff as reading everything."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest
from sqlalchemy import event, update
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.store import Store
from cardaudit.store.schema import AuditRow
from cardaudit.timeline import build_history, diff_audits, diff_events, first_audit_events

KEY = "hub:org/model"
START = datetime(2026, 1, 1, tzinfo=UTC)


def report(findings: list[str], promise_status: str = "missing") -> dict[str, Any]:
    """A JSON report with the given finding messages and one promise."""
    return {
        "target": {"kind": "hub", "id": "org/model", "revision": "a" * 40},
        "summary": {"error": 0, "warning": len(findings), "info": 0},
        "facts": {
            "license": {"declared": "mit", "declared_spdx": "MIT"},
            "promises": [
                {
                    "artifact": "weights",
                    "item": "the weights",
                    "text": "Weights coming soon.",
                    "path": "README.md",
                    "line": 3,
                    "status": promise_status,
                }
            ],
        },
        "findings": [
            {
                "rule_id": "ATT001",
                "severity": "warning",
                "message": message,
                "location": {"path": "LICENSE", "line": 1},
            }
            for message in findings
        ],
        "checks": [{"rule_id": "ATT001", "outcome": "failed"}],
    }


SEQUENCE = [
    report(["a"]),
    report(["a"]),
    report(["a", "b"]),
    report(["a", "b"]),
    report(["a", "b"], "delivered"),
    report(["a"]),
    report(["a"]),
]


def seeded(url: str) -> Store:
    store = Store.open(url)
    for index, data in enumerate(SEQUENCE):
        store.record_json(data, KEY, START + timedelta(days=index), {"statements": []})
    return store


def slow_history(audits: list) -> list:
    """The history as it was built before: every consecutive pair diffed."""
    events = first_audit_events(audits[0])
    for old, new in pairwise(audits):
        events += diff_events(diff_audits(old, new))
    return events


def test_equal_consecutive_audits_share_their_records(store_url: str) -> None:
    with seeded(store_url) as store:
        audits = store.audits(KEY)
    assert [[f.message for f in a.findings] for a in audits] == [
        ["a"],
        ["a"],
        ["a", "b"],
        ["a", "b"],
        ["a", "b"],
        ["a"],
        ["a"],
    ]
    assert [a.promises[0].status for a in audits] == ["missing"] * 4 + ["delivered"] + [
        "missing"
    ] * 2
    assert audits[0].findings is audits[1].findings
    assert audits[2].findings is audits[3].findings
    assert audits[3].promises is not audits[4].promises  # the promise was delivered
    assert all(a.deliveries == {"statements": []} for a in audits)
    assert build_history(KEY, audits).events == tuple(slow_history(audits))


def test_content_is_read_once_per_run_of_equal_audits(store_url: str) -> None:
    """Findings of 7 audits in 4 runs: the findings query names the 4 first audits only."""
    with seeded(store_url) as store:
        ids = [a.id for a in store.summaries(KEY)]
        statements: list[tuple[str, Any]] = []

        @event.listens_for(store.engine, "before_cursor_execute")
        def seen(_conn, _cursor, statement, parameters, _context, _many) -> None:  # type: ignore[no-untyped-def]
            statements.append((statement, parameters))

        store.audits_by_id(KEY, ids)
    findings = [params for sql, params in statements if "FROM findings" in sql]
    assert len(findings) == 1
    values = findings[0].values() if isinstance(findings[0], dict) else findings[0]
    assert sorted(v for v in values if isinstance(v, int)) == [ids[0], ids[2], ids[4], ids[5]]
    assert not any("facts" in sql.split("FROM")[0] for sql, _ in statements)


def test_audits_without_a_digest_read_their_own_content(store_url: str) -> None:
    """Stores migrated from 0002 have no digests: every audit is read."""
    with seeded(store_url) as store:
        with store.engine.begin() as connection:
            connection.execute(update(AuditRow).values(content_digest=None))
        audits = store.audits(KEY)
    assert audits[0].findings is not audits[1].findings
    assert [len(a.findings) for a in audits] == [1, 1, 2, 2, 2, 1, 1]
    assert build_history(KEY, audits).events == tuple(slow_history(audits))


def test_summaries_and_latest_summary_carry_no_content(store_url: str) -> None:
    with seeded(store_url) as store:
        summaries = store.summaries(KEY)
        latest = store.latest(KEY, content=False)
        full = store.latest(KEY)
    assert [s.warnings for s in summaries] == [1, 1, 2, 2, 2, 1, 1]
    assert all(not s.findings and not s.promises and s.deliveries is None for s in summaries)
    assert latest is not None and full is not None
    assert latest.id == full.id == summaries[-1].id and not latest.findings
    assert [f.message for f in full.findings] == ["a"]


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_diff_reads_only_the_two_audits_it_compares(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with seeded(store_url) as store:
        ids = [a.id for a in store.summaries(KEY)]

    def everything(*_args: object) -> None:
        raise AssertionError("diff must not load every audit")

    monkeypatch.setattr(Store, "audits", everything)
    runner = CliRunner()
    latest = runner.invoke(app, ["diff", "org/model", "--db", store_url, "-f", "json"])
    assert latest.exit_code == 0, latest.output
    data = json.loads(latest.stdout)
    assert (data["from"]["id"], data["to"]["id"]) == (ids[5], ids[6])
    assert data["findings_added"] == [] and data["findings_resolved"] == []
    between = ["--from", f"#{ids[1]}", "--to", f"#{ids[4]}"]
    picked = runner.invoke(app, ["diff", "org/model", *between, "--db", store_url, "-f", "json"])
    data = json.loads(picked.stdout)
    assert [f["message"] for f in data["findings_added"]] == ["b"]
    assert [p["item"] for p in data["promises"]["delivered"]] == ["the weights"]


def test_summary_columns_are_the_first_fields_of_a_record() -> None:
    """Records are built positionally from the summary columns."""
    from dataclasses import fields

    from cardaudit.store.records import AuditRecord
    from cardaudit.store.repository import SUMMARY_COLUMNS

    names = [f.name for f in fields(AuditRecord)]
    assert names[: len(SUMMARY_COLUMNS)] == list(SUMMARY_COLUMNS)
    assert names[len(SUMMARY_COLUMNS) :] == ["findings", "promises", "deliveries"]
