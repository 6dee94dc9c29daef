"""Config counts of quantized repos (FP8 block-scaled, GPTQ, AWQ) verified against the Hub's
per-dtype totals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardaudit.extract.config_count import count_from_config
from cardaudit.extract.linear_families import linear_families
from cardaudit.extract.quant_schemes import StorageScheme, scheme_of
from cardaudit.extract.quant_totals import verify_quantized


def gptq(bits: int, group: int) -> StorageScheme:
    scheme = scheme_of({"quant_method": "gptq", "bits": bits, "group_size": group})
    assert scheme is not None
    return scheme


def awq(bits: int, group: int) -> StorageScheme:
    scheme = scheme_of({"quant_method": "awq", "bits": bits, "group_size": group})
    assert scheme is not None
    return scheme


CONFIGS = Path(__file__).parent / "data" / "configs"
#: The Hub's ``safetensors`` totals (model_info) of deepseek-ai/DeepSeek-V3: FP8 weights,
#: BF16 embeddings / LM head / norms / routers, F32 weight_scale_inv blocks and routers'
#: e_score_correction_bias (61 layers + 1 MTP layer, 685B stored elements). Several public
#: copies of the API response (for V3 and R1, which share the architecture) give these
#: figures and ``"total": 684531386000``.
DEEPSEEK_V3_TOTALS = {"BF16": 3_918_786_560, "F8_E4M3": 680_571_043_840, "F32": 41_555_600}
HUB_TOTAL = 684_531_386_000


def _config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def test_deepseek_v3_fp8_count_is_proven_by_the_hub_totals() -> None:
    config = _config("deepseek-ai__DeepSeek-V3")
    assert sum(DEEPSEEK_V3_TOTALS.values()) == HUB_TOTAL
    verified = verify_quantized(config, DEEPSEEK_V3_TOTALS)
    assert verified is not None
    count = count_from_config(config)
    assert count is not None and count.total == 671_026_404_352  # transformers' count
    buffers = 59 * 256  # e_score_correction_bias: 58 MoE layers + the MTP layer
    assert verified.buffers == buffers
    assert verified.total == count.total_with_mtp + buffers == 684_489_845_504
    assert verified.mtp == count.components["mtp"]
    assert verified.quantized == DEEPSEEK_V3_TOTALS["F8_E4M3"]
    assert verified.scales == 41_540_496
    assert verified.by_dtype == {
        "BF16": 3_918_786_560,
        "F32": buffers,
        "F8_E4M3": 680_571_043_840,
    }


def test_any_failed_equation_rejects_the_count() -> None:
    config = _config("deepseek-ai__DeepSeek-V3")
    for dtype in DEEPSEEK_V3_TOTALS:
        for delta in (-1, 1):
            changed = DEEPSEEK_V3_TOTALS | {dtype: DEEPSEEK_V3_TOTALS[dtype] + delta}
            assert verify_quantized(config, changed) is None, (dtype, delta)
    assert verify_quantized(config, DEEPSEEK_V3_TOTALS | {"I64": 1}) is None
    other_block = json.loads(json.dumps(config))
    other_block["quantization_config"]["weight_block_size"] = [64, 64]
    assert verify_quantized(other_block, DEEPSEEK_V3_TOTALS) is None
    fewer_layers = config | {"num_hidden_layers": 60}
    assert verify_quantized(fewer_layers, DEEPSEEK_V3_TOTALS) is None


def test_only_fp8_block_quantization_is_verified() -> None:
    gptq_config = _config("repo__TheBloke__Genz-70b-GPTQ")
    assert gptq_config.get("quantization_config", {}).get("quant_method") == "gptq"
    assert verify_quantized(gptq_config, {"I32": 1, "F16": 1}) is None
    plain = _config("deepseek-ai__DeepSeek-V3")
    del plain["quantization_config"]
    assert verify_quantized(plain, DEEPSEEK_V3_TOTALS) is None
    assert verify_quantized(None, DEEPSEEK_V3_TOTALS) is None
    no_block = _config("deepseek-ai__DeepSeek-V3")
    no_block["quantization_config"]["weight_block_size"] = "128"
    assert verify_quantized(no_block, DEEPSEEK_V3_TOTALS) is None


#: The branch table of TheBloke/Genz-70b-GPTQ's model card (../shared/realworld): bits,
#: group size and the published size of each branch's safetensors file, in GB.
GENZ_BRANCHES = [(4, 128, "36.65"), (4, 32, "40.66"), (3, -1, "26.77"), (3, 128, "28.03")]


def _packed_totals(config: dict, scheme: StorageScheme, families, zero_biases: bool) -> dict:
    """The Hub's dtype totals for a checkpoint stored as cardaudit's equations say."""
    layout = linear_families(config)
    count = count_from_config(config)
    assert layout is not None and count is not None
    linears = layout.linears(families)
    stored = [elements for out, inp in linears if (elements := scheme.stored(out, inp))]
    assert len(stored) == len(linears)
    packed = sum(elements["I32"] for elements, _ in stored)
    scales = sum(s for _, s in stored)
    quantized = sum(out * inp for out, inp in linears)
    biases = sum(out for out, _ in linears) if zero_biases else 0
    return {"I32": packed, "F16": count.total - quantized + scales + biases}


@pytest.mark.parametrize(("bits", "group", "published"), GENZ_BRANCHES)
def test_packed_storage_equations_reproduce_published_gptq_sizes(
    bits: int, group: int, published: str
) -> None:
    """An outside check of the GPTQ equations (3-bit packing, g_idx, groups): the bytes they
    predict for Genz-70B's four branches round to the sizes TheBloke published, once the
    zero biases GPTQ-for-LLaMa / early AutoGPTQ wrote are counted; without them, none do."""
    config = _config("repo__TheBloke__Genz-70b-GPTQ")
    scheme = gptq(bits, group)
    families = ("attention", "dense_mlp")
    with_biases = _packed_totals(config, scheme, families, zero_biases=True)
    without = _packed_totals(config, scheme, families, zero_biases=False)
    size = lambda totals: f"{(4 * totals['I32'] + 2 * totals['F16']) / 1e9:.2f}"  # noqa: E731
    assert size(with_biases) == published
    assert size(without) != published


def test_genz_gptq_count_is_proven_by_its_totals() -> None:
    config = _config("repo__TheBloke__Genz-70b-GPTQ")
    count = count_from_config(config)
    assert count is not None
    scheme = gptq(4, 128)
    totals = _packed_totals(config, scheme, ("attention", "dense_mlp"), zero_biases=True)
    verified = verify_quantized(config, totals)
    assert verified is not None and verified.scheme == "gptq"
    assert verified.quantized_families == ("attention", "dense_mlp")  # not the LM head
    biases = 80 * (8192 + 1024 + 1024 + 8192 + 2 * 28672 + 8192)  # each quantized output
    assert verified.buffers == biases
    assert verified.total == count.total + biases
    assert verified.by_dtype == {
        "F16": count.total - verified.quantized + biases,
        "INT4": verified.quantized,
    }
    assert verified.quantized == 80 * (2 * 8192 * 8192 + 2 * 1024 * 8192 + 3 * 8192 * 28672)


def test_any_failed_packed_equation_rejects_the_count() -> None:
    config = _config("repo__TheBloke__Genz-70b-GPTQ")
    totals = _packed_totals(config, gptq(4, 128), ("attention", "dense_mlp"), True)
    assert verify_quantized(config, totals) is not None
    for dtype in totals:
        for delta in (-1, 1):
            changed = totals | {dtype: totals[dtype] + delta}
            assert verify_quantized(config, changed) is None, (dtype, delta)
    assert verify_quantized(config, totals | {"I8": 1}) is None
    assert verify_quantized(config, {"F16": totals["F16"]}) is None
    for change in (
        {"group_size": 64},
        {"bits": 3},
        {"checkpoint_format": "marlin"},
        {"pack_dtype": "int16"},
    ):
        other = json.loads(json.dumps(config))
        other["quantization_config"] |= change
        assert verify_quantized(other, totals) is None, change
    assert verify_quantized(config | {"num_hidden_layers": 79}, totals) is None


def test_awq_and_mtp_layers_stored_or_dropped() -> None:
    """DeepSeek-V3 in AWQ: MTP layers may be dropped; the count says which, exactly."""
    config = _config("deepseek-ai__DeepSeek-V3")
    config["quantization_config"] = {
        "quant_method": "awq",
        "bits": 4,
        "group_size": 128,
        "version": "gemm",
    }
    count = count_from_config(config)
    assert count is not None
    scheme = awq(4, 128)
    families = ("attention", "dense_mlp", "experts", "shared_experts")
    totals = _packed_totals(config, scheme, families, zero_biases=False)
    # The MTP layer dropped (count.total has no MTP); the e_score_correction_bias of the
    # 58 MoE decoder layers stored.
    buffers = 58 * 256
    dropped = totals | {"F16": totals["F16"] + buffers}
    verified = verify_quantized(config, dropped)
    assert verified is not None and verified.mtp == 0
    assert verified.total == count.total + buffers
    assert verified.quantized_families == families
    # The MTP layer kept and quantized like the decoder layers, with its bias buffer.
    kept = _packed_totals(config, scheme, (*families, "mtp"), zero_biases=False)
    kept["F16"] += count.components["mtp"] + 59 * 256
    verified = verify_quantized(config, kept)
    assert verified is not None and verified.mtp == count.components["mtp"]
    assert verified.total == count.total_with_mtp + 59 * 256
    assert "mtp" in verified.quantized_families


def _compressed(fmt: str = "pack-quantized", **weights) -> dict:
    base = {"num_bits": 4, "type": "int", "symmetric": True, "strategy": "group"}
    return {
        "quant_method": "compressed-tensors",
        "format": fmt,
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": base | weights}},
    }


def test_compressed_tensors_schemes_enumerated_and_refused() -> None:
    packed = scheme_of(_compressed(group_size=32))
    assert packed is not None and packed.label == "INT4"
    assert packed.stored(4096, 2048) == ({"I32": 4096 * 256, "I64": 2}, 4096 * 64)
    fp8 = scheme_of(_compressed("float-quantized", num_bits=8, type="float", strategy="channel"))
    assert fp8 is not None and fp8.stored(4096, 2048) == ({"F8_E4M3": 4096 * 2048}, 4096)
    block = _compressed("float-quantized", num_bits=8, type="float", strategy="block")
    block["config_groups"]["group_0"]["weights"]["block_structure"] = [128, 128]
    fp8_block = scheme_of(block)
    assert fp8_block is not None and fp8_block.stored(300, 200) == ({"F8_E4M3": 60_000}, 6)
    static = _compressed("int-quantized", num_bits=8, strategy="channel")
    static["config_groups"]["group_0"]["input_activations"] = {"dynamic": False}
    int8 = scheme_of(static)
    assert int8 is not None and int8.label == "I8"
    assert int8.stored(10, 20) == ({"I8": 200}, 10 + 1)  # + the static input_scale
    two_groups = _compressed(group_size=32)
    two_groups["config_groups"]["group_1"] = two_groups["config_groups"]["group_0"]
    refused = [
        _compressed(group_size=32, symmetric=False),  # zero points
        _compressed(group_size=32, actorder="group"),  # g_idx
        _compressed(strategy="group"),  # no group size
        _compressed(group_size=32, num_bits=3),
        _compressed("float-quantized", group_size=32),  # int weights in a float format
        _compressed("marlin-24", group_size=32),
        two_groups,
        _compressed(group_size=32) | {"kv_cache_scheme": {"num_bits": 8}},
    ]
    assert [scheme_of(quant) for quant in refused] == [None] * len(refused)


def _fp8_totals(config: dict, families: tuple[str, ...], with_mtp: bool = True) -> dict:
    """The dtype totals of an FP8 block-scaled checkpoint quantizing ``families``."""
    scheme = scheme_of({"quant_method": "fp8", "weight_block_size": [128, 128]})
    layout, count = linear_families(config), count_from_config(config)
    assert scheme is not None and layout is not None and count is not None
    stored = [scheme.stored(out, inp) for out, inp in layout.linears(families)]
    fp8 = sum(elements["F8_E4M3"] for elements, _ in stored if elements)
    scales = sum(n for _, n in stored)
    parameters = count.total_with_mtp if with_mtp else count.total
    return {"F8_E4M3": fp8, "BF16": parameters - fp8, "F32": scales}


@pytest.mark.parametrize("name", ["Qwen__Qwen3.6-35B-A3B", "Qwen__Qwen3.5-35B-A3B"])
def test_hybrid_attention_and_a_vision_tower_are_enumerated(name: str) -> None:
    """Qwen3.5 / 3.6: Gated DeltaNet layers beside gated full attention, a shared expert,
    an MTP layer and a vision tower (left unquantized): the layers' linears are the ones the
    config count counts, and an FP8 checkpoint's totals prove the count."""
    config = _config(name)
    layout, count = linear_families(config), count_from_config(config)
    assert layout is not None and count is not None
    text = config["text_config"]
    layers, interval = text["num_hidden_layers"], text["full_attention_interval"]
    assert len(layout.families["attention"]) == 4 * (layers // interval)
    assert len(layout.families["linear_attention"]) == 3 * (layers - layers // interval)
    assert sum(o * i for o, i in layout.linears(layout.families)) < count.total_with_mtp
    # One DeltaNet layer: its linears are what config_count counts, less the conv, the
    # per-head dt_bias / A_log and the gated norm.
    from cardaudit.extract.config_count import _attention, _linear_attention

    linear_layers = layers - layers // interval
    per_layer = sum(o * i for o, i in layout.linears(("linear_attention",)))
    per_layer += sum(o * i for o, i in layout.linears(("linear_attention_gates",)))
    key_dim = text["linear_num_key_heads"] * text["linear_key_head_dim"]
    value_heads, value_head_dim = text["linear_num_value_heads"], text["linear_value_head_dim"]
    conv = (2 * key_dim + value_heads * value_head_dim) * text["linear_conv_kernel_dim"]
    others = conv + 2 * value_heads + value_head_dim
    assert per_layer == linear_layers * (_linear_attention(text, text["hidden_size"]) - others)
    # A full-attention layer: gated q, k, v, o, as counted, less the q / k norms.
    full = sum(o * i for o, i in layout.linears(("attention",)))
    assert full == (layers // interval) * (_attention(text, "full") - 2 * text["head_dim"])
    families = ("attention", "experts", "linear_attention", "mtp", "shared_experts")
    verified = verify_quantized(
        config | {"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}},
        _fp8_totals(config, families),
    )
    assert verified is not None and verified.quantized_families == families
    assert verified.total == count.total_with_mtp
    assert verified.mtp == count.components["mtp"]


def test_the_families_are_a_partition_of_linear_weights_for_every_config() -> None:
    """For every real config that is enumerated, no linear is listed twice and all of
    them together stay within the config count."""
    for path in sorted(CONFIGS.glob("*.json")):
        config = json.loads(path.read_text())
        layout, count = linear_families(config), count_from_config(config)
        if layout is None or count is None:
            continue
        linear = sum(o * i for o, i in layout.linears(layout.families))
        assert 0 < linear <= count.total_with_mtp, path.name


JUNK = [None, "x", -1, 0, 1.5, [], {}, [1], {"a": 1}, True, 10**12, "128", 9_999, 65_536]


@pytest.mark.parametrize("name", ["deepseek-ai__DeepSeek-V3", "Qwen__Qwen3.6-35B-A3B"])
@pytest.mark.parametrize("method", ["fp8", "gptq", "awq", "compressed-tensors"])
def test_odd_config_values_never_raise(name: str, method: str) -> None:
    """Configs are untrusted input: any value in any field gives None or a count, never an
    exception and never a layer-by-layer walk over a billion layers (seeded, so the same
    cases run every time)."""
    import random

    rng = random.Random(f"{name}/{method}")
    for _ in range(20):
        config = _config(name)
        weights = {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32}
        quant = {
            "quant_method": method,
            "bits": 4,
            "group_size": 128,
            "weight_block_size": [128, 128],
            "format": "pack-quantized",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}},
        }
        config["quantization_config"] = quant
        text = config.get("text_config", config)
        for _ in range(3):
            target = rng.choice([text, quant, weights])
            key = rng.choice([k for k in target if k != "quantization_config"])
            target[key] = rng.choice(JUNK)
        totals = {"F8_E4M3": 10, "I32": 10, "BF16": 5, "F32": 3, "I64": 2}
        assert verify_quantized(config, totals) is None  # these totals fit nothing
        linear_families(config)
        count_from_config(config)


@pytest.mark.parametrize("name", ["deepseek-ai__DeepSeek-V3", "Qwen__Qwen3.6-35B-A3B"])
def test_every_config_field_with_every_odd_value(name: str) -> None:
    """One field at a time, each odd value: the config parsers never raise."""
    original = _config(name)
    fields = list(original.get("text_config", original))
    for field in fields:
        for value in JUNK:
            config = _config(name)
            config.get("text_config", config)[field] = value
            linear_families(config)
            count_from_config(config)
