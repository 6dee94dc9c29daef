"""How long reading and counting the headers of a big sharded repo takes.

Builds, in a temporary directory, a 100-shard repo of 100,000 BF16 tensors as sparse
files (real headers, data sections of the right length that occupy no disk), then times
listing + header reading (``local_evidence``) and the parameter count.

    PYTHONPATH=src:tests python benchmarks/headers.py [--shards 100] [--tensors 100000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from cardaudit.extract.parameters import parameter_facts
from cardaudit.sources import local_evidence
from stub_weights import write_repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=100)
    parser.add_argument("--tensors", type=int, default=100_000)
    args = parser.parse_args()
    per_shard = args.tensors // args.shards
    shape = (1024, 1024)
    tensors = {
        f"model.layers.{i // 64}.mlp.experts.{i % 64}.up_proj.weight": ("BF16", shape)
        for i in range(args.tensors)
    }
    with tempfile.TemporaryDirectory(prefix="cardaudit-bench-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        write_repo(root, tensors, shard_bytes=per_shard * 1024 * 1024 * 2, sparse=True)
        built = time.perf_counter() - start
        (root / "README.md").write_text("---\nlicense: mit\n---\n# bench\n")
        apparent = sum(p.stat().st_size for p in root.glob("*.safetensors"))
        start, cpu = time.perf_counter(), time.process_time()
        evidence = local_evidence(str(root))
        read, read_cpu = time.perf_counter() - start, time.process_time() - cpu
        start, cpu = time.perf_counter(), time.process_time()
        facts = parameter_facts(evidence)
        counted, count_cpu = time.perf_counter() - start, time.process_time() - cpu
    shards = len(evidence.safetensors)
    print(
        f"repo: {shards} shards, {facts.details['tensors']:,} tensors, apparent size "
        f"{apparent / 1e12:.2f} TB (sparse; built in {built:.2f} s)"
    )
    print(f"list + read headers: {read * 1000:.0f} ms wall, {read_cpu * 1000:.0f} ms CPU")
    print(
        f"count parameters:    {counted * 1000:.0f} ms wall, {count_cpu * 1000:.0f} ms CPU "
        f"({facts.total:,} parameters)"
    )
    print(
        f"total:               {(read + counted) * 1000:.0f} ms wall, "
        f"{(read_cpu + count_cpu) * 1000:.0f} ms CPU (load average {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
