"""Model repos for the test Hub: real safetensors headers over sparse shards, small texts.

Used by the Hub tests and by ``benchmarks/hub_fetch.py``. Shards are created in a temp dir
(never committed): a 70 GB shard costs a few KB of disk.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hub_server import FakeHub, write_sparse_safetensors

LICENCE = Path(__file__).resolve().parents[1] / "fixtures" / "clover" / "model" / "LICENSE"
WIDTH = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "I64": 8, "F8_E4M3": 1, "U8": 1}


def card(
    *,
    licence: str = "apache-2.0",
    base: str | list[str] | None = None,
    body: str = "A test model.\n",
) -> str:
    lines = ["---", f"license: {licence}"]
    if isinstance(base, list):
        lines += ["base_model:", *(f"  - {item}" for item in base)]
    elif base:
        lines.append(f"base_model: {base}")
    return "\n".join([*lines, "---", "", "# Test model", "", body])


def moe_tensors(
    layers: int, hidden: int, experts: int, expert_dim: int, vocab: int
) -> dict[str, tuple[str, list[int]]]:
    """A Qwen-style MoE with fused expert tensors (one header entry per matrix family)."""
    tensors: dict[str, tuple[str, list[int]]] = {
        "model.embed_tokens.weight": ("BF16", [vocab, hidden]),
        "lm_head.weight": ("BF16", [vocab, hidden]),
        "model.norm.weight": ("BF16", [hidden]),
    }
    for i in range(layers):
        prefix = f"model.layers.{i}"
        tensors |= {
            f"{prefix}.input_layernorm.weight": ("BF16", [hidden]),
            f"{prefix}.self_attn.q_proj.weight": ("BF16", [hidden, hidden]),
            f"{prefix}.self_attn.k_proj.weight": ("BF16", [hidden // 8, hidden]),
            f"{prefix}.self_attn.v_proj.weight": ("BF16", [hidden // 8, hidden]),
            f"{prefix}.self_attn.o_proj.weight": ("BF16", [hidden, hidden]),
            f"{prefix}.mlp.gate.weight": ("BF16", [experts, hidden]),
            f"{prefix}.mlp.experts.gate_up_proj": ("BF16", [experts, 2 * expert_dim, hidden]),
            f"{prefix}.mlp.experts.down_proj": ("BF16", [experts, hidden, expert_dim]),
        }
    return tensors


def moe_config(
    layers: int, hidden: int, experts: int, expert_dim: int, vocab: int, top_k: int = 8
) -> str:
    """A qwen3_moe config.json for :func:`moe_tensors` (config-based counts and active)."""
    config = {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": hidden // 128 or 1,
        "num_key_value_heads": max(hidden // 1024, 1),
        "head_dim": 128,
        "intermediate_size": 3 * hidden,
        "moe_intermediate_size": expert_dim,
        "num_experts": experts,
        "num_experts_per_tok": top_k,
        "vocab_size": vocab,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    return json.dumps(config, indent=2)


def per_expert_tensors(
    layers: int, hidden: int, experts: int, expert_dim: int, vocab: int
) -> dict[str, tuple[str, list[int]]]:
    """The same model with one tensor per expert matrix (three header entries per expert)."""
    tensors: dict[str, tuple[str, list[int]]] = {}
    for name, spec in moe_tensors(layers, hidden, experts, expert_dim, vocab).items():
        if ".mlp.experts." not in name:
            tensors[name] = spec
            continue
        if not name.endswith("gate_up_proj"):
            continue
        prefix = name.rsplit(".experts.", 1)[0] + ".experts"
        for expert in range(experts):
            for matrix, shape in (
                ("gate_proj", [expert_dim, hidden]),
                ("up_proj", [expert_dim, hidden]),
                ("down_proj", [hidden, expert_dim]),
            ):
                tensors[f"{prefix}.{expert}.{matrix}.weight"] = ("BF16", shape)
    return tensors


Tensors = dict[str, tuple[str, list[int]]]
#: Writes one linear (name, out, in, quantized?) as the tensors a checkpoint stores for it.
LinearWriter = Callable[[str, int, int, bool], Tensors]


def qwen3_moe_checkpoint(
    linear: LinearWriter,
    float_dtype: str,
    quantization: dict,
    *,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    experts: int,
    expert_dim: int,
    vocab: int,
    quantize_attention: bool = True,
) -> tuple[dict, Tensors]:
    """A quantized Qwen3-MoE checkpoint, one tensor per expert: attention and expert linears
    written by ``linear``; embeddings, LM head, routers and norms in ``float_dtype``.
    Returns (config, tensors)."""
    head_dim = hidden // heads
    config = {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": 3 * hidden,
        "moe_intermediate_size": expert_dim,
        "num_experts": experts,
        "num_experts_per_tok": 8,
        "vocab_size": vocab,
        "tie_word_embeddings": False,
        "torch_dtype": {"BF16": "bfloat16", "F16": "float16"}[float_dtype],
        "quantization_config": quantization,
    }
    tensors: Tensors = {
        "model.embed_tokens.weight": (float_dtype, [vocab, hidden]),
        "lm_head.weight": (float_dtype, [vocab, hidden]),
        "model.norm.weight": (float_dtype, [hidden]),
    }
    attention = quantize_attention
    for i in range(layers):
        p = f"model.layers.{i}"
        tensors |= {
            f"{p}.input_layernorm.weight": (float_dtype, [hidden]),
            f"{p}.post_attention_layernorm.weight": (float_dtype, [hidden]),
            f"{p}.self_attn.q_norm.weight": (float_dtype, [head_dim]),
            f"{p}.self_attn.k_norm.weight": (float_dtype, [head_dim]),
            **linear(f"{p}.self_attn.q_proj", heads * head_dim, hidden, attention),
            **linear(f"{p}.self_attn.k_proj", kv_heads * head_dim, hidden, attention),
            **linear(f"{p}.self_attn.v_proj", kv_heads * head_dim, hidden, attention),
            **linear(f"{p}.self_attn.o_proj", hidden, heads * head_dim, attention),
            f"{p}.mlp.gate.weight": (float_dtype, [experts, hidden]),
        }
        for e in range(experts):
            tensors |= linear(f"{p}.mlp.experts.{e}.gate_proj", expert_dim, hidden, True)
            tensors |= linear(f"{p}.mlp.experts.{e}.up_proj", expert_dim, hidden, True)
            tensors |= linear(f"{p}.mlp.experts.{e}.down_proj", hidden, expert_dim, True)
    return config, tensors


def fp8_moe(**shape: int) -> tuple[dict, Tensors]:
    """A Qwen3-MoE FP8 checkpoint laid out like the real ``-FP8`` releases: every attention
    and expert linear in F8_E4M3 with an F32 ``weight_scale_inv`` of 128x128 blocks, one
    tensor per expert; embeddings, LM head, router and norms in BF16. Returns (config,
    tensors)."""

    def fp8(name: str, out: int, inp: int, quantized: bool) -> Tensors:
        if not quantized:
            return {f"{name}.weight": ("BF16", [out, inp])}
        blocks = [-(-out // 128), -(-inp // 128)]
        return {
            f"{name}.weight": ("F8_E4M3", [out, inp]),
            f"{name}.weight_scale_inv": ("F32", blocks),
        }

    quantization = {
        "quant_method": "fp8",
        "fmt": "e4m3",
        "activation_scheme": "dynamic",
        "weight_block_size": [128, 128],
    }
    return qwen3_moe_checkpoint(fp8, "BF16", quantization, **shape)


def packed_int_moe(
    method: str,
    *,
    group: int = 64,
    quantize_attention: bool = True,
    zero_biases: bool = False,
    **shape: int,
) -> tuple[dict, Tensors]:
    """A Qwen3-MoE int4 checkpoint in GPTQ or AWQ (GEMM) layout, one tensor per expert, as
    the quantizers write it: each quantized linear becomes ``qweight`` (I32, eight int4 per
    element; GPTQ packs along the input, AWQ along the output), ``qzeros`` (I32, packed, one
    row per group), ``scales`` (F16, one row per group) and, for GPTQ, ``g_idx`` (I32, one
    per input). Embeddings, LM head, routers and norms stay F16. ``zero_biases``: a zero
    F16 ``bias`` beside every quantized linear, as older GPTQ tools wrote. Returns (config,
    tensors)."""
    quantization = {"quant_method": method, "bits": 4, "group_size": group}
    if method == "gptq":
        quantization |= {"desc_act": False, "sym": True, "checkpoint_format": "gptq"}
    else:
        quantization |= {"version": "gemm", "zero_point": True}

    def int4(name: str, out: int, inp: int, quantized: bool) -> Tensors:
        if not quantized:
            return {f"{name}.weight": ("F16", [out, inp])}
        groups = -(-inp // group)
        packed = [inp // 8, out] if method == "gptq" else [inp, out // 8]
        tensors: Tensors = {
            f"{name}.qweight": ("I32", packed),
            f"{name}.qzeros": ("I32", [groups, out // 8]),
            f"{name}.scales": ("F16", [groups, out]),
        }
        if method == "gptq":
            tensors[f"{name}.g_idx"] = ("I32", [inp])
        if zero_biases:
            tensors[f"{name}.bias"] = ("F16", [out])
        return tensors

    return qwen3_moe_checkpoint(
        int4, "F16", quantization, quantize_attention=quantize_attention, **shape
    )


def shard(tensors: dict[str, tuple[str, list[int]]], count: int) -> list[dict]:
    """Split tensors into ``count`` shards of about equal byte size, in order."""
    sizes = {name: _nbytes(dtype, shape) for name, (dtype, shape) in tensors.items()}
    target = sum(sizes.values()) / count
    shards: list[dict] = [{}]
    filled = 0
    for name, spec in tensors.items():
        if filled >= target and len(shards) < count:
            shards.append({})
            filled = 0
        shards[-1][name] = spec
        filled += sizes[name]
    return shards


def _nbytes(dtype: str, shape: list[int]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count * WIDTH[dtype]


def sharded_files(
    folder: Path, tensors: dict[str, tuple[str, list[int]]], count: int
) -> dict[str, bytes | str | Path]:
    """Sparse shard files plus their ``model.safetensors.index.json``."""
    files: dict[str, bytes | str | Path] = {}
    weight_map: dict[str, str] = {}
    total = 0
    parts = shard(tensors, count)
    for number, part in enumerate(parts, start=1):
        name = f"model-{number:05d}-of-{len(parts):05d}.safetensors"
        files[name] = write_sparse_safetensors(folder / name, part)
        weight_map |= dict.fromkeys(part, name)
        total += sum(_nbytes(dtype, shape) for dtype, shape in part.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    files["model.safetensors.index.json"] = json.dumps(index, indent=2)
    return files


def publish_model(
    hub: FakeHub,
    repo_id: str,
    folder: Path,
    *,
    readme: str | None = None,
    tensors: dict[str, tuple[str, list[int]]] | None = None,
    shards: int = 2,
    extra: dict[str, bytes | str | Path] | None = None,
    **options,
) -> str:
    """Commit a complete small model repo to ``hub``; return the commit sha."""
    tensors = tensors or moe_tensors(layers=2, hidden=64, experts=4, expert_dim=32, vocab=128)
    files: dict[str, bytes | str | Path] = {
        "README.md": readme or card(),
        "LICENSE": LICENCE.read_bytes(),
        "config.json": json.dumps({"model_type": "qwen3_moe", "num_hidden_layers": 2}),
        "generation_config.json": json.dumps({"temperature": 0.7}),
        "tokenizer_config.json": json.dumps({"model_max_length": 32768}),
        "tokenizer.json": json.dumps({"model": {"vocab": {}}}),
        "pytorch_model.bin": write_sparse_safetensors(
            folder / "pytorch_model.bin", {"w": ("BF16", [1 << 29])}
        ),
        **sharded_files(folder, tensors, shards),
        **(extra or {}),
    }
    return hub.commit(repo_id, files, **options)


def compressed_tensors_moe(
    fmt: str, *, group: int = 32, quantize_attention: bool = True, **shape: int
) -> tuple[dict, Tensors]:
    """A Qwen3-MoE checkpoint in a compressed-tensors format, one tensor per expert, as
    llm-compressor writes it: ``pack-quantized`` (symmetric int4, group scales: I32
    ``weight_packed`` with eight values per element, BF16 ``weight_scale``, I64
    ``weight_shape``) or ``float-quantized`` (FP8 weights, one BF16 scale per output
    channel, dynamic activations). The rest stays BF16. Returns (config, tensors)."""
    packed = fmt == "pack-quantized"
    weights = {
        "num_bits": 4 if packed else 8,
        "type": "int" if packed else "float",
        "symmetric": True,
        "strategy": "group" if packed else "channel",
        "group_size": group if packed else None,
        "dynamic": False,
        "actorder": None,
        "observer": "minmax",
    }
    inputs = None if packed else {"num_bits": 8, "type": "float", "dynamic": True}
    quantization = {
        "quant_method": "compressed-tensors",
        "format": fmt,
        "quantization_status": "compressed",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": weights,
                "input_activations": inputs,
                "output_activations": None,
            }
        },
        "ignore": ["lm_head", "re:.*mlp.gate$"],
        "kv_cache_scheme": None,
    }

    def linear(name: str, out: int, inp: int, quantized: bool) -> Tensors:
        if not quantized:
            return {f"{name}.weight": ("BF16", [out, inp])}
        if packed:
            return {
                f"{name}.weight_packed": ("I32", [out, inp // 8]),
                f"{name}.weight_scale": ("BF16", [out, -(-inp // group)]),
                f"{name}.weight_shape": ("I64", [2]),
            }
        return {
            f"{name}.weight": ("F8_E4M3", [out, inp]),
            f"{name}.weight_scale": ("BF16", [out, 1]),
        }

    return qwen3_moe_checkpoint(
        linear, "BF16", quantization, quantize_attention=quantize_attention, **shape
    )


def nvfp4_moe(fmt: str, *, quantize_attention: bool = True, **shape: int) -> tuple[dict, Tensors]:
    """A Qwen3-MoE NVFP4 checkpoint, one tensor per expert, as NVIDIA ModelOpt (``fmt``
    ``modelopt``: U8 ``weight``, E4M3 ``weight_scale`` per 16 values, F32 scalars
    ``weight_scale_2`` and ``input_scale``) or llm-compressor (``nvfp4-pack-quantized``:
    ``weight_packed``, ``weight_scale``, ``weight_global_scale``, ``input_global_scale``)
    write it. The rest stays BF16. Returns (config, tensors)."""
    if fmt == "modelopt":
        quantization: dict = {
            "quant_method": "modelopt",
            "quant_algo": "NVFP4",
            "group_size": 16,
            "kv_cache_quant_algo": None,
            "exclude_modules": ["lm_head", "model.layers.*.mlp.gate"],
        }
        names = ("weight", "weight_scale", ("weight_scale_2", "input_scale"))
    else:
        fp4 = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}
        quantization = {
            "quant_method": "compressed-tensors",
            "format": fmt,
            "config_groups": {
                "group_0": {
                    "targets": ["Linear"],
                    "weights": {**fp4, "symmetric": True, "dynamic": False},
                    "input_activations": {**fp4, "dynamic": "local"},
                }
            },
            "ignore": ["lm_head", "re:.*mlp.gate$"],
        }
        names = ("weight_packed", "weight_scale", ("weight_global_scale", "input_global_scale"))

    def linear(name: str, out: int, inp: int, quantized: bool) -> Tensors:
        if not quantized:
            return {f"{name}.weight": ("BF16", [out, inp])}
        weight, scale, scalars = names
        tensors: Tensors = {
            f"{name}.{weight}": ("U8", [out, inp // 2]),
            f"{name}.{scale}": ("F8_E4M3", [out, inp // 16]),
        }
        for scalar in scalars:
            tensors[f"{name}.{scalar}"] = ("F32", [] if fmt == "modelopt" else [1])
        return tensors

    return qwen3_moe_checkpoint(
        linear, "BF16", quantization, quantize_attention=quantize_attention, **shape
    )
