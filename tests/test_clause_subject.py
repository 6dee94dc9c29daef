"""Which model a clause, a parenthetical or a table column is about (extract/clause_subject.py,
extract/figure_subject.py): figures and claims about a teacher, a base, a sibling or a
third party's report are never charged to the audited model (fixtures written for these tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cardaudit.extract.clause_subject import clause_span, clause_subject
from cardaudit.extract.reading import (
    AUDITED,
    PAGE_SUBJECT,
    ModelNames,
    aliases_of,
    canonical,
    prose_table,
)
from cardaudit.model import Report
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest

LLAMA_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "rope_theta": 500000.0,
    "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}
MISTRAL_7B = {
    **LLAMA_8B,
    "architectures": ["MistralForCausalLM"],
    "model_type": "mistral",
    "vocab_size": 32000,
    "max_position_embeddings": 16384,
    "rope_theta": 10000.0,
}


def _audit(tmp_path: Path, front: str, body: str, config: dict[str, Any] | None = None) -> Report:
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(_readme(front, body), encoding="utf-8")
    if config is not None:
        (model / "config.json").write_text(json.dumps(config))
    return audit(AuditRequest(target=str(model)), Policy())


def _readme(front: str, body: str) -> str:
    return f"---\n{front}---\n{body}"


def _line(front: str, body: str, needle: str) -> int:
    """The README line holding ``needle``."""
    text = _readme(front, body)
    return text[: text.index(needle)].count("\n") + 1


def _findings(report: Report, *prefixes: str) -> list[tuple[str, str, str, int]]:
    return sorted(
        (f.rule_id, f.severity, f.location.path or "", f.location.line or 0)
        for f in report.findings
        if f.rule_id.startswith(prefixes)
    )


def _claims(report: Report) -> list[tuple[str, int, tuple[str, ...], str, bool]]:
    return [(c.kind, c.line, c.values, c.about, c.reported) for c in report.facts.claims]


def _figures(report: Report) -> list[tuple[str, int, float, bool]]:
    return [
        (f["kind"], f["line"], round(f["value"], 3), f.get("about_model", True))
        for f in report.facts.extra["figures"]
    ]


def _names(name: str, *, sizes: frozenset[str] = frozenset(), bases: tuple = ()) -> ModelNames:
    table = prose_table()
    known = frozenset(canonical(base) for base in bases)
    return ModelNames(frozenset(aliases_of(name, table)), frozenset(), known, sizes, bases=bases)


# --------------------------------------------------------------------------- clauses


def test_a_clause_ends_at_a_semicolon_or_sentence_but_not_inside_brackets() -> None:
    text = "Kestrel-7B scores 61.0 (5-shot; greedy); the base model scores 58.2. It is fast."
    assert text[slice(*clause_span(text, text.index("61.0")))] == (
        "Kestrel-7B scores 61.0 (5-shot; greedy)"
    )
    assert text[slice(*clause_span(text, text.index("58.2")))] == " the base model scores 58.2"


def test_a_parenthetical_after_a_named_model_is_that_models() -> None:
    names = _names("Kestrel-7B", bases=("acme/Falcon-40B",))
    text = "We pruned Falcon-40B (41.3B parameters, 2K context) to Kestrel-7B (6.9B parameters)."
    teacher = clause_subject(names, PAGE_SUBJECT, text, text.index("41.3B"))
    assert teacher.about == "Falcon-40B" and not teacher.charged
    own = clause_subject(names, PAGE_SUBJECT, text, text.index("6.9B"))
    assert own.about == AUDITED and own.charged


def test_a_base_reference_a_sibling_size_and_a_report_are_not_charged() -> None:
    names = _names("Kestrel-7B", sizes=frozenset({"7b"}), bases=("acme/Falcon-40B",))
    for text, about, reported in [
        ("**A:** The base model needs 80 GB.", "acme/Falcon-40B", False),
        ("Our 40B model needs 80 GB.", "40B model", False),
        ("The teacher model needs 4x A100; the student fits on one GPU.", "acme/Falcon-40B", False),
        ("According to its authors it needs 80 GB.", "page", True),
        ("基座模型Falcon-40B需要80GB显存（官方数据）。", "Falcon-40B", True),
    ]:
        at = text.index("4" if "4x" in text else "80")
        subject = clause_subject(names, PAGE_SUBJECT, text, at)
        assert (subject.about, subject.reported, subject.charged) == (about, reported, False), text
    # the clause after the teacher's is the audited model's again
    text = "The teacher model needs 4x A100; the student fits on one GPU."
    assert clause_subject(names, PAGE_SUBJECT, text, text.index("one")).charged


def test_cjk_commas_join_clauses_that_keep_or_change_the_subject() -> None:
    names = _names("灵犀-7B", sizes=frozenset({"7b"}), bases=("01-ai/Yi-34B",))
    text = "基础模型Yi-34B在MMLU上得分74.2、在GSM8K上得分80.1，本模型在MMLU上得分75.0。"
    for score, about in (("74.2", "Yi-34B"), ("80.1", "Yi-34B"), ("75.0", "page")):
        assert clause_subject(names, PAGE_SUBJECT, text, text.index(score)).about == about
    text = "ベースモデルのYi-34BはJMMLUで45.2点ですが、本モデルは55.8点を達成しました。"
    assert clause_subject(names, PAGE_SUBJECT, text, text.index("45.2")).about == "Yi-34B"
    assert clause_subject(names, PAGE_SUBJECT, text, text.index("55.8")).charged


def test_a_times_figure_is_not_a_score() -> None:
    from cardaudit.extract.claims import claim_table, scores_in

    assert scores_in("本模型在MMLU上得分75.0，比基座模型快2倍。", claim_table()) == ["75.0"]


# --------------------------------------------------------------------------- item: figures


DISTILLED = """
# Llama-3.1-Kite-8B

We compressed Llama-3.1-70B-Instruct (70.6B parameters, 141 GB in BF16, 128K context) into a
compact 8B student.

The teacher model needs 2x H100 80GB; the student runs on one RTX 4090 (24 GB).

| | Teacher | Student |
|---|---|---|
| Parameters | 70.6B | 8.0B |
| Context | 131072 | 8192 |
| Memory (BF16) | 141 GB | 16.1 GB |
"""


def test_a_teachers_parenthetical_and_table_column_are_not_the_student(tmp_path: Path) -> None:
    front = "license: mit\nbase_model: meta-llama/Llama-3.1-70B-Instruct\n"
    report = _audit(tmp_path, front, DISTILLED, LLAMA_8B)
    assert _findings(report, "MEM") == []
    prose, gpus, params, context, memory = (
        _line(front, DISTILLED, needle)
        for needle in ("We compressed", "The teacher", "| Parameters", "| Context", "| Memory")
    )
    assert _figures(report) == [
        ("context", prose, 131072, False),
        ("parameters_total", prose, 70.6e9, False),
        ("gpu", gpus, 160, False),  # the teacher's clause
        ("gpu", gpus, 24, True),  # the student's clause after the semicolon
        ("memory", gpus, 24e9, True),
        ("parameters_total", params, 70.6e9, False),  # the Teacher column
        ("parameters_total", params, 8.0e9, True),
        ("context", context, 131072, False),
        ("context", context, 8192, True),
        ("memory", memory, 141e9, False),
        ("memory", memory, round(16.1e9, 3), True),
    ]
    assert report.facts.memory.details["context"]["stated"] == 8192


def test_the_students_own_wrong_figure_is_still_found(tmp_path: Path) -> None:
    body = DISTILLED.replace("| Context | 131072 | 8192 |", "| Context | 131072 | 32768 |")
    front = "license: mit\nbase_model: meta-llama/Llama-3.1-70B-Instruct\n"
    report = _audit(tmp_path, front, body, LLAMA_8B)
    line = _line(front, body, "| Context")
    assert _findings(report, "MEM") == [("MEM005", "warning", "README.md", line)]
    (finding,) = [f for f in report.findings if f.rule_id == "MEM005"]
    assert "32,768" in finding.message and "131,072" not in finding.message
    assert report.facts.memory.details["context"]["stated"] == 32768


def test_the_bases_advertised_context_is_not_the_fine_tunes(tmp_path: Path) -> None:
    body = (
        "# Wren-Mistral-7B\n\n**Q: How long a context?**\n"
        "A: Mistral-7B-v0.1 was sold with a 4k context; our fine-tune supports 16k with RoPE.\n"
    )
    front = "license: apache-2.0\nbase_model: mistralai/Mistral-7B-v0.1\n"
    report = _audit(tmp_path, front, body, MISTRAL_7B)
    line = _line(front, body, "A: Mistral")
    assert [f for f in _figures(report) if f[0] == "context"] == [
        ("context", line, 16384, True),
        ("context", line, 4096, False),
    ]
    assert report.facts.memory.details["context"]["stated"] == 16384
    assert _findings(report, "MEM") == []


def test_one_wrong_context_in_prose_and_table_is_one_finding(tmp_path: Path) -> None:
    body = (
        "# Kite-8B\n\nKite-8B handles a 128K context window.\n\n"
        "| Property | Value |\n|---|---|\n| Context | 131072 |\n| Parameters | 70B |\n\n"
        "Kite-8B has 70B parameters.\n"
    )
    report = _audit(tmp_path, "license: mit\n", body, LLAMA_8B)
    prose, row, params, sentence = (
        _line("license: mit\n", body, needle)
        for needle in ("Kite-8B handles", "| Context", "| Parameters", "Kite-8B has")
    )
    assert _findings(report, "MEM") == [
        ("MEM001", "warning", "README.md", params),
        ("MEM005", "warning", "README.md", prose),
    ]
    by_rule = {f.rule_id: f for f in report.findings}
    assert [p.line for p in by_rule["MEM005"].also] == [row]
    assert by_rule["MEM005"].message.endswith("; also stated elsewhere in README.md")
    assert [p.line for p in by_rule["MEM001"].also] == [sentence]


# --------------------------------------------------------------------------- item: claims


def test_claims_about_a_sibling_a_base_or_a_report_are_not_charged(tmp_path: Path) -> None:
    body = (
        "# Heron-7B\n\n"
        "Our 34B model scores 81.2 on MMLU and decodes 30 tokens/s on an A100.\n\n"
        "Falcon-40B reaches 55.4 on GSM8K.\n\n"
        "The base model scores 63.2 on MMLU according to its paper.\n\n"
        "The original checkpoint is 14 GB and scores 61.0 on HellaSwag (as reported by TII).\n\n"
        "Heron-7B scores 70.1 on MMLU.\n"
    )
    front = "license: mit\nbase_model: tiiuae/falcon-7b\n"
    report = _audit(tmp_path, front, body)
    sibling, other, base, own = (
        _line(front, body, needle)
        for needle in ("Our 34B", "Falcon-40B", "The base", "Heron-7B scores")
    )
    assert _claims(report) == [
        ("benchmark", sibling, ("81.2",), "34B model", False),
        ("speed", sibling, ("30 tokens/s",), "34B model", False),
        ("benchmark", other, ("55.4",), "Falcon-40B", False),
        # one claim per subject and section: the base's two reported scores ("14 GB" is none)
        ("benchmark", base, ("63.2", "61.0"), "tiiuae/falcon-7b", True),
        ("benchmark", own, ("70.1",), "audited", False),
    ]
    assert _findings(report, "CLM") == [("CLM001", "warning", "README.md", own)]


def test_one_sentence_about_two_models_is_one_claim_each(tmp_path: Path) -> None:
    body = "# Heron-7B\n\nHeron-7B scores 70.1 on MMLU; the base model scores 65.0 on MMLU.\n"
    front = "license: mit\nbase_model: tiiuae/falcon-7b\n"
    report = _audit(tmp_path, front, body)
    assert [(c.values, c.about) for c in report.facts.claims] == [
        (("70.1",), "audited"),
        (("65.0",), "tiiuae/falcon-7b"),
    ]
    line = _line(front, body, "Heron-7B scores")
    assert _findings(report, "CLM") == [("CLM001", "warning", "README.md", line)]


def test_a_quantized_repo_reports_its_originals_scores(tmp_path: Path) -> None:
    body = (
        "# Falcon-7B-Instruct-AWQ\n\n## About the source model\n\n"
        "The original Falcon-7B-Instruct has 7.2B parameters. By its authors' account it "
        "scores 54.1 on MMLU, according to the TII blog.\n"
    )
    front = (
        "license: apache-2.0\nbase_model: tiiuae/falcon-7b-instruct\n"
        "base_model_relation: quantized\n"
    )
    report = _audit(tmp_path, front, body)
    line = _line(front, body, "The original")
    assert _claims(report) == [("benchmark", line, ("54.1",), "tiiuae/falcon-7b-instruct", True)]
    assert _findings(report, "CLM") == []


def test_chinese_base_figures_and_official_data_are_not_charged(tmp_path: Path) -> None:
    body = (
        "# 灵犀-Yi-34B-Chat\n\n"
        "在C-Eval上，本模型得分为71.5。基础模型Yi-34B的推理速度约为每秒40个token（官方数据）。\n"
    )
    report = _audit(tmp_path, "license: apache-2.0\nbase_model: 01-ai/Yi-34B\n", body)
    speed = [c for c in report.facts.claims if c.kind == "speed"]
    assert [(c.values, c.about) for c in speed] == [(("每秒40个token",), "Yi-34B")]
    assert not any(f.rule_id == "CLM002" for f in report.findings)
