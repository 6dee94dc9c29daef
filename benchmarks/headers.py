"""How long reading and walking the headers of a big sharded repo takes, against reading
and ``json.loads`` of the same headers measured in the same run.

Builds, in a temporary directory, a fine-tune and its base of the same layout: 199,872
BF16 expert tensors (1,041 layers x 64 experts x 3 projections, Mixtral config) in 100
shards each, as sparse files (real headers, data sections of the right length that occupy
no disk) — the repo of ``benchmarks/targets.py``, row ``headers``. Then times, in this
process, in CPU seconds (``time.process_time``, best of ``--repeat``):

- the baseline: open every shard, read its 8-byte length and ``json.loads`` its header;
- listing + reading the headers (``local_evidence``: the TensorInfo list);
- the one walk of the tensor list (``extract/header_walk``) and what reads it: parameter
  count, structure, MEM007 / MEM009;
- a whole audit (acquire + every fact + every rule), and the same with ``--base``.

It also counts the passes over each header's tensor list during the whole audit (1: the
walk; the issue's target is one pass, ≤ 2 s for the audit).

    PYTHONPATH=src:tests python benchmarks/headers.py [--tensors 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from cardaudit.extract.header_walk import header_walk
from cardaudit.extract.parameters import parameter_facts
from cardaudit.extract.structure import structure_of
from cardaudit.model import Evidence
from cardaudit.pipeline import audit_evidence
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest, acquire, local_evidence
from stub_weights import write_repo
from tensor_passes import CountedTensors, counted

EXPERTS, PER_EXPERT, SHARDS = 64, 3, 100


def build(root: Path, tensors: int) -> int:
    """Write the model and base folders under ``root``; return the tensor count."""
    layers = tensors // (EXPERTS * PER_EXPERT)
    names = {}
    for index in range(layers * EXPERTS * PER_EXPERT):
        layer, rest = divmod(index, EXPERTS * PER_EXPERT)
        expert, proj = divmod(rest, PER_EXPERT)
        kind = ("gate_proj", "up_proj", "down_proj")[proj]
        shape = (512, 256) if kind != "down_proj" else (256, 512)
        names[f"model.layers.{layer}.mlp.experts.{expert}.{kind}.weight"] = ("BF16", shape)
    config = {
        "architectures": ["MixtralForCausalLM"],
        "model_type": "mixtral",
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": layers,
        "num_local_experts": EXPERTS,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "vocab_size": 1000,
        "torch_dtype": "bfloat16",
    }
    shard_bytes = -(-len(names) // SHARDS) * 512 * 256 * 2
    for name in ("model", "base"):
        folder = root / name
        write_repo(folder, names, shard_bytes=shard_bytes, sparse=True)
        (folder / "README.md").write_text("---\nlicense: mit\n---\n# bench\n")
        (folder / "config.json").write_text(json.dumps(config))
    return len(names)


def read_and_load(folder: Path) -> None:
    """The baseline: every header read and decoded by ``json.loads``, nothing else."""
    for path in sorted(folder.glob("*.safetensors")):
        with open(path, "rb") as stream:
            (length,) = struct.unpack("<Q", stream.read(8))
            json.loads(stream.read(length))


def best_cpu(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def walk_and_readers(evidence: Evidence) -> None:
    """The walk and its readers on a fresh copy of ``evidence`` (nothing remembered)."""
    fresh = replace(evidence)
    header_walk(fresh)
    parameter_facts(fresh)
    structure_of(fresh)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tensors", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cardaudit-bench-") as tmp:
        root = Path(tmp)
        tensors = build(root, args.tensors)
        model, base = root / "model", root / "base"
        shards = len(list(model.glob("*.safetensors")))
        evidence = local_evidence(str(model))
        audit_evidence(acquire(AuditRequest(str(model))), Policy())  # warm imports, tables
        rows = {
            "read + json.loads every header": best_cpu(lambda: read_and_load(model), args.repeat),
            "list + read headers (local_evidence)": best_cpu(
                lambda: local_evidence(str(model)), args.repeat
            ),
            "walk + count, structure": best_cpu(lambda: walk_and_readers(evidence), args.repeat),
            "whole audit": best_cpu(
                lambda: audit_evidence(acquire(AuditRequest(str(model))), Policy()), args.repeat
            ),
            "whole audit --base (same layout)": best_cpu(
                lambda: audit_evidence(acquire(AuditRequest(str(model), base=str(base))), Policy()),
                args.repeat,
            ),
        }
        both = counted(acquire(AuditRequest(str(model), base=str(base))))
        CountedTensors.passes = 0
        facts = audit_evidence(both, Policy()).facts.parameters
        passes = CountedTensors.passes / (len(both.safetensors) + len(both.base[0].safetensors))
    print(
        f"headers: {tensors:,} tensors in {shards} shards, {facts.total:,} parameters "
        f"(CPU s, best of {args.repeat}; ratio to reading + json.loads; "
        f"load average {os.getloadavg()[0]:.1f})"
    )
    baseline = rows["read + json.loads every header"]
    for label, cpu in rows.items():
        target = "  target ≤ 2 s" if label == "whole audit" else ""
        print(f"  {label:<38} {cpu:>6.2f} s {cpu / baseline:>6.2f}×{target}")
    print(f"  passes over each header's tensor list in the audit --base: {passes:g}")


if __name__ == "__main__":
    main()
