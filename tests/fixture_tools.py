"""Build the small, real safetensors files and tokenizers the derivation fixtures use.

Run ``python tests/fixture_tools.py`` to regenerate them; the tensor data is zeros (the
audit reads headers only), so every file stays a few kilobytes.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
DTYPE_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4}


def write_safetensors(path: Path, tensors: dict[str, tuple[str, tuple[int, ...]]]) -> None:
    """A valid safetensors file: header with data offsets, then zero-filled data."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = DTYPE_BYTES[dtype]
        for dim in shape:
            size *= dim
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))


def llama_tensors(
    hidden: int, layers: int, intermediate: int, vocab: int, heads: int = 4, kv_heads: int = 2
) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Tensor names and shapes of a Llama-style decoder."""
    head_dim = hidden // heads
    tensors = {"model.embed_tokens.weight": ("BF16", (vocab, hidden))}
    for i in range(layers):
        p = f"model.layers.{i}"
        tensors |= {
            f"{p}.input_layernorm.weight": ("BF16", (hidden,)),
            f"{p}.self_attn.q_proj.weight": ("BF16", (heads * head_dim, hidden)),
            f"{p}.self_attn.k_proj.weight": ("BF16", (kv_heads * head_dim, hidden)),
            f"{p}.self_attn.v_proj.weight": ("BF16", (kv_heads * head_dim, hidden)),
            f"{p}.self_attn.o_proj.weight": ("BF16", (hidden, heads * head_dim)),
            f"{p}.post_attention_layernorm.weight": ("BF16", (hidden,)),
            f"{p}.mlp.gate_proj.weight": ("BF16", (intermediate, hidden)),
            f"{p}.mlp.up_proj.weight": ("BF16", (intermediate, hidden)),
            f"{p}.mlp.down_proj.weight": ("BF16", (hidden, intermediate)),
        }
    tensors["model.norm.weight"] = ("BF16", (hidden,))
    tensors["lm_head.weight"] = ("BF16", (vocab, hidden))
    return tensors


def llama_config(hidden: int, layers: int, intermediate: int, vocab: int) -> dict[str, object]:
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": intermediate,
        "vocab_size": vocab,
        "torch_dtype": "bfloat16",
    }


def tokenizer(vocab: list[str], specials: list[str]) -> dict[str, object]:
    """A minimal WordLevel tokenizer.json: ``vocab`` then ``specials`` as added tokens."""
    return {
        "version": "1.0",
        "added_tokens": [
            {"id": len(vocab) + i, "content": tok, "special": True}
            for i, tok in enumerate(specials)
        ],
        "model": {
            "type": "WordLevel",
            "vocab": {tok: i for i, tok in enumerate(vocab)},
            "unk_token": vocab[0],
        },
    }


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def build() -> None:
    words = ["<unk>"] + [f"w{i}" for i in range(249)]
    specials = ["<s>", "</s>"]
    # drv-shapes: a "fine-tune" with an extra layer, a wider MLP and renumbered tokens.
    base = FIXTURES / "drv-shapes" / "base"
    _write_json(base / "config.json", llama_config(32, 2, 64, 252))
    write_safetensors(base / "model.safetensors", llama_tensors(32, 2, 64, 252))
    _write_json(base / "tokenizer.json", tokenizer(words, specials))
    model = FIXTURES / "drv-shapes" / "model"
    config = llama_config(32, 3, 96, 253) | {"_name_or_path": "acme/toy-base-1b"}
    _write_json(model / "config.json", config)
    write_safetensors(model / "model.safetensors", llama_tensors(32, 3, 96, 253))
    swapped = [words[0], words[2], words[1], *words[3:]]
    _write_json(model / "tokenizer.json", tokenizer(swapped, [*specials, "<tool>"]))
    # drv-adapter: a base whose attention has q/k/v/o projections.
    adapter_base = FIXTURES / "drv-adapter" / "base"
    _write_json(adapter_base / "config.json", llama_config(32, 2, 64, 252))
    write_safetensors(adapter_base / "model.safetensors", llama_tensors(32, 2, 64, 252))


if __name__ == "__main__":
    build()
