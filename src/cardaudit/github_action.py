"""The logic of the GitHub Action (``action.yml``): audit, write reports, summary and outputs.

Run as ``python -m cardaudit.github_action``. Inputs come from ``INPUT_*`` environment
variables (set by action.yml); results go to files in the output directory, to
``$GITHUB_STEP_SUMMARY`` (the Markdown summary) and to ``$GITHUB_OUTPUT``. The process
exits 0 even when the audit fails, so the SARIF upload step still runs; the action's last
step fails the job from the ``exit-code`` output. Runs the same way locally:

    INPUT_MODEL=path/to/model GITHUB_STEP_SUMMARY=/tmp/s.md GITHUB_OUTPUT=/tmp/o \\
        python -m cardaudit.github_action
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path

from cardaudit.safe_text import no_workflow_commands, one_line

FORMATS = ("json", "sarif", "markdown", "html", "badge", "shields", "github")
OUTPUTS = {
    "github": "annotations",
    "json": "json",
    "sarif": "sarif",
    "markdown": "markdown",
    "html": "html",
    "badge": "badge-svg",
    "shields": "badge-json",
}


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    """An action input as GitHub passes it (``INPUT_<NAME>``, upper case, dashes kept)."""
    value = env.get(f"INPUT_{name.upper()}", env.get(f"INPUT_{name.upper().replace('-', '_')}"))
    return (value if value is not None else default).strip()


def _relative(path: str, workspace: Path) -> str:
    """A local model path relative to the workspace (so SARIF paths match the repo)."""
    candidate = Path(path)
    full = candidate if candidate.is_absolute() else workspace / candidate
    if not full.exists():
        return path  # a Hub id, or a missing path the CLI will report
    try:
        return full.resolve().relative_to(workspace.resolve()).as_posix() or "."
    except ValueError:
        return str(full)


def build_command(env: Mapping[str, str], workspace: Path, output_dir: Path) -> list[str]:
    model = _input(env, "model")
    if not model:
        raise SystemExit("cardaudit action: the `model` input is required")
    command = [sys.executable, "-m", "cardaudit.cli", "audit", _relative(model, workspace)]
    for flag, name in (("--code", "code"), ("--base", "base")):
        value = _input(env, name)
        if value:
            command += [flag, _relative(value, workspace)]
    for flag, name in (("--fail-on", "fail-on"), ("--config", "config")):
        value = _input(env, name)
        if value:
            command += [flag, value]
    for flag, name in (("--select", "select"), ("--ignore", "ignore")):
        value = _input(env, name)
        if value:
            command += [flag, value]
    if _input(env, "show-suppressed", "false").lower() == "true":
        command.append("--show-suppressed")
    return [*command, "--format", ",".join(FORMATS), "--output-dir", str(output_dir)]


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(text)


def _set_outputs(path: str | None, values: Mapping[str, str]) -> None:
    """Write ``name=value`` lines (multi-line values use a heredoc delimiter)."""
    lines = []
    for name, value in values.items():
        if "\n" in value:
            marker = f"ghadelim_{uuid.uuid4().hex}"
            lines.append(f"{name}<<{marker}\n{value}\n{marker}\n")
        else:
            lines.append(f"{name}={value}\n")
    _append(path, "".join(lines))


def run(env: Mapping[str, str], cwd: Path | None = None) -> int:
    """Run the audit as the action does; returns the audit's exit code (0, 1 or 2)."""
    workspace = Path(env.get("GITHUB_WORKSPACE") or cwd or Path.cwd())
    output_dir = Path(_input(env, "output-dir", "cardaudit-report"))
    if not output_dir.is_absolute():
        output_dir = workspace / output_dir
    command = build_command(env, workspace, output_dir)
    child_env = {**os.environ, **env, "NO_COLOR": "1"}
    result = subprocess.run(
        command, cwd=workspace, env=child_env, capture_output=True, text=True, check=False
    )
    # The log is parsed for workflow commands: nothing the audited repo wrote may forge one.
    sys.stdout.write(no_workflow_commands(result.stdout))
    sys.stderr.write(no_workflow_commands(result.stderr))
    outputs = {"exit-code": str(result.returncode)}
    summary_path = env.get("GITHUB_STEP_SUMMARY")
    if result.returncode == 2:
        message = one_line((result.stderr.strip().splitlines() or ["cardaudit failed"])[-1])
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", message)), default=0))
        _append(summary_path, f"## cardaudit: could not audit\n\n{fence}\n{message}\n{fence}\n")
        outputs["verdict"] = "error"
        _set_outputs(env.get("GITHUB_OUTPUT"), outputs)
        return 2
    from cardaudit.reporters import output_name

    for fmt, name in OUTPUTS.items():
        outputs[name] = str(output_dir / output_name(fmt))
    _append(summary_path, (output_dir / output_name("markdown")).read_text(encoding="utf-8"))
    if _input(env, "annotations", "true").lower() == "true":
        # Workflow commands written by the github reporter, which escapes every value in them.
        sys.stdout.write((output_dir / output_name("github")).read_text(encoding="utf-8"))
    report = json.loads((output_dir / output_name("json")).read_text(encoding="utf-8"))
    badge = json.loads((output_dir / output_name("shields")).read_text(encoding="utf-8"))
    outputs.update(
        {
            "verdict": badge["message"],
            "badge-color": badge["color"],
            "errors": str(report["summary"]["error"]),
            "warnings": str(report["summary"]["warning"]),
            "suppressed": str(report["summary"]["suppressed"]),
        }
    )
    _set_outputs(env.get("GITHUB_OUTPUT"), outputs)
    return result.returncode


def main() -> None:
    code = run(os.environ)
    if os.environ.get("CARDAUDIT_ACTION_ENFORCE") == "1":
        raise SystemExit(code)


if __name__ == "__main__":
    main()
