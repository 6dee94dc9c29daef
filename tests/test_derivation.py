"""DRV and ATT020+ rules: lineage claims, structure and tokenizer against the base, derived code."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from cardaudit.extract.code_derivation import derived_files, similarity
from cardaudit.extract.derivation import derivation_facts
from cardaudit.extract.lineage import all_claims, same_model
from cardaudit.extract.structure import module_exists
from cardaudit.extract.tokenizer import compare_tokenizers, tokenizer_facts
from cardaudit.model import TextFile
from cardaudit.pipeline import audit_evidence
from cardaudit.policy import Policy
from cardaudit.reporters.text import render
from cardaudit.sources import AuditRequest, acquire, local_evidence
from fixture_tools import llama_config, llama_tensors, write_safetensors
from scenarios import FIXTURES, scenario_json

DRV_ATT = ("DRV", "ATT02", "ATT03")


def _findings(name: str) -> list[tuple[str, str, str | None, int | None, str | None]]:
    data = scenario_json(name)
    return [
        (
            f["rule_id"],
            f["severity"],
            f["location"]["path"],
            f["location"]["line"],
            f["location"].get("repo"),
        )
        for f in data["findings"]
        if f["rule_id"].startswith(DRV_ATT)
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("clover", []),
        (
            "drv-wrong-base",
            [
                ("DRV001", "warning", "README.md", 10, None),
                ("DRV003", "warning", "config.json", 4, None),
                ("DRV001", "info", "config.json", 2, None),
            ],
        ),
        (
            "drv-undeclared-base",
            [
                ("DRV008", "warning", "README.md", 3, None),
                ("DRV002", "warning", "README.md", 13, None),
            ],
        ),
        ("drv-quantized-no-config", [("DRV005", "warning", "README.md", 4, None)]),
        (
            "drv-shapes",
            [
                ("DRV004", "error", "README.md", 4, None),
                ("DRV007", "warning", "tokenizer.json", 1, None),
            ],
        ),
        ("drv-adapter", [("DRV006", "error", "adapter_config.json", 11, None)]),
        (
            "att-stripped-header",
            [
                ("ATT020", "error", "toy/modeling_toy.py", 1, "code"),
                ("ATT021", "warning", "toy/configuration_toy.py", 4, "code"),
            ],
        ),
    ],
)
def test_scenario_findings(name: str, expected: list[tuple]) -> None:
    assert _findings(name) == expected


def test_messages_explain_the_evidence() -> None:
    data = scenario_json("drv-shapes")
    messages = {f["rule_id"]: f["message"] for f in data["findings"]}
    assert "layers 2 → 3: one layer added" in messages["DRV004"]
    assert "'w0' 1 → 2" in messages["DRV007"]
    wrong = scenario_json("drv-wrong-base")
    assert wrong["findings"][0]["evidence"].startswith("Heron-8B is a general assistant")


def test_clover_lineage_chain_and_explained_differences() -> None:
    facts = scenario_json("clover")["facts"]
    assert facts["lineage"][1] == {
        "id": "Qwen/Qwen3.6-35B-A3B",
        "of": "model",
        "depth": 1,
        "relation": "finetune",
        "licence": "apache-2.0",
        "source": "metadata",
        "evidence": "local",
    }
    explained = [d["explanation"] for d in facts["derivation"][0]["differences"]]
    assert "text-only: vision tower dropped" in explained
    assert all(not d["contradicts"] for d in facts["derivation"][0]["differences"])
    assert facts["code_derivation"][0]["path"] == "clover/modeling_clover.py"
    assert facts["code_derivation"][0]["copyright_kept"] is True


def test_text_report_shows_the_chain() -> None:
    folder = FIXTURES / "clover"
    request = AuditRequest(str(folder / "model"), str(folder / "code"), str(folder / "base"))
    text = render(audit_evidence(acquire(request), Policy()), width=120)
    assert "→ Qwen/Qwen3.6-35B-A3B [apache-2.0] (finetune, from metadata)" in text
    assert "text-only: vision tower dropped" in text


def test_chain_follows_the_base_of_the_base(tmp_path: Path) -> None:
    grand = tmp_path / "grand"
    grand.mkdir()
    (grand / "README.md").write_text("---\nlicense: mit\n---\n# Grand\n")
    base = tmp_path / "base"
    base.mkdir()
    (base / "README.md").write_text("---\nlicense: apache-2.0\nbase_model: acme/Grand-1B\n---\n")
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text("---\nlicense: apache-2.0\nbase_model: acme/Base-1B\n---\n")
    base_evidence = local_evidence(str(base), base=(local_evidence(str(grand)),))
    evidence = local_evidence(str(model), base=(base_evidence,))
    _claims, extra = derivation_facts(evidence, "apache-2.0")
    chain = [(link["id"], link["depth"], link["licence"]) for link in extra["lineage"]]
    assert chain == [
        ("model", 0, "apache-2.0"),
        ("acme/Base-1B", 1, "apache-2.0"),
        ("acme/Grand-1B", 2, "mit"),
    ]


def test_merge_parents_must_share_shapes(tmp_path: Path) -> None:
    parents = []
    for name, hidden in (("a", 32), ("b", 48)):
        folder = tmp_path / name
        (folder).mkdir()
        (folder / "config.json").write_text(json.dumps(llama_config(hidden, 2, 64, 252)))
        write_safetensors(folder / "model.safetensors", llama_tensors(hidden, 2, 64, 252))
        parents.append(local_evidence(str(folder)))
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(
        "---\nlicense: mit\nbase_model:\n  - acme/a-1B\n  - acme/b-1B\n"
        "base_model_relation: merge\n---\n# Merged\n"
    )
    evidence = replace(local_evidence(str(model)), base=tuple(parents))
    report = audit_evidence(evidence, Policy(select=("DRV004",)))
    assert [(f.rule_id, f.severity, f.location.path, f.location.line) for f in report.findings] == [
        ("DRV004", "error", "README.md", 6)
    ]
    assert "hidden size 32 → 48" in report.findings[0].message


def test_similarity_uses_the_installed_upstream(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "site" / "transformers" / "models" / "llama"
    package.mkdir(parents=True)
    (tmp_path / "site" / "transformers" / "__init__.py").write_text("raise SystemExit('never')\n")
    upstream = (FIXTURES / "att-stripped-header/code/toy/configuration_toy.py").read_text()
    (package / "configuration_llama.py").write_text(upstream)
    (package / "modeling_llama.py").write_text("class Other:\n    pass\n")
    monkeypatch.setenv("CARDAUDIT_UPSTREAM_PATH", str(tmp_path / "site"))
    folder = FIXTURES / "att-stripped-header"
    evidence = acquire(AuditRequest(str(folder / "model"), str(folder / "code")))
    files = {item.path: item for item in derived_files(evidence)}
    assert files["toy/configuration_toy.py"].similarity == 1.0
    assert files["toy/configuration_toy.py"].upstream_file == (
        "transformers/models/llama/configuration_llama.py"
    )
    assert files["toy/modeling_toy.py"].similarity == 0.0
    # An unmodified copy needs no change notice: ATT021 no longer fires.
    report = audit_evidence(evidence, Policy(select=("ATT021",)))
    assert report.findings == ()


def test_similarity_counts_meaningful_lines() -> None:
    upstream = TextFile("u.py", "import os\n\n\ndef f():\n    return os.sep\n")
    derived = TextFile("d.py", "import os\n\ndef f():\n    return 1\n")
    assert similarity(upstream, derived) == pytest.approx(2 / 3, abs=0.001)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Qwen3.6-35B-A3B", "Qwen/Qwen3.6-35B-A3B", True),
        ("Llama 3.1 70B", "meta-llama/Meta-Llama-3.1-70B-Instruct", True),
        ("meta-llama/Meta-Llama-3-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B-Instruct", False),
        ("Qwen2.5", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", False),
        ("Mistral", "mistralai/Mistral-7B-v0.3", False),
    ],
)
def test_same_model(a: str, b: str, same: bool) -> None:
    assert same_model(a, b) is same


def test_prose_claims_with_links_and_names(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "---\nlicense: mit\n---\n# X\n\n"
        "This is a non-quantized version of Foo-7B.\n"
        "It is a merge of acme/A-7B and acme/B-7B.\n"
        "Quantized version of [Bar 2 13B](https://huggingface.co/acme/Bar-2-13b).\n"
        "Evaluated with a judge based on GPT-4.\n"
        "```\nfine-tuned from Code-1B\n```\n"
    )
    claims = [
        (c.id, c.relation, c.location.line) for c in all_claims(local_evidence(str(tmp_path)))
    ]
    assert claims == [
        ("acme/A-7B", "merge", 7),
        ("acme/B-7B", "merge", 7),
        ("acme/Bar-2-13b", "quantized", 8),
    ]


def test_mergekit_config_and_odd_files_never_raise(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("---\nbase_model: [1, {a: b}]\n---\n# M\n")
    (tmp_path / "mergekit_config.yml").write_text(
        "merge_method: slerp\nslices:\n  - sources:\n      - model: acme/A-3B\n"
        "      - model: acme/B-3B\n"
    )
    (tmp_path / "adapter_config.json").write_text(
        '{"target_modules": 5, "base_model_name_or_path": 3}'
    )
    (tmp_path / "config.json").write_text(
        '{"hidden_size": "big", "architectures": "x", "text_config": 1}'
    )
    (tmp_path / "tokenizer.json").write_text("[1, 2")
    evidence = local_evidence(str(tmp_path))
    claims = [(c.id, c.source, c.location.line) for c in all_claims(evidence)]
    assert claims == [("acme/A-3B", "mergekit_config", 4), ("acme/B-3B", "mergekit_config", 5)]
    report = audit_evidence(evidence, Policy(select=("DRV", "ATT02")))
    assert all(run.outcome != "error" for run in report.checks), report.checks


def test_adapter_targets_match_suffixes_and_regexes() -> None:
    names = frozenset(
        {"model.layers.0.self_attn.q_proj.weight", "model.layers.0.mlp.up_proj.weight"}
    )
    assert module_exists("q_proj", names)
    assert module_exists(r".*\.mlp\.up_proj", names)
    assert not module_exists("wqkv", names)
    assert not module_exists("proj", names)


def test_tokenizer_comparison_explains_added_tokens() -> None:
    shapes = FIXTURES / "drv-shapes"
    mine = tokenizer_facts(local_evidence(str(shapes / "model")))
    base = tokenizer_facts(local_evidence(str(shapes / "base")))
    assert mine is not None and base is not None
    result = compare_tokenizers(mine, base)
    assert result.identical is False
    assert "1 token(s) added: '<tool>'" in result.explanations
    assert compare_tokenizers(base, base).identical is True


def test_bulleted_list_of_merged_models(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "---\nlicense: mit\n---\n# M\n\n### Models Merged\n\n"
        "The following models were included in the merge:\n"
        "* [acme/A-7B](https://huggingface.co/acme/A-7B)\n"
        "* **acme/B-7B** - the creative one\n\n"
        "- not-a-model bullet after the list\n"
    )
    evidence = local_evidence(str(tmp_path))
    claims = [(c.id, c.relation, c.location.line) for c in all_claims(evidence)]
    assert claims == [("acme/A-7B", "merge", 9), ("acme/B-7B", "merge", 10)]
    report = audit_evidence(evidence, Policy(select=("DRV002",)))
    assert [(f.rule_id, f.location.path, f.location.line) for f in report.findings] == [
        ("DRV002", "README.md", 9)
    ]


def test_claims_about_the_model_itself_win_over_siblings(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "---\nlicense: mit\n---\n# Owl-R1\n\n"
        "- Using data generated by Owl-R1, we distilled small models based on Qwen2.5.\n"
        "Owl-R1 is trained based on Owl-V3-Base.\n"
        "| Owl-R1-Distill-8B | Llama3.1-8B-Base |\n"
    )
    claims = [(c.id, c.location.line) for c in all_claims(local_evidence(str(tmp_path)))]
    assert claims == [("Owl-V3-Base", 7)]


def test_tokenizer_over_four_mib_is_read_and_compared(tmp_path: Path) -> None:
    from fixture_tools import tokenizer

    words = [f"tokenizer-piece-{i:08d}" for i in range(160_000)]
    for name, extra in (("base", []), ("model", ["<tool>"])):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "tokenizer.json").write_text(json.dumps(tokenizer(words, ["<s>", *extra])))
    assert (tmp_path / "model" / "tokenizer.json").stat().st_size > 4 * 1024 * 1024
    mine = tokenizer_facts(local_evidence(str(tmp_path / "model")))
    base = tokenizer_facts(local_evidence(str(tmp_path / "base")))
    assert mine is not None and base is not None and mine.size == 160_002
    assert (
        compare_tokenizers(mine, base).explanations[0] == "tokenizer vocabulary 160,001 → 160,002"
    )


@pytest.mark.parametrize(("hidden", "expected"), [(32, []), (48, [("DRV004", "error", 4)])])
def test_quantized_keeps_logical_shapes(tmp_path: Path, hidden: int, expected: list) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text(json.dumps(llama_config(32, 2, 64, 252)))
    model = tmp_path / "model"
    model.mkdir()
    config = llama_config(hidden, 2, 64, 252) | {"quantization_config": {"quant_method": "gptq"}}
    (model / "config.json").write_text(json.dumps(config))
    (model / "README.md").write_text(
        "---\nlicense: mit\nbase_model: acme/toy-base-1b\nbase_model_relation: quantized\n---\n"
    )
    evidence = local_evidence(str(model), base=(local_evidence(str(base)),))
    report = audit_evidence(evidence, Policy(select=("DRV004", "DRV005")))
    found = [(f.rule_id, f.severity, f.location.line) for f in report.findings]
    assert found == expected
