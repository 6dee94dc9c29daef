"""Config counts of FP8 block-scaled repos verified against the Hub's per-dtype totals."""

from __future__ import annotations

import json
from pathlib import Path

from cardaudit.extract.config_count import count_from_config
from cardaudit.extract.quant_totals import verify_fp8_block

CONFIGS = Path(__file__).parent / "data" / "configs"
#: The Hub's ``safetensors`` totals (model_info) of deepseek-ai/DeepSeek-V3: FP8 weights,
#: BF16 embeddings / LM head / norms / routers, F32 weight_scale_inv blocks and routers'
#: e_score_correction_bias (61 layers + 1 MTP layer, 685B stored elements).
DEEPSEEK_V3_TOTALS = {"BF16": 3_918_786_560, "F8_E4M3": 680_571_043_840, "F32": 41_555_600}


def _config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def test_deepseek_v3_fp8_count_is_proven_by_the_hub_totals() -> None:
    config = _config("deepseek-ai__DeepSeek-V3")
    verified = verify_fp8_block(config, DEEPSEEK_V3_TOTALS)
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
            assert verify_fp8_block(config, changed) is None, (dtype, delta)
    assert verify_fp8_block(config, DEEPSEEK_V3_TOTALS | {"I64": 1}) is None
    other_block = json.loads(json.dumps(config))
    other_block["quantization_config"]["weight_block_size"] = [64, 64]
    assert verify_fp8_block(other_block, DEEPSEEK_V3_TOTALS) is None
    fewer_layers = config | {"num_hidden_layers": 60}
    assert verify_fp8_block(fewer_layers, DEEPSEEK_V3_TOTALS) is None


def test_only_fp8_block_quantization_is_verified() -> None:
    gptq = _config("repo__TheBloke__Genz-70b-GPTQ")
    assert gptq.get("quantization_config", {}).get("quant_method") == "gptq"
    assert verify_fp8_block(gptq, {"I32": 1, "F16": 1}) is None
    plain = _config("deepseek-ai__DeepSeek-V3")
    del plain["quantization_config"]
    assert verify_fp8_block(plain, DEEPSEEK_V3_TOTALS) is None
    assert verify_fp8_block(None, DEEPSEEK_V3_TOTALS) is None
    no_block = _config("deepseek-ai__DeepSeek-V3")
    no_block["quantization_config"]["weight_block_size"] = "128"
    assert verify_fp8_block(no_block, DEEPSEEK_V3_TOTALS) is None
