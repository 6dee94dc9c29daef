"""Config-only and header-derived parameter counts against transformers' own models.

``tests/data/reference_param_counts.json`` holds, for every config in
``tests/data/configs`` (real configs; where each comes from: ``configs/PROVENANCE.md``),
the count transformers builds on the meta device, or, for the ``trust_remote_code``
families transformers has no class for (Baichuan, ChatGLM, InternLM 2, Qwen v1), a total
published independently of cardaudit (``"source"`` says where; ChatGLM 2 / 3 / GLM-4 are
also rebuilt with transformers' native GLM port, Qwen v1 as Qwen2, InternLM 2 and
Baichuan as Llama, classes with the same tensors: ``"transformers_port"``). The normal suite checks
config-only totals against it without torch, exactly; with torch and transformers
installed (``pip install -e .[reference]`` in a separate venv), the transformers entries
are re-derived and header-derived totals are checked exact on header-only shards built
from the meta-device parameter shapes.
Regenerate with ``UPDATE_REFERENCE=1 pytest tests/test_param_reference.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cardaudit.extract.config_count import count_from_config, not_counted_reason
from cardaudit.extract.parameters import from_headers
from cardaudit.sources.safetensors_header import read_header
from stub_weights import write_repo

DATA = Path(__file__).parent / "data"
CONFIGS = sorted((DATA / "configs").glob("*.json"))
REFERENCE = DATA / "reference_param_counts.json"
#: Configs whose config-only total may differ from the reference, and why (none today:
#: every count is exact). The limit for any listed here is half a percent.
TOLERATED: dict[str, str] = {}
TOLERANCE = 0.005


def _reference() -> dict:
    return json.loads(REFERENCE.read_text())


def test_reference_covers_every_config() -> None:
    assert sorted(_reference()) == sorted(path.stem for path in CONFIGS)


def test_every_config_has_its_provenance() -> None:
    provenance = (DATA / "configs" / "PROVENANCE.md").read_text()
    missing = [path.name for path in CONFIGS if f"`{path.name}`" not in provenance]
    assert not missing


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_only_total_matches_the_reference(path: Path) -> None:
    expected = _reference()[path.stem]["total"]
    config = json.loads(path.read_text())
    count = count_from_config(config)
    assert count is not None, not_counted_reason(config)
    if path.stem in TOLERATED:
        assert abs(count.total - expected) / expected <= TOLERANCE, (count.total, expected)
    else:
        assert count.total == expected


def test_remote_code_entries_name_their_source() -> None:
    for name, entry in _reference().items():
        if entry.get("remote_code"):
            assert entry.get("source"), name


def _hf_kwargs(config: dict) -> dict[str, Any]:
    """The config as transformers 5 reads it: Falcon's first checkpoints (model_type
    RefinedWeb / RefinedWebModel, remote code) under FalconConfig's names, as transformers'
    Falcon port maps them (RefinedWeb implies the new decoder architecture)."""
    mtype = str(config.get("model_type") or "")
    if mtype not in ("RefinedWeb", "RefinedWebModel"):
        return config
    kwargs = {k: v for k, v in config.items() if k not in ("n_head", "n_layer", "n_head_kv")}
    kwargs.update(
        model_type="falcon",
        num_attention_heads=config["n_head"],
        num_hidden_layers=config["n_layer"],
        new_decoder_architecture=config.get("new_decoder_architecture", mtype == "RefinedWeb"),
    )
    if "n_head_kv" in config:
        kwargs["num_kv_heads"] = config["n_head_kv"]
    return kwargs


def _glm_port_kwargs(config: dict) -> dict[str, Any] | None:
    """A ChatGLM 2 / 3 / GLM-4 config (remote code) as transformers' native GLM class
    (``GlmForCausalLM``, its port of GLM-4) reads the same layout: fused qkv split into
    biased q/k/v of ``kv_channels`` heads, bias-free out projection and SwiGLU MLP,
    RMSNorms, a final norm. None for options that port does not have."""
    if config.get("add_bias_linear") or not config.get("add_qkv_bias"):
        return None
    if config.get("rmsnorm") is False or config.get("post_layer_norm") is False:
        return None
    heads = config["num_attention_heads"]
    grouped = config.get("multi_query_attention")
    return {
        "model_type": "glm",
        "vocab_size": config["padded_vocab_size"],
        "hidden_size": config["hidden_size"],
        "intermediate_size": config["ffn_hidden_size"],
        "num_hidden_layers": config["num_layers"],
        "num_attention_heads": heads,
        "num_key_value_heads": config["multi_query_group_num"] if grouped else heads,
        "head_dim": config["kv_channels"],
        "attention_bias": True,
        "tie_word_embeddings": bool(config.get("tie_word_embeddings", False)),
        "pad_token_id": None,
    }


def _same_layout_kwargs(config: dict) -> tuple[str, dict[str, Any]] | None:
    """A remote-code config as the transformers class with the same tensors reads it:
    Qwen v1 as Qwen2 (biased q/k/v, bias-free out projection and MLP; the MLP half as wide
    as Qwen v1's ``intermediate_size``), InternLM 2 and Baichuan as Llama (a fused qkv holds
    as many weights as q, k and v apart; InternLM 2's ``bias`` on wqkv and wo is Llama's
    ``attention_bias``). None when an option breaks the equivalence."""
    arch = (config.get("architectures") or [""])[0]
    heads = config["num_attention_heads"]
    common = {
        "vocab_size": config["vocab_size"],
        "hidden_size": config["hidden_size"],
        "num_hidden_layers": config["num_hidden_layers"],
        "num_attention_heads": heads,
        "tie_word_embeddings": bool(config.get("tie_word_embeddings", False)),
        "pad_token_id": None,
    }
    if config.get("model_type") == "qwen":
        if config.get("no_bias") is False or config.get("kv_channels") != (
            config["hidden_size"] // heads
        ):
            return None
        inter = config["intermediate_size"] // 2
        return "Qwen2ForCausalLM", {**common, "intermediate_size": inter, "model_type": "qwen2"}
    kv_heads = config.get("num_key_value_heads", heads)
    llama = {**common, "intermediate_size": config["intermediate_size"], "model_type": "llama"}
    if arch.startswith("InternLM2"):
        bias = config.get("bias", True) is not False
        return "LlamaForCausalLM", {
            **llama,
            "num_key_value_heads": kv_heads,
            "attention_bias": bias,
        }
    if arch in ("BaichuanForCausalLM", "BaiChuanForCausalLM"):
        return "LlamaForCausalLM", {**llama, "num_key_value_heads": heads}
    return None


def _meta_model(config: dict):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    if config.get("model_type") == "chatglm":
        glm = _glm_port_kwargs(config)
        if glm is None:
            pytest.skip("a ChatGLM option transformers' GLM port does not have")
        with torch.device("meta"):
            return transformers.GlmForCausalLM(transformers.GlmConfig(**glm))
    same = _same_layout_kwargs(config) if _is_remote_code(config) else None
    if same is not None:
        class_name, same_kwargs = same
        hf_config = transformers.AutoConfig.for_model(**same_kwargs)
        with torch.device("meta"):
            return getattr(transformers, class_name)(hf_config)
    kwargs = _hf_kwargs(config)
    if kwargs.get("model_type"):
        hf_config = transformers.AutoConfig.for_model(**kwargs)
    else:  # the trimmed Mistral copy has no model_type
        hf_config = transformers.MistralConfig(**kwargs)
    arch = (config.get("architectures") or ["MistralForCausalLM"])[0]
    with torch.device("meta"):
        if hasattr(transformers, arch):
            return getattr(transformers, arch)(hf_config)
        # The remote-code class names of the first checkpoints (RWForCausalLM,
        # MPTForCausalLM): transformers' own class for the model_type.
        return transformers.AutoModelForCausalLM.from_config(hf_config)


def _is_remote_code(config: dict) -> bool:
    arch = (config.get("architectures") or [""])[0]
    return config.get("model_type") in ("qwen", "baichuan", "internlm") or arch in (
        "BaiChuanForCausalLM",
        "BaichuanForCausalLM",
        "InternLM2ForCausalLM",
    )


def meta_total(config: dict) -> int:
    """Parameters transformers builds for ``config`` on the meta device (tied counted once)."""
    return sum(p.numel() for p in _meta_model(config).parameters())


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_reference_and_headers_against_transformers(path: Path, tmp_path: Path) -> None:
    entry = _reference().get(path.stem, {})
    if entry.get("remote_code") and not entry.get("transformers_port"):
        pytest.skip("trust_remote_code family: transformers has no class for it")
    config = json.loads(path.read_text())
    model = _meta_model(config)
    total = sum(p.numel() for p in model.parameters())
    if os.environ.get("UPDATE_REFERENCE"):
        data = _reference() if REFERENCE.exists() else {}
        entry = data.get(path.stem, {})
        if entry.get("transformers_port"):
            entry = {**entry, "transformers_port": type(model).__name__}
        else:
            entry = {**entry, "architecture": type(model).__name__}
        data[path.stem] = {**entry, "total": total}
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
