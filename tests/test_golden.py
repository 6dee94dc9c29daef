"""Every fixture scenario's JSON report equals its golden file and fits the schema.

Regenerate goldens after an intended change with ``UPDATE_GOLDEN=1 pytest tests/test_golden.py``
and review the diff.
"""

from __future__ import annotations

import json
import os

import pytest

from scenarios import ROOT, golden_path, scenario_json, scenario_names

SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())


@pytest.mark.parametrize("name", scenario_names())
def test_scenario_matches_golden(name: str) -> None:
    actual = scenario_json(name)
    path = golden_path(name)
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    assert path.is_file(), f"no golden for {name}; run with UPDATE_GOLDEN=1"
    assert actual == json.loads(path.read_text())


@pytest.mark.parametrize("name", scenario_names())
def test_golden_fits_schema(name: str) -> None:
    import jsonschema

    jsonschema.validate(json.loads(golden_path(name).read_text()), SCHEMA)
