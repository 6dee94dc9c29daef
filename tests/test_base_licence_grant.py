"""What a base model's licence grants a derivative (LIC007, and the base-dependent ATT rules):
a licensor relicensing its own base, a base with no licence, NoDerivatives bases, and SPDX
``AND`` / ``OR`` read from license-expression's parse.

Repos are built in ``tmp_path`` from the licence texts cardaudit itself compares with
(``licence_reference``), named ``owner__name`` where the publishing organisation matters.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardaudit.extract.licence_reference import reference_for
from cardaudit.extract.licence_table import expression_alternatives
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.reporters.json_report import report_to_json
from cardaudit.sources import AuditRequest

BASE_RULES = ("LIC007", "ATT002", "ATT006", "ATT007")


def _text(licence: str) -> str:
    reference = reference_for(licence)
    assert reference is not None, licence
    return reference.text


def _repo(root: Path, name: str, card: str, files: dict[str, str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(card)
    for path, text in (files or {}).items():
        (folder / path).write_text(text)
    return folder


def _audit(model: Path, *bases: Path) -> dict:
    request = AuditRequest(target=str(model), base=tuple(str(b) for b in bases) or None)
    return json.loads(json.dumps(report_to_json(audit(request, Policy()))))


def _rows(report: dict) -> set[tuple]:
    return {
        (f["rule_id"], f["severity"], f["location"]["path"], f["location"]["line"])
        for f in report["findings"]
        if f["rule_id"][:3] in ("LIC", "ATT")
    }


def _outcomes(report: dict) -> dict[str, dict]:
    return {c["rule_id"]: c for c in report["checks"] if c["rule_id"] in BASE_RULES}


def _finding(report: dict, rule_id: str) -> dict:
    return next(f for f in report["findings"] if f["rule_id"] == rule_id)


def _card(licence: str, base: str | None, body: str = "A model.") -> str:
    base_line = f"base_model: {base}\n" if base else ""
    return f"---\nlicense: {licence}\n{base_line}---\n# Model\n\n{body}\n"


# --------------------------------------------------------------------------- 1. licensor


def _llama_base(root: Path) -> Path:
    return _repo(
        root, "meta-llama__Llama-3.1-8B", _card("llama3.1", None), {"LICENSE": _text("llama3.1")}
    )


def test_meta_relicensing_its_own_llama_base_is_an_info_not_a_breach(tmp_path) -> None:
    base = _llama_base(tmp_path / "base")
    model = _repo(
        tmp_path,
        "meta-llama__Llama-3.2-1B",
        _card("llama3.2", "meta-llama/Llama-3.1-8B", "Distilled from Llama 3.1 8B."),
        {"LICENSE": _text("llama3.2")},
    )
    report = _audit(model, base)
    assert report["facts"]["license"]["publisher"]["role"] == "licensor"
    assert _rows(report) == {("LIC007", "info", "README.md", 2)}
    lic007 = _finding(report, "LIC007")
    assert "meta-llama publishes the base model meta-llama/Llama-3.1-8B" in lic007["message"]
    assert "not bound by its own public licence" in lic007["message"]
    assert "recipients of this model get `llama3.2`" in lic007["message"]
    att006 = _outcomes(report)["ATT006"]
    assert att006["outcome"] == "not_applicable"
    assert "rights holder" in att006["note"]
    sources = {o["source"] for o in report["facts"]["license"]["obligations"]}
    assert not any(s.startswith("base model") for s in sources)  # llama3.1 does not pass on


def test_google_relicensing_its_own_gemma_base_as_apache(tmp_path) -> None:
    base = _repo(
        tmp_path / "base", "google__gemma-2-9b", _card("gemma", None), {"LICENSE": _text("gemma")}
    )
    model = _repo(
        tmp_path,
        "google__gemma-2-9b-apache",
        _card("apache-2.0", "google/gemma-2-9b"),
        {"LICENSE": _text("Apache-2.0")},
    )
    report = _audit(model, base)
    assert _rows(report) == {("LIC007", "info", "README.md", 2)}
    assert "recipients of this model get `apache-2.0`" in _finding(report, "LIC007")["message"]
    assert _outcomes(report)["ATT006"]["outcome"] == "not_applicable"


def _nc_base(root: Path, org: str = "nclabs") -> Path:
    return _repo(
        root,
        f"{org}__NC-Base-7B",
        _card("cc-by-nc-4.0", None, f"Copyright 2024 {org}."),
        {"LICENSE": _text("CC-BY-NC-4.0")},
    )


def test_an_org_relicensing_its_own_nc_base(tmp_path) -> None:
    base = _nc_base(tmp_path / "base")
    model = _repo(
        tmp_path,
        "nclabs__NC-Base-7B-v2",
        _card("apache-2.0", "nclabs/NC-Base-7B"),
        {"LICENSE": _text("Apache-2.0")},
    )
    report = _audit(model, base)
    assert _rows(report) == {("LIC007", "info", "README.md", 2)}
    assert _outcomes(report)["LIC007"]["outcome"] == "fail"  # a finding, of severity info


def test_a_third_party_relicensing_the_same_base_is_still_an_error(tmp_path) -> None:
    base = _nc_base(tmp_path / "base")
    model = _repo(
        tmp_path,
        "someone__NC-Base-7B-apache",
        _card("apache-2.0", "nclabs/NC-Base-7B"),
        {"LICENSE": _text("Apache-2.0")},
    )
    report = _audit(model, base)
    assert report["facts"]["license"]["publisher"]["role"] == "redistributor"
    assert ("LIC007", "error", "README.md", 2) in _rows(report)


def test_a_licensor_of_its_own_files_does_not_own_another_orgs_base(tmp_path) -> None:
    """The role comes from the repo's own copyright line; the base is nclabs' work."""
    base = _nc_base(tmp_path / "base")
    model = _repo(
        tmp_path,
        "acme__Acme-7B",
        _card("apache-2.0", "nclabs/NC-Base-7B"),
        {"LICENSE": _text("Apache-2.0"), "NOTICE": "Acme-7B\nCopyright 2025 Acme\n"},
    )
    report = _audit(model, base)
    assert report["facts"]["license"]["publisher"]["role"] == "licensor"
    assert ("LIC007", "error", "README.md", 2) in _rows(report)


def test_an_unknown_publisher_keeps_todays_behaviour(tmp_path) -> None:
    base = _llama_base(tmp_path / "base")
    model = _repo(
        tmp_path,
        "model",
        _card("apache-2.0", "meta-llama/Llama-3.1-8B"),
        {"LICENSE": _text("Apache-2.0")},
    )
    report = _audit(model, base)
    assert report["facts"]["license"]["publisher"]["role"] == "unknown"
    assert {("LIC007", "error", "README.md", 2), ("ATT006", "error", "README.md", 2)} <= _rows(
        report
    )


# --------------------------------------------------------------------------- 2. no licence


def test_a_base_without_any_licence_never_passes(tmp_path) -> None:
    base = _repo(tmp_path / "base", "base", "---\nlanguage: [en]\n---\n# Mystery-7B\n")
    model = _repo(
        tmp_path,
        "model",
        _card("apache-2.0", "mystery/Mystery-7B"),
        {"LICENSE": _text("Apache-2.0")},
    )
    report = _audit(model, base)
    assert ("LIC007", "error", "README.md", 2) in _rows(report)
    lic007 = _finding(report, "LIC007")
    assert "declares no licence and ships no licence file" in lic007["message"]
    assert "all rights are reserved" in lic007["message"]
    outcomes = _outcomes(report)
    assert outcomes["LIC007"]["outcome"] == "fail"
    obligations = {o["duty"]: o for o in report["facts"]["license"]["obligations"]}
    assert obligations["base_no_licence"]["binds"] == "redistributor"
    assert "mystery/Mystery-7B states no licence" in obligations["base_no_licence"]["detail"]
    checks = {c["rule_id"]: c for c in report["checks"]}
    for rule_id in ("ATT002", "ATT003", "ATT004", "ATT005", "ATT006", "ATT007"):
        assert checks[rule_id]["outcome"] == "not_checked", rule_id
        assert "mystery/Mystery-7B declares no licence" in checks[rule_id]["reason"]
        assert checks[rule_id]["fix"]
    assert report["summary"]["not_checked"] == 6


def test_the_owner_of_a_base_without_a_licence_may_license_it(tmp_path) -> None:
    base = _repo(tmp_path / "base", "acme__Mystery-7B", "---\nlanguage: [en]\n---\n# M\n")
    model = _repo(
        tmp_path,
        "acme__Mystery-7B-v2",
        _card("apache-2.0", "acme/Mystery-7B"),
        {"LICENSE": _text("Apache-2.0")},
    )
    report = _audit(model, base)
    assert report["facts"]["license"]["publisher"]["role"] == "licensor"
    assert not any(f["rule_id"] == "LIC007" for f in report["findings"])
    assert _outcomes(report)["LIC007"]["outcome"] == "pass"
    duties = {o["duty"] for o in report["facts"]["license"]["obligations"]}
    assert "base_no_licence" not in duties


CUSTOM = (
    "ACME RESEARCH LICENSE\nCopyright 2024 Acme Corp.\nAcme grants you a licence to use the "
    "Model solely for non-commercial research. You may not distribute the Model or any "
    "derivative of it.\n"
)
OTHER_CARD = "---\nlicense: other\nlicense_name: acme-research\nlicense_link: LICENSE\n---\n# A\n"


def test_a_base_licence_no_known_text_matches_grants_no_known_right(tmp_path) -> None:
    base = _repo(tmp_path / "base", "base", OTHER_CARD, {"LICENSE": CUSTOM})
    model = _repo(
        tmp_path, "model", _card("apache-2.0", "acme/Acme-7B"), {"LICENSE": _text("Apache-2.0")}
    )
    report = _audit(model, base)
    assert ("LIC007", "error", "README.md", 2) in _rows(report)
    message = _finding(report, "LIC007")["message"]
    assert "declares `license: other` and its LICENSE matches no known licence" in message
    assert "read the base licence" in message
    assert _outcomes(report)["ATT006"]["outcome"] == "not_checked"
    obligations = {o["duty"]: o for o in report["facts"]["license"]["obligations"]}
    assert "(LICENSE) in full" in obligations["read_base_licence"]["detail"]


def test_a_base_licence_that_could_not_be_read_is_not_checked(tmp_path) -> None:
    base = _repo(tmp_path / "base", "base", OTHER_CARD)
    (base / "LICENSE").write_bytes(b"ACME\x00\x01\x02 binary")
    model = _repo(
        tmp_path, "model", _card("apache-2.0", "acme/Acme-7B"), {"LICENSE": _text("Apache-2.0")}
    )
    report = _audit(model, base)
    lic007 = _outcomes(report)["LIC007"]
    assert lic007["outcome"] == "not_checked"
    assert "its LICENSE could not be read" in lic007["reason"]
    assert lic007["fix"]
    assert not any(f["rule_id"] == "LIC007" for f in report["findings"])


# --------------------------------------------------------------------------- 3. NoDerivatives


@pytest.mark.parametrize("licence", ["cc-by-nc-nd-4.0", "cc-by-nd-4.0"])
def test_an_adaptation_of_a_no_derivatives_base_may_not_be_shared(tmp_path, licence) -> None:
    spdx = licence.upper()
    base = _repo(tmp_path / "base", "base", _card(licence, None), {"LICENSE": _text(spdx)})
    model = _repo(
        tmp_path,
        "model",
        _card(licence, "ndlabs/ND-Base-7B", "A fine-tune."),
        {"LICENSE": _text(spdx)},
    )
    report = _audit(model, base)
    assert ("LIC007", "error", "README.md", 3) in _rows(report)  # the base_model line
    lic007 = _finding(report, "LIC007")
    assert "grants no right to share adapted material" in lic007["message"]
    assert lic007["evidence"] == "base_model: ndlabs/ND-Base-7B"
    duties = {o["duty"]: o["binds"] for o in report["facts"]["license"]["obligations"]}
    assert duties["no_adaptations"] == "redistributor"


def test_the_no_derivatives_licensor_may_adapt_its_own_base(tmp_path) -> None:
    text = _text("CC-BY-NC-ND-4.0")
    base = _repo(
        tmp_path / "base", "ndlabs__ND-7B", _card("cc-by-nc-nd-4.0", None), {"LICENSE": text}
    )
    model = _repo(
        tmp_path, "ndlabs__ND-7B-v2", _card("cc-by-nc-nd-4.0", "ndlabs/ND-7B"), {"LICENSE": text}
    )
    report = _audit(model, base)
    assert not any(f["rule_id"] == "LIC007" for f in report["findings"])
    assert _outcomes(report)["LIC007"]["outcome"] == "pass"


# --------------------------------------------------------------------------- 4. AND / OR


def _llama_derivative(tmp_path: Path, licence: str) -> dict:
    base = _llama_base(tmp_path / "base")
    model = _repo(
        tmp_path,
        "model",
        _card(licence, "meta-llama/Llama-3.1-8B", "Built with Llama"),
        {"LICENSE": _text("llama3.1"), "LICENSE-APACHE": _text("Apache-2.0")},
    )
    return _audit(model, base)


def test_and_keeps_the_base_terms_it_is_not_relicensing(tmp_path) -> None:
    report = _llama_derivative(tmp_path, "llama3.1 AND apache-2.0")
    assert _outcomes(report)["LIC007"]["outcome"] == "pass"
    assert not any(f["rule_id"] in ("LIC007", "ATT006") for f in report["findings"])


@pytest.mark.parametrize("licence", ["llama3.1 OR apache-2.0", "apache-2.0 OR mit"])
def test_or_lets_recipients_choose_the_permissive_one(tmp_path, licence) -> None:
    report = _llama_derivative(tmp_path, licence)
    assert ("LIC007", "error", "README.md", 2) in _rows(report)
    assert "relicensed as `apache-2.0`" in _finding(report, "LIC007")["message"]
    assert "`llama3.1`" not in _finding(report, "LIC007")["message"].split("(allowed")[0]


def test_expression_alternatives_follow_the_parse() -> None:
    assert expression_alternatives("llama3.1 AND apache-2.0") == [("llama3.1", "apache-2.0")]
    assert expression_alternatives("apache-2.0 OR mit") == [("apache-2.0",), ("mit",)]
    assert expression_alternatives("llama3.1 AND (apache-2.0 OR mit WITH x)") == [
        ("llama3.1", "apache-2.0"),
        ("llama3.1", "mit"),
    ]
    assert expression_alternatives("a and b or c") == [("a", "b"), ("c",)]
    assert expression_alternatives("(broken") == [("broken",)]
    assert expression_alternatives("") == []
