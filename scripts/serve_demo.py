#!/usr/bin/env python3
"""Fill a tracking store with the bundled fixtures, to look at ``cardaudit serve``.

    python scripts/serve_demo.py --db /tmp/cardaudit-demo.db [--work /tmp/cardaudit-demo]
    cardaudit serve --db /tmp/cardaudit-demo.db          # then open http://127.0.0.1:8000/

Every fixture under fixtures/ is tracked (its model folder, with its code and base folders)
and audited once, as ``cardaudit track add`` and ``track run`` would. The Clover fixture is
also replayed from its git history (fixtures/clover/*-history) and audited twice, before
and after its SFT code is released, so its model page has a timeline, a ledger with a
delivered promise and a diff. Audits are stamped with ``CARDAUDIT_NOW`` (2026-03-10 and
2026-06-15) so the promises' ages read the same on every run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from cardaudit.store import Store, key_for_argument  # noqa: E402
from cardaudit.tracking import run_tracked  # noqa: E402
from fixture_history import build_history_repo  # noqa: E402


def track_fixtures(store: Store) -> int:
    count = 0
    for folder in sorted((ROOT / "fixtures").iterdir()):
        model = folder / "model"
        if not model.is_dir() or (folder / "scenario.yaml").is_file():
            continue  # scenario fixtures need their seeded store or the test Hub
        code, base = folder / "code", folder / "base"
        store.track(
            key_for_argument(str(model)),
            str(model),
            str(code) if code.is_dir() else None,
            str(base) if base.is_dir() else None,
        )
        count += 1
    return count


def replay_clover(store: Store, work: Path) -> None:
    """Audit the Clover model twice: before and after the code repo releases the SFT code."""
    model, code = work / "clover-model", work / "clover-code"
    for path in (model, code):
        shutil.rmtree(path, ignore_errors=True)
    build_history_repo(ROOT / "fixtures" / "clover" / "model-history", model)
    build_history_repo(ROOT / "fixtures" / "clover" / "code-history", code, upto=2)
    store.track(key_for_argument(str(model)), str(model), str(code), None)
    (tracked,) = [t for t in store.tracked() if t.target == str(model)]
    for now, upto in (("2026-03-10", 2), ("2026-06-15", None)):
        if upto is None:
            shutil.rmtree(code)
            build_history_repo(ROOT / "fixtures" / "clover" / "code-history", code)
        os.environ["CARDAUDIT_NOW"] = now
        (result,) = run_tracked(store, [tracked], jobs=1, fail_on="never")
        if result.error:
            raise SystemExit(f"clover replay failed: {result.error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="SQLite path or store URL to fill")
    parser.add_argument("--work", type=Path, default=Path("/tmp/cardaudit-demo"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    with Store.open(args.db) as store:
        count = track_fixtures(store)
        os.environ["CARDAUDIT_NOW"] = "2026-06-15"
        fixtures = [t for t in store.tracked() if str(ROOT / "fixtures") in t.target]
        results = run_tracked(store, fixtures, jobs=2, fail_on="never")
        failed = [r for r in results if r.error]
        replay_clover(store, args.work)
        print(
            f"{store.url}: {count} fixtures tracked and audited ({len(failed)} failed), "
            f"clover replayed twice from its history in {args.work}"
        )
        for result in failed:
            print(f"  {result.tracked.target}: {result.error}")
    print(f"now: cardaudit serve --db {args.db}")


if __name__ == "__main__":
    main()
