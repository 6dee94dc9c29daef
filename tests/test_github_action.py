"""The GitHub Action: its script runs locally with a fake job summary and output file."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from scenarios import FIXTURES, ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def run_action(tmp_path: Path, workspace: Path, **inputs: str) -> tuple[int, dict, str]:
    summary, outputs = tmp_path / "summary.md", tmp_path / "github_output"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
    }
    env.update({f"INPUT_{name.upper()}": value for name, value in inputs.items()})
    result = subprocess.run(
        [sys.executable, "-m", "cardaudit.github_action"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return result.returncode, values, summary.read_text() if summary.exists() else ""


def workspace_with(tmp_path: Path, fixture: str) -> Path:
    workspace = tmp_path / "repo"
    shutil.copytree(FIXTURES / fixture / "model", workspace / "models" / "m")
    return workspace


def test_action_writes_reports_summary_outputs_and_fail_code(tmp_path: Path) -> None:
    workspace = workspace_with(tmp_path, "licence-typo")
    code, out, summary = run_action(tmp_path, workspace, model="models/m")
    assert code == 0  # the step itself passes so the SARIF upload still runs
    assert out["exit-code"] == "1" and out["verdict"] == "failing"
    assert (out["errors"], out["warnings"], out["badge-color"]) == ("1", "0", "red")
    assert summary.startswith("## cardaudit: failing")
    assert "`LIC002`" in summary and "README.md:2" in summary
    sarif = Path(out["sarif"])
    assert sarif.parent == workspace / "cardaudit-report"
    # paths relative to the workspace, so code scanning annotates models/m/README.md line 2
    text = sarif.read_text()
    assert '"uri": "models/m/README.md"' in text and '"startLine": 2' in text
    for key in ("json", "html", "markdown", "badge-svg", "badge-json"):
        assert Path(out[key]).is_file(), key


def test_action_fail_on_input_and_clean_model(tmp_path: Path) -> None:
    workspace = workspace_with(tmp_path, "licence-typo")
    _, out, _ = run_action(tmp_path, workspace, model="models/m", fail_on="never")
    # The badge follows the gate: never failing while the audit passes it.
    assert out["exit-code"] == "0" and out["verdict"] == "1 error"
    clean = tmp_path / "clean"
    clean.mkdir()
    workspace = workspace_with(clean, "clean-card")
    _, out, summary = run_action(clean, workspace, model=str(workspace / "models" / "m"))
    assert out["exit-code"] == "0" and out["verdict"] == "passing"
    assert "No findings." in summary


def test_action_reports_an_unauditable_target(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    _, out, summary = run_action(tmp_path, workspace, model="models/missing")
    assert out["exit-code"] == "2" and out["verdict"] == "error"
    assert "could not audit" in summary and "path not found" in summary


def test_action_yml_wires_inputs_to_the_script_and_sarif_upload() -> None:
    assert ACTION["runs"]["using"] == "composite"
    steps = {step.get("id") or step["name"]: step for step in ACTION["runs"]["steps"]}
    audit = steps["audit"]
    assert audit["run"].strip() == "python -m cardaudit.github_action"
    for name in ACTION["inputs"]:
        if name in ("upload-sarif", "python-version"):
            continue
        env_name = "INPUT_" + name.upper().replace("-", "_")
        assert audit["env"][env_name] == f"${{{{ inputs.{name} }}}}", name
    upload = steps["Upload SARIF to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.audit.outputs.sarif }}"
    assert "always()" in upload["if"]
    enforce = steps["Fail at the chosen severity"]
    assert enforce["env"]["EXIT_CODE"] == "${{ steps.audit.outputs.exit-code }}"
    for name, output in ACTION["outputs"].items():
        assert re.fullmatch(r"\$\{\{ steps\.audit\.outputs\.[\w-]+ \}\}", output["value"]), name


def test_pre_commit_hook_audits_the_repo_being_committed(tmp_path: Path) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["pass_filenames"] is False
    assert re.search(hook["files"], "README.md") and re.search(hook["files"], "LICENSE")
    assert not re.search(hook["files"], "train.py")
    entry = shlex.split(hook["entry"])
    assert entry[0] == "cardaudit"
    repo = workspace_with(tmp_path, "licence-typo") / "models" / "m"
    result = subprocess.run(
        [sys.executable, "-m", "cardaudit.cli", *entry[1:]],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "LIC002" in result.stdout and "README.md:2" in result.stdout


def test_pre_commit_hook_runs_when_a_licence_file_is_deleted(tmp_path: Path) -> None:
    """pre-commit selects a hook's files from `git diff --staged --diff-filter=ACMRTUXB`
    (deletions excluded): a commit deleting LICENSE matches no `files` pattern, so only
    `always_run` makes the hook audit it."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    repo = workspace_with(tmp_path, "clean-apache") / "models" / "m"

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "model")
    git("rm", "-q", "LICENSE")
    staged = git("diff", "--staged", "--name-only", "--diff-filter=ACMRTUXB").split()
    assert staged == [] and "LICENSE" in git("diff", "--staged", "--name-only")
    assert not any(re.search(hook["files"], name) for name in staged)
    assert hook.get("always_run") is True
