"""Claims (CLM): benchmark scores and speed figures, and what they leave undisclosed."""

from __future__ import annotations

from pathlib import Path

from cardaudit.model import Finding, Report
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from scenarios import FIXTURES

HARNESS = "harness or scaffold"
DECODING = "decoding settings"


def _card(tmp_path: Path, body: str, front: str = "license: mit\n") -> Report:
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(f"---\n{front}---\n{body}")
    return audit(AuditRequest(target=str(model)), Policy())


def _findings(report: Report, rule_id: str) -> list[Finding]:
    return [f for f in report.findings if f.rule_id == rule_id]


def test_clover_scores_and_speed_are_unverifiable() -> None:
    clover = FIXTURES / "clover"
    report = audit(AuditRequest(target=str(clover / "model"), code=str(clover / "code")), Policy())
    # The code README's "reaches 68.2 on SWE-bench Verified and serves 180 tokens/s" repeats
    # the card's table score and speed figure: one claim each, with both places.
    (table,) = _findings(report, "CLM001")
    assert (table.location.path, table.location.line, table.location.repo) == (
        "README.md",
        36,
        "model",
    )
    assert table.severity == "warning"
    assert "SWE-bench Verified: 68.2; LiveCodeBench v6: 71.5; HumanEval: 92.1" in table.message
    assert table.message.endswith(
        "does not disclose: harness or scaffold, tools allowed, attempts (pass@k), "
        "single run or mean with spread, decoding settings; also stated in code:README.md"
    )
    assert "benchmark version" not in table.message  # "Verified" and "v6" are stated
    assert [(p.repo, p.line) for p in table.also] == [("code", 13)]

    (card_speed,) = _findings(report, "CLM002")
    assert (card_speed.location.path, card_speed.location.line) == ("README.md", 42)
    assert card_speed.severity == "warning"
    assert "180 tokens/s; 2.3x faster" in card_speed.message
    assert "the baseline and its conditions" in card_speed.message  # "the previous release"
    assert [(p.repo, p.line) for p in card_speed.also] == [("code", 13)]

    (speed,) = [c for c in report.facts.claims if c.kind == "speed"]
    assert speed.values == ("180 tokens/s", "2.3x faster")
    assert "hardware" in speed.missing


def _card_and_code(tmp_path: Path, card: str, code: str) -> Report:
    model, repo = tmp_path / "model", tmp_path / "code"
    model.mkdir(parents=True)
    repo.mkdir()
    (model / "README.md").write_text(f"---\nlicense: mit\n---\n{card}")
    (repo / "README.md").write_text(code)
    return audit(AuditRequest(target=str(model), code=str(repo)), Policy())


def test_a_score_repeated_in_other_words_is_one_claim(tmp_path: Path) -> None:
    card = (
        "# 雀鸟-7B\n\n## 评测结果\n\n| 基准 | 得分 |\n|---|---|\n"
        "| MMLU | 70.1 |\n| GSM8K | 81.4 |\n"
    )
    code = "# 雀鸟\n\n雀鸟-7B 在 MMLU 上取得 70.1 分，在 GSM8K 上取得 81.4 分。\n"
    report = _card_and_code(tmp_path, card, code)
    (claim,) = [c for c in report.facts.claims if c.kind.startswith("benchmark")]
    assert claim.kind == "benchmark_table"
    assert [(p.repo, p.path, p.line) for p in claim.locations] == [
        ("model", "README.md", 8),
        ("code", "README.md", 3),
    ]
    assert len(_findings(report, "CLM001")) == 1


def test_a_score_repeated_from_a_model_per_row_table_is_one_claim(tmp_path: Path) -> None:
    """A comparison table with a row per model and a column per benchmark: the sentence
    stating the audited model's row is that claim again, at a second place of the card."""
    body = (
        "# 莲花-14B\n\n- 在 C-Eval 上取得 82.3 分，MMLU 79.1 分\n\n## 对比\n\n"
        "| 模型 | 参数量 | C-Eval | MMLU |\n|---|---|---|---|\n"
        "| 莲花-14B | 14B | 82.3 | 79.1 |\n| Qwen2.5-14B-Instruct | 14B | 78.9 | 79.7 |\n"
    )
    report = _card(tmp_path, body)
    (claim,) = [c for c in report.facts.claims if c.kind.startswith("benchmark")]
    assert claim.kind == "benchmark_table"
    assert [(p.path, p.line) for p in claim.locations] == [("README.md", 10), ("README.md", 6)]
    (finding,) = _findings(report, "CLM001")
    assert finding.message.endswith("; also stated elsewhere in README.md")
    assert [(p.path, p.line) for p in finding.also] == [("README.md", 6)]
    # a score the table gives no benchmark of ours stays its own claim
    (tmp_path / "other").mkdir()
    other = _card(tmp_path / "other", body.replace("MMLU 79.1 分", "MMLU 80.5 分"))
    assert len([c for c in other.facts.claims if c.kind.startswith("benchmark")]) == 2


def test_scores_on_benchmarks_of_non_english_cards_are_claims(tmp_path: Path) -> None:
    body = "# Sakura-7B\n\n- JGLUE で平均 78.4 を達成\n- KMMLU 점수 51.2\n"
    report = _card(tmp_path, body)
    # one list, one claim (as for English bullets), with both scores
    assert [(c.kind, c.line, c.values) for c in report.facts.claims] == [
        ("benchmark", 6, ("78.4", "51.2"))
    ]


def test_a_sentence_with_another_score_stays_its_own_claim(tmp_path: Path) -> None:
    card = "# Finch-7B\n\n## Results\n\n| Benchmark | Score |\n|---|---|\n| MMLU | 70.1 |\n"
    code = "# Finch\n\nOur latest checkpoint now scores 72.4 on MMLU.\n"
    report = _card_and_code(tmp_path, card, code)
    claims = [c for c in report.facts.claims if c.kind.startswith("benchmark")]
    assert sorted(c.kind for c in claims) == ["benchmark", "benchmark_table"]
    assert all(len(c.locations) == 1 for c in claims)
    assert len(_findings(report, "CLM001")) == 2


def test_a_speed_figure_repeated_is_one_claim(tmp_path: Path) -> None:
    card = "# Finch-7B\n\nFinch-7B decodes 95 tokens/s on one GPU.\n"
    code = "# Finch\n\nServing: 95 tokens/s. Prefill: 3,000 tokens/s.\n"
    report = _card_and_code(tmp_path, card, code)
    # The card's figure is one of the code README's: the claim stating more holds both.
    (speed,) = [c for c in report.facts.claims if c.kind == "speed"]
    assert [(p.repo, p.line) for p in speed.locations] == [("code", 3), ("model", 6)]
    other_figure = "# Finch\n\nServing: 120 tokens/s.\n"
    speeds = [
        c
        for c in _card_and_code(tmp_path / "again", card, other_figure).facts.claims
        if c.kind == "speed"
    ]
    assert len(speeds) == 2  # another figure: another claim


def test_disclosure_in_an_evaluation_section_counts(tmp_path: Path) -> None:
    body = (
        "# M\n\n## Results\n\n| Benchmark | M |\n|---|---|\n| SWE-bench Lite | 40.1 |\n\n"
        "## Evaluation details\n\n"
        "Scores use the OpenHands scaffold with the bash tool, pass@1 averaged over 3 runs "
        "(± 0.8), temperature 0.\n"
    )
    report = _card(tmp_path, body)
    (claim,) = report.facts.claims
    assert (claim.kind, claim.line, claim.missing) == ("benchmark_table", 8, ())
    assert _findings(report, "CLM001") == []


def test_unversioned_track_is_reported_with_its_name(tmp_path: Path) -> None:
    body = (
        "# M\n\nM scores 61.0 on SWE-bench with pass@1, temperature 0, OpenHands, no tools, "
        "one run.\n"
    )
    report = _card(tmp_path, body)
    (finding,) = _findings(report, "CLM001")
    assert (finding.location.line, finding.severity) == (6, "info")
    assert "benchmark version and track (SWE-bench)" in finding.message


def test_a_big_table_is_one_finding(tmp_path: Path) -> None:
    rows = "".join(f"| Model {i} | {50 + i}.0 | {30 + i}.5 |\n" for i in range(40))
    body = f"# M\n\n## Scores\n\n| Model | MMLU | GSM8K |\n|---|---|---|\n{rows}"
    report = _card(tmp_path, body)
    (finding,) = _findings(report, "CLM001")
    assert finding.location.line == 8
    assert "… (40 in all)" in finding.message
    (claim,) = report.facts.claims
    assert len(claim.values) == 40
    assert claim.values[0] == "Model 0: MMLU 50.0, GSM8K 30.5"


def test_prose_claims_of_one_section_are_grouped(tmp_path: Path) -> None:
    body = (
        "# M\n\n## News\n\n- M-7B achieves 79.9 pass@1 on HumanEval.\n"
        "- M-13B achieves 83.2 pass@1 on GSM8k and 33.0 on MATH.\n"
    )
    report = _card(tmp_path, body)
    (finding,) = _findings(report, "CLM001")
    assert finding.location.line == 8
    assert "79.9; 83.2; 33.0" in finding.message
    assert HARNESS in finding.message and DECODING in finding.message


def test_numbers_that_are_not_scores(tmp_path: Path) -> None:
    body = (
        "# M\n\nLlama 3.2 is intended for use in multiple languages.\n\n"
        "It outperforms ChatGPT 3.5 on MMLU (see Figure 1).\n\n"
        "```\nMMLU 99.9 tokens/s 1000\n```\n"
    )
    report = _card(tmp_path, body)
    # no score, no speed figure: only the comparison itself, a claim without a number
    assert [c.kind for c in report.facts.claims] == ["superiority"]
    assert [f.rule_id for f in report.findings if f.rule_id.startswith("CLM")] == ["CLM004"]


def test_a_number_with_a_unit_is_never_a_score() -> None:
    from cardaudit.extract.claims import claim_table, scores_in

    table = claim_table()
    assert scores_in("It is 16 GB in BF16 and scores 69.4 on MMLU.", table) == ["69.4"]
    assert scores_in("MMLU: 71.2 with 32 layers on 2 GPUs at 45 tokens/s", table) == ["71.2"]
    assert scores_in("在CMMLU上得分为78.3，显存15 GB", table) == ["78.3"]
    assert scores_in("MMLU 64.5%", table) == ["64.5%"]  # a percentage is a score


def test_speed_with_its_conditions_is_not_reported(tmp_path: Path) -> None:
    body = (
        "# M\n\nOn one H100 in FP8 at batch size 8, with 1024 input and 512 output tokens, M "
        "reaches 2,400 tokens/s aggregate, 1.8x faster than Llama-3-8B under the same setup.\n"
    )
    report = _card(tmp_path, body)
    (claim,) = report.facts.claims
    assert (claim.kind, claim.missing) == ("speed", ())
    assert _findings(report, "CLM002") == []


def test_vague_baseline_is_undisclosed(tmp_path: Path) -> None:
    body = (
        "# M\n\nOn an H100 in BF16, batch size 1, 512 in / 512 out, per request: "
        "3x faster than leading models.\n"
    )
    report = _card(tmp_path, body)
    (finding,) = _findings(report, "CLM002")
    assert finding.severity == "info"
    assert finding.message.endswith("does not disclose: the baseline and its conditions")


def test_model_index_without_source_is_noted(tmp_path: Path) -> None:
    front = (
        "license: mit\nmodel-index:\n  - name: M\n    results:\n"
        "      - dataset: {name: GSM8K, type: gsm8k}\n"
        "        metrics: [{type: accuracy, value: 71.4}]\n"
        "      - dataset: {name: MMLU, type: mmlu}\n"
        "        metrics: [{type: accuracy, value: 60.0, verified: true}]\n"
    )
    report = _card(tmp_path, "# M\n", front)
    (finding,) = _findings(report, "CLM003")
    assert (finding.location.line, finding.location.key, finding.severity) == (
        3,
        "model-index",
        "info",
    )
    assert finding.message.endswith("GSM8K accuracy: 71.4")


def test_odd_model_index_does_not_crash(tmp_path: Path) -> None:
    front = "license: mit\nmodel-index:\n  - results: 3\n  - 7\n  - {results: [{metrics: 1}]}\n"
    report = _card(tmp_path, "# M\n", front)
    assert report.facts.claims == ()
    assert all(run.outcome != "error" for run in report.checks)


def test_a_method_disclosed_in_chinese_or_japanese_counts(tmp_path: Path) -> None:
    # the harness right after CJK text ("使用OpenCompass"), greedy decoding and a single run
    # worded in Chinese and Japanese disclose as their English equivalent does
    zh = (
        "# 悟道-7B\n\n在CMMLU上，本模型得分为78.3"
        "（使用OpenCompass v0.3，5-shot，贪心解码，单次运行）。\n"
    )
    ja = (
        "# Swallow-8B\n\n本モデルはJMMLUで55.8点を達成しました"
        "(評価:llm-jp-eval v1.3、4-shot、貪欲デコーディング、1回実行)。\n"
    )
    en = (
        "# Test-7B\n\nOn CMMLU, this model scores 78.3"
        " (OpenCompass v0.3, 5-shot, greedy decoding, single run).\n"
    )
    for name, body in (("zh", zh), ("ja", ja), ("en", en)):
        (tmp_path / name).mkdir()
        report = _card(tmp_path / name, body)
        assert [c.kind for c in report.facts.claims] == ["benchmark"], name
        assert _findings(report, "CLM001") == [], name


def test_cjk_wordings_of_the_checklist_are_needed(tmp_path: Path) -> None:
    # without them, the same sentence still lacks decoding and runs (the words are what
    # discloses, not the CJK text around the score)
    body = "# 悟道-7B\n\n在CMMLU上，本模型得分为78.3（使用OpenCompass v0.3，5-shot）。\n"
    (finding,) = _findings(_card(tmp_path, body), "CLM001")
    assert (finding.location.path, finding.location.line) == ("README.md", 6)
    assert DECODING in finding.message and "single run or mean with spread" in finding.message
    assert HARNESS not in finding.message
    # a mean of several runs and a temperature, in Korean
    (tmp_path / "ko").mkdir()
    ko = "# K-7B\n\nKMMLU 점수 51.2 (lm-eval-harness, 5-shot, 온도 0.7, 3회 평균 ± 0.4)\n"
    assert _findings(_card(tmp_path / "ko", ko), "CLM001") == []


def test_a_cjk_full_stop_ends_a_sentence_and_a_multiple_is_a_speed_figure(
    tmp_path: Path,
) -> None:
    body = (
        "# 灵犀-7B\n\n"
        "基座模型Qwen2.5-7B-Instruct在MMLU上得分74.2。本模型在MMLU上得分75.0，比基座模型快2倍。\n"
    )
    report = _card(tmp_path, body)
    # the base's score is the base's claim, the model's its own
    scores = [(c.about, c.values) for c in report.facts.claims if c.kind == "benchmark"]
    assert scores == [("base model", ("74.2",)), ("audited", ("75.0",))]
    by_kind = {c.kind: c for c in report.facts.claims}
    # "2" of "快2倍" (twice as fast) is no score; it is a speed figure of its own sentence
    assert (by_kind["speed"].values, by_kind["speed"].line) == (("快2倍",), 6)
    assert by_kind["speed"].text == "本模型在MMLU上得分75.0，比基座模型快2倍。"
    (speed,) = _findings(report, "CLM002")
    assert (speed.severity, speed.location.line) == ("warning", 6)


def test_cjk_multiples_are_speed_figures_not_scores() -> None:
    from cardaudit.extract.claim_text import scores_in, speed_in
    from cardaudit.extract.claims import claim_table

    table = claim_table()
    for text, figure in (
        ("推論が2倍速い", "2倍速い"),
        ("기존 모델보다 2배 빠른 추론", "2배 빠른"),
        ("比基座模型快2.5倍", "快2.5倍"),
    ):
        assert speed_in(text, table) == [figure]
        assert scores_in(text, table) == []
