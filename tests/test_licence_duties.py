"""Issue 11 §2–3: licensor or redistributor (with the evidence in the finding), licence
statements in any form (badges, links, restriction sentences in English and Chinese, gating),
additional terms and the obligations the text report opens with."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pytest

from cardaudit.extract.licence_reading import restrictions_in
from cardaudit.extract.licensor import holder_matches
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from scenarios import FIXTURES, scenario_json

APACHE = (FIXTURES / "clean-apache" / "model" / "LICENSE").read_text()


def rows(report: dict, prefixes: tuple[str, ...] = ("LIC", "ATT")) -> set[tuple]:
    return {
        (
            f["rule_id"],
            f["severity"],
            f["location"].get("repo", "model"),
            f["location"]["path"],
            f["location"]["line"],
        )
        for f in report["findings"]
        if f["rule_id"].startswith(prefixes)
    }


@cache
def fixture(name: str) -> dict:
    return scenario_json(name)


def audit_json(request: AuditRequest) -> dict:
    from cardaudit.reporters.json_report import report_to_json

    return json.loads(json.dumps(report_to_json(audit(request, Policy()))))


def outcomes(report: dict) -> dict[str, dict]:
    return {c["rule_id"]: c for c in report["checks"]}


# --------------------------------------------------------------------------- §2 licensor


def _repo(root: Path, name: str, card: str, files: dict[str, str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(card)
    for path, text in (files or {}).items():
        (folder / path).write_text(text)
    return folder


def test_licensor_original_model_missing_copy_is_a_warning_that_says_why(tmp_path) -> None:
    card = (
        "---\nlicense: apache-2.0\nlicense_link: LICENSE\n---\n# Acme-7B\n\nTrained from scratch.\n"
    )
    folder = _repo(tmp_path, "acme__Acme-7B", card)
    report = audit_json(AuditRequest(target=str(folder)))
    assert rows(report) == {("ATT001", "warning", "model", "README.md", 2)}
    (att001,) = report["findings"]
    assert "recipients can't find the terms" in att001["message"]
    assert "acme is the licensor" in att001["message"]
    assert "an original model" in att001["message"]  # the evidence is in the finding
    assert "`license_link` points to LICENSE in this repo, which is not there" in att001["message"]
    publisher = report["facts"]["license"]["publisher"]
    assert publisher["role"] == "licensor" and publisher["evidence"][0]["kind"] == "original"


def test_redistributor_of_another_orgs_model_keeps_the_error(tmp_path) -> None:
    card = (
        "---\nlicense: apache-2.0\nlicense_link: "
        "https://huggingface.co/someone/Acme-7B-GGUF/blob/main/LICENSE\n"
        "base_model: acme/Acme-7B\n---\n# Acme-7B-GGUF\n"
    )
    folder = _repo(tmp_path, "someone__Acme-7B-GGUF", card)
    report = audit_json(AuditRequest(target=str(folder)))
    assert ("ATT001", "error", "model", "README.md", 2) in rows(report)
    att001 = next(f for f in report["findings"] if f["rule_id"] == "ATT001")
    assert "someone redistributes it" in att001["message"]
    assert "acme/Acme-7B" in att001["message"]
    assert "`license_link` points to LICENSE in this repo, which is not there" in att001["message"]


def test_an_orgs_fine_tune_of_its_own_base_is_the_licensors(tmp_path) -> None:
    card = (
        "---\nlicense: apache-2.0\nbase_model: ibm-granite/granite-1b-base\n---\n"
        "# granite-1b-instruct\n"
    )
    folder = _repo(tmp_path, "ibm-granite__granite-1b-instruct", card)
    report = audit_json(AuditRequest(target=str(folder)))
    assert ("ATT001", "warning", "model", "README.md", 2) in rows(report)
    assert report["facts"]["license"]["publisher"]["evidence"][0]["kind"] == "own_base"


def test_copyright_holder_in_the_repos_own_notice_makes_the_licensor(tmp_path) -> None:
    card = "---\nlicense: apache-2.0\nbase_model: other/Base-1B\n---\n# Tern-1B\n"
    notice = "Tern-1B\n\nCopyright 2025 Tern Labs Inc.\n"
    folder = _repo(tmp_path, "ternlabs__Tern-1B", card, {"NOTICE": notice})
    publisher = audit_json(AuditRequest(target=str(folder)))["facts"]["license"]["publisher"]
    assert publisher["role"] == "licensor"
    assert publisher["evidence"][0] == {
        "kind": "copyright",
        "text": "Copyright 2025 Tern Labs Inc.",
        "path": "NOTICE",
        "line": 3,
    }


def test_a_third_partys_licence_makes_a_redistributor_whatever_else(tmp_path) -> None:
    card = "---\nlicense: llama3.1\n---\n# Llama-3.1-Nano\n"
    folder = _repo(tmp_path, "someone__Llama-3.1-Nano", card)
    report = audit_json(AuditRequest(target=str(folder)))
    assert report["facts"]["license"]["publisher"]["role"] == "redistributor"
    assert ("ATT001", "error", "model", "README.md", 2) in rows(report)
    assert ("ATT005", "error", "model", "README.md", 2) in rows(report)


def test_the_licensors_own_gemma_repo_without_terms_warns_twice(tmp_path) -> None:
    folder = _repo(tmp_path, "google__gemma-9b", "---\nlicense: gemma\n---\n# Gemma 9B\n")
    assert rows(audit_json(AuditRequest(target=str(folder)))) == {
        ("ATT001", "warning", "model", "README.md", 2),
        ("ATT005", "warning", "model", "README.md", 2),
    }


@pytest.mark.parametrize(
    ("holder", "org", "same"),
    [
        ("IBM Corp.", "ibm-granite", True),
        ("The Qwen Team", "Qwen", True),
        ("Mistral AI", "mistralai", True),
        ("Mistral AI", "mistral-community", False),
        ("Microsoft Corporation", "microsoft", True),
        ("Meta Platforms, Inc.", "someone", False),
        ("2024 DeepSeek", "deepseek-ai", True),
    ],
)
def test_copyright_holder_matching(holder: str, org: str, same: bool) -> None:
    assert holder_matches(holder, org) is same


# --------------------------------------------------------------------------- §3 statements


def test_research_rider_fixture_rules_files_and_lines() -> None:
    assert rows(fixture("research-rider")) == {
        ("LIC020", "error", "model", "README.md", 9),
        ("LIC021", "warning", "model", "README.md", 18),
        ("LIC022", "warning", "model", "README.md", 18),
    }
    lic020 = next(f for f in fixture("research-rider")["findings"] if f["rule_id"] == "LIC020")
    # one finding for the rider, with every place it is stated (card, Chinese, code README)
    assert "README.md:27" in lic020["message"] and "code:README.md:9" in lic020["message"]
    assert "research use" in lic020["message"] and "non-commercial use" in lic020["message"]


def test_code_readme_restricting_the_weights_is_an_error(tmp_path) -> None:
    model = _repo(
        tmp_path, "model", "---\nlicense: apache-2.0\n---\n# Heron\n", {"LICENSE": APACHE}
    )
    code = _repo(
        tmp_path,
        "code",
        "# heron\n\n## Licence\n\nThe model weights are for academic research only.\n",
        {"LICENSE": APACHE},
    )
    report = audit_json(AuditRequest(target=str(model), code=str(code)))
    assert ("LIC020", "error", "code", "README.md", 5) in rows(report)


def test_a_restriction_on_the_training_data_is_not_charged_to_the_weights(tmp_path) -> None:
    card = (
        "---\nlicense: apache-2.0\n---\n# Owl\n\n"
        "The training data is for non-commercial research use only.\n"
    )
    report = audit_json(AuditRequest(target=str(_repo(tmp_path, "model", card))))
    items = [s for s in report["facts"]["license"]["statements"] if s["kind"] == "restriction"]
    assert {(s["category"], s["about"], s["line"]) for s in items} == {
        ("non_commercial", "data", 6),
        ("research_only", "data", 6),
    }
    assert not {r for r in rows(report) if r[0] == "LIC020"}


def test_a_restriction_agreeing_with_a_non_commercial_licence_is_no_finding(tmp_path) -> None:
    card = "---\nlicense: cc-by-nc-4.0\n---\n# Owl\n\n仅供学术研究使用，非商业用途。\n"
    folder = _repo(tmp_path, "model", card)
    report = audit_json(AuditRequest(target=str(folder)))
    assert not {r for r in rows(report) if r[0] == "LIC020"}
    kinds = {t["kind"] for t in report["facts"]["license"]["additional_terms"]}
    assert {"research_only", "non_commercial"} <= kinds


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("For research purposes only.", ["research_only"]),
        ("The weights may not be used for commercial purposes.", ["non_commercial"]),
        ("本模型仅供学术研究使用。", ["research_only"]),
        ("不得用于商业用途。", ["non_commercial"]),
        ("Licensed for non-commercial use.", ["non_commercial"]),
        ("Allowing usage for both commercial and non-commercial purposes.", []),
        ("Non-commercial entities", []),
        ("We thank the research community.", []),
        ("Commercial use is permitted.", []),
        ("Commercial use is not permitted.", ["non_commercial"]),
        # commercial use that needs the licensor's permission: not a ban, a condition
        ("Commercial use of Heron requires a separate licence from us.", ["commercial_permission"]),
        ("如需商用，请联系我们获取授权。", ["commercial_permission"]),
        ("商业使用需要另行申请授权。", ["commercial_permission"]),
        ("未经书面许可，不得用于商业用途。", ["non_commercial"]),  # a ban says it already
        ("Heron can be used commercially; no separate licence is required.", []),
        ("本模型可免费商用，无需申请授权。", []),
        ("The model is available for commercial use under a custom commercial license.", []),
    ],
)
def test_restriction_modality(sentence: str, expected: list[str]) -> None:
    assert restrictions_in(sentence) == expected


def test_additional_terms_and_obligations_are_facts() -> None:
    licence = fixture("research-rider")["facts"]["license"]
    terms = {(t["kind"], t["repo"], t["path"], t["line"]) for t in licence["additional_terms"]}
    assert {
        ("gating", "model", "README.md", 5),
        ("aup", "model", "README.md", 5),
        ("mau", "model", "README.md", 5),
        ("registration", "model", "README.md", 9),
        ("territory", "model", "README.md", 25),
        ("research_only", "model", "README.md", 27),
        ("research_only", "code", "README.md", 9),
        ("non_commercial", "code", "README.md", 9),
    } <= terms
    duties = {(o["duty"], o["binds"]) for o in licence["obligations"]}
    assert {
        ("ship_text", "redistributor"),
        ("carry_notice", "redistributor"),
        ("state_changes", "redistributor"),
        ("use_policy", "user"),
        ("mau_threshold", "user"),
        ("territory", "user"),
        ("research_only", "user"),
        ("non_commercial", "user"),
        ("registration", "user"),
        ("gating", "user"),
    } <= duties
    badge = next(s for s in licence["statements"] if s["kind"] == "badge" and s["repo"] == "model")
    assert badge["licence"] == "mit" and badge["target"] == "LICENSE-MODEL"
    assert badge["exists"] is False


CUSTOM_LICENCE = """Lotus Community License Agreement

1. You may use, copy and modify the Model for research purposes.
2. Commercial use requires a separate written authorization from Lotus Lab.
3. Entities with more than 100 million monthly active users may not use the Model.
"""


def test_a_custom_licence_files_terms_are_obligations_with_file_and_line(tmp_path) -> None:
    """A licence no known text matches is read for its terms like a card's rider: they are
    licence terms, and the user is bound by them."""
    card = (
        "---\nlicense: other\nlicense_name: lotus-community-license\nlicense_link: LICENSE\n"
        "---\n# 莲花-14B\n\n## 许可证\n\n"
        "本模型遵循《莲花社区许可协议》。月活跃用户超过一亿的企业不得使用。\n"
    )
    folder = _repo(tmp_path, "model", card, {"LICENSE": CUSTOM_LICENCE})
    licence = audit_json(AuditRequest(target=str(folder)))["facts"]["license"]
    terms = {(t["kind"], t["path"], t["line"]) for t in licence["additional_terms"]}
    assert terms == {
        ("commercial_permission", "LICENSE", 4),
        ("mau", "LICENSE", 5),
        ("mau", "README.md", 10),  # "一亿": a threshold in CJK numerals
    }
    duties = {o["duty"]: (o["binds"], o["source"]) for o in licence["obligations"]}
    assert duties == {
        "commercial_permission": ("user", "LICENSE:4"),
        "mau_threshold": ("user", "README.md:10, LICENSE:5"),
        # what no known licence matches is read by a person: the list says so
        "read_licence": ("user", "LICENSE"),
    }


def test_a_declared_apache_with_a_restrictive_custom_licence_file_is_an_error(tmp_path) -> None:
    card = "---\nlicense: apache-2.0\n---\n# Heron-7B\n\nHeron-7B is a chat model.\n"
    folder = _repo(tmp_path, "model", card, {"LICENSE": CUSTOM_LICENCE})
    report = audit_json(AuditRequest(target=str(folder)))
    (finding,) = [f for f in report["findings"] if f["rule_id"] == "LIC020"]
    assert (finding["severity"], finding["location"]["path"], finding["location"]["line"]) == (
        "error",
        "LICENSE",
        4,
    )
    assert finding["message"].startswith(
        "the licence file LICENSE restricts the model to non-commercial use unless the "
        "licensor permits commercial use, but the declared licence `apache-2.0`"
    )


def test_a_known_licence_file_is_not_read_as_a_rider(tmp_path) -> None:
    card = "---\nlicense: apache-2.0\n---\n# Heron-7B\n\nHeron-7B is a chat model.\n"
    folder = _repo(tmp_path, "model", card, {"LICENSE": APACHE})
    licence = audit_json(AuditRequest(target=str(folder)))["facts"]["license"]
    assert licence["additional_terms"] == []
    assert "read_licence" not in {o["duty"] for o in licence["obligations"]}


def test_text_report_opens_with_the_obligations() -> None:
    from cardaudit.pipeline import audit_evidence
    from cardaudit.reporters import render
    from cardaudit.sources import acquire
    from scenarios import scenario_request

    report = audit_evidence(acquire(scenario_request("research-rider")), Policy())
    text = render(report, "text", color=False, width=200)
    head = text.index("What adopting this model obliges you to do")
    assert head < text.index("Facts") < text.index("Findings")
    assert "give every recipient a full copy of the Apache License 2.0" in text
    assert "If you pass it on" in text and "If you use it" in text


def test_statement_extraction_never_raises_on_odd_cards(tmp_path) -> None:
    card = (
        "---\nlicense: mit\nextra_gated_fields: [1, {label: 7}, null]\nextra_gated_prompt: 5\n"
        "---\n# X\n\n[![licence](<>)](](\n\n![License](https://img.shields.io/badge/-)\n"
        "<img alt='License' src=''>\n"
    )
    shutil.rmtree(tmp_path / "m", ignore_errors=True)
    folder = _repo(tmp_path, "m", card)
    report = audit_json(AuditRequest(target=str(folder)))
    assert "extract_errors" not in report["facts"]
