"""Print how long a full audit takes (acquire + every fact + every rule), and where the time
goes (cProfile, top functions by cumulative time), on:

- a big card: 5,705 lines, 100 benchmark tables, 100 prose claims (as in promises_claims.py);
- ``fixtures/clover`` with its code and base repos;
- every real-world repo of ../shared/realworld/repos (total), when present.

    PYTHONPATH=src python benchmarks/audit_speed.py [--top N] [--repeat N]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cardaudit.extract.markdown_blocks import clear_cache
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest

ROOT = Path(__file__).resolve().parents[1]
REALWORLD = ROOT.parent / "shared" / "realworld" / "repos"


def big_card_text() -> str:
    parts = ["---", "license: mit", "---", "# Model", ""]
    for t in range(100):
        parts += [f"## Results {t}", "", "| Model | MMLU | GSM8K | HumanEval |"]
        parts += ["|---|---|---|---|"]
        parts += [f"| M{r} | {50 + r}.1 | {40 + r}.2 | {30 + r}.3 |" for r in range(20)]
        parts += ["", f"M{t} scores 61.{t % 10} on SWE-bench Verified and runs at 90 tokens/s.", ""]
        parts += [f"Line {i} of prose that says nothing measurable at all." for i in range(30)]
    return "\n".join(parts) + "\n"


def audit_all(requests: list[AuditRequest]) -> Callable[[], int]:
    """A full audit of every request, as the CLI runs it (default policy: every rule)."""

    def run() -> int:
        return sum(len(audit(request, Policy()).findings) for request in requests)

    return run


def measure(label: str, run: Callable[[], int], repeat: int, top: int) -> None:
    best = float("inf")
    for _ in range(repeat):
        clear_cache()  # every repeat parses its Markdown afresh
        start = time.perf_counter()
        findings = run()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<60} {best * 1000:9.1f} ms  ({findings} findings)")
    if top:
        clear_cache()
        profile = cProfile.Profile()
        profile.runcall(run)
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).strip_dirs().sort_stats("cumulative")
        stats.print_stats(top)
        body = out.getvalue()
        start = body.find("   ncalls")
        print(body[start:] if start >= 0 else body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=15, help="profiled functions (0: none)")
    parser.add_argument("--repeat", type=int, default=3, help="best of N timed runs")
    args = parser.parse_args()

    audit_all([AuditRequest(str(ROOT / "fixtures" / "clover" / "model"))])()  # warm imports

    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        model.mkdir()
        text = big_card_text()
        (model / "README.md").write_text(text)
        lines = text.count("\n")
        run = audit_all([AuditRequest(str(model))])
        measure(f"full audit, big card ({lines} lines)", run, args.repeat, args.top)

    clover = ROOT / "fixtures" / "clover"
    request = AuditRequest(
        str(clover / "model"), code=str(clover / "code"), base=str(clover / "base")
    )
    label = "full audit, fixtures/clover --code --base"
    measure(label, audit_all([request]), args.repeat, args.top)

    if not REALWORLD.is_dir():
        print(f"(no real-world corpus at {REALWORLD})")
        return 0
    requests = []
    for repo in sorted(p for p in REALWORLD.iterdir() if p.is_dir()):
        code = repo / "github"
        requests.append(AuditRequest(str(repo), code=str(code) if code.is_dir() else None))
    label = f"full audit, {len(requests)} real-world repos (total)"
    measure(label, audit_all(requests), args.repeat, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
