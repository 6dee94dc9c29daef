"""Bytes transferred to audit a GGUF repo (one model, many quantizations) from a local Hub.

Builds a repo like the usual ``-GGUF`` releases: ``--files`` quantizations of one model plus
a vision projector, each a real GGUF header (a 151,936-token vocabulary and as many merges,
as in Qwen models: about 6 MB of metadata) over a sparse data section. Prints what
`cardaudit audit` fetched cold and warm, the header bytes of every file (what reading them
all would cost at the least), and what `snapshot_download` would transfer.

    python benchmarks/hub_gguf.py [--files 12]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from local_hub import local_hub

VOCAB = 151_936
QUANTS = ["Q2_K", "Q3_K_M", "Q4_0", "Q4_K_M", "Q4_K_S", "Q5_0", "Q5_K_M", "Q5_K_S", "Q6_K"]
QUANTS += ["Q8_0", "BF16", "F16", "IQ4_XS", "IQ3_M", "IQ2_M", "Q3_K_S"]


def gguf_file(path: Path, data_bytes: int) -> int:
    """A GGUF header with a Qwen-sized vocabulary over a sparse data section; its length."""
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "qwen3moe")
    writer.add_block_count(48)
    writer.add_context_length(262_144)
    writer.add_token_list([f"tok{i:06d}" for i in range(VOCAB)])
    writer.add_token_types([1] * VOCAB)
    writer.add_token_merges([f"t{i:05d} k{i:05d}" for i in range(VOCAB - 549)])
    writer.add_tensor("token_embd.weight", np.zeros((64, 32), dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    header = path.stat().st_size - 64 * 32 * 2
    os.truncate(path, header + data_bytes)
    return header


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=12, choices=range(1, len(QUANTS) + 1))
    args = parser.parse_args()
    with local_hub() as (hub, work):
        run(hub, work, args.files)


def run(hub, work: Path, count: int) -> None:
    from huggingface_hub import snapshot_download

    from cardaudit.pipeline import audit
    from cardaudit.sources import AuditRequest
    from hub_repos import card

    files: dict[str, bytes | str | Path] = {"README.md": card(licence="apache-2.0")}
    headers = 0
    for index, quant in enumerate(["mmproj-F16", *QUANTS[:count]]):
        name = f"{quant}.gguf" if quant.startswith("mmproj") else f"Model-{quant}.gguf"
        headers += gguf_file(work / name, (5 + index) * 10**9)
        files[name] = work / name
    hub.commit("bench/model-gguf", files)
    print(f"{count} quantizations + 1 projector; every header: {headers:,} bytes in all")
    request = AuditRequest(target="bench/model-gguf", base_depth=0, code_discovery=False)
    for label in ("cardaudit audit (cold)", "cardaudit audit (warm)"):
        hub.log.clear()
        start = time.perf_counter()
        report = audit(request)
        elapsed = time.perf_counter() - start
        print(
            f"{label:28} {len(hub.log):>4} requests {hub.body_bytes():>14,} bytes "
            f"({hub.weight_bytes():,} from .gguf files) {elapsed:6.2f} s"
        )
    plan = snapshot_download("bench/model-gguf", cache_dir=work / "snap", dry_run=True)
    would = sum(item.file_size for item in plan if item.will_download)
    print(f"{'snapshot_download':28} {'':>4}          {would:>14,} bytes")
    params = report.facts.parameters
    print(f"parameters: {params.total:,} from {params.source} ({params.details.get('file')})")


if __name__ == "__main__":
    main()
