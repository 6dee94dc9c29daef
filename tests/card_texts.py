"""Model cards of a given length for the card-length benchmark and the scaling tests:
a plain card (one varied block repeated) and a pathological one of the same size."""

from __future__ import annotations

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

FRONT = ["---", "license: mit", "base_model: org/base", "---", "# Test Model", ""]

#: A pathological card of N lines costs at most this many times a plain card of N lines
#: (benchmarks/card_length.py prints the ratio; tests/test_card_scaling.py holds it).
PATHOLOGICAL_BOUND = 8.0


def card_text(lines: int) -> str:
    """A plain card of ``lines`` lines (front matter included)."""
    parts = list(FRONT)
    i = 0
    while len(parts) < lines:
        parts += BLOCK.format(i=i, m=1 + i % 9, d=i % 10).splitlines()
        i += 1
    return "\n".join(parts[:lines]) + "\n"


def pathological_text(lines: int) -> str:
    """A card of ``lines`` lines made of what is costly to read: 4,000-character lines full
    of figures, benchmark names and promises without a full stop, wide tables, lists and
    quotes nested 40 deep, unclosed emphasis and links, and figures on every line."""
    figure = "about 7B parameters 13B total 80GB 2x 80GB GPUs 128K tokens BF16 MMLU 61.2 "
    promise = "we will release the weights and code soon (coming soon) "
    long_line = (figure + promise + "*[x](y " * 4) * 25
    parts = list(FRONT)
    i = 0
    while len(parts) < lines:
        kind = i % 5
        if kind == 0:
            parts += [long_line[:4000], ""]
        elif kind == 1:  # a wide table
            parts.append("| " + " | ".join(f"M{c}-{i}B" for c in range(60)) + " |")
            parts.append("|" + "---|" * 60)
            parts += ["| " + " | ".join(f"{r}{c}.5" for c in range(60)) + " |" for r in range(8)]
            parts.append("")
        elif kind == 2:  # nesting
            parts += ["  " * depth + "- " + figure for depth in range(40)]
            parts += ["> " * depth + promise for depth in range(1, 40)]
            parts.append("")
        elif kind == 3:  # headings and figures on every line
            parts += [f"### Sibling-{i}-{n}B" for n in range(5)]
            parts += [f"Sibling-{i}-{n}B runs on {n + 1}x H100 in FP8 ({n}0 GB)" for n in range(10)]
        else:  # HTML and unclosed constructs
            parts += ["<table><tr><td>MMLU</td><td>61.2</td></tr>"] * 10
            parts += ["<!-- " + figure, "[link](" + figure, "`" + promise, ""]
        i += 1
    return "\n".join(parts[:lines]) + "\n"
