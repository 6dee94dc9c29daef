"""A .bin index and ModelOpt's hf_quant_config.json read from the Hub (tests/hub_server.py),
as from a local folder: JSON and the file listing only, never a .bin shard's bytes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from hub_server import FakeHub

ROOT = Path(__file__).resolve().parents[1]
BIN_FIXTURE = ROOT / "fixtures" / "mem-bin-shards" / "model"


def _mem(report) -> list[tuple[str, str, str | None, int | None]]:
    return [
        (f.rule_id, f.severity, f.location.path, f.location.line)
        for f in report.findings
        if f.rule_id.startswith("MEM")
    ]


def test_a_bin_index_on_the_hub_is_evidence_like_a_local_one(hub: FakeHub) -> None:
    hub.commit_folder("org/sprout-2023", BIN_FIXTURE)
    report = audit(AuditRequest(target="org/sprout-2023", code_discovery=False), Policy())
    local = audit(AuditRequest(target=str(BIN_FIXTURE), code_discovery=False), Policy())
    assert _mem(report) == _mem(local) == [("MEM008", "error", "pytorch_model.bin.index.json", 6)]
    assert report.facts.memory.weight_bytes == 107_072
    fetched = [e.path.rsplit("/", 1)[-1] for e in hub.log if e.method == "GET"]
    # the index is read; the .bin shards are listed and sized, never downloaded
    assert "pytorch_model.bin.index.json" in fetched
    assert not [name for name in fetched if name.endswith(".bin")]


def test_a_complete_bin_repo_on_the_hub_passes_mem007(hub: FakeHub, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(BIN_FIXTURE, folder)
    (folder / "pytorch_model-00003-of-00003.bin").write_bytes(bytes((32 + 256 * 32) * 2 + 1664))
    hub.commit_folder("org/sprout-complete", folder)
    report = audit(AuditRequest(target="org/sprout-complete", code_discovery=False), Policy())
    outcomes = {run.rule_id: run.outcome for run in report.checks}
    assert (outcomes["MEM007"], outcomes["MEM008"]) == ("pass", "pass")
    assert _mem(report) == []


def test_hf_quant_config_on_the_hub_makes_the_cache_fp8(hub: FakeHub) -> None:
    config = json.loads(
        (ROOT / "tests" / "data" / "configs" / "Qwen__Qwen3-30B-A3B.json").read_text()
    )
    quant = {
        "producer": {"name": "modelopt", "version": "0.33.0"},
        "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16},
    }
    hub.commit(
        "org/qwen3-nvfp4",
        {
            "README.md": "---\nlicense: apache-2.0\n---\n# Qwen3 NVFP4\n",
            "config.json": json.dumps(config),
            "hf_quant_config.json": json.dumps(quant),
        },
    )
    report = audit(AuditRequest(target="org/qwen3-nvfp4", code_discovery=False), Policy())
    kv = report.facts.memory.details["kv_cache"]
    assert kv["dtype_from"] == "hf_quant_config.json quantization.kv_cache_quant_algo FP8"
    assert report.facts.memory.kv_cache_bytes_per_token == 48 * 2 * 4 * 128
