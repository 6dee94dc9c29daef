"""What comparing licence files with their reference texts costs (extract/licence_diff.py).

Prints CPU time (``time.process_time``, best of N) of:

- the comparison of each licence file of the bundled fixtures and of the licence corpus
  (../shared/licence-corpus, when present), per file, with the reference text's one-off
  tokenisation measured apart (it is cached per process);
- the whole audit of ``fixtures/clover`` (model, code and base repos) with the comparison
  and without it (``compare_file`` replaced by a stub returning no comparison), measured in
  the same run, and their ratio: in a fresh interpreter per audit as the CLI runs it (the
  budget: +10 %), and in one process with licence identification memoised (the diff's own
  cost, its caches cleared each time).

    PYTHONPATH=src python benchmarks/licence_diff.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cardaudit.extract import licence as licence_facts
from cardaudit.extract import licence_diff, licence_tokens
from cardaudit.extract.licence_id import identify_text
from cardaudit.extract.licence_reference import reference_for
from cardaudit.extract.markdown_blocks import clear_cache
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "licence-corpus"
CLOVER = ROOT / "fixtures" / "clover"


def cpu(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def licence_texts() -> list[tuple[str, str]]:
    paths = sorted(
        p
        for pattern in ("fixtures/*/*/LICENSE*", "fixtures/*/*/LICENSES/*")
        for p in ROOT.glob(pattern)
        if p.is_file()
    )
    if CORPUS.is_dir():
        paths += sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".json")
    return [(str(p.relative_to(p.parents[2])), p.read_text(errors="replace")) for p in paths]


def per_file(repeat: int) -> None:
    costs: list[tuple[float, str, int]] = []
    reference_costs: list[float] = []
    for name, text in licence_texts():
        found = identify_text(text)
        if not found.licence or not found.complete:
            continue
        reference = reference_for(found.licence)
        if reference is None:
            continue
        licence_tokens.reference_tokens.cache_clear()
        start = time.process_time()
        licence_tokens.reference_tokens(reference.text)
        reference_costs.append(time.process_time() - start)
        excluded = licence_diff._excluded_parts(text, found.licence, found.also)

        def run(text: str = text, ref: str = reference.text, ex: tuple = excluded) -> None:
            licence_diff.compare(text, ref, excluded=ex)

        seconds = cpu(run, repeat)
        modified = len(licence_diff.compare(text, reference.text, excluded=excluded)[0])
        costs.append((seconds, name, modified))
    times = [c[0] * 1000 for c in costs]
    print(f"licence files compared: {len(costs)}")
    print(
        f"comparison CPU per file: median {statistics.median(times):.1f} ms, "
        f"mean {statistics.mean(times):.1f} ms, max {max(times):.1f} ms"
    )
    median, worst = statistics.median(reference_costs), max(reference_costs)
    print(
        f"reference tokenisation (once per licence per process): median "
        f"{median * 1000:.1f} ms, max {worst * 1000:.1f} ms"
    )
    print("slowest:")
    for seconds, name, modified in sorted(costs, reverse=True)[:5]:
        print(f"  {seconds * 1000:7.1f} ms  {name}  ({modified} modified passage(s))")


def clover_audit(repeat: int) -> None:
    request = AuditRequest(
        str(CLOVER / "model"), code=str(CLOVER / "code"), base=str(CLOVER / "base")
    )

    def run() -> None:
        clear_cache()
        licence_diff.compare_file.cache_clear()
        licence_tokens.reference_tokens.cache_clear()
        audit(request, Policy())

    run()  # warm imports, the identification engines and the SPDX bundle
    original = licence_facts.compare_file
    with_diff = without = float("inf")
    for _ in range(repeat):  # interleaved, so machine load hits both alike
        with_diff = min(with_diff, cpu(run, 1))
        licence_facts.compare_file = lambda *_args, **_kw: None
        try:
            without = min(without, cpu(run, 1))
        finally:
            licence_facts.compare_file = original
    label = "clover audit, identification memoised, CPU"
    print(f"{label} without licence diff: {without * 1000:7.1f} ms")
    print(f"{label} with licence diff:    {with_diff * 1000:7.1f} ms")
    print(f"ratio: {with_diff / without:.3f} (the diff's own cost against a warm audit)")


COLD = """
import sys, time
from cardaudit.extract import licence as licence_facts
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
if sys.argv[1] == "without":
    licence_facts.compare_file = lambda *_args, **_kw: None
root = sys.argv[2]
audit(AuditRequest(root + "/model", code=root + "/code", base=root + "/base"), Policy())
print(time.process_time())
"""


def clover_cold(repeat: int) -> None:
    """The audit as the CLI runs it: a fresh interpreter each time (imports, identification
    engines, the SPDX bundle and the reference texts all loaded once, as in real use)."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    best = {"with": float("inf"), "without": float("inf")}
    for _ in range(repeat):
        for variant in best:
            out = subprocess.run(
                [sys.executable, "-c", COLD, variant, str(CLOVER)],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            )
            best[variant] = min(best[variant], float(out.stdout.strip().splitlines()[-1]))
    label = "clover audit, fresh process, CPU"
    print(f"{label} without licence diff: {best['without'] * 1000:8.1f} ms")
    print(f"{label} with licence diff:    {best['with'] * 1000:8.1f} ms")
    print(f"ratio: {best['with'] / best['without']:.3f} (budget 1.100)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="best of N timed runs")
    args = parser.parse_args()
    per_file(args.repeat)
    clover_audit(args.repeat)
    clover_cold(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
