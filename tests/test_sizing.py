"""Parameter counting of quantized and MoE layouts, KV cache, context, stated figures, GGUF."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cardaudit.extract.config_count import count_from_config
from cardaudit.extract.figures import figures_in
from cardaudit.extract.memory import kv_bytes_at, kv_cache, max_context
from cardaudit.extract.parameters import count_tensors, from_headers
from cardaudit.model import SafetensorsHeader, TensorInfo, TextFile
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest

CONFIGS = Path(__file__).parent / "data" / "configs"


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def header(*tensors: tuple[str, str, tuple[int, ...]]) -> SafetensorsHeader:
    return SafetensorsHeader(
        "model.safetensors",
        None,
        tuple(TensorInfo(n, d, s, "model.safetensors") for n, d, s in tensors),
    )


# --------------------------------------------------------------------------- quantized


def test_fp8_block_scales_are_storage_not_parameters() -> None:
    counted = count_tensors(
        header(
            ("model.layers.0.mlp.down_proj.weight", "F8_E4M3", (7168, 2048)),
            ("model.layers.0.mlp.down_proj.weight_scale_inv", "F32", (56, 16)),
            ("model.norm.weight", "BF16", (7168,)),
        ).tensors,
        {"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}},
    )
    assert counted["total"] == 7168 * 2048 + 7168
    assert counted["by_dtype"] == {"BF16": 7168, "F8_E4M3": 7168 * 2048}
    assert counted["aux_bytes"] == 56 * 16 * 4
    assert counted["stored_bytes"] == 7168 * 2048 + 56 * 16 * 4 + 7168 * 2


@pytest.mark.parametrize(
    "qweight_shape",
    [(4096 // 8, 11008), (4096, 11008 // 8)],  # GPTQ packs input rows, AWQ output columns
    ids=["gptq", "awq"],
)
def test_packed_int4_is_unpacked(qweight_shape: tuple[int, int]) -> None:
    counted = count_tensors(
        header(
            ("model.layers.0.mlp.up_proj.qweight", "I32", qweight_shape),
            ("model.layers.0.mlp.up_proj.qzeros", "I32", (32, 11008 // 8)),
            ("model.layers.0.mlp.up_proj.scales", "F16", (32, 11008)),
            ("model.layers.0.mlp.up_proj.g_idx", "I32", (4096,)),
        ).tensors,
        {"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}},
    )
    assert counted["total"] == 4096 * 11008
    assert counted["by_dtype"] == {"INT4": 4096 * 11008}
    assert counted["aux_tensors"] == 3


def test_3_bit_gptq_values_straddle_int32_words() -> None:
    """3-bit GPTQ packs 32 values into three int32 words: 32/3 per element, not 10."""
    counted = count_tensors(
        header(("model.layers.0.mlp.up_proj.qweight", "I32", (4096 * 3 // 32, 11008))).tensors,
        {"quantization_config": {"quant_method": "gptq", "bits": 3, "group_size": 128}},
    )
    assert counted["by_dtype"] == {"INT3": 4096 * 11008}


def test_mxfp4_blocks_hold_two_values_per_byte() -> None:
    gpt_oss = config("openai__gpt-oss-20b")
    facts = from_headers(
        [
            header(
                ("model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", (32, 5760, 90, 16)),
                ("model.layers.0.mlp.experts.gate_up_proj_scales", "U8", (32, 5760, 90)),
                ("model.layers.0.mlp.experts.gate_up_proj_bias", "BF16", (32, 5760)),
                ("model.layers.0.mlp.router.weight", "BF16", (32, 2880)),
            )
        ],
        gpt_oss,
    )
    experts = 32 * 5760 * 2880 + 32 * 5760
    assert facts.by_dtype["MXFP4"] == 32 * 5760 * 2880
    assert facts.details["experts"] == experts
    assert facts.active == 32 * 2880 + experts * 4 // 32


def test_per_expert_and_fused_layouts_give_the_same_active_count() -> None:
    mixtral = {"num_local_experts": 8, "num_experts_per_tok": 2, "num_hidden_layers": 1}
    per_expert = [
        (f"model.layers.0.block_sparse_moe.experts.{i}.w1.weight", "BF16", (64, 32))
        for i in range(8)
    ]
    fused = [("model.layers.0.mlp.experts.gate_up_proj", "BF16", (8, 64, 32))]
    core = [("model.embed_tokens.weight", "BF16", (100, 32))]
    a = from_headers([header(*per_expert, *core)], mixtral)
    b = from_headers([header(*fused, *core)], mixtral)
    assert a.total == b.total == 8 * 64 * 32 + 3200
    assert a.active == b.active == 3200 + 2 * 64 * 32


def test_mtp_and_vision_tensors_are_split_out() -> None:
    deepseek = config("deepseek-ai__DeepSeek-V3")
    facts = from_headers(
        [
            header(
                ("model.layers.60.self_attn.o_proj.weight", "BF16", (10, 10)),
                ("model.layers.61.eh_proj.weight", "BF16", (10, 20)),
                ("model.visual.blocks.0.attn.qkv.weight", "BF16", (3, 3)),
            )
        ],
        deepseek,
    )
    assert (facts.details["mtp"], facts.details["vision"]) == (200, 9)
    assert facts.details["language_model"] == 100


# --------------------------------------------------------------------------- KV cache


@pytest.mark.parametrize(
    ("name", "per_token", "sliding"),
    [
        ("meta-llama__Meta-Llama-3.1-8B", 32 * 2 * 8 * 128 * 2, 0),  # GQA
        ("mistralai__Mistral-7B-Instruct-v0.3", 32 * 2 * 8 * 128 * 2, 0),
        ("deepseek-ai__DeepSeek-V3", 61 * (512 + 64) * 2, 0),  # MLA compressed cache
        ("google__gemma-2-9b-it", 42 * 2 * 8 * 256 * 2, 21 * 2 * 8 * 256 * 2),  # 1:1 sliding
        ("Qwen__Qwen3.6-35B-A3B", 10 * 2 * 2 * 256 * 2, 0),  # 3 of 4 layers linear
    ],
)
def test_kv_cache_per_token(name: str, per_token: int, sliding: int) -> None:
    kv = kv_cache(config(name))
    assert kv["bytes_per_token"] == per_token
    assert kv["sliding_bytes_per_token"] == sliding


def test_sliding_window_caps_the_cache() -> None:
    kv = kv_cache(config("google__gemma-2-9b-it"))
    assert kv["sliding_window"] == 4096
    at_8k = kv_bytes_at(kv, 8192)
    full = kv["bytes_per_token"] - kv["sliding_bytes_per_token"]
    assert at_8k == full * 8192 + kv["sliding_bytes_per_token"] * 4096
    assert kv_bytes_at(kv, 8192, batch=8) == 8 * at_8k


def test_context_with_rope_scaling() -> None:
    llama = max_context(config("meta-llama__Meta-Llama-3.1-8B"))
    assert llama["max_position_embeddings"] == 131072 and llama["effective"] == 131072
    yarn = {"max_position_embeddings": 32768, "rope_scaling": {"type": "yarn", "factor": 4.0}}
    assert max_context(yarn)["effective"] == 131072
    gemma3 = max_context(config("google__medgemma-27b-it"))  # linear factor 8: already applied
    assert gemma3["effective"] == gemma3["max_position_embeddings"] == 131072


# --------------------------------------------------------------------------- figures


def figures(text: str) -> list[tuple[str, float]]:
    return [(f.kind, f.value) for f in figures_in(TextFile("README.md", text))]


def test_figures_from_prose_and_tables() -> None:
    text = (
        "# M\n\nIt has 35B\nparameters in total, of which about 3B are active.\n\n"
        "| Context length | 131,072 tokens |\n\n"
        "The BF16 weights need about 69 GB of memory and run on a single RTX 4090.\n"
    )
    found = figures(text)
    assert ("parameters_total", 35e9) in found
    assert ("parameters_active", 3e9) in found
    assert ("context", 131072) in found
    assert ("memory", 69e9) in found
    assert ("gpu", 24) in found


def test_figures_ignore_code_throughput_comparisons_and_gpu_capacities() -> None:
    text = (
        "```\nvllm serve m --max-model-len 32768  # needs 80GB\n```\n"
        "It generates 180 tokens/s and outperforms 70B models.\n"
        "Serve it on 2×80GB GPUs.\n"
    )
    found = figures(text)
    assert ("parameters_total", 70e9) not in found
    assert not [f for f in found if f[0] in ("memory", "context")]
    assert ("gpu", 160) in found


def test_table_rows_give_every_cell_and_round_numbers_are_coarse() -> None:
    text = (
        "| | Base | Chat | Mini | Large |\n"
        "|---|---|---|---|---|\n"
        "| # Parameters | 2.5B | 8.1B | **1.3B** | 3.3B |\n"
    )
    found = figures_in(TextFile("README.md", text))
    assert sorted(f.value for f in found) == [1.3e9, 2.5e9, 3.3e9, 8.1e9]
    assert {(f.line, f.cells) for f in found} == {(3, 5)}
    # the same line without a header and an alignment row is no table: one figure only
    [single] = figures_in(TextFile("README.md", text.splitlines()[2] + "\n"))
    assert (single.value, single.cells) == (2.5e9, 0)
    [active] = figures_in(TextFile("README.md", "It has 400M active parameters.\n"))
    assert active.precision == 50e6  # "400M" is rounded to the hundred million


# --------------------------------------------------------------------------- GGUF, bad input


def _card(folder: Path, body: str, title: str = "M") -> None:
    (folder / "README.md").write_text(f"---\nlicense: mit\n---\n\n# {title}\n\n{body}\n")


def test_gguf_header_only_file_is_counted(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    import numpy as np

    path = tmp_path / "model-Q8_0.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(1)
    writer.add_context_length(4096)
    writer.add_tensor("token_embd.weight", np.zeros((64, 32), dtype=np.float16))
    writer.add_tensor("blk.0.ffn_up.weight", np.zeros((96, 32), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    data = 64 * 32 * 2 + 96 * 32 * 4
    os.truncate(path, path.stat().st_size - data)  # keep the header only
    _card(tmp_path, "A tiny model with 2M parameters.")
    report = audit(AuditRequest(str(tmp_path)), Policy())
    params = report.facts.parameters
    assert params.source == "gguf"
    assert params.total == 64 * 32 + 96 * 32
    assert params.by_dtype == {"F16": 2048, "F32": 3072}
    assert report.facts.memory.weight_bytes == data
    [finding] = [f for f in report.findings if f.rule_id == "MEM001"]
    assert (finding.location.path, finding.location.line) == ("README.md", 7)


def test_corrupt_header_falls_back_to_config(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"\xff" * 64)
    (tmp_path / "config.json").write_text(
        (CONFIGS / "meta-llama__Meta-Llama-3.1-8B.json").read_text()
    )
    _card(tmp_path, "An 8B model.")
    report = audit(AuditRequest(str(tmp_path)), Policy())
    assert report.facts.parameters.source == "config"
    assert report.facts.parameters.total == 8_030_261_248
    assert [f.rule_id for f in report.findings if f.location.path == "model.safetensors"] == [
        "SRC003"
    ]
    assert all(run.outcome != "error" for run in report.checks)


def test_index_alone_with_config(tmp_path: Path) -> None:
    llama = config("meta-llama__Meta-Llama-3.1-8B")
    index = {"metadata": {"total_size": 8_030_261_248 * 2}, "weight_map": {"a": "x.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    (tmp_path / "config.json").write_text(json.dumps(llama))
    _card(tmp_path, "An 8B model.")
    report = audit(AuditRequest(str(tmp_path)), Policy())
    params = report.facts.parameters
    assert (params.source, params.total, params.by_dtype) == (
        "index",
        8_030_261_248,
        {"BF16": 8_030_261_248},
    )
    assert [f.rule_id for f in report.findings if f.rule_id.startswith("MEM")] == []
    assert {run.rule_id: run.note for run in report.checks}["MEM008"] == (
        "no shard is present: an index-only copy of the repo"
    )


def test_code_readme_figures_count_only_on_lines_naming_the_model(tmp_path: Path) -> None:
    model, code = tmp_path / "model", tmp_path / "code"
    model.mkdir()
    code.mkdir()
    (model / "config.json").write_text((CONFIGS / "meta-llama__Meta-Llama-3.1-8B.json").read_text())
    _card(model, "Fern-8B is an 8B parameter model.", title="Fern-8B")
    (code / "README.md").write_text(
        "# Family\n\nOur family has 70B parameter models.\n\nFern-8B has 80B parameters.\n"
    )
    report = audit(AuditRequest(str(model), code=str(code)), Policy())
    findings = [f for f in report.findings if f.rule_id == "MEM001"]
    assert [(f.location.repo, f.location.path, f.location.line) for f in findings] == [
        ("code", "README.md", 5)
    ]


@pytest.mark.parametrize(
    "odd",
    [
        {"hidden_size": "big", "num_hidden_layers": -1, "vocab_size": None},
        {"hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10, "layer_types": 5},
        {"hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10, "vision_config": []},
        {"text_config": "x", "quantization_config": {"bits": "four"}, "num_local_experts": 0},
        {"hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10, "rope_scaling": "yarn"},
    ],
)
def test_odd_configs_never_raise(odd: dict, tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(odd))
    _card(tmp_path, "A 1B model with 2GB of weights and a 128K context on a single T4.")
    report = audit(AuditRequest(str(tmp_path)), Policy())
    assert all(run.outcome != "error" for run in report.checks), report.checks
    assert "error" not in report.facts.parameters.details
    assert "error" not in report.facts.memory.details


def test_the_counted_gguf_model_is_never_a_projector() -> None:
    from cardaudit.extract.gguf_files import main_gguf_group

    paths = [
        "mmproj-F16.gguf",
        "Model-Q8_0-00002-of-00002.gguf",
        "Model-Q8_0-00001-of-00002.gguf",
        "Model-Q4_K_M.gguf",
    ]
    assert main_gguf_group(paths) == ["Model-Q4_K_M.gguf"]
    assert main_gguf_group(paths[:3]) == [
        "Model-Q8_0-00001-of-00002.gguf",
        "Model-Q8_0-00002-of-00002.gguf",
    ]
    assert main_gguf_group(["mmproj-F16.gguf"]) == ["mmproj-F16.gguf"]
    assert main_gguf_group([]) == []


@pytest.mark.parametrize(
    ("weight", "scale", "extras", "label"),
    [
        # NVIDIA ModelOpt NVFP4: U8 weight, E4M3 scale per 16 values, two F32 scalars.
        ("weight", ("F8_E4M3", (768, 128)), ("weight_scale_2", "input_scale"), "NVFP4"),
        # compressed-tensors nvfp4-pack-quantized: the same with other names.
        (
            "weight_packed",
            ("F8_E4M3", (768, 128)),
            ("weight_global_scale", "input_global_scale"),
            "NVFP4",
        ),
        # compressed-tensors MXFP4: E8M0 scale per 32 values.
        ("weight_packed", ("F8_E8M0", (768, 64)), (), "MXFP4"),
    ],
)
def test_fp4_weights_are_recognised_by_their_block_scales(
    weight: str, scale: tuple[str, tuple[int, int]], extras: tuple[str, ...], label: str
) -> None:
    """Two FP4 values per byte: without this, a 671B NVFP4 model counted as 336B and MEM001
    would call the card wrong. No quantization config is needed: the shapes say it."""
    prefix = "model.layers.0.mlp.experts.0.up_proj"
    counted = count_tensors(
        header(
            (f"{prefix}.{weight}", "U8", (768, 1024)),
            (f"{prefix}.weight_scale", scale[0], scale[1]),
            *((f"{prefix}.{extra}", "F32", ()) for extra in extras),
            ("model.norm.weight", "BF16", (2048,)),
        ).tensors,
        None,
    )
    assert counted["by_dtype"] == {label: 768 * 2048, "BF16": 2048}
    assert counted["aux_tensors"] == 1 + len(extras)


def test_u8_weights_without_fp4_scales_are_not_unpacked() -> None:
    counted = count_tensors(
        header(
            ("a.weight", "U8", (768, 1024)),
            ("a.weight_scale", "F8_E4M3", (768, 64)),  # one scale per 32: not NVFP4
            ("b.weight", "U8", (10, 10)),
        ).tensors,
        None,
    )
    assert counted["by_dtype"] == {"U8": 768 * 1024 + 100}


@pytest.mark.parametrize("double_quant", [False, True])
def test_bitsandbytes_4bit_weights_hold_two_values_a_byte(double_quant: bool) -> None:
    """A bitsandbytes 4-bit checkpoint (unsloth ``-bnb-4bit`` and the like) stores each
    linear as a flat U8 column beside its quant state; absmax (U8 under double quantization),
    quant maps and the state are storage."""
    prefix = "model.layers.0.self_attn.q_proj.weight"
    out, inp = 2048, 2048
    state = [
        (f"{prefix}.absmax", "U8" if double_quant else "F32", (out * inp // 64,)),
        (f"{prefix}.quant_map", "F32", (16,)),
        (f"{prefix}.quant_state.bitsandbytes__nf4", "U8", (85,)),
    ]
    if double_quant:
        state += [
            (f"{prefix}.nested_absmax", "F32", (out * inp // 64 // 256,)),
            (f"{prefix}.nested_quant_map", "F32", (256,)),
        ]
    counted = count_tensors(header((prefix, "U8", (out * inp // 2, 1)), *state).tensors, None)
    assert counted["by_dtype"] == {"NF4": out * inp}
    assert counted["aux_tensors"] == len(state)


def test_packed_storage_that_cannot_be_unpacked_falls_back_to_the_config_count() -> None:
    """EXL2 (and EXL3, HQQ...) pack a varying number of bits into I32 / I16 words: the
    header holds no logical shapes, so its elements are not counted as parameters."""
    from cardaudit.extract.parameters import parameter_facts
    from cardaudit.model import Evidence, RepoSnapshot, Target

    llama = config("meta-llama__Meta-Llama-3.1-8B")
    llama["quantization_config"] = {"quant_method": "exl2", "bits": 4.65}
    prefix = "model.layers.0.self_attn.q_proj"
    evidence = Evidence(
        Target("local", "m", None, None),
        RepoSnapshot(kind="local", id="m"),
        config=llama,
        safetensors=(
            header(
                (f"{prefix}.q_weight", "I32", (595, 4096)),
                (f"{prefix}.q_groups", "I16", (64,)),
                (f"{prefix}.q_scale", "I32", (16, 4096)),
                ("model.norm.weight", "F16", (4096,)),
            ),
        ),
    )
    facts = parameter_facts(evidence)
    expected = count_from_config(llama)
    assert expected is not None
    assert (facts.source, facts.total) == ("config", expected.total)
    assert f"{prefix}.q_weight" in facts.details["headers_not_counted"]
    assert "exl2" in facts.details["headers_not_counted"]
