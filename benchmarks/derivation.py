"""Print how long the derivation facts take on a large case: two 150k-token tokenizers, two
Llama-70B-sized safetensors headers, and (when transformers is installed) the similarity of
a derived modeling file with its upstream counterpart.

    PYTHONPATH=src python benchmarks/derivation.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from cardaudit.extract.derivation import structure_differences, tokenizer_comparison
from cardaudit.sources import local_evidence
from fixture_tools import llama_config, llama_tensors, tokenizer


def header_only(path: Path, tensors: dict) -> None:
    """A safetensors header without data (offsets are kept; the audit never reads data)."""
    import struct

    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        words = [f"tok{i}" for i in range(150_000)]
        for name, layers, extra in (("base", 80, []), ("model", 80, ["<tool>"])):
            folder = root / name
            folder.mkdir()
            (folder / "config.json").write_text(
                json.dumps(llama_config(8192, layers, 28672, 128256))
            )
            header_only(
                folder / "model.safetensors", llama_tensors(8192, layers, 28672, 128256, 64, 8)
            )
            (folder / "tokenizer.json").write_text(json.dumps(tokenizer(words, ["<s>", *extra])))
        start = time.perf_counter()
        model = local_evidence(str(root / "model"))
        base = local_evidence(str(root / "base"))
        loaded = time.perf_counter()
        differences = structure_differences(model, base)
        compared = time.perf_counter()
        result = tokenizer_comparison(model, base)
        done = time.perf_counter()
        size = (root / "model" / "tokenizer.json").stat().st_size
        print(
            f"read two repos (header + {size / 2**20:.1f} MiB tokenizer each): "
            f"{loaded - start:.2f} s"
        )
        print(f"structure comparison ({len(differences)} differences): {compared - loaded:.3f} s")
        print(
            f"tokenizer comparison ({result.explanations if result else None}): "
            f"{done - compared:.3f} s"
        )
    from cardaudit.extract.code_derivation import similarity
    from cardaudit.upstream import upstream_file

    upstream = upstream_file("transformers", "models/llama/modeling_llama.py")
    if upstream is None:
        print("transformers not installed: similarity not measured")
        return
    start = time.perf_counter()
    ratio = similarity(upstream, upstream)
    print(
        f"similarity of modeling_llama.py ({len(upstream.lines)} lines) with itself: "
        f"{ratio:.3f} in {time.perf_counter() - start:.3f} s"
    )


if __name__ == "__main__":
    main()
