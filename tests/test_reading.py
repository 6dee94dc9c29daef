"""Reading prose: which model a block is about, one finding per promise and claim,
commitments and claims in any wording (fixtures written for these tests)."""

from __future__ import annotations

from pathlib import Path

from cardaudit.extract.claims import benchmarks_in, claim_table, scores_in
from cardaudit.extract.markdown_prose import parse_document
from cardaudit.extract.model_names import short_forms
from cardaudit.extract.promises import mentions, promise_table
from cardaudit.extract.reading import (
    AUDITED,
    PAGE,
    ModelNames,
    aliases_of,
    core_and_sizes,
    prose_table,
    read,
)
from cardaudit.model import Location, Report
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from scenarios import scenario_report


def _findings(report: Report, prefix: str = "") -> list[tuple[str, str, str, str, int]]:
    return sorted(
        (f.rule_id, f.severity, f.location.repo, f.location.path or "", f.location.line or 0)
        for f in report.findings
        if f.rule_id.startswith(prefix)
    )


def _names(*names: str) -> ModelNames:
    table = prose_table()
    aliases = set().union(*(aliases_of(name, table) for name in names))
    stems = {name.split("-")[0].lower() for name in names}
    sizes = set().union(*(core_and_sizes(name, table)[1] for name in names))
    return ModelNames(frozenset(aliases), frozenset(stems), sizes=frozenset(sizes))


# --------------------------------------------------------------------------- subjects


def test_family_readme_news_about_siblings_charges_nothing() -> None:
    report = scenario_report("prm-family-news")
    assert _findings(report, "PRM") == [] and _findings(report, "CLM") == []
    about = {(p.item, p.about) for p in report.facts.promises}
    assert about == {("RL training code", "Larch-2-70B"), ("Paper", "Larch-2-70B")}
    claims = {(c.kind, c.about, c.line) for c in report.facts.claims}
    assert claims == {("benchmark", "Larch-1.5-13B", 8), ("superiority", "Larch-1.5-3B", 9)}


def test_gguf_repo_carrying_its_originals_card_inherits_at_info() -> None:
    report = scenario_report("prm-gguf-original-card")
    assert sorted(_findings(report, "PRM") + _findings(report, "CLM")) == [
        ("CLM001", "info", "model", "README.md", 21),
        ("PRM002", "info", "model", "README.md", 17),
    ]
    assert all(
        f.message.count("inherited from the original card") == 1
        for f in report.findings
        if f.rule_id[:3] in ("PRM", "CLM")
    )
    (promise,) = report.facts.promises
    assert (promise.about, promise.inherited) == (AUDITED, True)


def test_promise_in_card_and_code_readme_is_one_finding_with_two_locations() -> None:
    report = scenario_report("prm-card-and-code")
    assert _findings(report, "PRM") == [("PRM001", "warning", "model", "README.md", 9)]
    (finding,) = [f for f in report.findings if f.rule_id == "PRM001"]
    assert finding.also == (Location("README.md", 7, repo="code"),)
    assert finding.message.endswith("also stated in code:README.md")
    (promise,) = report.facts.promises
    assert [(at.repo, at.line) for at in promise.locations] == [("model", 9), ("code", 7)]


def test_subjects_from_headings_leading_names_and_tables() -> None:
    text = (
        "# Oak-2-8B\n\nOak-2-8B drafts emails.\n\n"
        "## Oak-2-70B\n\nThe big sibling.\n\n"
        "## Comparison\n\nOak-2-70B is larger. Our model is faster than Oak-2-70B.\n\n"
        "| Model | MMLU |\n|---|---|\n| Oak-2-70B | 80 |\n| Pine-9B | 70 |\n\n"
        "| Model | MMLU |\n|---|---|\n| Oak-2-8B | 60 |\n| Oak-2-70B | 80 |\n"
    )
    reading = read(parse_document("README.md", text), _names("Oak-2-8B"))
    assert reading.at(3).about == AUDITED
    assert reading.at(7).about == "Oak-2-70B"  # under a heading naming the sibling
    assert reading.at(11).about == "Oak-2-70B"  # the block starts with the sibling's name
    first, second = reading.tables
    assert reading.table_subject(first).about == "Oak-2-70B"
    assert reading.table_subject(second).about == AUDITED


def test_sizes_tell_a_sibling_from_the_model_itself() -> None:
    names = _names("Llama-3.2-3B-Instruct")
    assert names.is_audited("Llama 3.2") and names.is_audited("Llama-3.2-3B")
    assert not names.is_audited("Llama-3.2-1B") and names.is_other("Llama-3.2-1B")
    bloom = ModelNames(frozenset(aliases_of("bloom", prose_table())), frozenset({"bloom"}))
    assert bloom.is_audited("BLOOM-176B")


def _card_claims(tmp_path: Path, body: str) -> Report:
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(f"---\nlicense: mit\n---\n{body}", encoding="utf-8")
    return audit(AuditRequest(target=str(model)), Policy())


def test_a_self_labelled_column_makes_the_table_the_audited_models(tmp_path: Path) -> None:
    body = (
        "# Heron-7B\n\n| Benchmark | Ours | Mistral-7B-Instruct-v0.2 |\n|---|---|---|\n"
        "| MMLU | 64.0 | 60.1 |\n"
    )
    report = _card_claims(tmp_path, body)
    assert [(c.kind, c.about) for c in report.facts.claims] == [("benchmark_table", "audited")]
    assert _findings(report, "CLM") == [("CLM001", "warning", "model", "README.md", 6)]


def test_a_chinese_self_labelled_column(tmp_path: Path) -> None:
    body = "# 灵犀-7B\n\n| 评测 | 本模型 | Qwen2-7B |\n|---|---|---|\n| CMMLU | 80.2 | 78.1 |\n"
    report = _card_claims(tmp_path, body)
    assert [(c.kind, c.about) for c in report.facts.claims] == [("benchmark_table", "audited")]


def test_a_short_form_of_the_audited_name_is_the_audited_model(tmp_path: Path) -> None:
    body = (
        "# Openly-Wren-13B\n\n| Benchmark | Wren-13B | Llama-2-13B |\n|---|---|---|\n"
        "| MMLU | 58.0 | 55.1 |\n\nWren-70B reaches 70.2 on MMLU.\n"
    )
    report = _card_claims(tmp_path, body)
    assert [(c.kind, c.about) for c in report.facts.claims] == [
        ("benchmark_table", "audited"),
        ("benchmark", "Wren-70B"),
    ]
    assert _findings(report, "CLM") == [("CLM001", "warning", "model", "README.md", 6)]


def test_short_forms_of_a_name() -> None:
    table = prose_table()
    assert short_forms("Llama-3.1-Orca-8B", table) == {"orca"}
    assert short_forms("Zephyr-Nova-7B-Instruct", table) == {"nova"}
    assert short_forms("acme/Kestrel-Alpha-Beta-7B", table) == {"alphabeta", "beta"}
    assert short_forms("Heron-7B", table) == set()


# --------------------------------------------------------------------------- commitments


def _promised(text: str) -> list[tuple[str, str]]:
    found, _ = mentions(parse_document("README.md", text), promise_table())
    return [(m.artifact, m.item) for m in found]


def test_chinese_roadmap_and_commitments() -> None:
    report = scenario_report("prm-cjk-roadmap")
    assert sorted(_findings(report, "PRM") + _findings(report, "CLM")) == [
        ("CLM001", "warning", "model", "README.md", 18),
        ("PRM001", "warning", "model", "README.md", 14),
        ("PRM002", "info", "model", "README.md", 13),
        ("PRM002", "info", "model", "README.md", 20),
    ]
    items = {(p.artifact, p.item) for p in report.facts.promises}
    assert items == {
        ("training_code", "训练代码"),
        ("paper", "技术报告"),
        ("evaluation_code", "评测代码"),
    }


def test_chinese_model_names_written_against_chinese_text() -> None:
    """Names in CJK text have no spaces around them: "我们发布了云雀-7B-Chat的权重" names the
    audited model, "姊妹模型云雀-72B在C-Eval上…" its 72B sibling, and "基于Qwen2.5-7B-Instruct微调"
    the base (a name ends where the Latin part does)."""
    report = scenario_report("prose-cjk-names")
    assert _findings(report, "CLM") + _findings(report, "PRM") == [
        ("CLM001", "warning", "model", "README.md", 17),  # the table with the model's own row
        ("CLM002", "warning", "model", "README.md", 22),
        ("PRM002", "info", "model", "README.md", 26),
    ]
    about = {(c.kind, c.line): c.about for c in report.facts.claims}
    assert about[("benchmark", 13)] == "云雀-72B"  # the sibling's score: kept, not charged
    assert about[("benchmark_table", 17)] == AUDITED
    names = _names("云雀-7B-Chat")
    names = ModelNames(names.aliases, names.stems, sizes=names.sizes, cores=frozenset({"云雀"}))
    assert names.scan("我们发布了云雀-7B-Chat的权重")[0] is True
    assert names.scan("姊妹模型云雀-72B在C-Eval上达到91.2分") == (False, [(4, "云雀-72B")])
    assert names.scan("基于Qwen2.5-7B-Instruct微调", loose=True) == (
        False,
        [(2, "Qwen2.5-7B-Instruct")],
    )


def test_a_possessive_naming_another_model_is_about_that_model(tmp_path: Path) -> None:
    model = tmp_path / "heron"
    model.mkdir()
    (model / "README.md").write_text(
        "---\nlicense: mit\n---\n# Heron 7B\n\n## Roadmap\n\n"
        "Our sibling Heron 70B will be released with a paper.\n\n"
        "Our model will be released with a paper too.\n"
    )
    report = audit(AuditRequest(target=str(model)), Policy())
    about = {p.line: p.about for p in report.facts.promises}
    assert about == {8: "Heron 70B", 10: AUDITED}
    assert [f.location.line for f in report.findings if f.rule_id.startswith("PRM")] == [10]


def test_commitments_in_japanese_and_korean() -> None:
    assert _promised("学習コードは近日公開予定です。") == [("training_code", "学習コード")]
    assert _promised("학습 코드는 곧 공개 예정입니다.") == [("training_code", "학습 코드")]


def test_a_deliverable_said_to_be_forthcoming_is_a_promise() -> None:
    assert _promised("A technical report is forthcoming.") == [("paper", "technical report")]
    assert _promised("(More evaluation metrics forthcoming upon completion of the protocol.)") == [
        ("other", "evaluation metrics")
    ]
    assert _promised("The paper is in preparation.") == [("paper", "paper")]
    # "forthcoming" as an attribute of something else commits to nothing.
    assert _promised("We thank the forthcoming reviewers for their forthcoming feedback.") == []


def test_an_unknown_item_is_kept_as_other() -> None:
    assert _promised("We will release commercial models beyond the open ones.") == [
        ("other", "commercial models")
    ]
    assert _promised("We plan to open-source the reward model soon.") == [("other", "reward model")]


def test_past_tense_reader_conditionals_and_marketing_are_not_promises() -> None:
    for text in (
        "We released the SFT code last week.",
        "You will need a GPU with 24 GB.",
        "An API will be available at `http://localhost:8000/v1`.",
        "Our model will revolutionize contract review.",
    ):
        assert _promised(text) == [], text


def test_an_other_item_is_delivered_by_its_own_words(tmp_path: Path) -> None:
    model = tmp_path / "model"
    (model / "reward").mkdir(parents=True)
    (model / "README.md").write_text(
        "---\nlicense: mit\n---\n# Elm-1B\n\nWe will open-source the reward model soon.\n"
    )
    (model / "reward" / "reward_model.py").write_text("# reward model\n")
    report = audit(AuditRequest(str(model)), Policy())
    (promise,) = report.facts.promises
    assert (promise.artifact, promise.status) == ("other", "delivered")
    assert "reward/reward_model.py" in (promise.reason or "")


# --------------------------------------------------------------------------- claims


def test_superiority_claim_without_and_with_a_method_link() -> None:
    bare = scenario_report("clm-superiority")
    assert _findings(bare, "CLM") == [
        ("CLM004", "info", "model", "README.md", 16),
        ("CLM004", "warning", "model", "README.md", 7),  # the headline
    ]
    disclosed = scenario_report("clm-superiority-disclosed")
    assert _findings(disclosed, "CLM") == []


def test_benchmark_names_across_spelling_variants_and_cjk_numbers() -> None:
    table = claim_table()
    for text in (
        "Human Eval",
        "human-eval",
        "MT Bench",
        "Arena Hard",
        "LiveCodeBench",
        "Live Code Bench",
        "在MMLU上",
    ):
        assert benchmarks_in(text, table), text
    assert scores_in("在MMLU上的得分为85.3％", table) == ["85.3％"]


def test_benchmark_results_shown_only_as_an_image(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(
        "---\nlicense: mit\n---\n# Ash-3B\n\n## Results\n\n"
        "![MMLU and GSM8K results](figures/benchmark_results.png)\n"
    )
    report = audit(AuditRequest(str(model)), Policy())
    (claim,) = report.facts.claims
    assert claim.kind == "benchmark_image"
    assert _findings(report, "CLM") == [("CLM001", "warning", "model", "README.md", 8)]
    (finding,) = [f for f in report.findings if f.rule_id == "CLM001"]
    assert "visible numbers (shown only in an image)" in finding.message


def test_page_subject_is_charged() -> None:
    text = "# Card\n\nThe evaluation code will be released soon.\n"
    reading = read(parse_document("README.md", text), _names("Maple-1B"))
    assert reading.at(3).about == PAGE and reading.at(3).charged


# --------------------------------------------------------------------------- one mechanism


def _local(tmp_path: Path, card: str) -> Report:
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(card)
    return audit(AuditRequest(str(model)), Policy())


def test_figures_and_lineage_of_another_models_block_are_not_the_models(tmp_path: Path) -> None:
    report = _local(
        tmp_path,
        "---\nlicense: mit\nmodel_name: Oak-2-8B\n---\n# Oak-2-8B\n\n"
        "Oak-2-8B has 8B parameters and is fine-tuned from Acorn-8B.\n\n"
        "## Oak-2-70B\n\nOak-2-70B has 70B parameters and is fine-tuned from Acorn-70B.\n",
    )
    figures = {(f["line"], f.get("about_model", True)) for f in report.facts.extra["figures"]}
    assert (7, True) in figures and (11, False) in figures
    assert [ref.id for ref in report.facts.base_models] == ["Acorn-8B"]


def test_chinese_marketing_is_not_a_commitment() -> None:
    assert _promised("本模型会提供更准确的回答。") == []
    assert _promised("我们会在下个月开源训练代码。") == [("training_code", "训练代码")]
