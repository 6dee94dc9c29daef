"""Start-up cost of the CLI: `cardaudit --help` wall time and the import time of cardaudit.cli.

Usage: PYTHONPATH=src python benchmarks/startup.py [RUNS]

Each figure is the median over RUNS fresh interpreters (default 7). Heavy libraries
(huggingface_hub, gitpython, askalono, licenseid, jsonschema…) must stay out of the import
path of `--help`; the import of cardaudit.cli is also shown module by module (-X importtime)
for the ten slowest imports, and the heavy libraries a warm audit of ``fixtures/clover``
imports (it needs PyYAML for the card's front matter; pydantic, rich, SQLAlchemy and
cyclonedx-python-lib only for a config table, a terminal, a store command or the tests).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
ENV = {**os.environ, "NO_COLOR": "1"}


def median_seconds(args: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, env=ENV)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def slowest_imports(count: int = 10) -> list[tuple[int, str]]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import cardaudit.cli"],
        check=True,
        capture_output=True,
        text=True,
        env=ENV,
    )
    rows = []
    for line in result.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    python = median_seconds([sys.executable, "-c", "pass"])
    cli_import = median_seconds([sys.executable, "-c", "import cardaudit.cli"])
    help_run = median_seconds([sys.executable, "-m", "cardaudit.cli", "--help"])
    print(f"median of {RUNS} runs")
    print(f"  bare interpreter:          {python:.3f} s")
    over = cli_import - python
    print(f"  import cardaudit.cli:      {cli_import:.3f} s ({over:.3f} s over bare)")
    print(f"  cardaudit --help:          {help_run:.3f} s")
    print("slowest imports of cardaudit.cli (cumulative µs):")
    for micros, name in slowest_imports():
        print(f"  {micros:>9}  {name}")
    heavy = ("huggingface_hub", "git", "askalono", "licenseid", "jsonschema", "sqlalchemy")
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, cardaudit.cli; print(' '.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
        env=ENV,
    ).stdout.split()
    eager = sorted({m.split(".")[0] for m in loaded} & set(heavy))
    print(f"heavy modules imported eagerly: {', '.join(eager) or 'none'}")
    clover = ROOT / "fixtures" / "clover"
    audit = [str(clover / "model"), "--code", str(clover / "code"), "--base", str(clover / "base")]
    code = (
        "import sys\nsys.argv = ['cardaudit', 'audit', *sys.argv[1:]]\n"
        "from cardaudit.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sys.modules), file=sys.stderr)"
    )
    for _ in range(2):  # the second run is warm (identifications, catalogue, patterns)
        result = subprocess.run(
            [sys.executable, "-c", code, *audit], capture_output=True, text=True, env=ENV
        )
    modules = {m.split(".")[0] for m in result.stderr.split()} | set(result.stderr.split())
    audit_heavy = (*heavy, "pydantic", "rich", "cyclonedx", "importlib.metadata", "yaml")
    present = sorted(set(audit_heavy) & modules)
    print(f"a warm audit of fixtures/clover imports: {', '.join(present) or 'none of them'}")


if __name__ == "__main__":
    main()
