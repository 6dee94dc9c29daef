"""Time every regex cardaudit runs on repo text against pumped inputs (500 vs 2,000 units).

Prints, per pattern, the worst unit found and its CPU time at 500 and 2,000 repetitions,
the ratio (about 4 for a linear pattern, 16 for a quadratic one), and the super-linear ones
first. ``tests/test_regex_timing.py`` runs the same measurement and fails on any of them.

    PYTHONPATH=src:tests python benchmarks/regex_timing.py [--all] [--match TEXT]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from regex_pumping import collected_patterns, super_linear, time_pattern


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="print every pattern, not the worst 15")
    parser.add_argument("--match", default="", help="only patterns whose origin contains TEXT")
    args = parser.parse_args()
    started = time.process_time()
    patterns = collected_patterns()
    timings = []
    for source, (pattern, origin) in patterns.items():
        if args.match in origin:
            print(f"  {origin}: {source[:70]!r}", file=sys.stderr, flush=True)
            timings.append(time_pattern(pattern, origin))
    timings.sort(key=lambda t: (not super_linear(t), -t.long))
    bad = [t for t in timings if super_linear(t)]
    print(f"{len(timings)} patterns, {len(bad)} super-linear "
          f"({time.process_time() - started:.1f} s CPU)")
    print(f"{'500 ms':>9}{'2000 ms':>10}{'ratio':>7}  origin / unit / pattern")
    for timing in timings if args.all else timings[: max(15, len(bad))]:
        mark = "!" if super_linear(timing) else " "
        print(f"{timing.short * 1000:>9.2f}{timing.long * 1000:>10.2f}{timing.ratio:>7.1f}"
              f" {mark}{timing.origin}  unit {timing.unit!r}  {timing.pattern[:80]!r}")


if __name__ == "__main__":
    main()
