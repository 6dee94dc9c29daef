"""Auditing a hostile checkout runs nothing from its git config and reads no other repository.

Each test builds its hostile repo in tmp_path with real git and asserts the command it names
did not run (a marker file is never created).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.sources import AuditRequest, acquire, git_safety

runner = CliRunner()
ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.org",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.org",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}
CARD = "---\nlicense: mit\n---\n# Hostile-1B\n\n{line}\n"


def git(cwd: Path, *args: str) -> str:
    import os

    env = {**os.environ, **ENV}
    env.pop("GIT_CONFIG_COUNT", None)
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def two_commit_repo(path: Path) -> str:
    """A repo with two README versions and an MIT licence; returns the HEAD sha."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "uploadpack.allowFilter", "true")
    (path / "LICENSE").write_text("MIT License\n\nCopyright (c) 2026 Hostile Org\n")
    (path / "README.md").write_text(CARD.format(line="Weights coming soon."))
    git(path, "add", ".")
    git(path, "commit", "-qm", "first")
    (path / "README.md").write_text(CARD.format(line="Weights released."))
    git(path, "commit", "-qam", "second")
    return git(path, "rev-parse", "HEAD")


def partial_clone(tmp_path: Path) -> tuple[Path, str]:
    """A blobless clone lacking the first README blob (a lazy fetch would be needed)."""
    origin = tmp_path / "origin"
    head = two_commit_repo(origin)
    model = tmp_path / "model"
    git(tmp_path, "clone", "-q", "--filter=blob:none", origin.as_uri(), str(model))
    return model, head


def audit_json(path: Path, *extra: str) -> dict:
    result = runner.invoke(app, ["audit", str(path), "-f", "json", "--fail-on", "never", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def src_messages(report: dict, rule: str) -> list[str]:
    return [f["message"] for f in report["findings"] if f["rule_id"] == rule]


def test_a_promisor_upload_pack_command_never_runs(tmp_path: Path) -> None:
    model, head = partial_clone(tmp_path)
    marker = tmp_path / "PWNED"
    git(model, "config", "remote.origin.uploadpack", f"touch {marker}; git-upload-pack")

    report = audit_json(model)

    assert not marker.exists()
    assert report["target"]["revision"] == head  # read from the ref files, not by git
    (message,) = src_messages(report, "SRC013")
    assert "remote.origin.uploadpack = 'touch " in message
    assert "no git command was run" in message
    assert report["facts"]["license"]["declared"] == "mit"  # the files are still audited


def test_without_the_refusal_the_environment_still_blocks_the_lazy_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: even a config the vetting missed cannot fetch or run anything."""
    model, head = partial_clone(tmp_path)
    marker = tmp_path / "PWNED"
    git(model, "config", "remote.origin.uploadpack", f"touch {marker}; git-upload-pack")
    git(model, "config", "core.fsmonitor", f"touch {marker}-fsmonitor")
    monkeypatch.setattr(git_safety, "dangerous_keys", lambda entries: [])

    evidence = acquire(AuditRequest(target=str(model)))

    assert not marker.exists() and not Path(f"{marker}-fsmonitor").exists()
    assert evidence.target.revision == head
    versions = evidence.repo.history["README.md"]
    assert [v.text.splitlines()[-1] for v in versions] == ["Weights released."]
    missing = [p for p in evidence.problems if p.rule_id == "SRC003"]
    assert missing and "not in the local object store" in missing[0].message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("core.fsmonitor", "touch {marker}"),
        ("core.sshCommand", "touch {marker}"),
        ("core.pager", "touch {marker}"),
        ("diff.md.textconv", "touch {marker}"),
        ("filter.lfs.smudge", "touch {marker}"),
        ("credential.helper", "!touch {marker}"),
        ("include.path", "{marker}.cfg"),
        ("remote.origin.url", "ext::sh -c touch% {marker}"),
        ("core.worktree", "/"),
    ],
)
def test_every_exec_capable_key_is_refused(tmp_path: Path, key: str, value: str) -> None:
    repo = tmp_path / "model"
    two_commit_repo(repo)
    marker = tmp_path / "PWNED"
    git(repo, "config", key, value.format(marker=marker))

    report = audit_json(repo)

    assert not marker.exists()
    (message,) = src_messages(report, "SRC013")
    assert key.lower() in message  # git lower-cases section and key names


def test_a_switched_off_fsmonitor_is_harmless(tmp_path: Path) -> None:
    repo = tmp_path / "model"
    head = two_commit_repo(repo)
    git(repo, "config", "core.fsmonitor", "false")
    report = audit_json(repo)
    assert not src_messages(report, "SRC013")
    assert report["target"]["revision"] == head


def test_a_git_file_pointing_elsewhere_is_not_followed(tmp_path: Path) -> None:
    other = tmp_path / "someone-elses-repo"
    two_commit_repo(other)
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(CARD.format(line="Just a folder."))
    (model / ".git").write_text(f"gitdir: {other / '.git'}\n")

    report = audit_json(model)

    assert report["target"]["revision"] is None
    (message,) = src_messages(report, "SRC013")
    assert "outside the audited folder" in message


def test_alternates_outside_the_folder_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other"
    two_commit_repo(other)
    repo = tmp_path / "model"
    two_commit_repo(repo)
    info = repo / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{other / '.git' / 'objects'}\n")
    report = audit_json(repo)
    (message,) = src_messages(report, "SRC013")
    assert "alternates" in message


def test_a_clean_checkout_keeps_its_history(tmp_path: Path) -> None:
    repo = tmp_path / "model"
    head = two_commit_repo(repo)
    evidence = acquire(AuditRequest(target=str(repo)))
    assert evidence.target.revision == head
    assert len(evidence.repo.history["README.md"]) == 2
    assert not [p for p in evidence.problems if p.rule_id in ("SRC003", "SRC013")]


@pytest.mark.parametrize(
    "value",
    [
        "--upload-pack=touch {marker}",
        "-u",
        "ext::sh -c touch% {marker}",
        "file:///{marker}",
        "ssh://example.org/repo.git",
        "git@github.com:example-org/repo.git",
        "http://github.com/example-org/repo",
        "https://github.com/example-org/repo#--orphan=x",
        "https://github.com/example-org/repo#main touch",
    ],
)
def test_code_values_that_are_not_a_path_https_or_org_name_are_refused(
    tmp_path: Path, value: str
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(CARD.format(line="Code elsewhere."))
    marker = tmp_path / "PWNED"
    result = runner.invoke(app, ["audit", str(model), f"--code={value.format(marker=marker)}"])
    assert result.exit_code == 2, result.output
    assert not marker.exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cardaudit: error:"), result.stderr


def test_a_github_org_name_is_cloned_over_https(tmp_path: Path, github: Path) -> None:
    sha = two_commit_repo(tmp_path / "work")
    bare = github / "example-org" / "hostile-code"
    bare.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "work"), str(bare))
    git(bare, "config", "uploadpack.allowFilter", "true")
    model = tmp_path / "model"
    model.mkdir()
    (model / "README.md").write_text(CARD.format(line="Code on GitHub."))

    evidence = acquire(AuditRequest(target=str(model), code="example-org/hostile-code"))

    assert evidence.code is not None and evidence.code.revision == sha
    assert evidence.code.url == "https://github.com/example-org/hostile-code"
