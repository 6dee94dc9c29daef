"""Config-only counts of the older decoder families transformers builds with layouts of
their own: Falcon / RefinedWeb, GPT-NeoX, GPT-J, MPT, OPT and GPT-BigCode (StarCoder).

Each counter follows the module tree of the family's transformers class (checked on the
meta device in ``tests/test_param_reference.py``) and returns a :class:`ConfigCount`, or a
sentence saying why the config describes a variant it does not count: a layout option
transformers builds differently from the publisher's own code, or one it does not build,
gets no count rather than a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cardaudit.extract.config_fields import MAX_LAYERS, ConfigCount, _int, model_type

#: model_type values (lower case) of the Falcon family: transformers' own and the
#: RefinedWeb names of the first checkpoints (their remote code, same layout).
FALCON_TYPES = frozenset({"falcon", "refinedweb", "refinedwebmodel", "rw"})


def dense_count(
    family: str,
    *,
    embeddings: int,
    lm_head: int,
    attention_and_norms: int,
    mlp: int,
    notes: tuple[str, ...] = (),
) -> ConfigCount:
    """A dense model's :class:`ConfigCount` with the components the Llama path reports."""
    components = {
        "embeddings": embeddings,
        "lm_head": lm_head,
        "attention_and_norms": attention_and_norms,
        "mlp_non_expert": mlp,
        "experts": 0,
    }
    return ConfigCount(sum(components.values()), None, components, family, notes)


def sizes(
    cfg: Mapping[str, Any], hidden_keys: tuple[str, ...], layer_keys: tuple[str, ...]
) -> tuple[int, int, int] | str:
    """(hidden size, layers, vocabulary) or why they cannot be read."""
    hidden = _int(cfg, *hidden_keys)
    layers = _int(cfg, *layer_keys)
    vocab = _int(cfg, "vocab_size", "padded_vocab_size")
    if not hidden or not layers or not vocab:
        return "config.json lacks the hidden size, layer count or vocabulary size"
    if layers > MAX_LAYERS:
        return f"config.json declares {layers:,} layers: no real model has that many"
    return hidden, layers, vocab


def standard_shape(cfg: Mapping[str, Any]) -> tuple[int, int, int, int] | str:
    """(hidden size, layers, vocabulary, attention heads) of a config under transformers'
    standard keys (``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``), or why
    they cannot be read."""
    found = sizes(cfg, ("hidden_size",), ("num_hidden_layers",))
    if isinstance(found, str):
        return found
    hidden, layers, vocab = found
    heads = heads_of(cfg, hidden, "num_attention_heads")
    if isinstance(heads, str):
        return heads
    return hidden, layers, vocab, heads


def heads_of(cfg: Mapping[str, Any], hidden: int, *keys: str) -> int | str:
    heads = _int(cfg, *keys)
    if not heads or hidden % heads:
        return f"config.json's hidden size {hidden} is not a whole number of attention heads"
    return heads


def tied(cfg: Mapping[str, Any], default: bool) -> bool:
    value = cfg.get("tie_word_embeddings")
    return default if not isinstance(value, bool) else value


def falcon_new_architecture(cfg: Mapping[str, Any]) -> bool:
    """Falcon-40B/180B's layout (grouped KV heads, two norms per layer). RefinedWeb (the
    40B's first model_type) implies it; RefinedWebModel (7B) does not."""
    default = model_type(cfg) == "refinedweb"
    value = cfg.get("new_decoder_architecture")
    return default if not isinstance(value, bool) else value


def count_falcon(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """Falcon (``FalconForCausalLM``): fused query_key_value (MQA, MHA or grouped KV under
    ``new_decoder_architecture``), parallel attention / MLP with one or two LayerNorms,
    a 4× GELU MLP (``ffn_hidden_size``), biases under ``bias``; ALiBi adds no parameter."""
    found = sizes(cfg, ("hidden_size", "n_embed"), ("num_hidden_layers", "n_layer"))
    if isinstance(found, str):
        return found
    hidden, layers, vocab = found
    heads = heads_of(cfg, hidden, "num_attention_heads", "n_head")
    if isinstance(heads, str):
        return heads
    head_dim = hidden // heads
    explicit = _int(cfg, "head_dim")
    if explicit and explicit != head_dim:
        return f"Falcon config's head_dim {explicit} differs from hidden/heads {head_dim}"
    new_arch = falcon_new_architecture(cfg)
    kv_heads = _int(cfg, "num_kv_heads", "n_head_kv", default=heads) or heads
    if new_arch:
        qkv = (2 * kv_heads + heads) * head_dim
    elif cfg.get("multi_query", True):
        qkv = hidden + 2 * head_dim
    else:
        qkv = 3 * hidden
    bias = bool(cfg.get("bias", False))
    ffn = _int(cfg, "ffn_hidden_size", default=4 * hidden) or 4 * hidden
    norms_in_parallel = cfg.get("num_ln_in_parallel_attn")
    if norms_in_parallel not in (None, 1, 2):
        return f"Falcon config's num_ln_in_parallel_attn {norms_in_parallel!r} is not 1 or 2"
    if norms_in_parallel is None and new_arch:
        norms_in_parallel = 2
    # Sequential attention has input and post-attention norms; parallel one or two.
    parallel = cfg.get("parallel_attn", True)
    norms = 2 if not parallel or norms_in_parallel == 2 else 1
    attention = hidden * qkv + hidden * hidden + (qkv + hidden if bias else 0)
    mlp = 2 * hidden * ffn + (ffn + hidden if bias else 0)
    per_layer_norms = norms * 2 * hidden
    return dense_count(
        "falcon",
        embeddings=vocab * hidden,
        lm_head=0 if tied(cfg, True) else vocab * hidden,
        attention_and_norms=layers * (attention + per_layer_norms) + 2 * hidden,
        mlp=layers * mlp,
    )


def count_gpt_neox(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """GPT-NeoX (Pythia, GPT-NeoX-20B): fused qkv and dense with biases
    (``attention_bias``), a biased 2-matrix GELU MLP, two LayerNorms a layer, untied
    ``embed_out``; ``rotary_pct`` and ``use_parallel_residual`` add no parameter."""
    shape = standard_shape(cfg)
    if isinstance(shape, str):
        return shape
    hidden, layers, vocab, _heads = shape
    inter = _int(cfg, "intermediate_size")
    if not inter:
        return "GPT-NeoX config has no intermediate_size (transformers would build 24,576)"
    bias = cfg.get("attention_bias", True) is not False
    attention = 4 * hidden * hidden + (4 * hidden if bias else 0)
    mlp = 2 * hidden * inter + inter + hidden
    return dense_count(
        "gpt_neox",
        embeddings=vocab * hidden,
        lm_head=0 if tied(cfg, False) else vocab * hidden,
        attention_and_norms=layers * (attention + 4 * hidden) + 2 * hidden,
        mlp=layers * mlp,
    )


def count_gptj(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """GPT-J: q/k/v/out without biases, one LayerNorm a layer (attention and MLP in
    parallel), a biased MLP of ``n_inner`` (4× when null), an untied LM head with a bias;
    ``rotary_dim`` adds no parameter."""
    found = sizes(cfg, ("n_embd", "hidden_size"), ("n_layer", "num_hidden_layers"))
    if isinstance(found, str):
        return found
    hidden, layers, vocab = found
    heads = heads_of(cfg, hidden, "n_head", "num_attention_heads")
    if isinstance(heads, str):
        return heads
    inner = _int(cfg, "n_inner", default=4 * hidden) or 4 * hidden
    lm_head = (0 if tied(cfg, False) else vocab * hidden) + vocab  # the head's bias
    return dense_count(
        "gptj",
        embeddings=vocab * hidden,
        lm_head=lm_head,
        attention_and_norms=layers * (4 * hidden * hidden + 2 * hidden) + 2 * hidden,
        mlp=layers * (2 * hidden * inner + inner + hidden),
    )


def _attn_config(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    value = cfg.get("attn_config")
    return value if isinstance(value, Mapping) else {}


def count_mpt(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """MPT: Wqkv and out_proj, a 4× GELU MLP, bias-free weight-only LayerNorms, ALiBi, the
    head tied to ``wte``. transformers hard-codes that layout, so the options MosaicML's
    own code builds differently (another ``expansion_ratio``, biases, learned positions,
    multi-query or grouped attention, q/k LayerNorms, another FFN type) get no count."""
    found = sizes(cfg, ("d_model", "hidden_size"), ("n_layers", "num_hidden_layers"))
    if isinstance(found, str):
        return found
    hidden, layers, vocab = found
    heads = heads_of(cfg, hidden, "n_heads", "num_attention_heads")
    if isinstance(heads, str):
        return heads
    attn = _attn_config(cfg)
    ffn = cfg.get("ffn_config")
    ffn_type = ffn.get("ffn_type", "mptmlp") if isinstance(ffn, Mapping) else "mptmlp"
    unsupported = [
        f"expansion_ratio {cfg.get('expansion_ratio')!r}"
        if cfg.get("expansion_ratio", 4) != 4
        else "",
        "biases (no_bias false)" if cfg.get("no_bias", True) is False else "",
        "learned positions (alibi false)" if attn.get("alibi", True) is False else "",
        f"attn_type {attn.get('attn_type')!r}"
        if attn.get("attn_type", "multihead_attention") != "multihead_attention"
        else "",
        "q/k LayerNorms (qk_ln)" if attn.get("qk_ln") or attn.get("qk_gn") else "",
        f"ffn_type {ffn_type!r}" if ffn_type != "mptmlp" else "",
    ]
    unsupported = [item for item in unsupported if item]
    if unsupported:
        return (
            "MPT config uses " + ", ".join(unsupported) + ": transformers' MPT does not build "
            "that layout and MosaicML's code is not counted here"
        )
    return dense_count(
        "mpt",
        embeddings=vocab * hidden,
        lm_head=0 if tied(cfg, True) else vocab * hidden,
        attention_and_norms=layers * (4 * hidden * hidden + 2 * hidden) + hidden,
        mlp=layers * 8 * hidden * hidden,
    )


def count_opt(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """OPT: learned positions with OPT's offset of 2 rows, q/k/v/out and fc1/fc2 with
    biases (``enable_bias``), two LayerNorms a layer, a final LayerNorm only when
    ``do_layer_norm_before`` (and not ``_remove_final_layer_norm``), and projections in and
    out when ``word_embed_proj_dim`` differs from the hidden size (OPT-350m)."""
    shape = standard_shape(cfg)
    if isinstance(shape, str):
        return shape
    hidden, layers, vocab, _heads = shape
    ffn = _int(cfg, "ffn_dim")
    positions = _int(cfg, "max_position_embeddings")
    if not ffn or not positions:
        return "OPT config lacks ffn_dim or max_position_embeddings"
    projection = _int(cfg, "word_embed_proj_dim", default=hidden) or hidden
    bias = cfg.get("enable_bias", True) is not False
    norm = 2 * hidden if cfg.get("layer_norm_elementwise_affine", True) is not False else 0
    final_norm = (
        norm
        if cfg.get("do_layer_norm_before", True) is not False
        and not cfg.get("_remove_final_layer_norm", False)
        else 0
    )
    projections = 2 * hidden * projection if projection != hidden else 0
    attention = 4 * hidden * hidden + (4 * hidden if bias else 0)
    mlp = 2 * hidden * ffn + (ffn + hidden if bias else 0)
    return dense_count(
        "opt",
        embeddings=vocab * projection + (positions + 2) * hidden + projections,
        lm_head=0 if tied(cfg, True) else vocab * projection,
        attention_and_norms=layers * (attention + 2 * norm) + final_norm,
        mlp=layers * mlp,
    )


def count_gpt_bigcode(cfg: Mapping[str, Any]) -> ConfigCount | str:
    """GPT-BigCode (SantaCoder, StarCoder): learned positions (``n_positions``), a fused
    c_attn with one KV head under ``multi_query``, biased projections and MLP (``n_inner``,
    4× when null), two LayerNorms a layer, the head tied to ``wte``."""
    found = sizes(cfg, ("n_embd", "hidden_size"), ("n_layer", "num_hidden_layers"))
    if isinstance(found, str):
        return found
    hidden, layers, vocab = found
    heads = heads_of(cfg, hidden, "n_head", "num_attention_heads")
    if isinstance(heads, str):
        return heads
    positions = _int(cfg, "n_positions", "max_position_embeddings")
    if not positions:
        return "GPT-BigCode config has no n_positions"
    if cfg.get("add_cross_attention"):
        return "GPT-BigCode config adds cross-attention: that layout is not counted here"
    inner = _int(cfg, "n_inner", default=4 * hidden) or 4 * hidden
    kv_dim = hidden // heads if cfg.get("multi_query", True) else hidden
    qkv = hidden + 2 * kv_dim
    attention = hidden * qkv + qkv + hidden * hidden + hidden
    return dense_count(
        "gpt_bigcode",
        embeddings=vocab * hidden + positions * hidden,
        lm_head=0 if tied(cfg, True) else vocab * hidden,
        attention_and_norms=layers * (attention + 4 * hidden) + 2 * hidden,
        mlp=layers * (2 * hidden * inner + inner + hidden),
    )


#: Counter of each family, by the name :func:`older_family` gives it.
COUNTERS: Mapping[str, Callable[[Mapping[str, Any]], ConfigCount | str]] = {
    "falcon": count_falcon,
    "gpt_neox": count_gpt_neox,
    "gptj": count_gptj,
    "mpt": count_mpt,
    "opt": count_opt,
    "gpt_bigcode": count_gpt_bigcode,
}


def older_family(cfg: Mapping[str, Any]) -> str | None:
    """The family of :data:`COUNTERS` ``cfg`` belongs to (None for any other)."""
    mtype = model_type(cfg)
    if mtype in FALCON_TYPES:
        return "falcon"
    return mtype if mtype in COUNTERS else None
