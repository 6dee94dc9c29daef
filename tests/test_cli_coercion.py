"""The CLI's plain value conversion gives what typer's own pydantic adapters give."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param

from cardaudit.cli import app
from cardaudit.cli_coercion import UNSURE, PlainRuntimeParam, plain_value

ROOT = Path(__file__).resolve().parents[1]


def _params():
    """Every typer parameter of every command, with its command path."""
    found = []

    def walk(command, prefix):
        for param in command.params:
            if hasattr(param, "type_descriptor"):
                found.append((f"{prefix} {param.name}".strip(), param))
        for child in getattr(command, "commands", {}).values():
            walk(child, f"{prefix} {child.name}")

    walk(typer.main.get_command(app), "")
    return found


VALUES = {
    str: ["x", "", "org/name", 3],
    bool: [True, False, "yes"],
    int: ["8", "0", "-3", "70000", " 8", "8.0", "1_000", "x", 8, 0, 1.5, True],
    float: ["300", "2.5", "0.5", "-1", "1e3", "inf", "x", 300, 0.5, 300.0, True],
    Path: ["out.json", "", "-", Path("x")],
    list[str]: [("a", "b"), ["a"], (), ("a", 1)],
}


def _typer_result(param, value):
    adapter = build_runtime_param(param.type_descriptor)
    try:
        return ("ok", adapter._coerce_value(value, param, None))
    except BadParameter as exc:
        return ("error", exc.message)


def _plain_result(param, value):
    descriptor = param.type_descriptor
    runtime = PlainRuntimeParam(
        parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
    )
    try:
        return ("ok", runtime._coerce_value(value, param, None))
    except BadParameter as exc:
        return ("error", exc.message)


@pytest.mark.parametrize(("name", "param"), _params(), ids=lambda value: str(value))
def test_every_cli_parameter_converts_as_typer_does(name, param):
    annotation = param.type_descriptor.annotation
    assert annotation in VALUES, f"{name}: add values for {annotation} to this test"
    for value in VALUES[annotation]:
        plain, reference = _plain_result(param, value), _typer_result(param, value)
        assert plain == reference, (name, value)
        assert type(plain[1]) is type(reference[1]), (name, value)


def test_plain_values_skip_the_adapter_and_others_do_not():
    kv_batch = dict(_params())["audit kv_batch"]
    info = kv_batch.type_descriptor.parameter_info
    assert plain_value(int, info, "8") == 8
    assert plain_value(int, info, "0") is UNSURE  # below --kv-batch's minimum: typer says why
    assert plain_value(int, info, "8.0") is UNSURE
    assert plain_value(str, info, "auto") == "auto"
    assert plain_value(list[str], info, ("a", "b")) == ["a", "b"]


def test_an_audit_does_not_import_pydantic(tmp_path):
    """The whole point: a plain audit never pays for pydantic (only a config table does)."""
    code = (
        "import sys\n"
        "sys.argv = ['cardaudit', 'audit', sys.argv[1], '-f', 'json']\n"
        "from cardaudit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('pydantic' in sys.modules, 'rich.console' in sys.modules, file=sys.stderr)\n"
    )
    result = subprocess.run(  # in an empty folder: no configuration table to validate
        [sys.executable, "-c", code, str(ROOT / "fixtures" / "clover" / "model")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"CARDAUDIT_NO_CACHE": "1", "NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.stderr.strip().splitlines()[-1] == "False False", result.stderr
