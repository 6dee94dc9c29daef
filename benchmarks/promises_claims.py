"""Print how long promise and claim extraction take: on a card with a long git history
(200 README versions, 30 promises each) and a big card (100 benchmark tables, 400 prose
claims), and on the real-world corpus when ../shared/realworld/repos is present.

    PYTHONPATH=src python benchmarks/promises_claims.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cardaudit.extract.claims import claim_facts
from cardaudit.extract.markdown_blocks import clear_cache
from cardaudit.extract.promise_facts import promise_facts
from cardaudit.model import FileVersion
from cardaudit.sources import AuditRequest, acquire, local_evidence

REALWORLD = Path(__file__).resolve().parents[2] / "shared" / "realworld" / "repos"


def timed(label: str, fn, repeat: int = 3) -> None:
    best = float("inf")
    for _ in range(repeat):
        clear_cache()  # every repeat parses its Markdown afresh
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<58} {best * 1000:8.1f} ms  ({len(result)} items)")


def promise_card(version: int) -> str:
    lines = ["---", "license: mit", "---", "# Model", "", f"Revision {version}.", ""]
    for i in range(30):  # 30 different promises (the same one stated 30 times is one)
        lines.append(f"- [ ] Publish the tokenizer-{i} vocabulary")
        lines.append("")
    return "\n".join(lines) + "\n"


def long_history() -> None:
    from dataclasses import replace

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "model"
        root.mkdir()
        (root / "README.md").write_text(promise_card(199))
        evidence = local_evidence(str(root))
        start = datetime(2025, 1, 1, tzinfo=UTC)
        versions = tuple(
            FileVersion(f"{i:040x}", start + timedelta(days=i), promise_card(i)) for i in range(200)
        )
        snapshot = replace(evidence.repo, history={"README.md": versions})
        evidence = replace(evidence, repo=snapshot)
        label = "promises, 30 on a card with 200 versions of history"
        timed(label, lambda: promise_facts(evidence))


def big_card() -> None:
    parts = ["---", "license: mit", "---", "# Model", ""]
    for t in range(100):
        parts += [f"## Results {t}", "", "| Model | MMLU | GSM8K | HumanEval |"]
        parts += ["|---|---|---|---|"]
        parts += [f"| M{r} | {50 + r}.1 | {40 + r}.2 | {30 + r}.3 |" for r in range(20)]
        parts += ["", f"M{t} scores 61.{t % 10} on SWE-bench Verified and runs at 90 tokens/s.", ""]
        parts += [f"Line {i} of prose that says nothing measurable at all." for i in range(30)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "model"
        root.mkdir()
        (root / "README.md").write_text("\n".join(parts) + "\n")
        evidence = local_evidence(str(root))
        lines = len(parts)
        timed(f"claims, big card ({lines} lines, 100 tables)", lambda: claim_facts(evidence))


def realworld() -> None:
    if not REALWORLD.is_dir():
        print(f"(no real-world corpus at {REALWORLD})")
        return
    repos = sorted(p for p in REALWORLD.iterdir() if p.is_dir())
    evidences = []
    for repo in repos:
        code = repo / "github"
        request = AuditRequest(str(repo), code=str(code) if code.is_dir() else None)
        evidences.append(acquire(request))

    def run() -> list:
        return [x for e in evidences for x in promise_facts(e) + claim_facts(e)]

    timed(f"promises + claims over {len(repos)} real-world repos", run)


def main() -> int:
    long_history()
    big_card()
    realworld()
    return 0


if __name__ == "__main__":
    sys.exit(main())
