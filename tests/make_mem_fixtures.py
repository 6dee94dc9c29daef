"""Regenerate the weight stubs of the MEM fixtures (needs torch and transformers).

    PYTHONPATH=src:tests python tests/make_mem_fixtures.py

Tensor names and shapes come from transformers models built on the meta device; shards are
header-only stubs (fixtures/clover, fixtures/mem-gib) or tiny real files (the mem-shards and
mem-index-stale fixtures, whose models are a few thousand parameters).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from stub_weights import write_repo, write_shard

ROOT = Path(__file__).resolve().parents[1] / "fixtures"


def meta_tensors(config: dict, arch: str, dtype: str, *, parameters_only: bool = False) -> dict:
    import torch
    import transformers

    hf_config = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        model = getattr(transformers, arch)(hf_config)
    items = model.named_parameters() if parameters_only else model.state_dict().items()
    return {name: (dtype, tuple(tensor.shape)) for name, tensor in items}


def clear(folder: Path) -> None:
    for path in folder.glob("*.safetensors"):
        path.unlink()


def clover() -> None:
    for repo, arch in (
        ("model", "Qwen3_5MoeForCausalLM"),
        ("base", "Qwen3_5MoeForConditionalGeneration"),
    ):
        folder = ROOT / "clover" / repo
        clear(folder)
        config = json.loads((folder / "config.json").read_text())
        write_repo(folder, meta_tensors(config, arch, "BF16"), shard_bytes=5 * 10**9)


def mem_gib() -> None:
    folder = ROOT / "mem-gib" / "model"
    clear(folder)
    config = json.loads((folder / "config.json").read_text())
    tensors = meta_tensors(config, "BloomForCausalLM", "BF16", parameters_only=True)
    write_repo(folder, tensors, shard_bytes=5 * 10**9)


def tiny(folder: Path, dtype: str) -> dict:
    config = json.loads((folder / "config.json").read_text())
    return meta_tensors(config, "LlamaForCausalLM", dtype, parameters_only=True)


def mem_shards() -> None:
    """Three shards in the index: one complete, one cut short, one absent."""
    folder = ROOT / "mem-shards" / "model"
    clear(folder)
    index = write_repo(folder, tiny(folder, "F32"), shard_bytes=80_000, sparse=True)
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) == 3, shards
    second = folder / shards[1]
    os.truncate(second, second.stat().st_size - 1000)
    (folder / shards[2]).unlink()


def mem_index_stale() -> None:
    """Two complete shards; the index's total_size and weight_map are out of date."""
    folder = ROOT / "mem-index-stale" / "model"
    clear(folder)
    index = write_repo(folder, tiny(folder, "BF16"), shard_bytes=60_000, sparse=True)
    index["metadata"]["total_size"] += 4096
    first = sorted(set(index["weight_map"].values()))[0]
    index["weight_map"]["model.layers.0.self_attn.rotary_emb.inv_freq"] = first
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")


def tiny_names(config: dict) -> dict[str, tuple[int, ...]]:
    """Parameter names and shapes of a LlamaForCausalLM with ``config`` (no torch needed)."""
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    head = hidden // config["num_attention_heads"]
    kv = config["num_key_value_heads"] * head
    shapes: dict[str, tuple[int, ...]] = {
        "model.embed_tokens.weight": (config["vocab_size"], hidden)
    }
    for n in range(config["num_hidden_layers"]):
        layer = f"model.layers.{n}"
        shapes |= {
            f"{layer}.self_attn.q_proj.weight": (hidden, hidden),
            f"{layer}.self_attn.k_proj.weight": (kv, hidden),
            f"{layer}.self_attn.v_proj.weight": (kv, hidden),
            f"{layer}.self_attn.o_proj.weight": (hidden, hidden),
            f"{layer}.mlp.gate_proj.weight": (inter, hidden),
            f"{layer}.mlp.up_proj.weight": (inter, hidden),
            f"{layer}.mlp.down_proj.weight": (hidden, inter),
            f"{layer}.input_layernorm.weight": (hidden,),
            f"{layer}.post_attention_layernorm.weight": (hidden,),
        }
    shapes |= {"model.norm.weight": (hidden,), "lm_head.weight": (config["vocab_size"], hidden)}
    return shapes


def mem_bin_shards() -> None:
    """An older upload: pytorch_model.bin.index.json and .bin shards, the third one absent.

    The .bin files stand in for torch zip checkpoints: only their sizes are evidence (the
    audit never opens a .bin), each its tensors' F16 bytes plus a plausible pickle and zip
    overhead (1,024 bytes a shard, 320 a tensor)."""
    from math import prod

    folder = ROOT / "mem-bin-shards" / "model"
    for path in folder.glob("*.bin"):
        path.unlink()
    config = json.loads((folder / "config.json").read_text())
    shapes = tiny_names(config)
    layers = config["num_hidden_layers"]

    def shard_of(name: str) -> int:
        if name.startswith("model.layers."):
            return 1 if int(name.split(".")[2]) < layers // 2 else 2
        return 1 if name == "model.embed_tokens.weight" else 3

    names = [f"pytorch_model-{n:05d}-of-00003.bin" for n in (1, 2, 3)]
    weight_map = {name: names[shard_of(name) - 1] for name in sorted(shapes)}
    total = sum(prod(shape) * 2 for shape in shapes.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "pytorch_model.bin.index.json").write_text(json.dumps(index, indent=2) + "\n")
    for shard in names[:2]:
        tensors = [name for name, file in weight_map.items() if file == shard]
        size = sum(prod(shapes[t]) * 2 for t in tensors) + 1024 + 320 * len(tensors)
        (folder / shard).write_bytes(bytes(size))


if __name__ == "__main__":
    clover()
    mem_gib()
    mem_shards()
    mem_index_stale()
    mem_bin_shards()
    _ = write_shard  # re-exported for callers that build single files
