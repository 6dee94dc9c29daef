"""The KV cache as it is served: its dtype, its parts, and the context it is sized for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.extract.memory import cache_dtype, kv_cache, max_context
from cardaudit.reporters.sizing import kv_cache_text

CONFIGS = Path(__file__).parent / "data" / "configs"
FIXTURES = Path(__file__).parents[1] / "fixtures"
REALWORLD = Path(__file__).parents[2] / "shared" / "realworld" / "repos"


def config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def test_an_fp32_checkpoint_is_served_with_a_bf16_cache() -> None:
    reflection = config("repo__mattshumer__Reflection-Llama-3.1-70B")
    assert reflection["torch_dtype"] == "float32"
    kv = kv_cache(reflection)
    # 80 layers x (K and V) x 8 KV heads x 128 head dim x 2 bytes (BF16), not 4 (FP32).
    assert kv["bytes_per_token"] == 80 * 2 * 8 * 128 * 2 == 327_680
    assert kv["dtype"] == "BF16"
    assert "float32" not in kv["dtype_from"] and "F32" in kv["dtype_from"]


def test_a_float16_model_keeps_an_fp16_cache() -> None:
    lzlv = config("repo__lizpreciatior__lzlv_70b_fp16_hf")
    assert cache_dtype(lzlv) == ("F16", "serving default for a float16 model")
    assert kv_cache(lzlv)["bytes_per_token"] == 80 * 2 * 8 * 128 * 2


@pytest.mark.parametrize(
    ("quantization", "why"),
    [
        (
            {
                "quant_method": "compressed-tensors",
                "kv_cache_scheme": {"num_bits": 8, "type": "float"},
            },
            "quantization_config.kv_cache_scheme (float, 8 bits)",
        ),
        (
            {"quant_method": "modelopt", "kv_cache_quant_algo": "FP8"},
            "quantization_config.kv_cache_quant_algo FP8",
        ),
    ],
)
def test_a_quantized_cache_is_fp8(quantization: dict, why: str) -> None:
    llama = {**config("meta-llama__Meta-Llama-3.1-8B"), "quantization_config": quantization}
    kv = kv_cache(llama)
    assert (kv["dtype"], kv["dtype_from"]) == ("F8_E4M3", why)
    assert kv["bytes_per_token"] == 32 * 2 * 8 * 128 * 1


def test_kv_dtype_option_wins() -> None:
    llama = config("meta-llama__Meta-Llama-3.1-8B")
    assert kv_cache(llama, "fp8")["bytes_per_token"] == 65_536
    assert kv_cache(llama, "fp32")["bytes_per_token"] == 262_144
    assert kv_cache(llama, "auto")["bytes_per_token"] == 131_072
    with pytest.raises(ValueError):
        kv_cache(llama, "int3")


def test_sliding_parts_are_parts_of_one_figure() -> None:
    gemma = kv_cache(config("google__gemma-2-9b-it"))
    text = kv_cache_text(gemma)
    assert text == (
        "344,064 B per token up to 4,096 tokens, of which full-attention layers 172,032 B "
        "(grow with the context) and sliding-window layers 172,032 B (capped at 4,096 "
        "tokens); beyond the window 172,032 B per token (BF16 cache, 8 KV heads × 256 head dim)"
    )
    assert " + " not in text
    phi3 = kv_cache(config("microsoft__Phi-3-mini-4k-instruct"))
    assert kv_cache_text(phi3).startswith(
        "393,216 B per token, all in sliding-window layers: capped at 2,047 tokens"
    )


@pytest.mark.parametrize(
    ("cfg", "field", "value"),
    [
        ({"n_positions": 2048, "n_embd": 4096}, "n_positions", 2048),  # GPT-J
        ({"seq_length": 32768, "hidden_size": 4096}, "seq_length", 32768),  # ChatGLM
        ({"max_sequence_length": 4096}, "max_sequence_length", 4096),
        ({"attn_config": {"max_seq_len": 8192}, "max_seq_len": 8192}, "max_seq_len", 8192),  # MPT
        ({"model_max_length": 4096}, "model_max_length", 4096),  # Baichuan
    ],
)
def test_context_from_every_config_field(cfg: dict, field: str, value: int) -> None:
    context = max_context(cfg)
    assert (context["field"], context["effective"], context["fields"][field]) == (
        field,
        value,
        value,
    )


def test_rope_scaling_extends_the_named_field() -> None:
    qwen1 = {"seq_length": 8192, "rope_scaling": {"type": "dynamic", "factor": 2.0}}
    assert max_context(qwen1)["effective"] == 16384


runner = CliRunner()


def test_kv_dtype_option_in_the_cli() -> None:
    model = str(FIXTURES / "clover" / "model")
    auto = json.loads(runner.invoke(app, ["audit", model, "-f", "json"]).output)
    fp8 = json.loads(runner.invoke(app, ["audit", model, "-f", "json", "--kv-dtype", "fp8"]).output)
    per_token = auto["facts"]["memory"]["kv_cache_bytes_per_token"]
    assert fp8["facts"]["memory"]["kv_cache_bytes_per_token"] * 2 == per_token
    assert fp8["facts"]["memory"]["details"]["kv_cache"]["dtype_from"] == "--kv-dtype fp8"
    bad = runner.invoke(app, ["audit", model, "--kv-dtype", "int3"])
    assert bad.exit_code == 2 and "unknown --kv-dtype" in bad.output


@pytest.mark.skipif(not REALWORLD.is_dir(), reason="../shared/realworld not present")
def test_reflection_text_report_shows_the_bf16_cache() -> None:
    result = runner.invoke(
        app,
        [
            "audit",
            str(REALWORLD / "mattshumer__Reflection-Llama-3.1-70B"),
            "--no-repo-config",
            "-f",
            "text",
        ],
        env={"NO_COLOR": "1", "COLUMNS": "200"},
    )
    assert "327,680 B per token (BF16 cache, 8 KV heads × 128 head dim)" in result.output


def _repo(tmp_path: Path, card: str, cfg: dict, **files: dict) -> Path:
    (tmp_path / "README.md").write_text(card)
    (tmp_path / "config.json").write_text(json.dumps(cfg, indent=2))
    for name, data in files.items():
        (tmp_path / name).write_text(json.dumps(data, indent=2))
    return tmp_path


#: nvidia/Qwen3-30B-A3B-NVFP4's hf_quant_config.json (ai-dynamo/aiconfigurator @ 473ce5b,
#: src/aiconfigurator/model_configs/nvidia--Qwen3-30B-A3B-NVFP4_hf_quant_config.json),
#: its 49 exclude_modules trimmed to two.
MODELOPT_NVFP4 = {
    "producer": {"name": "modelopt", "version": "0.33.0"},
    "quantization": {
        "quant_algo": "NVFP4",
        "kv_cache_quant_algo": "FP8",
        "group_size": 16,
        "exclude_modules": ["model.layers.0.mlp.gate", "lm_head"],
    },
}


def test_modelopt_hf_quant_config_makes_the_cache_fp8(tmp_path: Path) -> None:
    from cardaudit.pipeline import audit
    from cardaudit.policy import Policy
    from cardaudit.sources import AuditRequest

    card = "---\nlicense: apache-2.0\n---\n# Qwen3-30B-A3B NVFP4\n"
    repo = _repo(
        tmp_path,
        card,
        config("Qwen__Qwen3-30B-A3B"),
        **{"hf_quant_config.json": MODELOPT_NVFP4},
    )
    report = audit(AuditRequest(target=str(repo), code_discovery=False), Policy())
    kv = report.facts.memory.details["kv_cache"]
    assert (kv["dtype"], kv["dtype_from"]) == (
        "F8_E4M3",
        "hf_quant_config.json quantization.kv_cache_quant_algo FP8",
    )
    # 48 layers x (K and V) x 4 KV heads x 128 head dim x 1 byte
    assert report.facts.memory.kv_cache_bytes_per_token == 48 * 2 * 4 * 128 == 49_152
    (tmp_path / "hf_quant_config.json").unlink()
    plain = audit(AuditRequest(target=str(repo), code_discovery=False), Policy())
    assert plain.facts.memory.kv_cache_bytes_per_token == 98_304  # BF16 without it


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        ("上下文长度 128K", 131_072),
        ("最大上下文长度为32k。", 32_768),
        ("支持128K上下文窗口", 131_072),
        ("コンテキスト長は128kトークン", 131_072),
        ("컨텍스트 길이는 32K 토큰", 32_768),
        ("The model supports a 128K context.", 131_072),
    ],
)
def test_context_claims_in_prose(line: str, tokens: int) -> None:
    from cardaudit.extract.figures import figures_in
    from cardaudit.model import TextFile

    found = [f for f in figures_in(TextFile("README.md", line)) if f.kind == "context"]
    assert [f.value for f in found] == [tokens]


def test_a_chinese_context_claim_beyond_the_config_is_mem005(tmp_path: Path) -> None:
    from cardaudit.pipeline import audit
    from cardaudit.policy import Policy
    from cardaudit.sources import AuditRequest

    card = "---\nlicense: llama3\n---\n# 小模型\n\n上下文长度 128K，支持长文本。\n"
    llama3 = {**config("meta-llama__Meta-Llama-3.1-8B"), "max_position_embeddings": 8192}
    llama3["rope_scaling"] = None
    repo = _repo(tmp_path, card, llama3)
    report = audit(AuditRequest(target=str(repo), code_discovery=False), Policy())
    found = [f for f in report.findings if f.rule_id == "MEM005"]
    assert [(f.rule_id, f.severity, f.location.path, f.location.line) for f in found] == [
        ("MEM005", "warning", "README.md", 6)
    ]
    assert found[0].message == (
        "card states a context of 131,072 tokens ('上下文长度 128K'); config.json "
        "max_position_embeddings is 8,192 and no rope scaling is configured"
    )


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_sliding_parts_are_one_figure_in_every_report(tmp_path: Path, fmt: str) -> None:
    card = "---\nlicense: gemma\n---\n# Gemma 2 9B fine-tune\n"
    repo = _repo(tmp_path, card, config("google__gemma-2-9b-it"))
    result = runner.invoke(
        app,
        ["audit", str(repo), "--no-repo-config", "-f", fmt],
        env={"NO_COLOR": "1", "COLUMNS": "400"},
    )
    output = " ".join(result.output.split())
    expected = (
        "344,064 B per token up to 4,096 tokens, of which full-attention layers 172,032 B "
        "(grow with the context) and sliding-window layers 172,032 B (capped at 4,096 "
        "tokens); beyond the window 172,032 B per token"
    )
    assert expected in output, output[-3000:]
    assert output.count("172,032") == 3  # the parts are shown once, in that one figure
    assert "+ 172,032" not in output and "172,032 +" not in output


def test_rope_parameters_per_layer_type_extend_the_full_attention_context() -> None:
    # transformers 5 writes rope_parameters per layer type (Gemma 3): the full-attention
    # layers' YaRN factor is the one that extends the context
    cfg = {
        "max_position_embeddings": 32768,
        "rope_parameters": {
            "full_attention": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 32768,
                "rope_theta": 1000000.0,
            },
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
    }
    context = max_context(cfg)
    assert (context["effective"], context["rope_scaling"]["rope_type"]) == (131072, "yarn")
