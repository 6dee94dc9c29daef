"""A modified licence must not pass as the original: changed numbers read for their role,
and the restrictive forms of an edit (LIC010) — negated or conditioned permission, a
contrastive exclusion, a narrowed scope word, a replaced attribution phrase."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.extract.licence_diff import compare
from cardaudit.extract.licence_reference import reference_for
from cardaudit.model import Modification

runner = CliRunner()


def _changed(licence: str, old: str, new: str) -> Modification:
    reference = reference_for(licence)
    assert reference is not None and old in reference.text
    (mod,) = compare(reference.text.replace(old, new, 1), reference.text)[0]
    return mod


def _added(licence: str, rider: str) -> Modification:
    reference = reference_for(licence)
    assert reference is not None
    (mod,) = compare(reference.text + "\n\n" + rider + "\n", reference.text)[0]
    return mod


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("licence", "old", "new", "category"),
    [
        # a lower threshold that triggers "you must request a license": fewer users allowed
        ("llama3.1", "greater than 700 million", "greater than 7 million", "users"),
        # a shorter cure period ("provided it is cured within 30 days")
        ("CC-BY-NC-4.0", "within 30 days", "within 3 days", "period"),
        (
            "GPL-3.0-only",
            "prior to 30 days after your receipt",
            "prior to 10 days after your receipt",
            "period",
        ),
    ],
)
def test_a_number_that_narrows_the_licensees_rights_restricts(
    licence: str, old: str, new: str, category: str
) -> None:
    mod = _changed(licence, old, new)
    assert mod.kind == "changed" and mod.restricts and mod.category == category
    assert old.split()[-1] in (mod.reference_text or "") or old in (mod.reference_text or "")


@pytest.mark.parametrize(
    ("licence", "old", "new", "category"),
    [
        # a higher MAU threshold widens the licensee's rights: still not the original text
        ("llama3.1", "greater than 700 million", "greater than 900 million", "users"),
        # a threshold in a definition ("control": 50% or more of the shares): direction not read
        ("Apache-2.0", "fifty percent (50%)", "fifty percent (10%)", "threshold"),
        ("CC-BY-NC-4.0", "within 30 days", "within 60 days", "period"),
    ],
)
def test_any_other_changed_number_is_a_modification(
    licence: str, old: str, new: str, category: str
) -> None:
    mod = _changed(licence, old, new)
    assert mod.kind == "changed" and not mod.restricts and mod.category == category


def test_list_numbering_stays_ignorable() -> None:
    apache = reference_for("Apache-2.0").text
    renumbered = re.sub(
        r"^(\s*)(\d+)\.", lambda m: f"{m.group(1)}{int(m.group(2)) + 10}.", apache, flags=re.M
    )
    assert renumbered.count("11. Definitions.") == 1
    assert compare(renumbered, apache) == ((), None)


def test_a_number_restated_in_figures_is_not_an_enumerator() -> None:
    reference = (
        "Licensee may cure the breach within thirty (30) days of notice. Otherwise (a) the "
        "licence terminates and (1) all copies must be destroyed.\n"
    )
    (mod,) = compare(reference.replace("(30)", "(3)"), reference)[0]
    assert mod.kind == "changed" and mod.restricts and mod.category == "period"
    renumbered = reference.replace("(a)", "(b)").replace("(1)", "(2)")
    assert compare(renumbered, reference) == ((), None)


# --------------------------------------------------------------------------- forms


@pytest.mark.parametrize(
    ("rider", "category"),
    [
        # negated permission
        (
            "This license does not permit use of the Work for military purposes or by any "
            "entity with annual revenue above US$10 million.",
            "field_of_use",
        ),
        # conditioned permission
        ("Any commercial use requires a separate written license.", "commercial"),
    ],
)
def test_an_added_negated_or_conditioned_permission_restricts(rider: str, category: str) -> None:
    mod = _added("MIT", rider)
    assert mod.kind == "added" and mod.restricts and mod.category == category


@pytest.mark.parametrize(
    ("licence", "old", "new", "category"),
    [
        # contrastive exclusion: the grant keeps its verbs but excludes one
        ("MIT", "and/or sell", "but not sell", "commercial"),
        # a narrowed scope word: "worldwide" → "… only"
        ("Apache-2.0", "worldwide", "United States only", "territory"),
        # the grant made revocable and fee-bearing
        (
            "Apache-2.0",
            "no-charge, royalty-free, irrevocable copyright",
            "revocable, fee-bearing copyright",
            "revocability",
        ),
        (
            "Apache-2.0",
            "no-charge, royalty-free, irrevocable copyright",
            "fee-bearing, irrevocable copyright",
            "commercial",
        ),
        # the attribution phrase a duty prescribes, replaced
        ("llama3.1", "“Built with Llama”", "“Powered by Meta”", "attribution"),
    ],
)
def test_a_narrowing_edit_restricts(licence: str, old: str, new: str, category: str) -> None:
    mod = _changed(licence, old, new)
    assert mod.kind == "changed" and mod.restricts and mod.category == category


def test_including_but_not_limited_to_is_no_exclusion() -> None:
    rider = "Contributions include, but are not limited to, code and documentation."
    assert not _added("MIT", rider).restricts
    assert not _added("MIT", "Examples include but not limited to tutorials.").restricts


def test_a_huge_number_is_read_without_error() -> None:
    mod = _changed("llama3.1", "700 million", "9" * 5000 + " million")
    assert mod.kind == "changed" and not mod.restricts


def test_a_widening_or_neutral_edit_does_not_restrict() -> None:
    # adding a scope word, or rewording outside any quoted duty, narrows nothing
    assert not _changed(
        "Apache-2.0", "non-exclusive, no-charge", "non-exclusive, worldwide, no-charge"
    ).restricts
    assert not _changed("llama3.1", "on a related website", "on a relevant website").restricts


# --------------------------------------------------------------------------- end to end


def test_a_lowered_mau_threshold_is_lic010_at_its_line(tmp_path: Path) -> None:
    llama = reference_for("llama3.1").text
    repo = tmp_path / "model"
    repo.mkdir()
    (repo / "README.md").write_text("---\nlicense: llama3.1\n---\n\n# A model\n")
    (repo / "LICENSE").write_text(llama.replace("700 million", "7 million", 1))
    result = runner.invoke(app, ["audit", str(repo), "-f", "json", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (mod,) = data["facts"]["license"]["files"][0]["modifications"]
    assert mod["restricts"] is True and mod["category"] == "users"
    line = next(n for n, text in enumerate(llama.splitlines(), 1) if "700 million" in text)
    rows = {
        (f["rule_id"], f["severity"], f["location"]["line"])
        for f in data["findings"]
        if f["rule_id"] in ("LIC010", "LIC011")
    }
    assert rows == {("LIC010", "error", line)}
    (finding,) = [f for f in data["findings"] if f["rule_id"] == "LIC010"]
    assert "(users)" in finding["message"] and "(“700” → “7”)" in finding["message"]


def test_a_removed_clause_message_does_not_say_it_binds(tmp_path: Path) -> None:
    llama = reference_for("llama3.1").text
    start = llama.index("2. Additional Commercial Terms")
    end = llama.index("\n", start)
    repo = tmp_path / "model"
    repo.mkdir()
    (repo / "README.md").write_text("---\nlicense: llama3.1\n---\n\n# A model\n")
    (repo / "LICENSE").write_text(llama[:start] + llama[end + 1 :])
    result = runner.invoke(app, ["audit", str(repo), "-f", "json", "--fail-on", "never"])
    (finding,) = [f for f in json.loads(result.stdout)["findings"] if f["rule_id"] == "LIC011"]
    message = finding["message"]
    assert "binds" not in message
    assert "is not the llama3.1 text it is identified as" in message
    assert "should obtain the unmodified llama3.1 text" in message
