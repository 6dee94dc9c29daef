"""Print how the CPU time of a full audit grows with the length of the model card.

The card (tests/card_texts.py) repeats one varied block (headings, a news list about
sibling models, promises, a roadmap, a benchmark table, prose scores and speed figures,
lineage and memory sentences, a code block, links) until it has the wanted number of lines.
Each length is audited in this process (acquire + every fact + every rule, as the CLI runs
it) and timed in CPU seconds (``time.process_time``, best of ``--repeat``). The baseline is
the shortest card, measured in the same run: ``growth`` is (CPU per line at this length) /
(CPU per line of the baseline), 1.00 for linear growth; the target is ≤ 1.1 and ≤ 5 s for
50,000 lines.

Then a pathological card of ``--pathological`` lines (4,000-character lines of figures and
promises, wide tables, nesting 40 deep, unclosed constructs) against a plain card of the
same length: its ratio must stay within ``PATHOLOGICAL_BOUND`` (tests/test_card_scaling.py
holds the same bound).

    PYTHONPATH=src python benchmarks/card_length.py [--lines 1000,5000,50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from card_texts import PATHOLOGICAL_BOUND, card_text, pathological_text
from cardaudit.extract.markdown_blocks import clear_cache
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest


def cpu_audit(text: str, repeat: int) -> tuple[float, int]:
    """(best CPU seconds, findings) of a full audit of a model repo holding only ``text``."""
    best = float("inf")
    findings = 0
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        model.mkdir()
        (model / "README.md").write_text(text)
        request = AuditRequest(str(model))
        for _ in range(repeat):
            clear_cache()  # every repeat parses its Markdown afresh
            start = time.process_time()
            findings = len(audit(request, Policy()).findings)
            best = min(best, time.process_time() - start)
    return best, findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="1000,5000,50000", help="card lengths, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="best of N timed runs")
    parser.add_argument("--pathological", type=int, default=5000, help="pathological card lines")
    args = parser.parse_args()
    lengths = sorted(int(n) for n in args.lines.split(","))

    cpu_audit(card_text(200), 1)  # warm imports and tables
    base_cpu = base_lines = None
    print(f"{'card lines':>10} {'CPU s':>8} {'µs/line':>8} {'growth':>7} {'findings':>9}")
    for lines in lengths:
        cpu, findings = cpu_audit(card_text(lines), args.repeat if lines <= 10_000 else 1)
        if base_cpu is None:
            base_cpu, base_lines = cpu, lines
        growth = (cpu / lines) / (base_cpu / base_lines)
        print(f"{lines:>10,} {cpu:>8.2f} {cpu / lines * 1e6:>8.1f} {growth:>7.2f} {findings:>9}")
    lines = args.pathological
    plain, _ = cpu_audit(card_text(lines), args.repeat)
    hostile, _ = cpu_audit(pathological_text(lines), args.repeat)
    print(
        f"pathological card, {lines:,} lines: {hostile:.2f} s CPU, {hostile / plain:.2f}× a plain "
        f"card of the same length ({plain:.2f} s; bound {PATHOLOGICAL_BOUND:g}×)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
