"""Base-family fingerprints (rule DRV009): each one checked against real configs, the
detector silent on the real repos' own claims except where the config contradicts them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardaudit.extract.fingerprint import (
    config_fields,
    contradictions,
    families,
    family_named,
    matching_family,
    size_named,
)
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from scenarios import scenario_request

CONFIGS = Path(__file__).parent / "data" / "configs"
#: Real configs of families tests/data/configs lacks (sources in its PROVENANCE.md).
FINGERPRINT_CONFIGS = Path(__file__).parent / "data" / "fingerprint_configs"
REALWORLD = Path(__file__).parents[2] / "shared" / "realworld" / "repos"


def config(name: str) -> dict:
    path = CONFIGS / f"{name}.json"
    if not path.exists():
        path = FINGERPRINT_CONFIGS / f"{name}.json"
    return json.loads(path.read_text())


def _transformers_config(name: str) -> dict:
    transformers = pytest.importorskip("transformers")
    data = getattr(transformers, name)().to_dict()
    rope = data.get("rope_parameters") or {}
    if data.get("rope_theta") is None and "rope_theta" in rope:
        data["rope_theta"] = rope["rope_theta"]
    data["rope_scaling"] = None
    return data


@pytest.mark.parametrize("family", families(), ids=lambda f: f.id)
def test_every_fingerprint_holds_on_a_real_config(family) -> None:
    assert family.verified_by, family.id
    for source in family.verified_by:
        if source.startswith("transformers:"):
            cfg = _transformers_config(source.split(":", 1)[1])
        else:
            cfg = config(source)
        assert [c.text() for c in contradictions(cfg, family, None)] == [], source
        assert matching_family(cfg) is not None or not family.sizes, source
        # the real config has the shape of one of the family's sizes (every field it has)
        fields = config_fields(cfg)
        assert not family.sizes or any(
            all(fields.get(k) in (None, v) for k, v in shape.items())
            and any(fields.get(k) is not None for k in shape)
            for shape in family.sizes.values()
        ), source


def test_every_fingerprint_config_is_listed_with_its_source() -> None:
    provenance = (FINGERPRINT_CONFIGS / "PROVENANCE.md").read_text()
    used = {s for f in families() for s in f.verified_by}
    for path in sorted(FINGERPRINT_CONFIGS.glob("*.json")):
        assert f"| {path.name} |" in provenance, path.name
        assert path.stem in used, f"{path.name} backs no fingerprint"


@pytest.mark.parametrize(
    ("name", "claimed", "family_id"),
    [
        (
            "mistralai__Mistral-Nemo-Base-2407",
            "mistralai/Mistral-Nemo-Instruct-2407",
            "mistral-nemo",
        ),
        ("microsoft__phi-4", "microsoft/phi-4", "phi-4"),
        ("microsoft__Phi-3.5-MoE-instruct", "microsoft/Phi-3.5-MoE-instruct", "phi-3.5-moe"),
        ("deepseek-ai__DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite-Chat", "deepseek-v2"),
        ("deepseek-ai__DeepSeek-V2", "deepseek-ai/DeepSeek-V2-Chat-0628", "deepseek-v2"),
        ("google__gemma-3-12b-it", "google/gemma-3-12b-it", "gemma-3"),
        ("google__gemma-3-4b-it", "google/gemma-3-4b-pt", "gemma-3"),
        ("Qwen__Qwen3-8B", "Qwen/Qwen3-8B", "qwen3"),
        ("Qwen__Qwen2-72B-Instruct", "Qwen/Qwen2-72B-Instruct", "qwen2.5"),
        ("Qwen__Qwen2-57B-A14B", "Qwen/Qwen2-57B-A14B-Instruct", "qwen2.5"),
        ("01-ai__Yi-1.5-34B", "01-ai/Yi-1.5-34B-Chat", "yi"),
        ("Qwen__Qwen3.5-27B", "Qwen/Qwen3.5-27B", "qwen3.5"),
        (
            "meta-llama__Llama-4-Scout-17B-16E-Instruct",
            "meta-llama/Llama-4-Scout-17B-16E",
            "llama-4",
        ),
    ],
)
def test_new_families_are_named_and_hold(name: str, claimed: str, family_id: str) -> None:
    family = family_named(claimed)
    assert family is not None and family.id == family_id
    size = size_named(claimed)
    assert contradictions(config(name), family, size if size in family.sizes else None) == []


def test_a_nemo_claim_on_a_mistral_7b_config_lists_every_field() -> None:
    family = family_named("mistralai/Mistral-Nemo-Base-2407")
    found = {
        c.field: c.config
        for c in contradictions(config("mistralai__Mistral-7B-Instruct-v0.3"), family, "12b")
    }
    assert found == {
        "max_position_embeddings": 32768,
        "vocab_size": 32768,
        "num_hidden_layers": 32,
        "hidden_size": 4096,
    }
    # the config is a Mistral 7B v0.3's, and the detector says so
    other = matching_family(config("mistralai__Mistral-7B-Instruct-v0.3"), exclude=family.id)
    assert other is not None and other[0].id == "mistral-7b-v0.3"


def test_phi4_and_qwen3_2507_fields() -> None:
    phi4 = family_named("microsoft/phi-4")
    assert family_named("microsoft/Phi-4-mini-instruct") is None  # another config altogether
    broken = [
        c.text() for c in contradictions(config("microsoft__Phi-3-mini-4k-instruct"), phi4, None)
    ]
    assert broken == [
        "rope_theta 10,000 (the family has 250,000)",
        "max_position_embeddings 4,096 (the family has 16,384)",
        "vocab_size 32,064 (the family has 100,352)",
    ]
    qwen3 = family_named("Qwen/Qwen3-4B-Instruct-2507")
    assert contradictions(config("Qwen__Qwen3-4B-Instruct-2507"), qwen3, "4b") == []


def test_the_qwen2_moe_is_told_from_the_dense_7b_by_its_experts() -> None:
    moe = matching_family(config("Qwen__Qwen2-57B-A14B"))
    dense = matching_family(config("Qwen__Qwen2.5-7B"))
    assert moe is not None and (moe[0].id, moe[1]) == ("qwen2.5", "57b-a14b")
    assert dense is not None and (dense[0].id, dense[1]) == ("qwen2.5", "7b")
    # Qwen1.5-MoE-A2.7B shares model_type qwen2_moe, rope theta and vocabulary, but neither a
    # name nor a shape of Qwen 2 (its config's shape fields: 24 layers, 2,048 hidden, 16 heads)
    qwen15_moe = {
        "model_type": "qwen2_moe",
        "rope_theta": 1000000.0,
        "vocab_size": 151936,
        "num_hidden_layers": 24,
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "num_experts": 60,
        "max_position_embeddings": 8192,
    }
    assert family_named("Qwen/Qwen1.5-MoE-A2.7B") is None
    assert matching_family(qwen15_moe) is None


def test_a_yi_claim_on_a_llama_2_config_lists_every_field(tmp_path: Path) -> None:
    found, _ = _audit_dir(
        tmp_path,
        "---\nlicense: apache-2.0\nbase_model: 01-ai/Yi-34B\n---\n# Sprout-34B\n",
        config("repo__lizpreciatior__lzlv_70b_fp16_hf"),
    )
    assert [(f.rule_id, f.severity, f.location.path, f.location.line) for f in found] == [
        ("DRV009", "warning", "README.md", 3)
    ]
    assert found[0].message == (
        "config.json does not have the fingerprint of Yi / Yi-1.5, the family of the claimed "
        "base 01-ai/Yi-34B: vocab_size 32,000 (the family has 64,000); num_hidden_layers 80 "
        "(the family has 60); hidden_size 8,192 (the family has 7,168); num_attention_heads "
        "64 (the family has 56); the config matches Llama 2 70B"
    )
    # and the other way round: a Llama claim on Yi's config names Yi
    other = matching_family(config("01-ai__Yi-1.5-34B"), exclude="llama-2")
    assert other is not None and (other[0].id, other[1]) == ("yi", "34b")
    assert family_named("01-ai/Yi-Coder-9B-Chat") is None  # another config altogether
    assert family_named("01-ai/Yi-34B-200K").id == "yi"


def test_names_pick_the_most_specific_family() -> None:
    assert family_named("meta-llama/Meta-Llama-3.1-70B-Instruct").id == "llama-3.1"
    assert family_named("meta-llama/Meta-Llama-3-8B").id == "llama-3"
    assert family_named("meta-llama/Llama-3.2-3B").id == "llama-3.2"
    assert family_named("mistralai/Mixtral-8x22B-v0.1").id == "mixtral-8x22b"
    assert family_named("Qwen/Qwen3.5-35B-A3B").id == "qwen3.5"
    assert family_named("Qwen/Qwen3-30B-A3B").id == "qwen3"
    assert family_named("deepseek-ai/DeepSeek-R1-Distill-Llama-8B") is None  # no generation named
    assert family_named("budecosystem/genz-70b") is None
    assert size_named("meta-llama/Llama-2-7b-hf") == "7b"
    assert size_named("Qwen/Qwen3-30B-A3B") == "30b-a3b"


def test_a_parent_of_the_wrong_size_is_reported() -> None:
    llama2_70b = config("repo__lizpreciatior__lzlv_70b_fp16_hf")
    family = family_named("meta-llama/Llama-2-7b-hf")
    found = [c.field for c in contradictions(llama2_70b, family, "7b")]
    assert found == [
        "num_hidden_layers",
        "hidden_size",
        "num_attention_heads",
        "num_key_value_heads",
    ]
    assert contradictions(llama2_70b, family, "70b") == []


def test_drv009_fixture_by_rule_severity_file_and_line() -> None:
    report = audit(scenario_request("drv-fingerprint"), Policy())
    found = [f for f in report.findings if f.rule_id == "DRV009"]
    assert [(f.rule_id, f.severity, f.location.path, f.location.line) for f in found] == [
        ("DRV009", "warning", "README.md", 3)
    ]
    assert found[0].message == (
        "config.json does not have the fingerprint of Llama 3.1, the family of the claimed "
        "base meta-llama/Meta-Llama-3.1-8B-Instruct: rope_type 'none' (the family has "
        "'llama3'); max_position_embeddings 8,192 (the family has 131,072); the config "
        "matches Llama 3 8B"
    )


def test_a_merge_parent_that_cannot_have_the_shape(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "---\nlicense: llama2\nbase_model:\n- meta-llama/Llama-2-7b-hf\n"
        "- meta-llama/Llama-2-70b-hf\nbase_model_relation: merge\n---\n# A merge\n"
    )
    (tmp_path / "config.json").write_text(
        json.dumps(config("repo__lizpreciatior__lzlv_70b_fp16_hf"))
    )
    report = audit(AuditRequest(target=str(tmp_path), code_discovery=False), Policy())
    found = [f for f in report.findings if f.rule_id == "DRV009"]
    assert len(found) == 1 and found[0].location.line == 3  # the base_model key
    assert found[0].message.startswith(
        "base meta-llama/Llama-2-7b-hf is a Llama 2 7B model, which cannot have this "
        "config's shape: num_hidden_layers 80 (the family has 32)"
    )
    assert found[0].message.endswith("it has the shape of Llama 2 70B")


@pytest.mark.skipif(not REALWORLD.is_dir(), reason="../shared/realworld not present")
def test_silent_on_the_real_repos_own_claims_except_reflection() -> None:
    fired = {}
    for repo in sorted(p for p in REALWORLD.iterdir() if p.is_dir()):
        report = audit(
            AuditRequest(target=str(repo), code_discovery=False), Policy(select=("DRV009",))
        )
        hits = [(f.location.path, f.location.line) for f in report.findings]
        if hits:
            fired[repo.name] = hits
    # Reflection's card claims Llama 3.1; its config is Llama 3's (8,192 positions, no
    # llama3 rope scaling), as the issue found by hand.
    assert fired == {"mattshumer__Reflection-Llama-3.1-70B": [("README.md", 3)]}


def _audit_dir(tmp_path: Path, card: str, cfg: dict):
    (tmp_path / "README.md").write_text(card)
    (tmp_path / "config.json").write_text(json.dumps(cfg, indent=2))
    report = audit(AuditRequest(target=str(tmp_path), code_discovery=False), Policy())
    return [f for f in report.findings if f.rule_id == "DRV009"], report


def test_a_parent_of_an_unknown_family_named_too_small(tmp_path: Path) -> None:
    """A 7B parent (no fingerprinted family) named for an 80-layer, 69B-parameter config."""
    found, _ = _audit_dir(
        tmp_path,
        "---\nlicense: llama2\nbase_model: sprout-labs/Sprout-7B\n"
        "base_model_relation: finetune\n---\n# Sprout-Large\n",
        config("repo__lizpreciatior__lzlv_70b_fp16_hf"),
    )
    assert [(f.rule_id, f.severity, f.location.path, f.location.line) for f in found] == [
        ("DRV009", "warning", "README.md", 3)
    ]
    assert found[0].message == (
        "base sprout-labs/Sprout-7B is named a 7B model, but this config holds 68.98B "
        "parameters (num_hidden_layers 80, hidden_size 8,192; counted from config.json), "
        "9.9 times that size: no 7B parent has this shape"
    )


def test_a_stacked_merge_of_its_named_parents_is_not_reported(tmp_path: Path) -> None:
    # a passthrough merge stacks 70B parents' layers into a bigger model: within 2.5 times
    cfg = dict(config("repo__lizpreciatior__lzlv_70b_fp16_hf"), num_hidden_layers=137)
    found, report = _audit_dir(
        tmp_path,
        "---\nlicense: llama2\nbase_model:\n- sprout-labs/Sprout-70b\n- other/Bramble-70b\n"
        "base_model_relation: merge\n---\n# Sprout-Bramble-120b\n",
        cfg,
    )
    assert found == []
    assert {run.rule_id: run.outcome for run in report.checks}["DRV009"] == "pass"


def test_name_or_path_naming_a_parent_that_cannot_have_the_shape(tmp_path: Path) -> None:
    cfg = {"_name_or_path": "sprout-labs/Sprout-1.5B"}
    cfg |= {
        k: v
        for k, v in config("repo__lizpreciatior__lzlv_70b_fp16_hf").items()
        if k != "_name_or_path"
    }
    found, _ = _audit_dir(tmp_path, "---\nlicense: llama2\n---\n# Sprout-Large\n", cfg)
    assert [(f.location.path, f.location.line) for f in found] == [("config.json", 2)]
    assert "46.0 times that size: no 1.5B parent" in found[0].message


def test_named_sizes_in_billions() -> None:
    from cardaudit.extract.fingerprint import named_billions

    assert named_billions("8x7b") == 56
    assert named_billions("30b-a3b") == 30
    assert named_billions("0.5b") == 0.5
    assert named_billions("17b-16e") is None  # names the active parameters only


def test_a_gemma_3_4b_parent_for_a_12b_config() -> None:
    family = family_named("google/gemma-3-4b-it")
    found = [c.text() for c in contradictions(config("google__gemma-3-12b-it"), family, "4b")]
    assert found == [
        "num_hidden_layers 48 (the family has 34)",
        "hidden_size 3,840 (the family has 2,560)",
        "num_attention_heads 16 (the family has 8)",
        "num_key_value_heads 8 (the family has 4)",
    ]


def test_an_moe_merge_of_dense_parents_is_judged_per_token(tmp_path: Path) -> None:
    # mergekit-moe: four 7B experts in a Mixtral-style config hold about 24B in total, but
    # about 13B per token, within 2.5 times each parent
    mixtral = config("mistralai__Mixtral-8x7B-v0.1") | {"num_local_experts": 4}
    found, report = _audit_dir(
        tmp_path,
        "---\nlicense: apache-2.0\nbase_model:\n- sprout-labs/Sprout-7B\n- other/Bramble-7B\n"
        "base_model_relation: merge\n---\n# Sprout-Bramble-4x7B\n",
        mixtral,
    )
    assert found == []
    assert {run.rule_id: run.outcome for run in report.checks}["DRV009"] == "pass"
    # a 1.5B parent cannot be such an expert: 12.88B per token is 8.6 times its size
    found, _ = _audit_dir(
        tmp_path,
        "---\nlicense: apache-2.0\nbase_model: sprout-labs/Sprout-1.5B\n---\n# A MoE\n",
        mixtral,
    )
    assert [(f.location.path, f.location.line) for f in found] == [("README.md", 3)]
    assert "active per token" in found[0].message


def test_a_base_named_in_the_card_and_name_or_path_is_one_finding(tmp_path: Path) -> None:
    cfg = {"_name_or_path": "sprout-labs/Sprout-7B"}
    cfg |= {
        k: v
        for k, v in config("repo__lizpreciatior__lzlv_70b_fp16_hf").items()
        if k != "_name_or_path"
    }
    found, _ = _audit_dir(
        tmp_path, "---\nlicense: llama2\nbase_model: sprout-labs/Sprout-7B\n---\n# Big\n", cfg
    )
    assert len(found) == 1
    assert (found[0].location.path, found[0].location.line) == ("README.md", 3)
    assert [(loc.path, loc.line) for loc in found[0].also] == [("config.json", 2)]
