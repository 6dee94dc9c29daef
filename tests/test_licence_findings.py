"""Licence (LIC) and attribution (ATT) findings per fixture: rule, severity, file and line."""

from __future__ import annotations

from functools import cache

import pytest

from scenarios import ROOT, scenario_json

Row = tuple[str, str, str | None, int | None]


@cache
def licence_findings(name: str) -> set[Row]:
    report = scenario_json(name)
    return {
        (f["rule_id"], f["severity"], f["location"]["path"], f["location"]["line"])
        for f in report["findings"]
        if f["rule_id"][:3] in ("LIC", "ATT")
    }


EXPECTED: dict[str, set[Row]] = {
    "clean-apache": set(),
    "clean-llama": set(),
    "clover": {("ATT007", "warning", "LICENSE", 1)},
    "llama-relicensed-mit": {
        ("LIC007", "error", "README.md", 2),
        ("ATT003", "error", "README.md", 8),
        ("ATT004", "warning", "README.md", 2),
        ("ATT005", "error", "README.md", 2),
        ("ATT006", "error", "README.md", 2),
        ("LIC009", "warning", "README.md", 1),
    },
    "nc-base-relicensed": {
        ("LIC004", "error", "LICENSE", 1),
        ("LIC007", "error", "README.md", 2),
        ("LIC008", "warning", "LICENSE", 1),
    },
    "notice-dropped": {("ATT002", "error", "README.md", 2)},
    "nd-base-adapted": {("LIC007", "error", "README.md", 3)},  # its base_model line
    "base-without-licence": {("LIC007", "error", "README.md", 2)},
    "gemma-without-notice": {("ATT005", "error", "README.md", 2)},
    "openrail-relicensed": {
        ("LIC007", "error", "README.md", 2),
        ("ATT006", "error", "README.md", 2),
    },
    "licence-url-only": {
        ("ATT001", "error", "LICENSE", 1),
        ("LIC006", "warning", "README.md", 12),
    },
    "unidentified-licence": {("LIC005", "info", "LICENSE", 1)},
    "apache-link-only": {("ATT001", "error", "README.md", 2)},
    "licence-typo": {("LIC002", "error", "README.md", 2)},
    "other-without-link": {("LIC003", "error", "README.md", 2)},
    "empty-card": {("LIC001", "error", "README.md", 1)},
    "malformed": set(),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_licence_findings(name: str) -> None:
    assert licence_findings(name) == EXPECTED[name]


def test_a_base_without_licence_leaves_its_duties_not_checked() -> None:
    checks = {c["rule_id"]: c for c in scenario_json("base-without-licence")["checks"]}
    assert checks["LIC007"]["outcome"] == "fail"
    for rule_id in ("ATT002", "ATT003", "ATT004", "ATT005", "ATT006", "ATT007"):
        assert checks[rule_id]["outcome"] == "not_checked", rule_id
        assert "kestrel-lab/Kestrel-7B declares no licence" in checks[rule_id]["reason"]
    assert checks["ATT001"]["outcome"] == "pass"  # the declared licence's own duty


def test_clean_fixtures_have_zero_findings() -> None:
    for name in ("clean-apache", "clean-llama"):
        assert scenario_json(name)["findings"] == [], name


def test_relicensed_llama_names_the_base_and_the_fix() -> None:
    report = scenario_json("llama-relicensed-mit")
    lic007 = next(f for f in report["findings"] if f["rule_id"] == "LIC007")
    assert "meta-llama/Llama-3.1-8B-Instruct" in lic007["message"]
    assert lic007["evidence"] == "license: mit"
    assert lic007["remediation"]
    att005 = next(f for f in report["findings"] if f["rule_id"] == "ATT005")
    assert "Llama 3.1 is licensed under the Llama 3.1 Community License" in att005["evidence"]
    att003 = next(f for f in report["findings"] if f["rule_id"] == "ATT003")
    assert att003["evidence"] == "Quokka-8B-Chat"


def test_licence_facts_are_published() -> None:
    facts = scenario_json("clean-apache")["facts"]["license"]
    (licence_file,) = facts["files"]
    assert licence_file["identified"] == "Apache-2.0"
    assert licence_file["also"] == ["MIT"]
    assert facts["notices"] == ["NOTICE"]
    assert facts["base"][0]["declared"] == "apache-2.0"
    assert facts["code_repo"]["identified"] == "Apache-2.0"
    assert [p["licence"] for p in facts["prose"]] == ["apache-2.0", "apache-2.0"]
    llama = scenario_json("clean-llama")["facts"]["license"]
    assert llama["files"][0]["identified"] == "llama3.1"
    assert llama["code_repo"]["identified"] == "MIT"


def test_list_licence_and_odd_metadata_never_raise(tmp_path) -> None:
    from cardaudit.pipeline import audit
    from cardaudit.policy import Policy
    from cardaudit.sources import AuditRequest

    mit = (ROOT / "fixtures" / "clean-llama" / "code" / "LICENSE").read_text()
    (tmp_path / "LICENSE").write_text(mit)
    (tmp_path / "README.md").write_text(
        "---\nlicense: [apache-2.0, mit]\nlicense_link: {a: 1}\nbase_model: 7\n---\n# X\n"
        "Released under the MIT License.\n"
    )
    report = audit(AuditRequest(target=str(tmp_path)), Policy())
    rules = {(f.rule_id, f.location.path) for f in report.findings}
    assert ("LIC004", "LICENSE") not in rules  # MIT is one of the declared licences
    assert ("ATT001", "README.md") in rules  # no Apache-2.0 copy ships


def test_a_notice_sentence_is_not_a_licence_copy(tmp_path) -> None:
    from cardaudit.pipeline import audit
    from cardaudit.policy import Policy
    from cardaudit.sources import AuditRequest

    (tmp_path / "LICENSE").write_text(
        "Llama 3.1 is licensed under the Llama 3.1 Community License, Copyright © Meta "
        "Platforms, Inc. All Rights Reserved.\n"
    )
    (tmp_path / "README.md").write_text(
        "---\nlicense: llama3.1\nbase_model: meta-llama/Llama-3.1-8B\n---\n# Llama-3.1-X\n\n"
        "Built with Llama.\n"
    )
    report = audit(AuditRequest(target=str(tmp_path)), Policy())
    att001 = [f for f in report.findings if f.rule_id == "ATT001"]
    assert [(f.severity, f.location.path, f.location.line) for f in att001] == [
        ("error", "LICENSE", 1)
    ]
    assert "only part" in att001[0].message


def test_code_notice_must_be_carried(tmp_path) -> None:
    import shutil

    from cardaudit.pipeline import audit
    from cardaudit.policy import Policy
    from cardaudit.sources import AuditRequest

    shutil.copytree(ROOT / "fixtures" / "clean-apache", tmp_path / "s")
    (tmp_path / "s" / "code" / "NOTICE").write_text("marigold-train\nCopyright 2027 Other Lab\n")
    request = AuditRequest(
        target=str(tmp_path / "s" / "model"),
        code=str(tmp_path / "s" / "code"),
        base=str(tmp_path / "s" / "base"),
    )
    found = [
        (f.rule_id, f.severity, f.location.path, f.location.line, f.evidence)
        for f in audit(request, Policy()).findings
    ]
    assert found == [("ATT002", "error", "NOTICE", 1, "Copyright 2027 Other Lab")]
