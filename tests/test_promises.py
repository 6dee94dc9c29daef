"""Promises (PRM): extraction, delivery status, first_seen from real git history, escalation."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardaudit.errors import UsageError
from cardaudit.extract.markdown_prose import parse_document
from cardaudit.extract.promises import mentions, promise_table
from cardaudit.model import Finding, Location, Report
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from fixture_history import build_history_repo
from scenarios import FIXTURES

CLOVER = FIXTURES / "clover"


def _repos(tmp_path: Path, code_upto: int | None = None) -> tuple[Path, Path]:
    model = tmp_path / "clover-model"
    code = tmp_path / "clover-code"
    build_history_repo(CLOVER / "model-history", model)
    build_history_repo(CLOVER / "code-history", code, upto=code_upto)
    return model, code


def _audit(model: Path, code: Path) -> Report:
    return audit(AuditRequest(target=str(model), code=str(code)), Policy())


def _findings(report: Report, rule_id: str) -> list[Finding]:
    return [f for f in report.findings if f.rule_id == rule_id]


def _promise(report: Report, repo: str, line: int, item: str):
    """The promise of ``item`` stated (among other places) at ``repo``:``line``."""
    found = [
        p
        for p in report.facts.promises
        if p.item == item and any((at.repo, at.line) == (repo, line) for at in p.locations)
    ]
    assert len(found) == 1, [(p.repo, p.line, p.item) for p in report.facts.promises]
    return found[0]


def _promised(text: str) -> list[tuple[int, str, str]]:
    promised, _delivered = mentions(parse_document("README.md", text), promise_table())
    return [(m.line, m.artifact, m.item) for m in promised]


# --------------------------------------------------------------------------- history


def test_first_seen_and_delivery_from_git_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARDAUDIT_NOW", "2026-06-15T12:00:00Z")
    model, code = _repos(tmp_path)
    report = _audit(model, code)

    sft = _promise(report, "code", 17, "SFT code")
    assert sft.status == "delivered"
    assert sft.first_seen == "2026-03-02"
    assert "checked roadmap box at code:README.md:20" in sft.reason
    backend = _promise(report, "code", 17, "backend code")
    assert (backend.status, backend.artifact) == ("missing", "inference_code")
    assert (backend.first_seen, backend.age_days) == ("2026-03-02", 105)
    card = _promise(report, "model", 48, "training instructions")
    assert (card.status, card.artifact, card.first_seen) == ("missing", "docs", "2026-03-02")
    card_sft = _promise(report, "model", 48, "SFT code")
    assert card_sft.status == "delivered"
    # The checked box is a delivery, not a promise any more.
    assert not [p for p in report.facts.promises if (p.repo, p.line) == ("code", 20)]

    missing = _findings(report, "PRM001")
    where = {(f.location.repo, f.location.path, f.location.line): f for f in missing}
    # "setup guides" (code:17) and "[ ] Setup guides for vLLM and SGLang" (code:21) are one
    # promise: one finding at its first place, the other in `also`
    assert set(where) == {("code", "README.md", 17), ("model", "README.md", 48)}
    assert {f.severity for f in missing} == {"error"}
    guides = _promise(report, "code", 21, "setup guides")
    assert [(at.repo, at.line) for at in guides.locations] == [("code", 17), ("code", 21)]
    assert Location("README.md", 21, repo="code") in where[("code", "README.md", 17)].also
    code_line = where[("code", "README.md", 17)]
    assert "backend code (inference / serving code)" in code_line.message
    assert "promised since 2026-03-02;" in code_line.message
    assert "SFT code" not in code_line.message
    assert code_line.evidence == (
        "The SFT code, training instructions, backend code and setup guides are coming."
    )
    stale = _findings(report, "PRM003")
    # the SFT code promised in the card and in the code README: one finding, both places
    assert sorted((f.location.repo, f.location.line, f.severity) for f in stale) == [
        ("model", 48, "info"),
    ]
    assert stale[0].also == (Location("README.md", 17, repo="code"),)
    assert "also stated in code:README.md" in stale[0].message
    assert all("still announced as coming, but delivered: SFT code" in f.message for f in stale)


def test_before_delivery_the_sft_code_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARDAUDIT_NOW", "2026-03-10")
    model, code = _repos(tmp_path, code_upto=2)
    report = _audit(model, code)

    sft = _promise(report, "code", 20, "SFT code")
    assert (sft.status, sft.first_seen, sft.age_days) == ("missing", "2026-03-02", 8)
    assert "no training code in code repo clover-code" in sft.reason
    assert not _findings(report, "PRM003")
    assert {f.severity for f in _findings(report, "PRM001")} == {"info"}


def test_an_ageing_promise_escalates_but_stays_the_same_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored diffs and SARIF fingerprints identify a finding by its message: a missing
    promise audited months apart must keep its message while its severity rises."""
    model, code = _repos(tmp_path, code_upto=2)
    seen = {}
    for now in ("2026-03-10", "2026-06-15"):
        monkeypatch.setenv("CARDAUDIT_NOW", now)
        findings = _findings(_audit(model, code), "PRM001")
        seen[now] = {(f.location.repo, f.location.line, f.message): f.severity for f in findings}
    assert set(seen["2026-03-10"]) == set(seen["2026-06-15"])
    assert set(seen["2026-03-10"].values()) == {"info"}
    assert set(seen["2026-06-15"].values()) == {"error"}


@pytest.mark.parametrize(
    ("now", "severity"),
    [("2026-03-31", "info"), ("2026-04-01", "warning"), ("2026-05-31", "error")],
)
def test_missing_promises_escalate_with_age(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: str, severity: str
) -> None:
    monkeypatch.setenv("CARDAUDIT_NOW", now)
    model, code = _repos(tmp_path)
    findings = _findings(_audit(model, code), "PRM001")
    card = [f for f in findings if (f.location.repo, f.location.line) == ("model", 48)]
    assert [f.severity for f in card] == [severity]


def test_without_history_the_age_is_unknown_and_a_warning() -> None:
    report = audit(AuditRequest(target=str(CLOVER / "model"), code=str(CLOVER / "code")), Policy())
    card = [f for f in _findings(report, "PRM001") if f.location.repo == "model"]
    assert [(f.location.line, f.severity) for f in card] == [(48, "warning")]
    assert "first appearance unknown" in card[0].message
    assert all(p.first_seen is None and p.age_days is None for p in report.facts.promises)


def test_invalid_audit_clock_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from cardaudit.clock import audit_now

    monkeypatch.setenv("CARDAUDIT_NOW", "next tuesday")
    with pytest.raises(UsageError, match="CARDAUDIT_NOW"):
        audit_now()


# --------------------------------------------------------------------------- extraction


def test_one_sentence_promises_four_items() -> None:
    text = (
        "# Repo\n\nThe SFT code, training instructions, backend code and setup guides are coming.\n"
    )
    assert _promised(text) == [
        (3, "training_code", "SFT code"),
        (3, "docs", "training instructions"),
        (3, "inference_code", "backend code"),
        (3, "docs", "setup guides"),
    ]


def test_wrapped_sentence_reports_the_line_of_the_marker() -> None:
    text = "Intro.\n\nWe trained it on our data. The evaluation\nscripts will be released soon.\n"
    assert _promised(text) == [(4, "evaluation_code", "evaluation scripts")]


def test_roadmap_boxes_and_todo_sections() -> None:
    text = (
        "## Roadmap\n\n- [x] Release model weights\n- [ ] Release SFT code\n"
        "[ ] Integrate the vLLM inference engine.\n\n## TODO\n\n- Quantized GGUF weights\n"
        "- ~~Demo~~\n"
    )
    assert _promised(text) == [
        (4, "training_code", "SFT code"),
        (5, "inference_code", "Integrate the vLLM inference engine"),
        (9, "quantized", "Quantized GGUF weights"),
    ]


def test_a_roadmap_entry_that_words_its_own_commitment_promises_what_it_governs() -> None:
    """In a roadmap section, an entry naming no known artifact is not taken whole when it
    says what is coming ("13B 版を準備中です": the 13B version is in preparation)."""
    text = (
        "## 今後の予定\n\n- 学習コードは近日公開予定です\n- 13B 版を準備中です\n"
        "- 多言語対応を強化する\n\n## Roadmap\n\n- [ ] Sparrow-Vision is in preparation\n"
    )
    assert _promised(text) == [
        (3, "training_code", "学習コード"),
        (4, "checkpoints", "13B 版"),
        (5, "other", "多言語対応を強化する"),  # no wording of its own: the entry is the item
        (9, "other", "Sparrow-Vision"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Like any model it may change in the future as we update it.\n",
        "The API will benefit the community to distill better smaller models in the future.\n",
        "```python\n# TODO: release the training code\n```\n",
        "<!-- TODO: add the paper link -->\n",
        "We have released the training code and the paper.\n",
        "This licence may be updated in the future; stay with version 1.\n",
    ],
)
def test_not_promises(text: str) -> None:
    assert _promised(text) == []


def test_parenthetical_marker_promises_the_item_before_it() -> None:
    text = (
        "Details are in the Granite 3.0 Technical Report, Granite 3.1 Technical Report "
        "(coming soon), and the datasets card.\n"
    )
    assert _promised(text) == [(1, "paper", "Technical Report")]


def test_bare_soon_takes_the_sentence_before() -> None:
    promised, _ = mentions(
        parse_document("README.md", "lzlvV2 is in the works. Soon(tm).\n"), promise_table()
    )
    assert [(m.artifact, m.text) for m in promised] == [
        ("other", "lzlvV2 is in the works. Soon(tm).")
    ]


def test_delivery_needs_the_same_model_name(tmp_path: Path) -> None:
    """A paper link for LLaDA does not deliver the promised iLLaDA paper."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(
        "---\nlicense: mit\n---\n# M\n\nThe LLaDA paper is on [arXiv](https://arxiv.org/abs/2502.09992).\n\n"
        "The iLLaDA paper is coming soon.\n"
    )
    report = audit(AuditRequest(target=str(model)), Policy())
    (promise,) = report.facts.promises
    assert (promise.item, promise.status, promise.line) == ("paper", "missing", 8)
    (finding,) = _findings(report, "PRM001")
    assert (finding.location.path, finding.location.line, finding.severity) == (
        "README.md",
        8,
        "warning",
    )


@pytest.mark.parametrize(
    ("text", "artifact"),
    [
        ("Paper (comming soon)\n", "paper"),
        ("We will soon add the support of llama.cpp, mlx-lm, etc.\n", "inference_code"),
        ("We'll condense the shards soon.\n", "other"),
        ("Stay tuned for the GGUF quants!\n", "quantized"),
        ("| Model | Paper |\n|---|---|\n| M-7B | Coming Soon |\n", "paper"),
        ("Evaluation scripts: TBD\n", "evaluation_code"),
    ],
)
def test_promise_wordings(text: str, artifact: str) -> None:
    assert [a for _line, a, _item in _promised(text)] == [artifact]


def _model_and_code(tmp_path: Path, card: str, code_files: dict[str, str]) -> Report:
    model = tmp_path / "model"
    code = tmp_path / "code"
    model.mkdir()
    code.mkdir()
    (model / "README.md").write_text(f"---\nlicense: mit\n---\n{card}")
    for name, text in code_files.items():
        (code / name).parent.mkdir(parents=True, exist_ok=True)
        (code / name).write_text(text)
    return audit(AuditRequest(target=str(model), code=str(code)), Policy())


def test_readme_only_code_copy_cannot_decide(tmp_path: Path) -> None:
    report = _model_and_code(
        tmp_path, "# M\n\nThe training code will be released.\n", {"README.md": "# M code\n"}
    )
    (promise,) = report.facts.promises
    assert (promise.status, promise.line) == ("unknown", 6)
    assert "holds only documentation" in promise.reason
    (finding,) = _findings(report, "PRM002")
    assert (finding.location.line, finding.severity) == (6, "info")
    assert _findings(report, "PRM001") == []


def test_docs_delivered_as_a_readme_section(tmp_path: Path) -> None:
    readme = (
        "# M code\n\n## Setup\n\nInstall with pip.\nDownload the weights.\nRun `m serve`.\n\n"
        "## Roadmap\n\n- [ ] Setup guides for SGLang\n"
    )
    report = _model_and_code(tmp_path, "# M\n", {"README.md": readme, "m/serve.py": "x = 1\n"})
    (promise,) = report.facts.promises
    assert (promise.repo, promise.line, promise.artifact) == ("code", 11, "docs")
    assert promise.status == "delivered"
    assert promise.reason == "section 'Setup' at code:README.md:3"
    (finding,) = _findings(report, "PRM003")
    assert (finding.location.repo, finding.location.line) == ("code", 11)


# --------------------------------------------------------------------------- model repo files

WREN_CARD = """---
license: apache-2.0
---

# Wren-1B

Training code and setup docs are coming soon.
"""


def _wren(tmp_path: Path, files: dict[str, str]) -> Path:
    model = tmp_path / "wren"
    model.mkdir()
    (model / "README.md").write_text(WREN_CARD)
    for name, text in files.items():
        (model / name).parent.mkdir(parents=True, exist_ok=True)
        (model / name).write_text(text)
    return model


def _statuses(report: Report) -> dict[str, tuple[str, str | None]]:
    return {p.artifact: (p.status, p.reason) for p in report.facts.promises}


def test_files_in_the_model_repo_deliver(tmp_path: Path) -> None:
    """train.py, sft/ or docs/ shipped in the audited model repo deliver as the code repo's
    would, and the reason names the repo; with a code repo lacking them, too."""
    model = _wren(
        tmp_path,
        {"sft/train_sft.py": "print('sft')\n", "docs/setup.md": "# Setup\n\nInstall it.\n"},
    )
    report = audit(AuditRequest(target=str(model)), Policy())
    assert _statuses(report) == {
        "training_code": ("delivered", "the model repo has sft/train_sft.py"),
        "docs": ("delivered", "the model repo has docs/setup.md"),
    }
    assert _findings(report, "PRM001") == []
    (still,) = _findings(report, "PRM003")
    assert (still.location.path, still.location.line) == ("README.md", 7)

    code = tmp_path / "wren-code"
    (code / "wren").mkdir(parents=True)
    (code / "README.md").write_text("# wren\n\nModelling code.\n")
    (code / "wren" / "modeling.py").write_text("class Wren:\n    pass\n")
    with_code = audit(AuditRequest(target=str(model), code=str(code)), Policy())
    assert _statuses(with_code)["training_code"] == (
        "delivered",
        "the model repo has sft/train_sft.py",
    )


def test_trainer_outputs_in_the_model_repo_deliver_nothing(tmp_path: Path) -> None:
    model = _wren(tmp_path, {"training_args.bin": "x", "trainer_state.json": "{}"})
    report = audit(AuditRequest(target=str(model)), Policy())
    status, reason = _statuses(report)["training_code"]
    assert status == "unknown" and "--code" in (reason or "")


def test_a_training_page_in_docs_is_not_training_code(tmp_path) -> None:
    from cardaudit.pipeline import audit as run_audit
    from cardaudit.sources import AuditRequest

    model, code = tmp_path / "model", tmp_path / "code"
    (code / "docs").mkdir(parents=True)
    model.mkdir()
    (model / "README.md").write_text(
        "---\nlicense: mit\n---\n# M\n\nThe SFT code is coming soon.\n"
    )
    (code / "README.md").write_text("# M code\n")
    (code / "docs" / "training.md").write_text("# Training\n\nHow we trained M.\n")
    (code / "infer.py").write_text("print('generate')\n")  # a code repo, not a docs-only copy

    def sft_status() -> str:
        report = run_audit(AuditRequest(str(model), code=str(code)))
        (promise,) = [p for p in report.facts.promises if p.artifact == "training_code"]
        return promise.status

    assert sft_status() == "missing"
    (code / "train_sft.py").write_text("print('sft')\n")
    assert sft_status() == "delivered"
