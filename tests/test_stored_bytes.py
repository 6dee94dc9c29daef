"""Stored bytes derived from config.json, format by format, against figures the files or
their publishers state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardaudit.extract.config_count import count_from_config
from cardaudit.extract.linear_families import linear_families, named_linears
from cardaudit.extract.memory import memory_facts
from cardaudit.extract.parameters import parameter_facts
from cardaudit.extract.stored_bytes import derive_stored_bytes
from cardaudit.sources import local_evidence

CONFIGS = Path(__file__).parent / "data" / "configs"
FIXTURES = Path(__file__).parents[1] / "fixtures"
REALWORLD = Path(__file__).parents[2] / "shared" / "realworld" / "repos"
#: deepseek-ai/DeepSeek-V3's per-dtype totals on the Hub (see test_quant_totals.py).
DEEPSEEK_V3_TOTALS = {"BF16": 3_918_786_560, "F8_E4M3": 680_571_043_840, "F32": 41_555_600}


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def derived(cfg: dict):
    count = count_from_config(cfg)
    assert count is not None
    result = derive_stored_bytes(cfg, count)
    assert result is not None
    return result


def test_fp8_block_with_mtp_layer_equals_the_hub_totals_in_bytes() -> None:
    hub_bytes = (
        2 * DEEPSEEK_V3_TOTALS["BF16"]
        + DEEPSEEK_V3_TOTALS["F8_E4M3"]
        + 4 * DEEPSEEK_V3_TOTALS["F32"]
    )
    for name in ("deepseek-ai__DeepSeek-V3", "repo__deepseek-ai__DeepSeek-R1"):
        result = derived(config(name))
        assert result.bytes == hub_bytes == 688_574_839_360
        assert result.with_mtp
        assert result.parts["quantized_weights"] == DEEPSEEK_V3_TOTALS["F8_E4M3"]
        assert "fp8-block" in result.method and "MTP layers included" in result.method


def test_gptq_scales_zeros_g_idx_and_unquantized_layers() -> None:
    """TheBloke/Genz-70b-GPTQ's card states 36.65 GB for the main branch (4-bit, 128g)."""
    result = derived(config("repo__TheBloke__Genz-70b-GPTQ"))
    assert f"{result.bytes / 1e9:.2f}" == "36.65"
    assert result.bytes == 36_652_007_424
    quantized = 80 * (2 * 8192 * 8192 + 2 * 1024 * 8192 + 3 * 8192 * 28672)
    assert result.parts["quantized_parameters"] == quantized
    assert result.parts["quantized_weights"] == quantized // 2
    # embeddings + LM head + norms stay 16-bit: 2 x 32000 x 8192 + (2 x 80 + 1) x 8192
    assert result.parts["unquantized"] == 2 * (2 * 32000 * 8192 + 161 * 8192)
    assert result.alternative == 36_638_572_544  # newer tools: no zero biases
    assert not result.with_mtp


@pytest.mark.parametrize(
    ("name", "exact", "card_gib"),
    [
        ("openai__gpt-oss-120b", 65_248_815_744, "60.8"),
        ("openai__gpt-oss-20b", 13_761_264_768, "12.8"),
    ],
)
def test_mxfp4_honours_modules_to_not_convert(name: str, exact: int, card_gib: str) -> None:
    """OpenAI's gpt-oss card gives the checkpoint sizes (60.8 GiB, 12.8 GiB); the config
    count at 4 bits (the old derivation) was 10-24% short of them."""
    cfg = config(name)
    result = derived(cfg)
    assert result.bytes == exact
    assert f"{result.bytes / 2**30:.1f}" == card_gib
    count = count_from_config(cfg)
    assert count is not None and count.total * 0.5 < 0.9 * result.bytes
    # Attention, routers, embeddings and LM head are in modules_to_not_convert: BF16.
    experts = [lin for lin in named_linears(cfg) or [] if lin.family == "experts"]
    expert_values = sum(o * i for o, i in (lin.shape for lin in experts))
    assert result.parts["quantized_parameters"] == expert_values
    assert result.parts["unquantized"] == 2 * (count.total - expert_values)


def test_per_layer_and_glob_exclusions_are_honoured() -> None:
    llama = config("meta-llama__Meta-Llama-3.1-8B")
    layer = 4096 * 4096 * 2 + 1024 * 4096 * 2 + 3 * 4096 * 14336
    int8 = {"quant_method": "bitsandbytes", "load_in_8bit": True}
    whole = derived({**llama, "quantization_config": int8})
    assert whole.parts["quantized_parameters"] == 32 * layer
    # one byte a value + an F32 scale per output row (LLM.int8() SCB)
    rows = 32 * (4096 + 1024 + 1024 + 4096 + 2 * 14336 + 4096)
    assert whole.parts["quantized_weights"] == 32 * layer
    assert whole.parts["scales_zeros_indices"] == 4 * rows
    skip_first = {**int8, "llm_int8_skip_modules": ["lm_head", "model.layers.0"]}
    partial = derived({**llama, "quantization_config": skip_first})
    assert partial.parts["quantized_parameters"] == 31 * layer
    assert partial.bytes - whole.bytes == layer * (2 - 1) - 4 * rows // 32
    assert "32 left unconverted" not in partial.method and "7 left unconverted" in partial.method
    globbed = {**int8, "llm_int8_skip_modules": ["model.layers.*.self_attn"]}
    no_attention = derived({**llama, "quantization_config": globbed})
    assert no_attention.parts["quantized_parameters"] == 32 * 3 * 4096 * 14336
    regex = {
        "quant_method": "compressed-tensors",
        "format": "float-quantized",
        "ignore": ["lm_head", "re:.*mlp.down_proj$"],
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": {"num_bits": 8, "type": "float", "strategy": "channel"},
            }
        },
    }
    ct = derived({**llama, "quantization_config": regex})
    assert ct.parts["quantized_parameters"] == 32 * (layer - 4096 * 14336)


def test_bitsandbytes_4bit_blocks_and_double_quantization() -> None:
    llama = config("meta-llama__Meta-Llama-3.1-8B")
    nf4 = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
    single = derived({**llama, "quantization_config": nf4})
    double = derived({**llama, "quantization_config": {**nf4, "bnb_4bit_use_double_quant": True}})
    values = single.parts["quantized_parameters"]
    assert single.parts["quantized_weights"] == values // 2
    assert single.parts["scales_zeros_indices"] == 4 * values // 64 + 4 * 16 * 224
    assert double.bytes < single.bytes
    assert "NF4" in single.method


def test_unknown_quantization_is_not_derived() -> None:
    llama = config("meta-llama__Meta-Llama-3.1-8B")
    count = count_from_config(llama)
    assert count is not None
    exl2 = {**llama, "quantization_config": {"quant_method": "exl2", "bits": 4}}
    assert derive_stored_bytes(exl2, count) is None


def test_named_linears_partition_like_linear_families() -> None:
    for path in sorted(CONFIGS.glob("*.json")):
        cfg = json.loads(path.read_text())
        layout, named = linear_families(cfg), named_linears(cfg)
        if layout is None:
            continue
        assert named is not None, path.stem
        grouped: dict[str, list] = {}
        for linear in named:
            if linear.family != "mtp_projection":
                grouped.setdefault(linear.family, []).append(linear.shape)
        expected = {k: sorted(v) for k, v in layout.families.items() if k != "mtp_projection"}
        assert {k: sorted(v) for k, v in grouped.items()} == expected, path.stem


def _repos_with_a_stored_size() -> list[Path]:
    repos = [p.parent for p in FIXTURES.glob("*/*/model.safetensors.index.json")]
    if REALWORLD.is_dir():
        repos += [p.parent for p in REALWORLD.glob("*/*.index.json")]
    return sorted(set(repos))


@pytest.mark.parametrize(
    "repo", _repos_with_a_stored_size(), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_derived_bytes_within_half_a_percent_of_the_stored_size(repo: Path) -> None:
    evidence = local_evidence(str(repo))
    params = parameter_facts(evidence)
    weights = memory_facts(evidence, params, kv_batch=8).details.get("weights")
    if weights is None or "derived" not in weights:
        # no stored size (an index without total_size) or a config the counter refuses:
        # then the facts say why there is no figure
        assert params.source in (None, "config") or params.details.get("config_not_counted"), (
            repo,
            params.source,
        )
        return
    assert abs(weights["derived"]["difference"]) <= 0.005, (repo, weights)


def test_a_bin_index_is_json_evidence_like_the_safetensors_index() -> None:
    """fixtures/mem-bin-index: pytorch_model.bin.index.json and no config.json."""
    from cardaudit.pipeline import audit
    from cardaudit.policy import Policy
    from scenarios import scenario_request

    report = audit(scenario_request("mem-bin-index"), Policy())
    params, memory = report.facts.parameters, report.facts.memory
    assert params.source == "index"
    assert params.details["index"] == "pytorch_model.bin.index.json"
    assert params.total == 6_738_415_616  # total_size / 2 (no config: BF16/F16 assumed)
    assert "assumed" in params.details["dtype_assumed"]
    assert memory.weight_bytes == 13_476_831_232
    assert memory.details["weights"]["from"] == "pytorch_model.bin.index.json total_size"
    mem = [f for f in report.findings if f.rule_id.startswith("MEM")]
    assert [(f.rule_id, f.severity, f.location.path, f.location.line) for f in mem] == [
        ("MEM003", "warning", "README.md", 10)
    ]
    assert "13.5 GB" in mem[0].message and "in F16" not in mem[0].message


def test_an_index_total_size_keeps_the_config_dtype_of_the_same_width() -> None:
    """total_size gives the width only: an F16 config's 2-byte total stays F16 (not BF16)."""
    from cardaudit.extract.index_count import from_index

    config = {
        "model_type": "llama",
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 256,
        "tie_word_embeddings": False,
        "torch_dtype": "float16",
    }
    index = {"metadata": {"total_size": 107_072}, "weight_map": {}}
    facts = from_index(index, config, "pytorch_model.bin.index.json")
    assert facts.by_dtype == {"F16": 53_536}
    assert facts.details["dtype_inferred"] == "F16" and "config_dtype" not in facts.details
    float32 = from_index({"metadata": {"total_size": 214_144}}, config)
    assert float32.by_dtype == {"F32": 53_536} and float32.details["config_dtype"] == "F16"
