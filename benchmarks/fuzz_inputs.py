"""Seeded generators of hostile inputs for ``fuzz_parsers.py``, one per parser.

Each generator takes a ``random.Random`` and returns the files of one audited repo: a dict
of repo path → text (or bytes for binary files). They mix plausible structure (the keys and
shapes cardaudit reads) with what an attacker would try: deep nesting, YAML aliases, pumped
repetitions that make backtracking regexes blow up, non-finite and huge numbers, control and
bidi characters, regex metacharacters in names, and random mutations (cuts, duplications,
flipped characters) of all of it.
"""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Callable

Files = dict[str, str | bytes]

HOSTILE_CHARS = (
    "\x1b]0;pwned\x07",
    "\x1b[2J",
    "\x1b]8;;https://evil.example/\x1b\\",
    "\u202e",
    "\u2066",
    "\r",
    "\x00",
    "\x7f",
    "\ufeff",
    "::error::",
    "%0A",
    "|",
    "<img src=x>",
    "\\",
    "\ud7ff",
)
REGEX_META = ("(a+)+b", "(.*)*$", "[", "(", "\\", "a{99999}", "(?P<x>", "*", ".*.*.*=.*")
NAME_PARTS = (
    "model",
    "layers",
    "0",
    "1",
    "mlp",
    "experts",
    "self_attn",
    "q_proj",
    "weight",
    "bias",
    "embed_tokens",
    "lm_head",
    "a" * 40,
    "x" * 200,
)
CARD_KEYS = (
    "license",
    "license_name",
    "license_link",
    "base_model",
    "base_model_relation",
    "tags",
    "datasets",
    "language",
    "pipeline_tag",
    "library_name",
    "model-index",
    "extra_gated_prompt",
    "extra_gated_fields",
    "inference",
    "model_name",
    "new_version",
)
LICENCE_IDS = ("apache-2.0", "mit", "llama3", "other", "cc-by-nc-4.0", "gemma", "openrail", "")
CONFIG_KEYS = (
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "max_position_embeddings",
    "torch_dtype",
    "dtype",
    "model_type",
    "architectures",
    "tie_word_embeddings",
    "num_experts",
    "num_local_experts",
    "n_routed_experts",
    "n_shared_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "first_k_dense_replace",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_rope_head_dim",
    "v_head_dim",
    "sliding_window",
    "layer_types",
    "rope_scaling",
    "text_config",
    "vision_config",
    "quantization_config",
    "_name_or_path",
    "mlp_only_layers",
    "attention_bias",
)
MARKDOWN_FRAGMENTS = (
    "[",
    "]",
    "](",
    "(",
    ")",
    "![",
    '<a href="',
    "<a href='",
    '">',
    "</a>",
    "<",
    ">",
    "**",
    "`",
    "```\n",
    "|",
    "\n",
    "\n\n",
    "- [ ] ",
    "- [x] ",
    "# ",
    "## Roadmap\n",
    "http://",
    "https://huggingface.co/",
    "https://github.com/org/repo",
    "1",
    "0",
    "9999999999",
    "7B",
    "70B parameters",
    "8x",
    "2x ",
    "A100",
    "H100 80GB",
    "RTX 4090",
    " GPU",
    " GB",
    " VRAM",
    "will be released",
    "coming soon",
    "code is available",
    "we will open-source",
    "TODO",
    "MMLU",
    "86.5",
    "%",
    "tokens/s",
    "faster than",
    "state-of-the-art",
    "context length of 128k tokens",
    "fine-tuned from ",
    "meta-llama/Llama-3.1-8B",
    "merged with",
    " ",
    "\t",
    "-",
    ".",
    ",",
    ":",
    "=",
    "\\",
    "_",
    "~",
)
LICENCE_SNIPPETS = (
    "Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/\n",
    "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION\n",
    'Licensed under the Apache License, Version 2.0 (the "License");\n',
    "Permission is hereby granted, free of charge, to any person obtaining a copy\n",
    'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND\n',
    "LLAMA 3 COMMUNITY LICENSE AGREEMENT\n",
    "If, on the Llama 3 version release date, the monthly active users of the products\n",
    "greater than 700 million monthly active users in the preceding calendar month\n",
    "You may not use the Model for commercial purposes.\n",
    "Copyright (c) 2024 Example Corp. All rights reserved.\n",
    "Attribution-NonCommercial 4.0 International\n",
    "Built with Llama\n",
    "NOTICE\n",
)


# --------------------------------------------------------------------------- mutations


def hostile_string(rng: random.Random) -> str:
    """A short string mixing words, control/bidi characters and regex metacharacters."""
    parts = []
    for _ in range(rng.randint(1, 6)):
        roll = rng.random()
        if roll < 0.3:
            parts.append(rng.choice(HOSTILE_CHARS))
        elif roll < 0.5:
            parts.append(rng.choice(REGEX_META))
        elif roll < 0.6:
            parts.append(chr(rng.randint(0, 0x10FFFF)) if rng.random() < 0.5 else "é")
        else:
            parts.append(rng.choice(NAME_PARTS + LICENCE_IDS + ("meta-llama/Llama-3-8B",)))
    return "".join(parts)


def mutate(rng: random.Random, text: str, rounds: int | None = None) -> str:
    """Random cuts, duplications (pumping a slice up to thousands of times) and insertions."""
    for _ in range(rng.randint(0, 3) if rounds is None else rounds):
        if not text:
            text = hostile_string(rng)
        i = rng.randrange(len(text) + 1)
        j = min(len(text), i + rng.randint(0, 40))
        op = rng.random()
        if op < 0.25:
            text = text[:i] + text[j:]
        elif op < 0.45:
            times = rng.choice((2, 10, 100, 1000))
            text = text[:i] + text[i:j] * times + text[j:]
        elif op < 0.75:
            text = text[:i] + hostile_string(rng) + text[i:]
        elif op < 0.9:
            text = text[: rng.randrange(len(text) + 1)]
        else:
            text = text[:i] + chr(rng.randint(0, 0x2FFF)) + text[i + 1 :]
    return text


def pumped(rng: random.Random, fragments: tuple[str, ...]) -> str:
    """A line that repeats a few fragments many times (the shape that exposes backtracking)."""
    unit = "".join(rng.choice(fragments) for _ in range(rng.randint(1, 4)))
    return unit * rng.choice((10, 100, 500, 2000))


def nested(rng: random.Random, open_: str, close: str, inner: str = "1") -> str:
    depth = rng.choice((10, 100, 1000, 10_000, 100_000))
    return open_ * depth + inner + close * (depth if rng.random() < 0.7 else depth // 2)


# --------------------------------------------------------------------------- JSON values


def json_scalar(rng: random.Random) -> object:
    roll = rng.random()
    if roll < 0.25:
        return rng.choice((0, 1, -1, 7, 4096, 32, 2**31, 2**63, 10**30, -(10**20)))
    if roll < 0.35:
        return rng.choice((0.5, 1e308, -1e-9, 3.0))
    if roll < 0.45:
        return rng.choice((True, False, None))
    if roll < 0.6:
        return rng.choice(("bfloat16", "float16", "F8_E4M3", "int4", "fp8", "gptq", "llama"))
    return hostile_string(rng)


def json_value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 3 or roll < 0.6:
        return json_scalar(rng)
    if roll < 0.8:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = (*CONFIG_KEYS, "quant_method", "bits", "group_size", "weight_block_size", "type")
    return {rng.choice(keys): json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def json_text(rng: random.Random, value: object) -> str:
    """``value`` as JSON, sometimes with non-finite literals, deep nesting or a mutation."""
    text = json.dumps(value, allow_nan=True)
    roll = rng.random()
    if roll < 0.1:
        literal = rng.choice(("Infinity", "-Infinity", "NaN", "1e999", "9" * 5000, "-0"))
        text = text.replace(str(rng.choice((1, 7, 4096, 32, 0))), literal, 1)
    elif roll < 0.17:
        deep = nested(rng, "[", "]") if rng.random() < 0.5 else nested(rng, '{"a":', "}")
        text = text[:-1] + (', "deep": ' if len(text) > 2 else '"deep": ') + deep + "}"
    elif roll < 0.35:
        text = mutate(rng, text)
    return text


# --------------------------------------------------------------------------- per parser


def yaml_value(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth > 3 or roll < 0.45:
        scalar = rng.choice(
            (
                rng.choice(LICENCE_IDS),
                hostile_string(rng),
                str(rng.randint(-(10**6), 10**6)),
                "1e999",
                ".nan",
                "2024-13-45",
                "null",
                "~",
                "'" + hostile_string(rng).replace("'", "''") + "'",
                '"\\x1b]0;t\\x07\\u202e"',
                "!!binary aGVsbG8=",
                "!!python/object:os.system ls",
                "x" * rng.choice((10, 1000, 100_000)),
            )
        )
        return scalar
    if roll < 0.65:
        return "[" + ", ".join(yaml_value(rng, depth + 1) for _ in range(rng.randint(0, 4))) + "]"
    if roll < 0.8:
        items = (f"{rng.choice(CARD_KEYS)}: {yaml_value(rng, depth + 1)}" for _ in range(3))
        return "{" + ", ".join(items) + "}"
    if roll < 0.9:
        return nested(rng, "[", "]") if rng.random() < 0.7 else nested(rng, "{a: ", "}")
    return "&a" + str(depth) + " " + yaml_value(rng, depth + 1)


def alias_bomb(rng: random.Random) -> str:
    width, levels = rng.randint(2, 9), rng.randint(3, 9)
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    for level in range(1, levels + 1):
        prev = f"*a{level - 1}"
        lines.append(f"a{level}: &a{level} [{', '.join([prev] * width)}]")
    lines.append(f"{rng.choice(CARD_KEYS)}: *a{levels}")
    return "\n".join(lines)


def front_matter(rng: random.Random) -> Files:
    lines = []
    if rng.random() < 0.03:
        lines.append(alias_bomb(rng))
    for _ in range(rng.randint(1, 8)):
        key = rng.choice(CARD_KEYS) if rng.random() < 0.85 else hostile_string(rng)
        if rng.random() < 0.2:
            lines.append(f"{key}:")
            lines.extend(f"  - {yaml_value(rng, 1)}" for _ in range(rng.randint(1, 4)))
        else:
            lines.append(f"{key}: {yaml_value(rng)}")
        if rng.random() < 0.1:
            lines.append(f"other: *a{rng.randint(0, 3)}")
    yaml_text = "\n".join(lines)
    if rng.random() < 0.3:
        yaml_text = mutate(rng, yaml_text)
    body = "# Model\n\nWe will release the training code soon.\n"
    return {"README.md": f"---\n{yaml_text}\n---\n{body}"}


def markdown_body(rng: random.Random) -> Files:
    lines = []
    for _ in range(rng.randint(1, 12)):
        roll = rng.random()
        if roll < 0.3:
            lines.append(pumped(rng, MARKDOWN_FRAGMENTS))
        else:
            count = rng.randint(1, 30)
            lines.append("".join(rng.choice(MARKDOWN_FRAGMENTS) for _ in range(count)))
    body = "\n".join(lines)
    if rng.random() < 0.3:
        body = mutate(rng, body)
    return {"README.md": f"---\nlicense: apache-2.0\n---\n{body}\n"}


def config(rng: random.Random) -> Files:
    value = {rng.choice(CONFIG_KEYS): json_value(rng) for _ in range(rng.randint(1, 12))}
    return {"README.md": _plain_card(), "config.json": json_text(rng, value)}


def _tensor_name(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(REGEX_META) + rng.choice(("", "a" * 60, hostile_string(rng)))
    return ".".join(rng.choice(NAME_PARTS) for _ in range(rng.randint(1, 6)))


def _shape(rng: random.Random) -> object:
    roll = rng.random()
    if roll < 0.7:
        return [rng.choice((1, 2, 64, 4096, 128256)) for _ in range(rng.randint(0, 4))]
    return [json_scalar(rng) for _ in range(rng.randint(0, 4))]


def _header_json(rng: random.Random, names: list[str]) -> str:
    header: dict[str, object] = {}
    if rng.random() < 0.5:
        header["__metadata__"] = {"format": "pt", hostile_string(rng): hostile_string(rng)}
    offset = 0
    for name in names:
        dtype = rng.choice(("BF16", "F16", "F32", "F8_E4M3", "I8", "U8", "BOOL", "X", 7))
        header[name] = {"dtype": dtype, "shape": _shape(rng), "data_offsets": [offset, offset]}
    text = json_text(rng, header)
    for literal in ("Infinity", "NaN", "-5", "1e400", "99999999999999999999999"):
        if rng.random() < 0.05:
            text = text.replace("4096", literal, 1)
    return text


def safetensors(rng: random.Random) -> Files:
    names = [_tensor_name(rng) for _ in range(rng.randint(0, 8))]
    header = _header_json(rng, names).encode("utf-8", "surrogatepass")
    length = len(header) if rng.random() < 0.9 else rng.choice((0, 2**64 - 1, len(header) + 7))
    data = struct.pack("<Q", length) + header + b"\0" * rng.choice((0, 16, 1024))
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data) + 1)]
    return {"README.md": _plain_card(), "model.safetensors": data}


def safetensors_index(rng: random.Random) -> Files:
    names = [_tensor_name(rng) for _ in range(rng.randint(1, 10))]
    shards = [
        rng.choice(("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"))
        if rng.random() < 0.6
        else rng.choice(REGEX_META) + ".safetensors"
        for _ in names
    ]
    index = {
        "metadata": {"total_size": json_scalar(rng)},
        "weight_map": dict(zip(names, shards, strict=True)),
    }
    files: Files = {"README.md": _plain_card()}
    files["model.safetensors.index.json"] = json_text(rng, index)
    for shard in set(shards):
        if rng.random() < 0.5:
            header = _header_json(rng, names).encode("utf-8", "surrogatepass")
            files[shard] = struct.pack("<Q", len(header)) + header
    return files


def _gguf_string(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    return struct.pack("<Q", len(raw)) + raw


def _gguf_value(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.4:
        return struct.pack("<I", 4) + struct.pack("<I", rng.choice((0, 1, 32, 4096, 2**32 - 1)))
    if roll < 0.7:
        return struct.pack("<I", 8) + _gguf_string(hostile_string(rng))
    if roll < 0.8:
        return struct.pack("<I", 6) + struct.pack("<f", rng.choice((1.0, float("inf"))))
    if roll < 0.9:  # an array of u32 or strings, with an honest or a lying length
        count = rng.choice((0, 3, 100, 2**40))
        items = b"".join(struct.pack("<I", i) for i in range(min(count, 100)))
        return struct.pack("<I", 9) + struct.pack("<I", 4) + struct.pack("<Q", count) + items
    return struct.pack("<I", rng.choice((13, 99, 2**31)))


def gguf(rng: random.Random) -> Files:
    keys = ["general.architecture", "general.name", "llama.block_count", "llama.context_length"]
    many = rng.random() < 0.004
    count = 200_000 if many else rng.randint(0, 12)
    kvs = []
    for index in range(count):
        key = keys[index] if index < len(keys) and not many else f"k.{index}.{rng.random()}"
        value = struct.pack("<I", 4) + struct.pack("<I", 1) if many else _gguf_value(rng)
        kvs.append(_gguf_string(key) + value)
    tensors = []
    for _ in range(rng.randint(0, 6)):
        dims = [rng.choice((1, 64, 4096, 2**40)) for _ in range(rng.randint(0, 4))]
        info = _gguf_string(_tensor_name(rng)) + struct.pack("<I", len(dims))
        info += b"".join(struct.pack("<Q", d) for d in dims)
        info += struct.pack("<I", rng.choice((0, 1, 2, 8, 30, 999))) + struct.pack("<Q", 0)
        tensors.append(info)
    claimed_kv = count if rng.random() < 0.9 else rng.choice((2**63, count + 5))
    head = b"GGUF" + struct.pack("<I", rng.choice((3, 3, 3, 2, 1, 99)))
    head += struct.pack("<QQ", len(tensors), claimed_kv)
    data = head + b"".join(kvs) + b"".join(tensors)
    data += b"\0" * ((-len(data)) % 32) + b"\0" * rng.choice((0, 64, 4096))
    if rng.random() < 0.15:
        i = rng.randrange(len(data))
        data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data) + 1)]
    return {"README.md": _plain_card(), "model.gguf": data}


def adapter_mergekit(rng: random.Random) -> Files:
    files: Files = {"README.md": "---\nlicense: apache-2.0\nbase_model: org/base\n---\n# A\n"}
    if rng.random() < 0.6:
        targets: object = (
            rng.choice((*REGEX_META, ".*(q|v)_proj", "all-linear", hostile_string(rng)))
            if rng.random() < 0.5
            else [rng.choice(NAME_PARTS + REGEX_META) for _ in range(rng.randint(0, 5))]
        )
        adapter = {
            "base_model_name_or_path": rng.choice(("org/base", hostile_string(rng), 5, None)),
            "peft_type": rng.choice(("LORA", "IA3", 3)),
            "r": json_scalar(rng),
            "lora_alpha": json_scalar(rng),
            "target_modules": targets,
            "modules_to_save": rng.choice((None, ["lm_head"], hostile_string(rng))),
        }
        files["adapter_config.json"] = json_text(rng, adapter)
    else:
        models = "\n".join(
            f"  - model: {rng.choice(('org/a', 'org/b', hostile_string(rng), '[x]'))}"
            for _ in range(rng.randint(0, 4))
        )
        text = (
            f"merge_method: {rng.choice(('slerp', 'ties', hostile_string(rng)))}\n"
            f"base_model: {yaml_value(rng)}\nmodels:\n{models}\n"
            f"slices:\n  - sources:\n      - model: {yaml_value(rng)}\n"
        )
        if rng.random() < 0.05:
            text = alias_bomb(rng) + "\n" + text
        files["mergekit_config.yml"] = mutate(rng, text) if rng.random() < 0.3 else text
    return files


def licence_text(rng: random.Random) -> Files:
    pieces = [rng.choice(LICENCE_SNIPPETS) for _ in range(rng.randint(1, 15))]
    if rng.random() < 0.2:
        pieces.append(pumped(rng, (*LICENCE_SNIPPETS[:3], " ", "\n", "x")))
    text = mutate(rng, "".join(pieces))
    licence = rng.choice(LICENCE_IDS)
    card = f"---\nlicense: {licence}\nlicense_name: {rng.choice(LICENCE_IDS)}\n---\n# M\n"
    return {"README.md": card, rng.choice(("LICENSE", "LICENSE.txt", "NOTICE")): text}


def _plain_card() -> str:
    return "---\nlicense: apache-2.0\n---\n# Model\n"


GENERATORS: dict[str, Callable[[random.Random], Files]] = {
    "front_matter": front_matter,
    "markdown_body": markdown_body,
    "config": config,
    "safetensors_header": safetensors,
    "safetensors_index": safetensors_index,
    "gguf_header": gguf,
    "adapter_mergekit": adapter_mergekit,
    "licence_text": licence_text,
}
