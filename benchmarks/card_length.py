"""Print how the CPU time of a full audit grows with the length of the model card.

The card repeats one varied block (headings, a news list about sibling models, promises,
a roadmap, a benchmark table, prose scores and speed figures, lineage and memory sentences,
a code block, links) until it has the wanted number of lines. Each length is audited in this
process (acquire + every fact + every rule, as the CLI runs it) and timed in CPU seconds
(``time.process_time``, best of ``--repeat``). The baseline is the shortest card, measured in
the same run: ``growth`` is (CPU per line at this length) / (CPU per line of the baseline),
1.00 for linear growth.

    PYTHONPATH=src python benchmarks/card_length.py [--lines 1000,5000,50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from cardaudit.extract.markdown_blocks import clear_cache
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest

BLOCK = """\
## Release {i}

- 2024-0{m}: we released Sibling-{i}-7B, a smaller member of the family.
- 2024-0{m}: Sibling-{i}-70B reaches 81.{d} on MMLU.

The model is based on Base-{i}-13B and runs on a single A100 80GB in BF16 (about 26 GB).
We will release the training code for this version soon. Stay tuned for the technical report.
The evaluation data will be made available next month.

- [ ] Release the vLLM integration for part {i}
- [x] Release the weights of part {i}

| Model | MMLU | GSM8K | HumanEval |
|---|---|---|---|
| This model | 6{d}.1 | 7{d}.2 | 5{d}.3 |
| Other-{i}-8B | 5{d}.0 | 6{d}.0 | 4{d}.0 |

Our model scores 61.{d} on SWE-bench Verified and decodes at 90 tokens/s on one H100.
It outperforms every open model of its size on reasoning benchmarks.
See the [evaluation details](https://example.com/eval-{i}) and the [paper](https://arxiv.org/abs/2401.0000{d}).

```python
model = load("org/model-{i}")  # will be released soon
```

Line of prose {i} that says nothing measurable at all.
Another line of prose about the data mixture and the tokenizer of release {i}.
"""


def card_text(lines: int) -> str:
    """A card of at least ``lines`` lines (front matter included)."""
    parts = ["---", "license: mit", "base_model: org/base", "---", "# Test Model", ""]
    i = 0
    while len(parts) < lines:
        parts += BLOCK.format(i=i, m=1 + i % 9, d=i % 10).splitlines()
        i += 1
    return "\n".join(parts[:lines]) + "\n"


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
