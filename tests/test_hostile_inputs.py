"""Hostile repo content costs bounded time and memory and ends in SRC findings, never a crash.

One test per class of issue 14 §2: YAML alias bombs and deep nesting (with both PyYAML
loaders), deep JSON in config.json / the index / a safetensors header, non-finite, huge and
negative shapes, GGUF headers declaring absurd key counts, megabyte front-matter values,
and repo values (shard, module names) that would be catastrophic as regexes.
"""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cardaudit import bounded
from cardaudit.cli import app
from cardaudit.model import MAX_EVIDENCE_CHARS, MAX_MESSAGE_CHARS
from cardaudit.pipeline import audit_evidence
from cardaudit.policy import Policy
from cardaudit.sources import local_evidence
from cardaudit.sources.card import MAX_VALUE_CHARS, parse_card

runner = CliRunner()
LOADERS = ["python", "c"] if getattr(yaml, "CSafeLoader", None) else ["python"]


def _bomb(width: int = 9, levels: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "\n".join([*lines, f"license: *a{levels}"])


def _audit_json(root: Path) -> dict:
    result = runner.invoke(app, ["audit", str(root), "-f", "json", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    assert "internal error" not in result.output and "Traceback" not in result.output
    return json.loads(result.output)


def _rules(report: dict) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["rule_id"], []).append(finding["message"])
    return found


@pytest.fixture(params=LOADERS)
def loader(request, monkeypatch) -> str:
    monkeypatch.setattr(bounded, "YAML_LOADER", request.param)
    return request.param


def test_alias_bomb_is_refused_in_bounded_time(loader) -> None:
    started = time.process_time()
    card = parse_card("README.md", f"---\n{_bomb()}\n---\n# Model\n")
    assert time.process_time() - started < 1.0
    assert card.error is not None and "expands to more than" in card.error
    assert dict(card.metadata) == {}


def test_small_aliases_still_load(loader) -> None:
    card = parse_card("README.md", "---\nbase: &b org/base\nbase_model: *b\ntags: [a]\n---\n")
    assert card.error is None
    assert card.metadata["base_model"] == "org/base"
    assert card.key_line("base_model") == 3


@pytest.mark.parametrize("depth", [100, 1000, 100_000])
def test_deep_yaml_flow_sequence_is_an_error_not_a_crash(loader, depth: int) -> None:
    card = parse_card("README.md", "---\nlicense: " + "[" * depth + "]" * depth + "\n---\n")
    assert card.error is not None


def test_deep_front_matter_and_bomb_end_in_src002(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("---\n" + _bomb() + "\n---\n# M\n")
    assert "SRC002" in _rules(_audit_json(tmp_path))


def test_megabyte_front_matter_value_is_cut(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "---\nlicense: apache-2.0\nextra_gated_prompt: " + "x" * 1_000_000 + "\n---\n# M\n"
    )
    evidence = local_evidence(str(tmp_path))
    value = evidence.card.metadata["extra_gated_prompt"]
    assert len(value) == MAX_VALUE_CHARS + 1 and value.endswith("…")
    messages = [p.message for p in evidence.problems if p.rule_id == "SRC003"]
    assert any("extra_gated_prompt" in message for message in messages)
    started = time.process_time()
    audit_evidence(evidence, Policy())
    assert time.process_time() - started < 5.0


def test_megabyte_values_are_cut_in_findings_and_reports(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        f"---\nlicense: {'x' * 1_000_000}\nbase_model: {'y' * 1_000_000}\n---\n# M\n"
    )
    report = _audit_json(tmp_path)
    assert len(report["facts"]["license"]["declared"]) == MAX_VALUE_CHARS + 1  # as cut
    assert report["findings"]
    for finding in report["findings"]:
        assert len(finding["message"]) <= MAX_MESSAGE_CHARS + 1
        assert len(finding["evidence"] or "") <= MAX_EVIDENCE_CHARS + 1
    for run in report["checks"]:
        assert len(run.get("reason") or "") <= MAX_MESSAGE_CHARS + 1
        assert len(run.get("fix") or "") <= MAX_MESSAGE_CHARS + 1
    text = runner.invoke(app, ["audit", str(tmp_path), "--fail-on", "never"]).output
    assert len(text) < 50_000


@pytest.mark.parametrize("name", ["config.json", "model.safetensors.index.json"])
def test_deep_json_is_an_src003_finding(tmp_path: Path, name: str) -> None:
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n# M\n")
    (tmp_path / name).write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    messages = _rules(_audit_json(tmp_path))["SRC003"]
    assert any(name in m and "nested deeper" in m for m in messages)


def test_moderately_deep_json_is_refused_too() -> None:
    with pytest.raises(bounded.BoundsError):
        bounded.loads_json("[" * 500 + "]" * 500)
    assert bounded.loads_json('{"a": [[1]]}') == {"a": [[1]]}


def _safetensors(path: Path, header: str) -> None:
    raw = header.encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


@pytest.mark.parametrize(
    ("shape", "why"),
    [
        ("[Infinity, 4]", "not valid JSON"),
        ("[NaN]", "not valid JSON"),
        ("[-5, 4]", "out of range"),
        ("[99999999999999999999999999]", "out of range"),
        ("[2.5]", "not an integer"),
        ("[true]", "not an integer"),
        ('"4096"', "not a list"),
    ],
)
def test_hostile_safetensors_shapes_are_src003(tmp_path: Path, shape: str, why: str) -> None:
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n# M\n")
    header = '{"w": {"dtype": "BF16", "shape": ' + shape + ', "data_offsets": [0, 0]}}'
    _safetensors(tmp_path / "model.safetensors", header)
    messages = _rules(_audit_json(tmp_path))["SRC003"]
    assert any("model.safetensors" in m and why in m for m in messages), messages


def test_deep_safetensors_header_is_src003(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n# M\n")
    _safetensors(tmp_path / "model.safetensors", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    messages = _rules(_audit_json(tmp_path))["SRC003"]
    assert any("nested deeper" in m for m in messages)


def _gguf_many_keys(path: Path, count: int) -> None:
    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    keys = b"".join(string(f"k.{i}") + struct.pack("<II", 4, 1) for i in range(count))
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, count) + keys)


def test_gguf_with_300k_keys_is_refused_before_parsing(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n# M\n")
    _gguf_many_keys(tmp_path / "model.gguf", 300_000)
    started = time.process_time()
    report = _audit_json(tmp_path)
    assert time.process_time() - started < 10.0
    assert any("300,000 metadata keys" in m for m in _rules(report)["SRC003"])


def test_shard_name_is_searched_as_text_not_as_a_regex(tmp_path: Path) -> None:
    """``(a+)+b`` as a pattern over a run of a's backtracks for days; as text it is instant."""
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n# M\n")
    names = {"a" * 40 + str(i): "(a+)+b" for i in range(3)}
    names["x"] = "model-00001-of-00002.safetensors"
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": names}))
    _safetensors(
        tmp_path / "model-00001-of-00002.safetensors",
        '{"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}',
    )
    started = time.process_time()
    report = _audit_json(tmp_path)
    assert time.process_time() - started < 10.0
    assert any("(a+)+b" in m for m in _rules(report)["MEM008"])


def test_adapter_target_regex_runs_in_linear_time() -> None:
    from cardaudit.extract.structure import module_exists

    names = frozenset({"a" * 60 + ".weight", "model.layers.0.self_attn.q_proj.weight"})
    started = time.process_time()
    assert module_exists("(a+)+b", names) is False
    assert module_exists(r".*\.q_proj", names) is True
    assert module_exists("(?<=x)a", names) is True  # unreadable for RE2: not evidence
    assert time.process_time() - started < 1.0


@pytest.mark.parametrize("value", ["2024-13-45", "2024-01-01T25:00:00", "!!float abc"])
def test_values_pyyaml_cannot_construct_are_invalid_yaml(loader, value: str) -> None:
    card = parse_card("README.md", f"---\nlicense: mit\nreleased: {value}\n---\n")
    assert card.error is not None and "cannot read a value" in card.error


@pytest.mark.parametrize("size", ["1e999", "-1", "true", "NaN"])
def test_index_total_size_that_is_no_size_is_ignored(size: str) -> None:
    from cardaudit.extract.parameters import index_total_size

    index = bounded.loads_json('{"metadata": {"total_size": ' + size + "}}")
    assert index_total_size(index) is None
