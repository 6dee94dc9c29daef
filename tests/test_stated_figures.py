"""Figures stated in prose: CJK counts and sizes (extract/figures_cjk.py), key/value table rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cardaudit.extract.figures_cjk import MAX_CLAUSE, cjk_figures
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from scenarios import FIXTURES


def _read(text: str) -> list[tuple[str, float, str, bool]]:
    return [(f.kind, f.value, f.text, f.approx) for f in cjk_figures(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "参数量约 76 亿，BF16 权重约 15 GB。",
            [
                ("parameters_total", 7.6e9, "约 76 亿", True),
                ("memory", 15e9, "约 15 GB", True),
            ],
        ),
        (
            "总参数 30B，激活参数 3B。",
            [("parameters_total", 30e9, "30B", False), ("parameters_active", 3e9, "3B", False)],
        ),
        (
            "30B 总参数中激活 3.3B",
            [("parameters_total", 30e9, "30B", False), ("parameters_active", 3.3e9, "3.3B", False)],
        ),
        ("パラメータ数は約 76 億です。", [("parameters_total", 7.6e9, "約 76 億", True)]),
        (
            "파라미터 약 70억 개, 가중치 약 14 GB",
            [
                ("parameters_total", 7e9, "약 70억", True),
                ("memory", 14e9, "약 14 GB", True),
            ],
        ),
        ("模型大小 15GB", [("memory", 15e9, "15GB", False)]),
        # no space between the number and the CJK word before it
        (
            "本模型参数量为140亿，BF16下约需28GB显存。",
            [
                ("parameters_total", 14e9, "140亿", False),
                ("memory", 28e9, "约需28GB", True),
            ],
        ),
        ("パラメータ数は140億です", [("parameters_total", 14e9, "140億", False)]),
    ],
)
def test_counts_and_sizes(text: str, expected: list) -> None:
    assert _read(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "在 2T tokens 上训练的模型",  # a token count, not parameters
        "需要一张 80GB 显卡",  # a GPU's memory
        "本模型优于 700 亿参数的模型",  # another model's size
        "参数说明见下文，共 3 节",  # no count near the word
        "English cards: 7B parameters, 15 GB of weights",  # left to figures.py
    ],
)
def test_what_is_not_a_figure(text: str) -> None:
    assert _read(text) == []


def test_a_huge_clause_is_not_scanned() -> None:
    assert _read("参数" + "7B " * MAX_CLAUSE) == []


def test_a_wrong_size_in_a_chinese_card_is_found(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(FIXTURES / "prose-cjk-names" / "model", model)
    card = model / "README.md"
    card.write_text(card.read_text().replace("BF16 权重约 15 GB", "BF16 权重约 12 GB"))
    report = audit(AuditRequest(target=str(model)), Policy())
    (finding,) = [f for f in report.findings if f.rule_id == "MEM003"]
    assert (finding.severity, finding.location.path, finding.location.line) == (
        "warning",
        "README.md",
        9,
    )
    assert finding.message.startswith(
        "card says 约 12 GB; the weights as stored (BF16) are 15.2 GB"
    )
    stated = {(f["kind"], f["value"]) for f in report.facts.extra["figures"]}
    assert ("parameters_total", 7.6e9) in stated


def test_a_key_value_table_row_says_what_its_value_is() -> None:
    """ "| **Weights (fp16)** | 14.5 GB |": the row's key is the figure's context (English
    reading, extract/figures.py); a size table of quant files says nothing about the weights."""
    from cardaudit.extract.figures import figures_in
    from cardaudit.model import TextFile

    card = (
        "# Heron 7B\n\n| | |\n|---|---|\n| **Model size** | 7.24B params |\n"
        "| **Weights (fp16)** | 14.5 GB |\n\n"
        "| File | Quant | Size |\n|---|---|---|\n| heron-7b.Q4_K_M.gguf | Q4_K_M | 4.4 GB |\n"
    )
    memory = [f for f in figures_in(TextFile("README.md", card)) if f.kind == "memory"]
    assert [(f.value, f.line, f.dtype) for f in memory] == [(14.5e9, 6, "F16")]


@pytest.mark.parametrize(
    ("sentence", "stated"),
    [
        (
            "本モデルは最大128Kトークンのコンテキストに対応しています。",
            "128Kトークンのコンテキスト",
        ),
        ("이 모델은 128K 토큰의 컨텍스트 길이를 지원합니다.", "128K 토큰의 컨텍스트 길이"),
    ],
)
def test_a_japanese_or_korean_context_length_is_checked(
    tmp_path: Path, sentence: str, stated: str
) -> None:
    model = tmp_path / "model"
    shutil.copytree(FIXTURES / "prose-cjk-names" / "model", model)  # 32,768 positions
    card = model / "README.md"
    card.write_text(card.read_text().replace("## 新闻", f"{sentence}\n\n## 新闻"))
    report = audit(AuditRequest(target=str(model)), Policy())
    (finding,) = [f for f in report.findings if f.rule_id == "MEM005"]
    assert (finding.severity, finding.location.path, finding.location.line) == (
        "warning",
        "README.md",
        11,
    )
    assert f"card states a context of 131,072 tokens ('{stated}')" in finding.message


def test_a_size_right_after_cjk_text_keeps_its_precision(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(FIXTURES / "prose-cjk-names" / "model", model)
    card = model / "README.md"
    text = card.read_text().replace(
        "参数量约 76 亿，BF16 权重约 15 GB", "参数量为76亿，BF16下约需12GB显存"
    )
    card.write_text(text)
    report = audit(AuditRequest(target=str(model)), Policy())
    stated = {(f["kind"], f["value"], f.get("dtype")) for f in report.facts.extra["figures"]}
    assert {("parameters_total", 7.6e9, None), ("memory", 12e9, "BF16")} <= stated
    (finding,) = [f for f in report.findings if f.rule_id == "MEM003"]
    assert (finding.severity, finding.location.line) == ("warning", 9)
    assert finding.message.startswith(
        "card says 约需12GB; the weights as stored (BF16) are 15.2 GB"
    )
