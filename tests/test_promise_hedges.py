"""Promises that are no commitment (hedges, conditions, someone else's plan, a delivery in a
roadmap section), and later statements that deliver an earlier promise."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardaudit.extract.markdown_prose import parse_document
from cardaudit.extract.promises import mentions, promise_table
from cardaudit.model import Report
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest


def _read(text: str) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, str]]]:
    promised, delivered = mentions(parse_document("README.md", text), promise_table())
    return (
        [(m.line, m.artifact, m.item) for m in promised],
        [(m.line, m.artifact, m.item) for m in delivered],
    )


@pytest.mark.parametrize(
    "text",
    [
        # conditional or tentative
        "## 今後の予定\n\n- 需要があれば、1Bモデルの学習も検討します。\n",
        "- 如果社区有需求，我们可能会考虑发布3B版本。\n",
        "수요가 있으면 1B 모델도 공개 예정입니다.\n",
        "If there is interest, we will release a 1B version.\n",
        # someone else's plan
        "- 阿里通义团队表示，Qwen3系列即将发布，届时我们会评估是否跟进。\n",
        "Mistral AI has announced that Mistral-7B-v0.3 will be released soon; we will test it.\n",
        "据报道，Meta称，Llama 5 将于明年发布。\n",
        "Metaの発表によると、Llama 5は近日公開予定です。\n",
        "메타에 따르면 Llama 5는 곧 공개될 예정입니다.\n",
    ],
)
def test_no_commitment_of_the_publisher(text: str) -> None:
    assert _read(text)[0] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "considering the demand" and "as early as possible" hedge nothing
        ("考虑到社区需求，我们即将发布3B版本。\n", [(1, "checkpoints", "3B版本")]),
        ("我们将尽可能早地开源训练代码。\n", [(1, "training_code", "训练代码")]),
        # a hedge after the commitment is about its timing
        ("量化版本即将发布，可能在下周。\n", [(1, "quantized", "量化版本")]),
        (
            "技術レポートは近日公開予定ですが、時期は変更の可能性があります。\n",
            [(1, "paper", "技術レポート")],
        ),
        # the publisher reports its own plan
        ("我们表示，训练代码即将开源。\n", [(1, "training_code", "训练代码")]),
        # 表示 without a quote after it means "shows", not "said"
        ("下表表示各尺寸的性能，量化版本即将发布。\n", [(1, "quantized", "量化版本")]),
        # someone else's plan, then the publisher's own commitment
        (
            "阿里表示Qwen3即将发布，我们将随后发布量化版本。\n",
            [(1, "quantized", "量化版本")],
        ),
        (
            "- 2025-02-01: A 14B version is planned for Q2 2025.\n",
            [(1, "checkpoints", "14B version")],
        ),
        ("More model sizes are planned.\n", [(1, "checkpoints", "model sizes")]),
    ],
)
def test_still_a_commitment(text: str, expected: list) -> None:
    assert _read(text)[0] == expected


def test_a_roadmap_entry_that_says_it_is_out_is_a_delivery() -> None:
    text = "## 今後の予定\n\n- 技術レポートを近日公開予定です。\n- 技術レポートは公開済みです。\n"
    promised, delivered = _read(text)
    assert promised == [(3, "paper", "技術レポート")]
    assert delivered == [(4, "paper", "技術レポート")]


@pytest.mark.parametrize(
    "sentence",
    [
        "我们已于2024年10月发布了训练代码。",
        "学習コードを公開しました。",
        "학습 코드 공개 완료",
        "Training code released: see org/sparrow-train.",
    ],
)
def test_delivery_statements(sentence: str) -> None:
    assert [artifact for _line, artifact, _item in _read(sentence + "\n")[1]] == ["training_code"]


def _card(tmp_path: Path, body: str) -> Report:
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(f"---\nlicense: apache-2.0\n---\n{body}")
    return audit(AuditRequest(target=str(model)), Policy())


def test_a_later_changelog_entry_delivers_an_earlier_promise(tmp_path: Path) -> None:
    body = (
        "# Sailor-7B\n\n## Changelog\n\n"
        "- **2024-11-02**: Initial release. GGUF quantizations will be released next week.\n"
        "- **2024-11-09**: GGUF quantizations released: see sailor/Sailor-7B-GGUF.\n"
    )
    report = _card(tmp_path, body)
    (promise,) = report.facts.promises
    assert (promise.item, promise.status, promise.line) == ("GGUF", "delivered", 8)
    assert "README.md:9" in promise.reason
    assert [f.rule_id for f in report.findings if f.rule_id.startswith("PRM")] == ["PRM003"]
    (stale,) = [f for f in report.findings if f.rule_id == "PRM003"]
    assert (stale.severity, stale.location.path, stale.location.line) == ("info", "README.md", 8)


def test_a_japanese_roadmap_keeps_only_its_commitments(tmp_path: Path) -> None:
    body = (
        "# Swallow-8B\n\n## 今後の予定\n\n"
        "- 技術レポートを近日公開予定です。\n"
        "- 70Bの指示チューニング版は公開済みです。\n"
        "- 需要があれば、1Bモデルの学習も検討します。\n"
    )
    report = _card(tmp_path, body)
    assert [(p.item, p.line) for p in report.facts.promises] == [("技術レポート", 8)]
    prm = [(f.rule_id, f.severity, f.location.line) for f in report.findings if "PRM" in f.rule_id]
    assert prm == [("PRM001", "warning", 8)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("训练代码即将开源。敬请期待！\n", [(1, "training_code", "训练代码")]),
        ("更大的模型即将发布。敬请期待！\n", [(1, "other", "更大的模型")]),
        ("技術レポートを近日公開予定です。お楽しみに！\n", [(1, "paper", "技術レポート")]),
    ],
)
def test_a_short_marker_after_a_promise_repeats_it(text: str, expected: list) -> None:
    # a CJK full stop ends the promise; "敬请期待！" (stay tuned) after it adds no promise
    assert _read(text)[0] == expected
