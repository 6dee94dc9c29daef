"""Riders read from the structure of the sentence: what it governs (code or weights), whose
it is (this model, the base, an earlier version), whether it still holds (lifted), and the
restrictions beside commercial use (field of use, redistribution)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardaudit.extract.licence_reading import restrictions_in
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.rules import load_table
from cardaudit.sources import AuditRequest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MIT = (FIXTURES / "lineage-loop" / "model" / "LICENSE").read_text()
APACHE = (FIXTURES / "clean-apache" / "model" / "LICENSE").read_text()
CC_BY_NC = (FIXTURES / "nc-base-relicensed" / "base" / "LICENSE").read_text()


def audit_json(folder: Path) -> dict:
    from cardaudit.reporters.json_report import report_to_json

    report = audit(AuditRequest(target=str(folder)), Policy())
    return json.loads(json.dumps(report_to_json(report)))


def repo(root: Path, card: str, files: dict[str, str] | None = None, name: str = "m") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(card, encoding="utf-8")
    for path, text in (files or {}).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


def lic_rows(report: dict) -> set[tuple]:
    return {
        (f["rule_id"], f["severity"], f["location"]["path"], f["location"]["line"])
        for f in report["findings"]
        if f["rule_id"].startswith("LIC")
    }


def test_every_word_of_the_statement_table_is_a_string() -> None:
    """YAML reads a bare `no` as False: a marker that silently became "False" never matched."""

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                assert isinstance(item, str), item
                walk(item)

    walk(load_table("licence_statements"))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("No commercial use.", ["non_commercial"]),
        ("There is no restriction on commercial use.", []),
        ("本モデルは研究目的でのみ利用可能です", ["research_only"]),
        ("非営利目的に限り利用できます", ["non_commercial"]),
        ("商用利用不可", ["non_commercial"]),
        ("商用利用には別途許諾が必要です。", ["commercial_permission"]),
    ],
)
def test_restriction_modality_beyond_english_and_chinese(sentence: str, expected: list) -> None:
    assert restrictions_in(sentence) == expected


# --------------------------------------------------------------------------- 1 dual licences


def test_labelled_code_and_weights_licences_the_front_matter_misstates_is_an_error(
    tmp_path,
) -> None:
    card = "---\nlicense: mit\n---\n# Dual-7B\n\n## License\nCode: MIT. Weights: CC-BY-NC-4.0.\n"
    report = audit_json(repo(tmp_path, card, {"LICENSE": MIT}))
    assert lic_rows(report) == {("LIC006", "error", "README.md", 7)}
    (finding,) = report["findings"]
    assert "gives the model weights cc-by-nc-4.0" in finding["message"]
    prose = report["facts"]["license"]["prose"]
    assert [(p["licence"], p["about"]) for p in prose] == [
        ("mit", "code"),
        ("cc-by-nc-4.0", "model"),
    ]


def test_weights_licensed_otherwise_than_declared_is_an_error_and_the_code_clause_is_not(
    tmp_path,
) -> None:
    card = (
        "---\nlicense: apache-2.0\n---\n# Dual3-7B\n\n## License\n"
        "The weights of this model are licensed under CC-BY-NC-4.0. "
        "The training code is Apache 2.0.\n"
    )
    report = audit_json(repo(tmp_path, card, {"LICENSE": APACHE}))
    assert lic_rows(report) == {("LIC006", "error", "README.md", 7)}


def test_correct_dual_licence_with_a_code_licence_file_is_clean(tmp_path) -> None:
    card = (
        "---\nlicense: cc-by-nc-4.0\n---\n# Dual2-7B\n\n## License\n"
        "The code in this repository is released under the MIT License; the model weights are "
        "released under CC BY-NC 4.0.\n"
    )
    files = {"LICENSE": CC_BY_NC, "LICENSE-CODE": MIT}
    report = audit_json(repo(tmp_path, card, files))
    assert not {r for r in lic_rows(report) if r[0] in ("LIC004", "LIC006")}
    checks = {c["rule_id"]: c["outcome"] for c in report["checks"]}
    assert checks["LIC004"] == "pass" and checks["LIC006"] == "pass"


def test_a_code_licence_file_alone_is_not_compared_with_the_weights_licence(tmp_path) -> None:
    card = "---\nlicense: cc-by-nc-4.0\n---\n# Dual2-7B\n"
    report = audit_json(repo(tmp_path, card, {"LICENSE-CODE": MIT}))
    lic004 = next(c for c in report["checks"] if c["rule_id"] == "LIC004")
    assert lic004["outcome"] == "not_applicable" and "named for the code" in lic004["note"]


def test_a_plain_licence_file_disagreeing_is_still_lic004(tmp_path) -> None:
    card = "---\nlicense: cc-by-nc-4.0\n---\n# Dual2-7B\n"
    report = audit_json(repo(tmp_path, card, {"LICENSE-MODEL": MIT}))
    assert ("LIC004", "error", "LICENSE-MODEL", 1) in lic_rows(report)


@pytest.mark.parametrize(
    ("path", "governs"),
    [
        ("LICENSE", None),
        ("LICENSE-CODE", "code"),
        ("LICENSE_code.txt", "code"),
        ("code/LICENSE", "code"),
        ("LICENSE-WEIGHTS", "model"),
        ("LICENSES/MIT.txt", None),
    ],
)
def test_licence_file_named_for(path: str, governs: str | None) -> None:
    from cardaudit.extract.licence_reading import file_governs

    assert file_governs(path) == governs


# --------------------------------------------------------------------------- 4 gate terms


GATED = (
    '---\nlicense: {licence}\ngated: manual\nextra_gated_prompt: "Access is granted only to '
    "verified organisations. You agree not to use the model in any military application and "
    'not to redistribute it."\n---\n# Gated2-7B\nMIT licensed.\n'
)


def test_gate_terms_barring_a_field_of_use_and_redistribution_contradict_mit(tmp_path) -> None:
    report = audit_json(repo(tmp_path, GATED.format(licence="mit"), {"LICENSE": MIT}))
    assert ("LIC020", "error", "README.md", 4) in lic_rows(report)
    (lic020,) = [f for f in report["findings"] if f["rule_id"] == "LIC020"]
    assert lic020["message"].startswith(
        "the gating form restricts the model by barring a field of use (military) and by "
        "forbidding its redistribution, but the declared licence `mit`"
    )
    duties = {
        o["duty"]: (o["binds"], o["source"]) for o in report["facts"]["license"]["obligations"]
    }
    assert duties["field_of_use"] == ("user", "README.md:4")
    assert duties["no_redistribution"] == ("redistributor", "README.md:4")


def test_a_use_restricted_licence_agrees_with_a_field_of_use_ban_but_not_redistribution(
    tmp_path,
) -> None:
    card = (
        "---\nlicense: openrail\n---\n# Gated3-7B\n\n"
        "You must not use the model for military purposes.\n"
    )
    report = audit_json(repo(tmp_path, card, name="a"))
    assert not {r for r in lic_rows(report) if r[0] == "LIC020"}
    report = audit_json(repo(tmp_path, GATED.format(licence="openrail"), name="b"))
    (lic020,) = [f for f in report["findings"] if f["rule_id"] == "LIC020"]
    assert "by forbidding its redistribution" in lic020["message"]
    assert "field of use" not in lic020["message"]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("You agree not to use the model in any military application.", ["field_of_use"]),
        ("不得将本模型用于军事用途。", ["field_of_use"]),
        ("You may not redistribute the weights.", ["no_redistribution"]),
        ("禁止二次分发本模型。", ["no_redistribution"]),
        ("Redistribution is permitted under the terms of the MIT licence.", []),
        ("The model was evaluated on weapons-related safety prompts.", []),
    ],
)
def test_field_of_use_and_redistribution_modality(sentence: str, expected: list) -> None:
    assert restrictions_in(sentence) == expected


# --------------------------------------------------------------------------- 3 lifted riders


def test_a_restriction_of_an_earlier_version_that_was_lifted_binds_nothing(tmp_path) -> None:
    card = (
        "---\nlicense: mit\n---\n# Phi-3-mini-MedQA\n\n"
        "Phi-3-mini-MedQA is released under the MIT license. You can use it commercially.\n\n"
        "- Earlier versions (v0.1) were released for research use only; that restriction was "
        "lifted in v0.2.\n"
    )
    report = audit_json(repo(tmp_path, card, {"LICENSE": MIT}))
    assert not {r for r in lic_rows(report) if r[0] == "LIC020"}
    licence = report["facts"]["license"]
    (item,) = [s for s in licence["statements"] if s["kind"] == "restriction"]
    assert (item["category"], item["about"], item["line"]) == ("research_only", "superseded", 8)
    assert "research_only" not in {o["duty"] for o in licence["obligations"]}


@pytest.mark.parametrize(
    ("sentence", "holds"),
    [
        ("Earlier versions were released for research use only.", False),
        ("v0.1 was released for research use only.", False),
        ("Research use only; that restriction was lifted in v0.2.", False),
        ("此前仅限学术研究使用，该限制已取消。", False),
        ("This model was released for research use only.", True),
        ("For research use only; safety filters were removed.", True),
        ("Model v2.0 is for research use only.", True),
    ],
)
def test_whether_a_restriction_still_holds(sentence: str, holds: bool) -> None:
    from cardaudit.extract.licence_reading import no_longer_holds, restriction_terms

    ((_category, term),) = restriction_terms(sentence)
    assert no_longer_holds(sentence, term) is not holds


# --------------------------------------------------------------------------- 2 riders


APACHE_CARD = "---\nlicense: apache-2.0\n---\n# Rider-7B\n\nLicensed under Apache 2.0.\n\n{rider}\n"


@pytest.mark.parametrize(
    ("rider", "category"),
    [
        ("Unlike the base model, this model is for research purposes only.", "research_only"),
        ("No commercial use.", "non_commercial"),
        ("本モデルは研究目的でのみ利用可能です", "research_only"),
        ("非営利目的に限り利用できます", "non_commercial"),
    ],
)
def test_riders_on_this_model_contradict_apache(tmp_path, rider: str, category: str) -> None:
    report = audit_json(repo(tmp_path, APACHE_CARD.format(rider=rider), {"LICENSE": APACHE}))
    assert lic_rows(report) == {("LIC020", "error", "README.md", 8)}
    (item,) = [s for s in report["facts"]["license"]["statements"] if s["kind"] == "restriction"]
    assert (item["category"], item["about"]) == (category, "model")


def test_a_contrast_clause_about_another_model_is_not_charged_to_this_one(tmp_path) -> None:
    rider = (
        "Unlike Llama 2, whose licence prohibits use by products with more than 700 million "
        "monthly active users, this model has no such limit."
    )
    report = audit_json(repo(tmp_path, APACHE_CARD.format(rider=rider), {"LICENSE": APACHE}))
    assert report["facts"]["license"]["additional_terms"] == []
    assert lic_rows(report) == set()


def test_the_base_models_rider_stays_the_bases(tmp_path) -> None:
    rider = "The base model is for research purposes only."
    report = audit_json(repo(tmp_path, APACHE_CARD.format(rider=rider), {"LICENSE": APACHE}))
    assert lic_rows(report) == set()


def test_a_card_putting_the_model_under_another_licence_by_title_is_lic006(tmp_path) -> None:
    card = (
        "---\nlicense: apache-2.0\n---\n# Rider-ZH-7B\n本模型采用 Apache 2.0 许可证。\n\n"
        "使用本模型需遵守《Rider模型社区许可协议》，商业用途须获得书面授权。\n"
    )
    report = audit_json(repo(tmp_path, card, {"LICENSE": APACHE}))
    assert lic_rows(report) == {
        ("LIC006", "error", "README.md", 7),
        ("LIC020", "error", "README.md", 7),
    }
    lic006 = next(f for f in report["findings"] if f["rule_id"] == "LIC006")
    assert "《Rider模型社区许可协议》" in lic006["message"]
    (prose,) = report["facts"]["license"]["prose"]
    assert (prose["licence"], prose["name"], prose["about"]) == (
        None,
        "《Rider模型社区许可协议》",
        "model",
    )


@pytest.mark.parametrize(
    ("clause", "titles"),
    [
        ("使用本模型需遵守《XX模型社区许可协议》", ["《XX模型社区许可协议》"]),
        ("Use of this model is governed by the Acme Model License.", ["Acme Model License"]),
        ("See 《使用手册》 for details.", []),  # a title, but no governing verb
        ("请遵守《使用手册》。", []),  # a governing verb, but not a licence's title
    ],
)
def test_governing_titles(clause: str, titles: list[str]) -> None:
    from cardaudit.extract.licence_reading import governing_titles

    assert [title for _offset, title in governing_titles(clause)] == titles


def test_a_title_naming_the_declared_licence_without_its_version_agrees(tmp_path) -> None:
    card = (
        "---\nlicense: cc-by-nc-4.0\n---\n# Command-7B\n\n"
        "This model is governed by a [CC-BY-NC](https://example.org/cc-by-nc) License with an "
        "acceptable use addendum.\n"
    )
    report = audit_json(repo(tmp_path, card))
    (prose,) = report["facts"]["license"]["prose"]
    assert prose["name"] == "CC-BY-NC License"  # the link's text, read as one title
    assert not {r for r in lic_rows(report) if r[0] == "LIC006"}


def test_a_coordinated_subject_naming_the_weights_is_about_the_model(tmp_path) -> None:
    card = (
        "---\nlicense: llama3.1\n---\n# Distill-8B\n\n"
        "This code repository and the model weights are licensed under the MIT License.\n"
    )
    report = audit_json(repo(tmp_path, card))
    assert ("LIC006", "error", "README.md", 6) in lic_rows(report)


def test_a_datasets_restriction_is_no_obligation_of_the_models_users(tmp_path) -> None:
    card = (
        "---\nlicense: mit\n---\n# MedQA\n\n"
        "The training dataset is licensed CC BY-NC 4.0; the dataset itself may not be used for "
        "commercial purposes. The model weights are MIT.\n"
    )
    licence = audit_json(repo(tmp_path, card))["facts"]["license"]
    (item,) = [s for s in licence["statements"] if s["kind"] == "restriction"]
    assert (item["category"], item["about"]) == ("non_commercial", "data")
    assert "non_commercial" not in {o["duty"] for o in licence["obligations"]}
    assert ("mit", "model") in {(p["licence"], p.get("about")) for p in licence["prose"]}
