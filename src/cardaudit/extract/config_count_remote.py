"""Config-only counts of families whose checkpoints ship their own modeling code
(``trust_remote_code``): Baichuan 1 / 2, ChatGLM 2 / 3 / GLM-4, InternLM 1 / 2 and Qwen
(v1). transformers has no class for them, so each counter follows the layout of the
family's published ``modeling_*.py`` (read as reference, never run); the figures are
checked against checkpoint indexes and published totals (see
docs/parameters-and-memory.md). Variants those files do not describe get no count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cardaudit.extract.config_count_older import dense_count, sizes, standard_shape, tied
from cardaudit.extract.config_fields import ConfigCount, _int, architecture, model_type


def _no_grouped_kv(cfg: Mapping[str, Any], heads: int, family: str) -> str | None:
    kv_heads = _int(cfg, "num_key_value_heads")
    if kv_heads and kv_heads != heads:
        return (
            f"{family} config declares {kv_heads} key/value heads for {heads} query heads: "
            f"{family}'s own code has no grouped-query attention, so this is another layout"
        )
    return None


def count_baichuan(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """Baichuan 1 / 2 (``modeling_baichuan.py``): a fused bias-free ``W_pack`` (q, k, v),
    ``o_proj``, a gated SiLU MLP, RMSNorms and an untied head (Baichuan 2's NormHead has
    the same (vocab, hidden) weight). RoPE (7B) and ALiBi (13B) add no parameter."""
    shape = standard_shape(cfg)
    if isinstance(shape, str):
        return shape
    hidden, layers, vocab, heads = shape
    inter = _int(cfg, "intermediate_size")
    if not inter:
        return "Baichuan config has no intermediate_size"
    grouped = _no_grouped_kv(cfg, heads, "Baichuan")
    if grouped:
        return grouped
    return dense_count(
        "baichuan",
        embeddings=vocab * hidden,
        lm_head=0 if tied(cfg, False) else vocab * hidden,
        attention_and_norms=layers * (4 * hidden * hidden + 2 * hidden) + hidden,
        mlp=layers * 3 * hidden * inter,
    )


def count_chatglm(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """ChatGLM 2 / 3 and GLM-4 (``modeling_chatglm.py``): ``padded_vocab_size``
    embeddings and ``output_layer``; a fused ``query_key_value`` of ``num_attention_heads
    × kv_channels`` queries and ``multi_query_group_num`` KV groups (all heads without
    ``multi_query_attention``), biased under ``add_qkv_bias`` or ``add_bias_linear``; a
    ``dense`` out projection and a SwiGLU MLP (``ffn_hidden_size``) biased under
    ``add_bias_linear``; RMSNorm or LayerNorm (``rmsnorm``), a final norm under
    ``post_layer_norm``. ``original_rope`` / ``rope_ratio`` add no parameter. The first
    ChatGLM-6B (2D positions, no ``padded_vocab_size``) and GLM-4V (a vision tower) are
    other layouts."""
    if not cfg.get("padded_vocab_size") or not cfg.get("ffn_hidden_size"):
        return (
            "ChatGLM config lacks padded_vocab_size or ffn_hidden_size: the first ChatGLM-6B "
            "layout (2D positions, GLM blocks) is not counted here"
        )
    if isinstance(cfg.get("vision_config"), Mapping):
        return "ChatGLM config has a vision tower (GLM-4V): its EVA-CLIP tower is not counted"
    found = sizes(cfg, ("hidden_size",), ("num_layers", "num_hidden_layers"))
    if isinstance(found, str):
        return found
    hidden, layers, _ = found
    vocab = _int(cfg, "padded_vocab_size") or 0
    heads = _int(cfg, "num_attention_heads")
    if not heads:
        return "ChatGLM config has no num_attention_heads"
    head_dim = _int(cfg, "kv_channels", default=hidden // heads) or hidden // heads
    projection = heads * head_dim
    groups = (
        (_int(cfg, "multi_query_group_num", default=1) or 1)
        if cfg.get("multi_query_attention")
        else heads
    )
    qkv = projection + 2 * groups * head_dim
    ffn = _int(cfg, "ffn_hidden_size") or 0
    linear_bias = bool(cfg.get("add_bias_linear", False))
    qkv_bias = linear_bias or bool(cfg.get("add_qkv_bias", False))
    norm = hidden if cfg.get("rmsnorm", True) is not False else 2 * hidden
    attention = hidden * qkv + (qkv if qkv_bias else 0)
    attention += projection * hidden + (hidden if linear_bias else 0)
    mlp = 3 * hidden * ffn + (2 * ffn + hidden if linear_bias else 0)
    final_norm = norm if cfg.get("post_layer_norm", True) is not False else 0
    return dense_count(
        "chatglm",
        embeddings=vocab * hidden,
        lm_head=0 if tied(cfg, False) else vocab * hidden,
        attention_and_norms=layers * (attention + 2 * norm) + final_norm,
        mlp=layers * mlp,
    )


def count_internlm(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """InternLM (first generation, ``modeling_internlm.py``): the Llama layout with biases
    on q/k/v/o under ``bias`` (true in the 7B), no grouped-query attention."""
    shape = standard_shape(cfg)
    if isinstance(shape, str):
        return shape
    hidden, layers, vocab, heads = shape
    inter = _int(cfg, "intermediate_size")
    if not inter:
        return "InternLM config has no intermediate_size"
    grouped = _no_grouped_kv(cfg, heads, "InternLM")
    if grouped:
        return grouped
    bias = 4 * hidden if cfg.get("bias", True) is not False else 0
    return dense_count(
        "internlm",
        embeddings=vocab * hidden,
        lm_head=0 if tied(cfg, False) else vocab * hidden,
        attention_and_norms=layers * (4 * hidden * hidden + bias + 2 * hidden) + hidden,
        mlp=layers * 3 * hidden * inter,
    )


def count_internlm2(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """InternLM 2 / 2.5 (``modeling_internlm2.py``): a fused ``wqkv`` of ``(heads + 2 ×
    kv_heads) × head_dim`` and ``wo``, biased under ``bias``; a bias-free gated MLP (w1,
    w3, w2); RMSNorms; ``tok_embeddings`` and an untied ``output``."""
    shape = standard_shape(cfg)
    if isinstance(shape, str):
        return shape
    hidden, layers, vocab, heads = shape
    inter = _int(cfg, "intermediate_size")
    if not inter:
        return "InternLM2 config has no intermediate_size"
    head_dim = hidden // heads
    kv_heads = _int(cfg, "num_key_value_heads", default=heads) or heads
    qkv = (heads + 2 * kv_heads) * head_dim
    bias = qkv + hidden if cfg.get("bias", True) is not False else 0
    attention = hidden * qkv + heads * head_dim * hidden + bias
    return dense_count(
        "internlm2",
        embeddings=vocab * hidden,
        lm_head=0 if tied(cfg, False) else vocab * hidden,
        attention_and_norms=layers * (attention + 2 * hidden) + hidden,
        mlp=layers * 3 * hidden * inter,
    )


def count_qwen(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """Qwen v1 (``modeling_qwen.py``, model_type ``qwen``): ``c_attn`` (q, k, v of
    ``num_attention_heads × kv_channels``) always with a bias, ``c_proj`` and the MLP (w1,
    w2 of ``intermediate_size / 2`` each, then c_proj) biased unless ``no_bias``; RMSNorms;
    an untied head. Qwen-VL (a ``visual`` tower) is another layout."""
    if isinstance(cfg.get("visual"), Mapping):
        return "Qwen config has a visual tower (Qwen-VL): its ViT and resampler are not counted"
    found = sizes(cfg, ("hidden_size", "n_embd"), ("num_hidden_layers", "n_layer"))
    if isinstance(found, str):
        return found
    hidden, layers, vocab = found
    heads = _int(cfg, "num_attention_heads", "n_head")
    if not heads:
        return "Qwen config has no num_attention_heads"
    head_dim = _int(cfg, "kv_channels", default=hidden // heads) or hidden // heads
    projection = heads * head_dim
    doubled = _int(cfg, "intermediate_size", "ffn_hidden_size")
    if not doubled or doubled % 2:
        return "Qwen config's intermediate_size is missing or odd (its MLP width is half of it)"
    width = doubled // 2
    bias = cfg.get("no_bias", True) is False
    attention = hidden * 3 * projection + 3 * projection  # c_attn always has a bias
    attention += hidden * projection + (projection if bias else 0)
    mlp = 3 * hidden * width + (2 * width + hidden if bias else 0)
    return dense_count(
        "qwen",
        embeddings=vocab * hidden,
        lm_head=0 if tied(cfg, False) else vocab * hidden,
        attention_and_norms=layers * (attention + 2 * hidden) + hidden,
        mlp=layers * mlp,
    )


#: Counter of each family, by the name :func:`remote_family` gives it.
COUNTERS: Mapping[str, Callable[[Mapping[str, Any]], ConfigCount | str]] = {
    "baichuan": count_baichuan,
    "chatglm": count_chatglm,
    "internlm": count_internlm,
    "internlm2": count_internlm2,
    "qwen": count_qwen,
}


#: Families of configs that name no model_type (early copies) by their class name.
ARCHITECTURES: Mapping[str, str] = {
    "BaichuanForCausalLM": "baichuan",
    "BaiChuanForCausalLM": "baichuan",
    "ChatGLMModel": "chatglm",
    "InternLMForCausalLM": "internlm",
    "InternLM2ForCausalLM": "internlm2",
    "QWenLMHeadModel": "qwen",
}


def remote_family(cfg: Mapping[str, Any]) -> str | None:
    """The family of :data:`COUNTERS` ``cfg`` belongs to (None for any other). InternLM 2
    checkpoints often keep InternLM's model_type, and early copies name none: their class
    name tells them apart."""
    mtype = model_type(cfg)
    if mtype == "internlm" and architecture(cfg).startswith("InternLM2"):
        return "internlm2"
    if not mtype:
        return ARCHITECTURES.get(architecture(cfg))
    return mtype if mtype in COUNTERS else None
