"""Tracking-store figures: time to record an audit, to load a history, to build a timeline.

    PYTHONPATH=src python benchmarks/store_bench.py [--db URL] [--audits N]

Records N copies of the drv-wrong-base fixture's audit (with its findings) for one target into a
fresh store (a temp SQLite file by default) and prints the timings.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cardaudit.pipeline import audit
from cardaudit.sources import AuditRequest
from cardaudit.store import Store, target_key
from cardaudit.timeline import build_history

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", help="store URL (default: a temp SQLite file)")
    parser.add_argument("--audits", type=int, default=200)
    args = parser.parse_args()
    folder = ROOT / "fixtures" / "drv-wrong-base"
    base = folder / "base"
    report = audit(AuditRequest(str(folder / "model"), base=str(base) if base.is_dir() else None))
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{tmp}/bench.db"
        started = time.perf_counter()
        store = Store.open(url)
        opened = time.perf_counter() - started
        store.close()
        started = time.perf_counter()
        store = Store.open(url)
        reopened = time.perf_counter() - started
        start = datetime(2026, 1, 1, tzinfo=UTC)
        started = time.perf_counter()
        for index in range(args.audits):
            store.record(report, start + timedelta(hours=index))
        recording = time.perf_counter() - started
        started = time.perf_counter()
        audits = store.audits(target_key(report.target))
        loading = time.perf_counter() - started
        started = time.perf_counter()
        history = build_history(audits[0].target_key, audits)
        building = time.perf_counter() - started
        store.close()
    print(f"store: {url.split('://')[0]}; {len(report.findings)} findings per audit")
    print(
        f"first open (imports + migrate): {opened * 1000:.0f} ms; reopen: {reopened * 1000:.0f} ms"
    )
    print(f"record: {recording / args.audits * 1000:.1f} ms per audit ({args.audits} audits)")
    print(f"load {len(audits)} audits: {loading * 1000:.0f} ms")
    print(f"build timeline ({len(history.events)} events): {building * 1000:.0f} ms")


if __name__ == "__main__":
    main()
