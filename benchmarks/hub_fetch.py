"""Bytes transferred and wall time to audit a sharded 35B-parameter repo from a local Hub.

Prints, for the same repo served by tests/hub_server.py to the unmodified huggingface_hub
client: what `cardaudit audit` fetched (requests, body bytes, weight bytes) and how long it
took, next to what `snapshot_download` would transfer (its own dry run). Two tensor layouts:
fused experts (one tensor per matrix family, ~340 header entries) and one tensor per expert
(~32,500 entries: 4 MB of headers and a 2.9 MB index); ``fp8-per-expert`` (not in ``both``):
an FP8 block-scaled MoE of ~35B parameters, one tensor per expert plus its F32 scale
(~61,000 entries), and ``gptq-per-expert`` (not in ``both``): the same MoE in GPTQ int4,
group size 128 (qweight, qzeros, scales and g_idx per linear: ~124,000 entries), both
counted from config.json verified against the Hub's dtype totals. The shards are sparse
files with real safetensors headers, created in a temp dir and deleted afterwards.

    python benchmarks/hub_fetch.py [--shards 15]
        [--layout fused|per-expert|fp8-per-expert|gptq-per-expert|both]
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from local_hub import local_hub

SHAPE = {"layers": 42, "hidden": 2048, "experts": 256, "expert_dim": 512, "vocab": 151936}
FP8_SHAPE = {
    "layers": 40,
    "hidden": 2048,
    "heads": 32,
    "kv_heads": 4,
    "experts": 256,
    "expert_dim": 512,
    "vocab": 151936,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=15)
    parser.add_argument(
        "--layout",
        choices=("fused", "per-expert", "fp8-per-expert", "gptq-per-expert", "both"),
        default="both",
    )
    args = parser.parse_args()

    layouts = ("fused", "per-expert") if args.layout == "both" else (args.layout,)
    with local_hub() as (hub, work):
        for layout in layouts:
            run(hub, work / layout, args.shards, layout)


def run(hub, work: Path, shards: int, layout: str) -> None:
    import json

    from cardaudit.extract.quantization import is_aux_tensor
    from cardaudit.pipeline import audit
    from cardaudit.sources import AuditRequest
    from hub_repos import (
        card,
        fp8_moe,
        moe_config,
        moe_tensors,
        packed_int_moe,
        per_expert_tensors,
        publish_model,
    )

    os.environ["HF_HUB_CACHE"] = str(work / "hf-cache")
    os.environ["CARDAUDIT_CACHE"] = str(work / "cardaudit-cache")
    if layout == "fp8-per-expert":
        fp8_config, tensors = fp8_moe(**FP8_SHAPE)
        config = {"config.json": json.dumps(fp8_config, indent=2)}
    elif layout == "gptq-per-expert":
        gptq_config, tensors = packed_int_moe("gptq", **FP8_SHAPE, group=128)
        config = {"config.json": json.dumps(gptq_config, indent=2)}
    else:
        tensors = (per_expert_tensors if layout == "per-expert" else moe_tensors)(**SHAPE)
        config = {"config.json": moe_config(**SHAPE)}
    params = 0
    for name, (_, shape) in tensors.items():
        count = 1
        for dim in shape:
            count *= dim
        # Scales, zero points and indices are storage, not parameters; qweight holds 8 int4.
        params += 0 if is_aux_tensor(name) else count * (8 if name.endswith(".qweight") else 1)
    base, model = f"bench/{layout}-base-35b", f"bench/{layout}-moe-35b"
    publish_model(hub, base, work / "base", tensors=tensors, shards=shards, extra=config)
    publish_model(
        hub,
        model,
        work / "model",
        readme=card(base=base),
        tensors=tensors,
        shards=shards,
        extra=config,
    )
    files = _files(hub, model)
    sizes = {path: f.size for path, f in files.items()}
    index = sizes["model.safetensors.index.json"]
    dtypes = "/".join(sorted({dtype for dtype, _ in tensors.values()}))
    print(f"layout {layout}: {params / 1e9:.1f}B parameters ({dtypes}), {len(tensors):,} tensors,")
    print(f"      {shards} shards, index {index:,} bytes, {sum(sizes.values()) / 1e9:.1f} GB")
    print(f"      in {len(sizes)} files")
    # Warm-up (untimed): one-off imports and rule loading are not part of fetching.
    audit(AuditRequest(target=model, base_depth=0, code_discovery=False))
    rows = []
    for label, depth in (("audit, repo only", 0), ("audit, repo + base model", 1)):
        times = []
        for _ in range(3):  # median of three cold-cache runs (the machine may be shared)
            shutil.rmtree(work / "hf-cache", ignore_errors=True)
            shutil.rmtree(work / "cardaudit-cache", ignore_errors=True)
            hub.log.clear()
            start = time.perf_counter()
            request = AuditRequest(target=model, base_depth=depth, code_discovery=False)
            report = audit(request)
            times.append(time.perf_counter() - start)
        facts = report.facts.parameters
        elapsed = sorted(times)[1]
        rows.append((label, len(hub.log), hub.body_bytes(), hub.weight_bytes(), elapsed))

    hub.log.clear()  # the same audit again, caches warm (a commit sha never changes)
    start = time.perf_counter()
    audit(AuditRequest(target=model, base_depth=0, code_discovery=False))
    elapsed = time.perf_counter() - start
    rows.append(
        ("re-audit, warm caches", len(hub.log), hub.body_bytes(), hub.weight_bytes(), elapsed)
    )

    # The same audit (repo + base) with HF_HUB_OFFLINE=1: from the caches alone.
    from huggingface_hub import constants

    os.environ["HF_HUB_OFFLINE"], constants.HF_HUB_OFFLINE = "1", True
    try:
        hub.log.clear()
        start = time.perf_counter()
        offline = audit(AuditRequest(target=model, base_depth=1, code_discovery=False))
        elapsed = time.perf_counter() - start
    finally:
        os.environ.pop("HF_HUB_OFFLINE")
        constants.HF_HUB_OFFLINE = False
    assert offline.target.offline is not None and offline.facts.parameters == facts
    rows.append(
        ("offline re-audit, + base", len(hub.log), hub.body_bytes(), hub.weight_bytes(), elapsed)
    )

    from huggingface_hub import snapshot_download

    hub.log.clear()
    start = time.perf_counter()
    plan = snapshot_download(model, cache_dir=work / "snap-cache", dry_run=True)
    elapsed = time.perf_counter() - start
    would = sum(item.file_size for item in plan if item.will_download)
    rows.append(("snapshot_download (dry run)", len(hub.log), would, would, elapsed))

    print()
    print(f"{'':30} {'requests':>9} {'bytes':>16} {'weight bytes':>16} {'wall time':>10}")
    for label, requests, body, weights, seconds in rows:
        print(f"{label:30} {requests:>9} {body:>16,} {weights:>16,} {seconds:>9.2f}s")
    print()
    assert facts.total == params, (facts.total, params)
    headers = sum(len(h.tensors) for h in report.evidence.safetensors)
    read = f"{headers:,} header entries read" if headers else "no header read in full"
    if not headers and facts.details.get("header_bytes"):
        read += f"; the headers total {facts.details['header_bytes']:,} bytes"
    print(f"parameters: {facts.total:,} from {facts.source} ({read}; expected {params:,})")
    active = facts.details.get("active_source", facts.source)
    print(f"active per token: {facts.active:,} from {active}")
    print("snapshot_download's bytes are what it would download (its dry run asks the Hub for")
    print("file sizes only); cardaudit's are the response bodies the server actually sent.")
    print()


def _files(hub, repo_id: str):
    repo = hub.repos[repo_id]
    return repo.commits[repo.branches["main"]].files


if __name__ == "__main__":
    main()
