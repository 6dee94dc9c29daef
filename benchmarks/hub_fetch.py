"""Bytes transferred and wall time to audit a sharded 35B-parameter repo from a local Hub.

Prints, for the same repo served by tests/hub_server.py to the unmodified huggingface_hub
client: what `cardaudit audit` fetched (requests, body bytes, weight bytes) and how long it
took, next to what `snapshot_download` would transfer (its own dry run). The shards are sparse
files with real safetensors headers, created in a temp dir and deleted afterwards.

    python benchmarks/hub_fetch.py [--shards 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=15)
    parser.add_argument(
        "--per-expert",
        action="store_true",
        help="one tensor per expert matrix (older Qwen/Mixtral layout: ~50x more header entries)",
    )
    args = parser.parse_args()

    from hub_server import FakeHub

    hub = FakeHub()
    work = Path(tempfile.mkdtemp(prefix="cardaudit-bench-"))
    # Before huggingface_hub is imported: it reads these once.
    os.environ.update(
        {
            "HF_ENDPOINT": hub.endpoint,
            "HF_HOME": str(work / "hf-home"),
            "HF_HUB_CACHE": str(work / "hf-cache"),
            "CARDAUDIT_CACHE": str(work / "cardaudit-cache"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
        }
    )
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE"):
        os.environ.pop(name, None)
    try:
        run(hub, work, args.shards, args.per_expert)
    finally:
        hub.close()
        shutil.rmtree(work, ignore_errors=True)


def run(hub, work: Path, shards: int, per_expert: bool) -> None:
    from cardaudit.pipeline import audit
    from cardaudit.sources import AuditRequest
    from hub_repos import card, moe_tensors, per_expert_tensors, publish_model

    layout = per_expert_tensors if per_expert else moe_tensors
    tensors = layout(layers=42, hidden=2048, experts=256, expert_dim=512, vocab=151936)
    params = 0
    for _, shape in tensors.values():
        count = 1
        for dim in shape:
            count *= dim
        params += count
    publish_model(hub, "bench/base-35b", work / "base", tensors=tensors, shards=shards)
    publish_model(
        hub,
        "bench/moe-35b",
        work / "model",
        readme=card(base="bench/base-35b"),
        tensors=tensors,
        shards=shards,
    )
    sizes = {path: f.size for path, f in _files(hub, "bench/moe-35b").items()}
    print(f"repo: {params / 1e9:.1f}B parameters (BF16), {len(tensors)} tensors, {shards} shards,")
    print(f"      {sum(sizes.values()) / 1e9:.1f} GB in {len(sizes)} files")
    print()
    # Warm-up (untimed): one-off imports and rule loading are not part of fetching.
    audit(AuditRequest(target="bench/moe-35b", base_depth=0, code_discovery=False))
    rows = []
    for label, depth in (("audit, repo only", 0), ("audit, repo + base model", 1)):
        times = []
        for _ in range(3):  # median of three cold-cache runs (the machine may be shared)
            shutil.rmtree(work / "hf-cache", ignore_errors=True)
            shutil.rmtree(work / "cardaudit-cache", ignore_errors=True)
            hub.log.clear()
            start = time.perf_counter()
            request = AuditRequest(target="bench/moe-35b", base_depth=depth, code_discovery=False)
            report = audit(request)
            times.append(time.perf_counter() - start)
        headers = sum(len(h.tensors) for h in report.evidence.safetensors)
        assert headers == len(tensors), "every tensor's header entry was read"
        counted = report.facts.parameters.total
        elapsed = sorted(times)[1]
        rows.append((label, len(hub.log), hub.body_bytes(), hub.weight_bytes(), elapsed))

    hub.log.clear()  # the same audit again, caches warm (a commit sha never changes)
    start = time.perf_counter()
    audit(AuditRequest(target="bench/moe-35b", base_depth=0, code_discovery=False))
    elapsed = time.perf_counter() - start
    rows.append(
        ("re-audit, warm caches", len(hub.log), hub.body_bytes(), hub.weight_bytes(), elapsed)
    )

    from huggingface_hub import snapshot_download

    hub.log.clear()
    start = time.perf_counter()
    plan = snapshot_download("bench/moe-35b", cache_dir=work / "snap-cache", dry_run=True)
    elapsed = time.perf_counter() - start
    would = sum(item.file_size for item in plan if item.will_download)
    rows.append(("snapshot_download (dry run)", len(hub.log), would, would, elapsed))

    print(f"{'':30} {'requests':>9} {'bytes':>16} {'weight bytes':>16} {'wall time':>10}")
    for label, requests, body, weights, seconds in rows:
        print(f"{label:30} {requests:>9} {body:>16,} {weights:>16,} {seconds:>9.2f}s")
    print()
    print(f"parameters counted by cardaudit from the headers: {counted:,} (expected {params:,})")
    print("snapshot_download's bytes are what it would download (its dry run asks the Hub for")
    print("file sizes only); cardaudit's are the response bodies the server actually sent.")


def _files(hub, repo_id: str):
    repo = hub.repos[repo_id]
    return repo.commits[repo.branches["main"]].files


if __name__ == "__main__":
    main()
