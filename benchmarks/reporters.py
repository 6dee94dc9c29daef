#!/usr/bin/env python3
"""Time each output format on every fixture and print milliseconds per render and sizes.

python benchmarks/reporters.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from cardaudit.reporters import REPORTERS, render  # noqa: E402
from scenarios import scenario_names, scenario_report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    reports = {name: scenario_report(name) for name in scenario_names()}
    print(f"{'format':<10} {'first ms':>9} {'median ms':>10} {'max bytes':>10}")
    for fmt in REPORTERS:
        start = time.perf_counter()
        render(next(iter(reports.values())), fmt)  # includes lazy imports
        first = (time.perf_counter() - start) * 1000
        times, sizes = [], []
        for report in reports.values():
            for _ in range(args.repeat):
                start = time.perf_counter()
                text = render(report, fmt)
                times.append((time.perf_counter() - start) * 1000)
            sizes.append(len(text.encode("utf-8")))
        print(f"{fmt:<10} {first:>9.1f} {statistics.median(times):>10.2f} {max(sizes):>10,}")


if __name__ == "__main__":
    main()
