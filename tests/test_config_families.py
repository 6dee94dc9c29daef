"""The older families' config-only counts: layout variants transformers builds (checked
against its meta-device count when torch is installed), variants no counter describes
(no count, and a reason), KV-head geometry, and the quantized-bytes path that must say
"not derivable" for them rather than use a Llama layout.

Every variant is a real config of ``tests/data/configs`` with the named fields changed.
``tests/data/reference_variant_counts.json`` holds transformers' counts of the counted
variants (regenerate with ``UPDATE_REFERENCE=1``, torch and transformers installed).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cardaudit.extract.config_count import count_from_config, head_dims, not_counted_reason
from cardaudit.extract.linear_families import linear_families, named_linears
from cardaudit.extract.stored_bytes import derive_stored_bytes
from test_param_reference import meta_total

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
VARIANT_REFERENCE = DATA / "reference_variant_counts.json"


def config(name: str, **changes: Any) -> dict[str, Any]:
    base = json.loads((CONFIGS / f"{name}.json").read_text())
    for key, value in changes.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


#: Layout options transformers builds, each on a real config (name: (config, changes)).
COUNTED_VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    # Falcon-RW-1B style: sequential attention (two norms), MHA, biases, ALiBi.
    "falcon-sequential-biased-alibi": (
        "transformers-defaults__tiiuae__falcon-7b",
        {"parallel_attn": False, "multi_query": False, "bias": True, "alibi": True},
    ),
    # Falcon-11B style: new decoder architecture with one norm before attention and MLP.
    "falcon-new-architecture-one-norm": (
        "transformers-defaults__tiiuae__falcon-7b",
        {"new_decoder_architecture": True, "num_kv_heads": 8, "num_ln_in_parallel_attn": 1},
    ),
    "falcon-untied-ffn": (
        "transformers-defaults__tiiuae__falcon-7b",
        {"tie_word_embeddings": False, "ffn_hidden_size": 16384},
    ),
    "gpt-neox-without-attention-bias": (
        "transformers-defaults__EleutherAI__gpt-neox-20b",
        {"attention_bias": False, "tie_word_embeddings": True},
    ),
    "gpt-j-explicit-inner": ("transformers-defaults__EleutherAI__gpt-j-6b", {"n_inner": 8192}),
    # OPT-350m's shape: a 512-wide embedding projected in and out, post-norm layers.
    "opt-350m-shape": (
        "transformers-defaults__OPTConfig",
        {
            "hidden_size": 1024,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "ffn_dim": 4096,
            "word_embed_proj_dim": 512,
            "do_layer_norm_before": False,
        },
    ),
    "opt-without-bias-or-final-norm": (
        "transformers-defaults__OPTConfig",
        {"enable_bias": False, "_remove_final_layer_norm": True},
    ),
    "gpt-bigcode-multi-head": (
        "transformers-defaults__bigcode__gpt_bigcode-santacoder",
        {"multi_query": False, "n_inner": 2048},
    ),
    "mpt-untied": ("mosaicml__mpt-7b", {"tie_word_embeddings": False}),
    # Remote-code families, rebuilt through the transformers class with the same tensors.
    "chatglm-multi-head": ("THUDM__chatglm3-6b", {"multi_query_attention": False}),
    "internlm2-biased": ("repo__NanSang2000__S1mpleAgent", {"bias": True}),
    "baichuan-13b-shape": (
        "baichuan-inc__Baichuan-7B",
        {
            "hidden_size": 5120,
            "num_hidden_layers": 40,
            "num_attention_heads": 40,
            "intermediate_size": 13696,
        },
    ),
}

#: Variants no counter describes: (config, changes, words the reason must contain).
UNCOUNTED_VARIANTS: dict[str, tuple[str, dict[str, Any], str]] = {
    "falcon-three-norms": (
        "tiiuae__falcon-40b-instruct",
        {"num_ln_in_parallel_attn": 3},
        "num_ln_in_parallel_attn",
    ),
    "falcon-odd-head-dim": ("tiiuae__falcon-7b", {"head_dim": 128}, "head_dim"),
    "gpt-neox-no-intermediate": (
        "transformers-defaults__EleutherAI__gpt-neox-20b",
        {"intermediate_size": None},
        "intermediate_size",
    ),
    "gpt-j-uneven-heads": ("transformers-defaults__EleutherAI__gpt-j-6b", {"n_head": 15}, "heads"),
    "mpt-expansion-8": ("mosaicml__mpt-7b", {"expansion_ratio": 8}, "expansion_ratio"),
    "mpt-biases": ("mosaicml__mpt-7b", {"no_bias": False}, "biases"),
    "mpt-learned-positions": (
        "mosaicml__mpt-7b",
        {"attn_config": {"alibi": False, "attn_type": "multihead_attention"}},
        "learned positions",
    ),
    "mpt-grouped-query": (
        "mosaicml__mpt-7b",
        {"attn_config": {"alibi": True, "attn_type": "grouped_query_attention"}},
        "attn_type",
    ),
    "opt-no-ffn": ("transformers-defaults__OPTConfig", {"ffn_dim": None}, "ffn_dim"),
    "gpt-bigcode-cross-attention": (
        "transformers-defaults__bigcode__gpt_bigcode-santacoder",
        {"add_cross_attention": True},
        "cross-attention",
    ),
    "baichuan-grouped-kv": ("baichuan-inc__Baichuan-7B", {"num_key_value_heads": 8}, "key/value"),
    # The first ChatGLM-6B: GLM blocks, 2D positions, no padded_vocab_size / ffn_hidden_size.
    "chatglm-first-generation": (
        "THUDM__chatglm3-6b",
        {
            "padded_vocab_size": None,
            "ffn_hidden_size": None,
            "inner_hidden_size": 16384,
            "position_encoding_2d": True,
        },
        "first ChatGLM-6B",
    ),
    "glm-4v-vision-tower": (
        "THUDM__chatglm3-6b",
        {"vision_config": {"hidden_size": 1792, "num_hidden_layers": 63}},
        "tower",
    ),
    "internlm-grouped-kv": (
        "repo__NanSang2000__S1mpleAgent",
        {"architectures": ["InternLMForCausalLM"]},
        "key/value",
    ),
    "internlm2-no-intermediate": (
        "repo__NanSang2000__S1mpleAgent",
        {"intermediate_size": None},
        "intermediate_size",
    ),
    "qwen-vl-visual-tower": ("Qwen__Qwen-7B", {"visual": {"layers": 48, "width": 1664}}, "visual"),
    "qwen-odd-intermediate": ("Qwen__Qwen-7B", {"intermediate_size": 22017}, "odd"),
    "falcon-inside-a-multimodal-wrapper": (
        "tiiuae__falcon-7b",
        {"text_config": {"model_type": "falcon", "hidden_size": 4544}},
        "another tower",
    ),
}


def _variant_reference() -> dict[str, int]:
    return json.loads(VARIANT_REFERENCE.read_text()) if VARIANT_REFERENCE.exists() else {}


def test_variant_reference_covers_every_counted_variant() -> None:
    assert sorted(_variant_reference()) == sorted(COUNTED_VARIANTS)


@pytest.mark.parametrize("name", sorted(COUNTED_VARIANTS))
def test_counted_variant_matches_transformers(name: str) -> None:
    base, changes = COUNTED_VARIANTS[name]
    variant = config(base, **changes)
    count = count_from_config(variant)
    assert count is not None, not_counted_reason(variant)
    assert count.total == _variant_reference()[name]


@pytest.mark.parametrize("name", sorted(COUNTED_VARIANTS))
def test_variant_reference_against_transformers(name: str) -> None:
    base, changes = COUNTED_VARIANTS[name]
    total = meta_total(config(base, **changes))  # skips without torch / transformers
    if os.environ.get("UPDATE_REFERENCE"):
        data = {**_variant_reference(), name: total}
        VARIANT_REFERENCE.write_text(json.dumps(dict(sorted(data.items())), indent=2) + "\n")
    assert _variant_reference()[name] == total


@pytest.mark.parametrize("name", sorted(UNCOUNTED_VARIANTS))
def test_unknown_variant_gives_no_count_and_says_why(name: str) -> None:
    base, changes, words = UNCOUNTED_VARIANTS[name]
    variant = config(base, **changes)
    assert count_from_config(variant) is None
    reason = not_counted_reason(variant)
    assert reason is not None and words in reason, reason


def test_internlm2_is_told_apart_by_its_class_name() -> None:
    real = config("repo__NanSang2000__S1mpleAgent")
    assert real["model_type"] == "internlm"
    renamed = config("repo__NanSang2000__S1mpleAgent", model_type="internlm2")
    count, same = count_from_config(real), count_from_config(renamed)
    assert count is not None and same is not None
    assert count.family == same.family == "internlm2"
    assert count.total == same.total == 7_737_708_544


def test_internlm_first_generation_counts_q_k_v_o_biases() -> None:
    # The InternLM2 config as InternLM (1) would read it, without GQA: the Llama layout
    # with a bias on each of q, k, v and o.
    variant = config(
        "repo__NanSang2000__S1mpleAgent",
        architectures=["InternLMForCausalLM"],
        num_key_value_heads=None,
        bias=True,
    )
    count = count_from_config(variant)
    assert count is not None and count.family == "internlm"
    llama = config(
        "repo__NanSang2000__S1mpleAgent",
        model_type="llama",
        architectures=["LlamaForCausalLM"],
        num_key_value_heads=None,
    )
    llama_count = count_from_config(llama)
    assert llama_count is not None
    assert count.total == llama_count.total + 32 * 4 * 4096


@pytest.mark.parametrize("spelling", ["Yi", "yi"])
def test_yi_is_counted_as_the_llama_layout_it_is(spelling: str) -> None:
    llama = config("meta-llama__Meta-Llama-3.1-8B")
    yi = config(
        "meta-llama__Meta-Llama-3.1-8B", model_type=spelling, architectures=["YiForCausalLM"]
    )
    yi_count, llama_count = count_from_config(yi), count_from_config(llama)
    assert yi_count is not None and llama_count is not None
    assert yi_count.total == llama_count.total == 8_030_261_248
    assert yi_count.components == llama_count.components


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tiiuae__falcon-7b", (71, 1, 64)),  # multi-query
        ("tiiuae__falcon-40b-instruct", (128, 8, 64)),  # new decoder architecture
        ("transformers-defaults__tiiuae__falcon-7b", (71, 1, 64)),
        ("THUDM__chatglm3-6b", (32, 2, 128)),  # multi_query_group_num, kv_channels
        ("Qwen__Qwen-7B", (32, 32, 128)),
        ("repo__NanSang2000__S1mpleAgent", (32, 8, 128)),
        ("transformers-defaults__bigcode__gpt_bigcode-santacoder", (12, 1, 64)),
        ("mosaicml__mpt-7b", (32, 32, 128)),
        ("transformers-defaults__EleutherAI__gpt-j-6b", (16, 16, 256)),
    ],
)
def test_head_geometry_of_the_older_families(name: str, expected: tuple[int, int, int]) -> None:
    assert head_dims(config(name)) == expected


@pytest.mark.parametrize(
    "name",
    [
        "tiiuae__falcon-7b",
        "THUDM__chatglm3-6b",
        "Qwen__Qwen-7B",
        "repo__NanSang2000__S1mpleAgent",
        "baichuan-inc__Baichuan-7B",
        "mosaicml__mpt-7b",
        "transformers-defaults__EleutherAI__gpt-neox-20b",
    ],
)
def test_quantized_bytes_are_not_derived_from_a_llama_layout(name: str) -> None:
    gptq = config(
        name,
        quantization_config={"quant_method": "gptq", "bits": 4, "group_size": 128},
    )
    count = count_from_config(gptq)
    assert count is not None
    assert linear_families(gptq) is None and named_linears(gptq) is None
    assert derive_stored_bytes(gptq, count) is None
    plain = config(name, torch_dtype="bfloat16")
    derived = derive_stored_bytes(plain, count)
    assert derived is not None and derived.bytes == 2 * count.total


@pytest.mark.parametrize(
    ("name", "per_token"),
    [
        ("tiiuae__falcon-7b", 2 * 1 * 64 * 32 * 2),  # one KV head (multi_query)
        ("tiiuae__falcon-40b-instruct", 2 * 8 * 64 * 60 * 2),
        ("THUDM__chatglm3-6b", 2 * 2 * 128 * 28 * 2),  # two KV groups
        ("Qwen__Qwen-7B", 2 * 32 * 128 * 32 * 2),
        ("mosaicml__mpt-7b", 2 * 32 * 128 * 32 * 2),  # d_model / n_heads / n_layers
        ("transformers-defaults__bigcode__gpt_bigcode-santacoder", 2 * 1 * 64 * 12 * 2),
    ],
)
def test_kv_cache_per_token_of_the_older_families(name: str, per_token: int) -> None:
    from cardaudit.extract.memory import kv_cache

    found = kv_cache(config(name))
    assert found is not None and found["bytes_per_token"] == per_token


def test_a_bin_index_listing_the_tied_head_twice(tmp_path: Path) -> None:
    """tiiuae/falcon-7b's own pytorch_model.bin.index.json (tests/data/indexes, provenance
    in configs/PROVENANCE.md): total_size counts the tied head beside the embeddings, so
    total_size / 2 is 295,469,056 over the parameters; the count and the derived bytes
    take that copy into account (never unpickling a .bin)."""
    from cardaudit.extract.memory import memory_facts
    from cardaudit.extract.parameters import parameter_facts
    from cardaudit.sources import local_evidence

    (tmp_path / "config.json").write_text((CONFIGS / "tiiuae__falcon-7b.json").read_text())
    index = DATA / "indexes" / "tiiuae__falcon-7b.pytorch_model.bin.index.json"
    (tmp_path / "pytorch_model.bin.index.json").write_text(index.read_text())
    evidence = local_evidence(str(tmp_path))
    params = parameter_facts(evidence)
    assert params.source == "index"
    assert params.details["dtype_inferred"] == "BF16"
    assert params.details["tied_head_stored_twice"] == 65_024 * 4_544
    assert params.total == 6_921_720_704
    weights = memory_facts(evidence, params, kv_batch=8).details["weights"]
    assert weights["bytes"] == 14_434_379_520
    assert weights["derived"]["difference"] == 0
