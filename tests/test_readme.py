"""README.md's commands run as written: the two first commands are what CI runs, and every
later ``sh`` block works after the first command (the venv's executables, no activation)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SH_BLOCKS = re.findall(r"^```sh\n(.*?)^```", README, flags=re.M | re.S)


def _commands(block: str) -> list[str]:
    """The block's command lines, comments removed."""
    lines = []
    for line in block.splitlines():
        command = line.split("  #", 1)[0].strip()
        if command and not command.startswith("#"):
            lines.append(command)
    return lines


def test_ci_runs_the_readmes_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert _commands(SH_BLOCKS[0])[1] == ci[-1]


def test_the_readmes_test_command_runs_in_parallel():
    assert re.search(r"pytest -n auto\b", _commands(SH_BLOCKS[0])[1])


def test_the_readme_states_the_measured_test_time():
    assert re.search(r"\b\d+ s with two workers\b", README.split("##")[0])


def test_later_blocks_use_the_venv_and_run_as_written(tmp_path: Path):
    """Each later block runs in a folder laid out like the clone (fixtures, scripts, .venv)."""
    venv = Path(sys.prefix)
    if venv == Path(sys.base_prefix) or not (venv / "bin" / "cardaudit").exists():
        pytest.skip("not running from a venv with cardaudit installed")
    for name in ("fixtures", "scripts", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / ".venv").symlink_to(venv)
    env = os.environ | {"CARDAUDIT_NOW": "2026-06-15"}
    for block in SH_BLOCKS[1:]:
        for command in _commands(block):
            words = shlex.split(command)
            program = next(word for word in words if "=" not in word)
            ok = program.startswith(".venv/bin/") or program in {"rm", "mkdir"}
            assert ok, f"needs an activated venv: {command}"
            # Paths under /tmp in the README are the reader's scratch space: keep them here.
            command = command.replace("/tmp/", f"{tmp_path}/scratch-")
            done = subprocess.run(
                ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert done.returncode in (0, 1), f"{command}\n{done.stderr}"
            for sign in ("error:", "Traceback"):
                assert sign not in done.stderr, f"{command}\n{done.stderr}"
