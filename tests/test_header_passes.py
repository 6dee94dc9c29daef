"""Big headers are read and walked as few times as possible, with the same results: the
collector paused while decoding them, one structure per repo, shapes compared without
sorting every shared name (the speed itself: benchmarks/targets.py, row ``headers``)."""

from __future__ import annotations

import gc
import json
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from cardaudit.extract import structure
from cardaudit.extract.structure import compare_tensors, structure_of
from cardaudit.gc_pause import gc_paused
from cardaudit.sources import local_evidence
from cardaudit.sources.safetensors_header import decode_header
from fixture_tools import llama_config, llama_tensors, write_safetensors
from tensor_passes import CountedTensors, counted


def test_the_collector_is_paused_inside_and_resumed_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


def test_threads_share_one_pause() -> None:
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with gc_paused():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=hold)
    worker.start()
    inside.wait(5)
    with gc_paused():
        pass
    assert not gc.isenabled()  # the other thread's pause is still on
    release.set()
    worker.join(5)
    assert gc.isenabled()


def test_a_collector_switched_off_stays_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_decoding_errors_are_still_errors() -> None:
    assert decode_header(b'{"a": {"dtype": "F32", "shape": [1]}}') == {
        "a": {"dtype": "F32", "shape": [1]}
    }
    for broken in (b"{", b"\xff\xfe"):
        with pytest.raises(ValueError):
            decode_header(broken)
    assert gc.isenabled()


def repo(tmp_path: Path, name: str, vocab: int) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    write_safetensors(folder / "model.safetensors", llama_tensors(64, 2, 128, vocab))
    (folder / "config.json").write_text(json.dumps(llama_config(64, 2, 128, vocab)))
    return folder


def test_one_structure_per_repo_for_as_long_as_the_repo_lives(tmp_path: Path) -> None:
    evidence = local_evidence(str(repo(tmp_path, "model", 1000)))
    first = structure_of(evidence)
    assert structure_of(evidence) is first
    other = replace(evidence)  # equal, but another repo object: computed on its own
    assert structure_of(other) == first and structure_of(other) is not first
    key = id(evidence)
    del evidence, other
    gc.collect()
    assert key not in structure._KNOWN


def test_changed_shapes_come_sorted_and_equal_shapes_are_skipped(tmp_path: Path) -> None:
    model = structure_of(local_evidence(str(repo(tmp_path, "model", 1001))))
    base = structure_of(local_evidence(str(repo(tmp_path, "base", 1000))))
    found = [d.field for d in compare_tensors(model, base)]
    assert found == ["tensor lm_head.weight", "tensor model.embed_tokens.weight"]


def moe_repo(root: Path, layers: int = 4, experts: int = 8) -> Path:
    from stub_weights import write_repo

    tensors = {
        f"model.layers.{layer}.mlp.experts.{expert}.{kind}.weight": ("BF16", (32, 16))
        for layer in range(layers)
        for expert in range(experts)
        for kind in ("gate_proj", "up_proj", "down_proj")
    }
    write_repo(root, tensors, shard_bytes=len(tensors) // 4 * 32 * 16 * 2, sparse=True)
    (root / "README.md").write_text("---\nlicense: mit\nbase_model: org/base\n---\n# m\n")
    config = {
        "architectures": ["MixtralForCausalLM"],
        "model_type": "mixtral",
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": layers,
        "num_local_experts": experts,
        "num_experts_per_tok": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "vocab_size": 100,
    }
    (root / "config.json").write_text(json.dumps(config))
    return root


def test_a_full_audit_walks_each_tensor_list_once(tmp_path: Path) -> None:
    """Counting, the header-only stubs, structure (compared with the base), MEM007 and
    MEM009 all read the repo's one header walk (extract/header_walk.py)."""
    from cardaudit.pipeline import audit_evidence
    from cardaudit.policy import Policy
    from cardaudit.sources import AuditRequest, acquire

    model, base = moe_repo(tmp_path / "model"), moe_repo(tmp_path / "base")
    evidence = counted(acquire(AuditRequest(str(model), base=str(base))))
    shards = len(evidence.safetensors) + len(evidence.base[0].safetensors)
    assert len(evidence.safetensors) == 4 and evidence.safetensors_index is not None
    CountedTensors.passes = 0
    report = audit_evidence(evidence, Policy())
    assert report.facts.parameters.source == "safetensors"
    ran = {run.rule_id for run in report.checks if run.outcome != "not_applicable"}
    assert {"MEM007", "MEM009"} <= ran
    assert CountedTensors.passes == shards  # one pass over each header's tensors
