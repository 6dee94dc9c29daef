"""CPU cost of the licence-duty facts (licensor decision, licence statements in any form,
obligations — ``extract/licence_duties.py``) against the whole audit of the same evidence,
measured in the same run (best of N, ``time.process_time``):

- ``fixtures/clover`` with its code and base repos;
- a big card: 5,705 lines (as in audit_speed.py), plus a 200-line gating prompt;
- every real-world repo of ../shared/realworld/repos (total), when present.

"Markdown already parsed": the cost left once the other prose extractors of the audit have
parsed the card and the code README (markdown_blocks caches the parse).

    PYTHONPATH=src python benchmarks/licence_duties.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cardaudit.extract import build_facts
from cardaudit.extract.licence import licence_facts
from cardaudit.extract.licence_duties import licence_duty_facts
from cardaudit.extract.lineage import all_claims
from cardaudit.extract.markdown_blocks import clear_cache
from cardaudit.pipeline import audit_evidence
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest, acquire

ROOT = Path(__file__).resolve().parents[1]
REALWORLD = ROOT.parent / "shared" / "realworld" / "repos"
sys.path.insert(0, str(Path(__file__).parent))

from audit_speed import big_card_text  # noqa: E402


def cpu(run: Callable[[], object], repeat: int, cold: bool = True) -> float:
    best = float("inf")
    for _ in range(repeat):
        if cold:
            clear_cache()  # Markdown parsed afresh each time
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def measure(label: str, requests: list[AuditRequest], repeat: int) -> None:
    evidences = [acquire(request) for request in requests]
    prepared = [(e, licence_facts(e), all_claims(e)) for e in evidences]
    duties = cpu(lambda: [licence_duty_facts(e, lic, bases) for e, lic, bases in prepared], repeat)
    # In an audit the card's Markdown is already parsed by the other prose extractors (the
    # parse cache holds the few documents of one audit): timed repo by repo, warm.
    warm = sum(
        cpu(lambda item=item: licence_duty_facts(*item), repeat + 1, cold=False)
        for item in prepared
    )
    facts = cpu(lambda: [build_facts(e) for e in evidences], repeat)
    whole = cpu(lambda: [audit_evidence(e, Policy()) for e in evidences], repeat)
    print(
        f"{label:<46} licence duties {duties * 1000:7.1f} ms CPU "
        f"({warm * 1000:.1f} ms with the Markdown already parsed); all facts "
        f"{facts * 1000:7.1f} ms; whole audit {whole * 1000:7.1f} ms; "
        f"duties / audit = {duties / whole:.1%} cold, {warm / whole:.1%} warm"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="best of N timed runs")
    args = parser.parse_args()
    clover = ROOT / "fixtures" / "clover"
    measure(
        "fixtures/clover --code --base",
        [AuditRequest(str(clover / "model"), code=str(clover / "code"), base=str(clover / "base"))],
        args.repeat,
    )
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        model.mkdir()
        gate = "\n".join(
            f"  Clause {i}: use is also subject to the Acceptable Use Policy." for i in range(200)
        )
        text = big_card_text().replace(
            "license: mit\n", f"license: mit\nextra_gated_prompt: |\n{gate}\n", 1
        )
        (model / "README.md").write_text(text)
        measure(f"big card ({text.count(chr(10))} lines)", [AuditRequest(str(model))], args.repeat)
    if REALWORLD.is_dir():
        requests = []
        for repo in sorted(p for p in REALWORLD.iterdir() if p.is_dir()):
            code = repo / "github"
            requests.append(AuditRequest(str(repo), code=str(code) if code.is_dir() else None))
        measure(f"{len(requests)} real-world repos (total)", requests, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
