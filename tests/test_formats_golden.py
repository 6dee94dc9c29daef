"""Golden files per output format for every fixture, and each format's own validator.

Documents are made deterministic the way a reproducible build would: ``SOURCE_DATE_EPOCH``
fixes timestamps, ids are derived from content (uuid5), and the audit runs from the
project root on relative paths. Regenerate with ``UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

from cardaudit.model import Report
from cardaudit.reporters import output_name, render
from cardaudit.sources import AuditRequest
from scenarios import FIXTURES, GOLDEN, ROOT, scenario_names, scenario_report, scenario_settings

FORMATS = ("sarif", "markdown", "html", "spdx", "cyclonedx", "badge", "shields")
EPOCH = "1767225600"  # 2026-01-01T00:00:00Z
SARIF_SCHEMA = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())


@functools.cache
def relative_report(name: str) -> Report:
    """The scenario audited from the project root with relative paths (as CI runs it).

    Cached: every format renders the same (immutable) report, so each scenario is audited once.
    """
    folder = FIXTURES / name
    rel = f"fixtures/{name}"
    base: str | tuple[str, ...] | None = f"{rel}/base" if (folder / "base").is_dir() else None
    if scenario_settings(name).get("bases"):  # several parents, one --base each
        base = tuple(f"{rel}/{folder_name}" for folder_name in scenario_settings(name)["bases"])
    return scenario_report(
        name,
        AuditRequest(
            target=f"{rel}/model",
            code=f"{rel}/code" if (folder / "code").is_dir() else None,
            base=base,
        ),
    )


@pytest.fixture
def reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", scenario_names())
def test_format_matches_golden(name: str, fmt: str, reproducible: None) -> None:
    text = render(relative_report(name), fmt, show_suppressed=True)
    path = GOLDEN / "formats" / name / output_name(fmt)
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden {path.relative_to(ROOT)}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", scenario_names())
def test_sarif_fits_the_official_schema(name: str, reproducible: None) -> None:
    import jsonschema

    data = json.loads(render(relative_report(name), "sarif"))
    jsonschema.validate(data, SARIF_SCHEMA)


@pytest.mark.parametrize("name", scenario_names())
def test_spdx_round_trips_through_spdx_tools_and_validates(
    name: str, reproducible: None, tmp_path: Path
) -> None:
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    path = tmp_path / "report.spdx.json"
    path.write_text(render(relative_report(name), "spdx"), encoding="utf-8")
    document = parse_file(str(path))
    assert validate_full_spdx_document(document) == []
    assert document.creation_info.spdx_version == "SPDX-2.3"
    model = document.packages[0]
    assert model.spdx_id == "SPDXRef-Package-model"


@pytest.mark.parametrize("name", scenario_names())
def test_cyclonedx_validates_against_the_1_6_schema(name: str, reproducible: None) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    text = render(relative_report(name), "cyclonedx")
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    component = json.loads(text)["metadata"]["component"]
    assert component["type"] == "machine-learning-model"
    assert component["modelCard"]["bom-ref"] == "model-card"


@pytest.mark.parametrize("name", scenario_names())
def test_every_sarif_result_has_a_file_for_code_scanning(name: str, reproducible: None) -> None:
    run = json.loads(render(relative_report(name), "sarif"))["runs"][0]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for result in run["results"]:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith(f"fixtures/{name}/"), uri
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]


def test_sarif_finding_without_a_file_points_at_the_missing_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    run = json.loads(render(scenario_report("x", AuditRequest(target="model")), "sarif"))["runs"][0]
    located = {
        r["ruleId"]: r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in run["results"]
    }
    assert located.get("SRC001") == "model/README.md"
