"""Concurrent writers and crashes never corrupt the store or lose a committed audit."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from cardaudit.pipeline import audit
from cardaudit.sources import AuditRequest
from cardaudit.store import Store, key_for_argument
from scenarios import FIXTURES, ROOT, scenario_names

MODELS = [FIXTURES / name / "model" for name in scenario_names()]


def cli_env() -> dict[str, str]:
    """This checkout's sources first, whatever cardaudit is installed."""
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def track_all(url: str) -> None:
    with Store.open(url) as store:
        for model in MODELS:
            store.track(key_for_argument(str(model)), str(model), None, None)


def assert_complete(url: str, runs: int) -> None:
    """Every tracked model has ``runs`` audits, each with all of its findings."""
    with Store.open(url) as store:
        ids = []
        for model in MODELS:
            audits = store.audits(key_for_argument(str(model)))
            assert len(audits) == runs, model
            for stored in audits:
                assert (
                    len(stored.active_findings()) == stored.errors + stored.warnings + stored.infos
                )
            ids += [a.id for a in audits]
        assert len(set(ids)) == len(ids)
        if store.engine.dialect.name == "sqlite":
            with sqlite3.connect(store.engine.url.database) as raw:
                assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_two_track_run_processes_at_once(store_url: str) -> None:
    track_all(store_url)
    command = [sys.executable, "-m", "cardaudit.cli", "track", "run", "--db", store_url]
    command += ["--jobs", "3", "--fail-on", "never", "--format", "json"]
    processes = [
        subprocess.Popen(command, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err.decode()
        results = json.loads(out)
        assert len(results) == len(MODELS)
        assert all(r["error"] is None and r["audit_id"] for r in results)
    assert_complete(store_url, runs=2)


CRASHING_RUN = """
import os, sys
from cardaudit.store import Store
from cardaudit.tracking import run_tracked

seen = []

def crash_after_two(result):
    seen.append(result)
    if len(seen) == 2:
        os._exit(3)  # die at once: no cleanup, no commit of anything in flight

store = Store.open(sys.argv[1])
run_tracked(store, store.tracked(), jobs=1, on_result=crash_after_two)
"""


def test_a_crash_mid_run_loses_nothing_already_recorded(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    track_all(url)
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_RUN, url], env=cli_env(), capture_output=True, timeout=300
    )
    assert done.returncode == 3, done.stderr.decode()
    with Store.open(url) as store:
        counts = {key: n for key, n in store.targets()}
        audits = [a for key in counts for a in store.audits(key)]
    assert 2 <= len(audits) < len(MODELS)  # the two reported, perhaps the one in flight
    assert all(n == 1 for n in counts.values())
    for stored in audits:
        assert len(stored.findings) == stored.errors + stored.warnings + stored.infos
    with sqlite3.connect(tmp_path / "store.db") as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_writer_waits_for_another_process_lock(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    report = audit(AuditRequest(str(MODELS[0])))
    with Store.open(str(path)) as store:
        holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")  # another process's write transaction
        release = threading.Timer(1.0, holder.execute, args=("COMMIT",))
        release.start()
        started = time.monotonic()
        audit_id = store.record(report)
        waited = time.monotonic() - started
        release.join()
        holder.close()
        assert waited >= 0.9  # it waited for the lock instead of failing
        assert [a.id for a in store.audits(key_for_argument(str(MODELS[0])))] == [audit_id]


def test_transient_lock_errors_are_retried() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("INSERT", {}, sqlite3.OperationalError("database is locked"))
        return "done"

    assert Store._retry(flaky) == "done"
    assert len(calls) == 3


def test_other_database_errors_are_not_retried() -> None:
    calls = []

    def broken() -> None:
        calls.append(1)
        raise OperationalError("SELECT", {}, sqlite3.OperationalError("no such table: audits"))

    with pytest.raises(OperationalError):
        Store._retry(broken)
    assert len(calls) == 1
