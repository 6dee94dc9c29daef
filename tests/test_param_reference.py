"""Config-only and header-derived parameter counts against transformers' own models.

``tests/data/reference_param_counts.json`` holds the counts transformers builds on the meta
device for every config in ``tests/data/configs`` (copies of /work/shared/realworld). The
normal suite checks config-only totals against it without torch; with torch and
transformers installed, the reference is re-derived and header-derived totals are checked
exact on header-only shards built from the meta-device parameter shapes.
Regenerate with ``UPDATE_REFERENCE=1 pytest tests/test_param_reference.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cardaudit.extract.config_count import count_from_config
from cardaudit.extract.parameters import from_headers
from cardaudit.sources.safetensors_header import read_header
from stub_weights import write_repo

DATA = Path(__file__).parent / "data"
CONFIGS = sorted((DATA / "configs").glob("*.json"))
REFERENCE = DATA / "reference_param_counts.json"
TOLERANCE = 0.005


def _reference() -> dict:
    return json.loads(REFERENCE.read_text())


def test_reference_covers_every_config() -> None:
    assert sorted(_reference()) == sorted(path.stem for path in CONFIGS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_only_total_within_half_a_percent(path: Path) -> None:
    expected = _reference()[path.stem]["total"]
    count = count_from_config(json.loads(path.read_text()))
    assert count is not None
    assert abs(count.total - expected) / expected <= TOLERANCE, (count.total, expected)


def _meta_model(config: dict):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    arch = (config.get("architectures") or ["MistralForCausalLM"])[0]
    if config.get("model_type"):
        hf_config = transformers.AutoConfig.for_model(**config)
    else:  # the trimmed Mistral copy has no model_type
        hf_config = transformers.MistralConfig(**config)
    with torch.device("meta"):
        return getattr(transformers, arch)(hf_config)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_reference_and_headers_against_transformers(path: Path, tmp_path: Path) -> None:
    config = json.loads(path.read_text())
    model = _meta_model(config)
    total = sum(p.numel() for p in model.parameters())
    if os.environ.get("UPDATE_REFERENCE"):
        data = _reference() if REFERENCE.exists() else {}
        data[path.stem] = {"architecture": type(model).__name__, "total": total}
        REFERENCE.write_text(json.dumps(dict(sorted(data.items())), indent=2) + "\n")
    assert _reference()[path.stem]["total"] == total
    dtype = {"torch.bfloat16": "BF16", "torch.float16": "F16"}.get(str(model.dtype), "F32")
    tensors = {name: (dtype, tuple(p.shape)) for name, p in model.named_parameters()}
    write_repo(tmp_path, tensors, shard_bytes=20 * 10**9)
    headers = []
    for shard in sorted(tmp_path.glob("*.safetensors")):
        with open(shard, "rb") as stream:
            headers.append(read_header(stream, shard.name, shard.stat().st_size))
    facts = from_headers(headers, config)
    assert facts is not None and facts.total == total
