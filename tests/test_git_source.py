"""The code repo: discovered from the card's GitHub links or given with --code, cloned blobless
with gitpython from bare repos built in tmp_path (github.com URLs are rewritten to them)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from cardaudit.cli import app
from cardaudit.sources import AuditRequest, acquire
from cardaudit.sources.card import parse_card
from cardaudit.sources.code_links import choose_code_link
from cardaudit.sources.git import redact_url, split_code_url
from hub_repos import card, publish_model
from hub_server import FakeHub

runner = CliRunner()
FIRST = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
SECOND = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
LINKS = """\
Our training and evaluation code: https://github.com/example-org/clover-code

Serve it with https://github.com/vllm-project/vllm or see
https://github.com/someone-else/awesome-llms for a list of models.
"""


def code_repo(github: Path, name: str = "example-org/clover-code") -> tuple[Path, dict[str, str]]:
    """A bare repo with two README versions, a licence and an annotated tag."""
    work = github.parent / "work" / name
    work.mkdir(parents=True)
    repo = git.Repo.init(work, initial_branch="main")
    shas = {}
    (work / "README.md").write_text("# Clover code\n\nSFT code coming soon.\n")
    (work / "LICENSE").write_text("MIT License\n\nCopyright (c) 2026 Example Org\n")
    repo.index.add(["README.md", "LICENSE"])
    shas["first"] = repo.index.commit("first", author_date=FIRST, commit_date=FIRST).hexsha
    repo.create_tag("v1.0", message="first release")
    (work / "README.md").write_text("# Clover code\n\nSFT code released in sft/.\n")
    (work / "sft").mkdir()
    (work / "sft" / "train.py").write_text("print('train')\n")
    repo.index.add(["README.md", "sft/train.py"])
    shas["second"] = repo.index.commit("second", author_date=SECOND, commit_date=SECOND).hexsha
    bare = github / name
    git.Repo.clone_from(work, bare, bare=True).git.config("uploadpack.allowFilter", "true")
    return bare, shas


def test_discovers_the_code_repo_from_the_card(hub: FakeHub, github: Path, tmp_path: Path) -> None:
    _, shas = code_repo(github)
    publish_model(hub, "example-org/clover", tmp_path / "m", readme=card(body=LINKS))

    result = runner.invoke(app, ["audit", "example-org/clover", "-f", "json", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    choice = json.loads(result.stdout)["facts"]["code_repo_choice"]
    assert choice["chosen"] == "https://github.com/example-org/clover-code"
    assert choice["line"] == 7
    assert "shares clover with the model" in choice["reason"]
    assert "same owner as the model repo" in choice["reason"]
    assert [c["url"] for c in choice["candidates"]] == [
        "https://github.com/example-org/clover-code",
        "https://github.com/someone-else/awesome-llms",
    ]

    evidence = acquire(AuditRequest(target="example-org/clover"))
    code = evidence.code
    assert code is not None and code.kind == "git"
    assert code.revision == shas["second"]
    assert code.url == "https://github.com/example-org/clover-code"
    assert code.id == "example-org/clover-code"
    assert evidence.problems == ()
    assert [(t.name, t.sha) for t in code.tags] == [("v1.0", shas["first"])]
    assert [v.text.splitlines()[-1] for v in code.history["README.md"]] == [
        "SFT code coming soon.",
        "SFT code released in sft/.",
    ]
    assert [v.date for v in code.history["README.md"]] == [FIRST, SECOND]
    assert "sft/train.py" in code.texts
    # Cloned blobless into the cardaudit cache.
    clone = Path(code.path or "")
    assert clone.is_relative_to(tmp_path / "cardaudit-cache" / "git")
    assert git.Repo(clone).git.config("remote.origin.partialclonefilter") == "blob:none"


def test_cached_clone_is_refreshed(hub: FakeHub, github: Path, tmp_path: Path) -> None:
    bare, _ = code_repo(github)
    publish_model(hub, "example-org/clover", tmp_path / "m", readme=card(body=LINKS))
    first = acquire(AuditRequest(target="example-org/clover")).code
    work = git.Repo(github.parent / "work" / "example-org/clover-code")
    (Path(work.working_dir) / "NOTICE").write_text("Notice.\n")
    work.index.add(["NOTICE"])
    newer = work.index.commit("third").hexsha
    work.git.push(str(bare), "main")
    second = acquire(AuditRequest(target="example-org/clover")).code
    assert first is not None and second is not None
    assert second.path == first.path and second.revision == newer
    assert "NOTICE" in second.texts


def test_explicit_code_url_and_revision(github: Path, tmp_path: Path) -> None:
    _, shas = code_repo(github)
    local = tmp_path / "model"
    local.mkdir()
    (local / "README.md").write_text(card())
    url = "https://github.com/example-org/clover-code#v1.0"
    evidence = acquire(AuditRequest(target=str(local), code=url))
    assert evidence.code is not None and evidence.code.revision == shas["first"]
    assert "sft/train.py" not in evidence.code.texts


def test_explicit_code_url_that_cannot_be_cloned(github: Path, tmp_path: Path) -> None:
    local = tmp_path / "model"
    local.mkdir()
    (local / "README.md").write_text(card())
    result = runner.invoke(
        app, ["audit", str(local), "--code", "https://github.com/example-org/nope", "-q"]
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "cardaudit: error: could not clone https://github.com/example-org/nope: "
        "repository not found"
    )


def test_dead_discovered_link_is_a_finding(hub: FakeHub, github: Path, tmp_path: Path) -> None:
    publish_model(hub, "example-org/clover", tmp_path / "m", readme=card(body=LINKS))
    result = runner.invoke(app, ["audit", "example-org/clover", "-f", "json", "--fail-on", "never"])
    hits = [f for f in json.loads(result.stdout)["findings"] if f["rule_id"] == "SRC011"]
    assert [(h["severity"], h["location"]["path"], h["location"]["line"]) for h in hits] == [
        ("warning", "README.md", 7)
    ]


def test_no_code_discovery(hub: FakeHub, github: Path, tmp_path: Path) -> None:
    code_repo(github)
    publish_model(hub, "example-org/clover", tmp_path / "m", readme=card(body=LINKS))
    evidence = acquire(AuditRequest(target="example-org/clover", code_discovery=False))
    assert evidence.code is None and "code_repo_choice" not in evidence.notes


def test_choice_without_links() -> None:
    link, record = choose_code_link(parse_card("README.md", card()), "org/model")
    assert link is None
    assert record["reason"] == "the card links no GitHub repository of its own"


def test_credentials_are_redacted_from_urls() -> None:
    assert redact_url("https://user:s3cret@github.com/o/r") == "https://github.com/o/r"
    assert redact_url("https://github.com/o/r") == "https://github.com/o/r"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/o/r", ("https://github.com/o/r", None)),
        ("https://github.com/o/r/tree/v2", ("https://github.com/o/r", "v2")),
        ("https://github.com/o/r/blob/main/README.md", ("https://github.com/o/r", None)),
        ("https://github.com/o/r#abc123", ("https://github.com/o/r", "abc123")),
        ("file:///srv/git/r.git#v1", ("file:///srv/git/r.git", "v1")),
    ],
)
def test_code_url_forms(url: str, expected: tuple[str, str | None]) -> None:
    assert split_code_url(url) == expected


def test_history_blobs_are_prefetched_in_one_go(github: Path, tmp_path: Path) -> None:
    import subprocess

    from cardaudit.sources.git import clone, prefetch_history_blobs

    work = git.Repo.init(tmp_path / "many", initial_branch="main")
    root = Path(work.working_dir)
    for number in range(12):
        (root / "README.md").write_text(f"version {number}\n")
        (root / "train.py").write_text(f"step = {number}\n")
        work.index.add(["README.md", "train.py"])
        work.index.commit(f"commit {number}")
    bare = github / "o" / "many"
    git.Repo.clone_from(root, bare, bare=True).git.config("uploadpack.allowFilter", "true")
    clone_root = clone("https://github.com/o/many")

    def missing() -> int:
        listing = subprocess.run(
            ["git", "-C", str(clone_root), "rev-list", "--objects", "--all", "--missing=print"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return sum(line.startswith("?") for line in listing.splitlines())

    assert missing() == 22  # blobless: 11 old READMEs + 11 old train.py
    assert prefetch_history_blobs(clone_root) == 12
    assert missing() == 11  # only code history stays remote
