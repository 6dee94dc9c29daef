"""The catalogue is parsed with libyaml's C loader where PyYAML has it: it must read every
rule and table exactly as the pure-Python loader does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cardaudit import rules


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")
def test_c_and_python_loaders_read_the_catalogue_alike() -> None:
    folder = rules.rules_dir()
    paths = sorted(folder.glob("*.yaml")) + sorted((folder / "tables").glob("*.yaml"))
    assert len(paths) > 10
    for path in paths:
        assert rules._load_yaml(path) == yaml.safe_load(path.read_text(encoding="utf-8")), path


def test_invalid_yaml_still_names_the_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "LIC999.yaml"
    broken.write_text("id: LIC999\ntitle: [unclosed\n")
    with pytest.raises(rules.RulesError, match=r"LIC999.yaml line \d+: invalid YAML"):
        rules._load_yaml(broken)
