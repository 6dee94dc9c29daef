"""History of a Hub repo's card and licence files, walked change by change (paths-info).

The walk itself is tested on made-up answers (odd data included); the whole path runs the
unmodified huggingface_hub client against tests/hub_server.py, with request budgets read from
the server's log.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

import hub_server
from cardaudit.cli import app
from cardaudit.sources import AuditRequest, acquire, hub_history
from cardaudit.sources.hub_history import Change, walk_changes
from cardaudit.sources.local import MAX_TEXT_BYTES
from hub_repos import LICENCE, card
from hub_server import FakeHub, write_sparse_safetensors

runner = CliRunner()
START = datetime(2025, 6, 1, tzinfo=UTC)
PROMISE = "The SFT code is coming soon.\n"


# --------------------------------------------------------------------------- the walk alone


def entry(path: str, last: str | None, *, size: int = 10, lfs: bool = False) -> SimpleNamespace:
    """A RepoFile as huggingface_hub builds it from a paths-info answer."""
    return SimpleNamespace(
        path=path,
        blob_id="b" * 40,
        size=size,
        lfs={"size": size} if lfs else None,
        last_commit=SimpleNamespace(oid=last) if last else None,
    )


class History:
    """A linear history, newest first: ``changes[path]`` lists the commits (indices into
    ``order``) that wrote the path, newest first; the path exists from its oldest one on."""

    def __init__(self, count: int, changes: dict[str, list[int]]) -> None:
        self.order = [f"{n:040x}" for n in range(count)]
        self.changes = changes
        self.asked: list[tuple[list[str], str]] = []

    def __call__(self, paths: list[str], revision: str) -> list[SimpleNamespace]:
        self.asked.append((list(paths), revision))
        at = self.order.index(revision)
        found = []
        for path in paths:
            written = [i for i in self.changes.get(path, []) if i >= at]
            if written:
                found.append(entry(path, self.order[min(written)]))
        return found


def test_one_request_per_version_and_shared_revisions_batched() -> None:
    history = History(60, {"README.md": [4, 24, 49, 59], "LICENSE": [29, 59]})
    walk = walk_changes(["LICENSE", "README.md"], history.order, history)
    assert [c.commit for c in walk.changes["README.md"]] == [
        history.order[i] for i in (59, 49, 24, 4)
    ]
    assert [c.commit for c in walk.changes["LICENSE"]] == [history.order[i] for i in (59, 29)]
    # Both paths at the head, then each at its last change's parent: 5 requests, not 60.
    assert [(paths, history.order.index(rev)) for paths, rev in history.asked] == [
        (["LICENSE", "README.md"], 0),
        (["README.md"], 5),
        (["README.md"], 25),
        (["LICENSE"], 30),
        (["README.md"], 50),
    ]
    assert walk.requests == 5 and walk.notes == {}


def test_paths_due_at_the_same_parent_share_a_request_and_an_absent_path_ends() -> None:
    # Both written at 3 (the card added with the licence), the card edited at 1; the path
    # did not exist before 3: one request there says so for both.
    history = History(6, {"README.md": [1, 3], "NOTICE": [3]})
    walk = walk_changes(["NOTICE", "README.md"], history.order, history)
    assert len(walk.changes["README.md"]) == 2 and len(walk.changes["NOTICE"]) == 1
    assert [(paths, history.order.index(rev)) for paths, rev in history.asked] == [
        (["NOTICE", "README.md"], 0),
        (["README.md"], 2),
        (["NOTICE", "README.md"], 4),
    ]


def test_the_version_bound_cuts_with_a_note() -> None:
    history = History(10, {"README.md": [0, 2, 4, 6, 8, 9]})
    walk = walk_changes(["README.md"], history.order, history, max_versions=3)
    assert [c.commit for c in walk.changes["README.md"]] == [history.order[i] for i in (4, 2, 0)]
    assert walk.notes["README.md"] == (
        f"history cut at the newest 3 versions (older ones, before {history.order[4][:12]}, "
        "not read)"
    )
    assert walk.requests == 3


def test_a_file_written_by_the_first_commit_needs_no_request_past_it() -> None:
    history = History(3, {"LICENSE": [2]})
    walk = walk_changes(["LICENSE"], history.order, history, max_versions=1)
    assert walk.requests == 1 and walk.notes == {}  # reaching the bound at the root is no cut


@pytest.mark.parametrize(
    ("answer", "note"),
    [
        ([entry("README.md", "f" * 40)], "a commit outside its history"),
        ([entry("README.md", None)], "the Hub sent no last commit for README.md"),
        ([SimpleNamespace(path="README.md", tree_id="t", last_commit=None)], "is a folder"),
    ],
)
def test_odd_answers_stop_the_walk_with_a_note(answer: list, note: str) -> None:
    order = [f"{n:040x}" for n in range(5)]
    walk = walk_changes(["README.md"], order, lambda paths, rev: answer)
    assert walk.changes["README.md"] == []
    assert note in walk.notes["README.md"]
    assert walk.requests == 1


def test_a_last_commit_newer_than_the_revision_asked_cannot_loop() -> None:
    """A Hub naming, at the parent, the commit it named at the head would send the walk round
    in circles: a last commit newer than the revision asked stops it."""
    order = [f"{n:040x}" for n in range(5)]
    walk = walk_changes(["README.md"], order, lambda paths, rev: [entry("README.md", order[0])])
    assert [c.commit for c in walk.changes["README.md"]] == [order[0]]
    assert "outside its history" in walk.notes["README.md"]
    assert walk.requests == 2


def test_a_commit_list_that_repeats_itself_ends() -> None:
    order = [f"{n:040x}" for n in range(3)] * 3  # a loop in the parents, flattened
    calls = []

    def paths_info(paths: list[str], revision: str) -> list[SimpleNamespace]:
        calls.append(revision)
        return [entry("README.md", revision)]  # every commit changed it

    walk = walk_changes(["README.md"], order, paths_info)
    assert len(calls) <= len(order)
    assert len({c.commit for c in walk.changes["README.md"]}) == 3


def test_garbage_answers_and_no_commits() -> None:
    order = ["a" * 40]
    assert walk_changes(["README.md"], order, lambda p, r: None).changes == {"README.md": []}
    odd = [object(), SimpleNamespace(path=None), entry("OTHER", order[0])]
    assert walk_changes(["README.md"], order, lambda p, r: odd).changes == {"README.md": []}
    empty = walk_changes(["README.md"], [], lambda p, r: [])
    assert empty.notes == {"README.md": "the Hub listed no commits: history not read"}


def test_versions_in_lfs_or_too_large_are_not_readable() -> None:
    assert Change("LICENSE", "a", 100, False).readable
    assert not Change("LICENSE", "a", 100, True).readable
    assert not Change("LICENSE", "a", 10**9, False).readable


# --------------------------------------------------------------------------- through the Hub


def busy_repo(hub: FakeHub, folder: Path) -> dict[str, list[str]]:
    """60 commits, a day apart: the card is written by 4 of them (the promise arrives with
    the second, 50 commits before the head), the licence by 2; the rest upload weights."""
    card_at = {0: "A model.\n", 10: PROMISE, 35: PROMISE + "\nNow in BF16.\n"}
    card_at[55] = PROMISE + "\nNow in BF16 and FP8.\n"
    written: dict[str, list[str]] = {"README.md": [], "LICENSE": [], "all": []}
    for number in range(60):
        weights = write_sparse_safetensors(
            folder / f"w{number}.safetensors", {"w": ("BF16", [number + 1])}
        )
        files: dict = {"model.safetensors": weights}
        if number in card_at:
            files["README.md"] = card(body=card_at[number])
        if number == 0:
            files["LICENSE"] = LICENCE.read_bytes()
            files["config.json"] = json.dumps({"model_type": "llama"})
        if number == 30:
            files["LICENSE"] = LICENCE.read_bytes() + b"\nAddendum: attribution required.\n"
        sha = hub.commit(
            "org/busy", files, title=f"Upload step {number}", date=START + timedelta(days=number)
        )
        written["all"].append(sha)
        for path in ("README.md", "LICENSE"):
            if path in files:
                written[path].append(sha)
    return written


def history_requests(hub: FakeHub, head: str) -> list[hub_server.LogEntry]:
    """Requests the history cost: paths-info, and card / licence downloads at other commits."""
    return [
        e
        for e in hub.log
        if "/paths-info/" in e.path
        or (e.path.endswith(("/README.md", "/LICENSE")) and head not in e.path)
    ]


def test_busy_repo_history_costs_per_version_not_per_commit(hub: FakeHub, tmp_path: Path) -> None:
    written = busy_repo(hub, tmp_path / "weights")
    head = written["all"][-1]
    evidence = acquire(AuditRequest(target="org/busy", code_discovery=False))

    card_versions = evidence.repo.history["README.md"]
    assert [v.sha for v in card_versions] == written["README.md"]
    assert [v.date for v in card_versions] == [START + timedelta(days=n) for n in (0, 10, 35, 55)]
    assert card_versions[-1].text == evidence.repo.texts["README.md"].text
    licence_versions = evidence.repo.history["LICENSE"]
    assert [v.sha for v in licence_versions] == written["LICENSE"]
    assert licence_versions[-1].text.endswith("Addendum: attribution required.\n")
    assert not [k for k in evidence.repo.skipped if "(history)" in k]

    # 5 paths-info requests for 6 versions (both files asked together at the head)...
    paths_info = hub.requests("POST", "/paths-info/")
    assert len(paths_info) == 5
    assert {e.path.rsplit("/", 1)[-1] for e in paths_info} <= set(written["all"])
    # ...and files fetched only at the 5 commits that wrote one of the 6 versions, never one
    # per commit: a HEAD each, a GET for the 4 whose blob the head's download did not bring.
    fetched = [e for e in history_requests(hub, head) if "/resolve/" in e.path]
    commits = set(written["README.md"] + written["LICENSE"])
    assert {e.path.split("/resolve/")[1].split("/")[0] for e in fetched} == commits
    assert sorted(e.method for e in fetched) == ["GET"] * 4 + ["HEAD"] * 6
    assert len(history_requests(hub, head)) == 5 + 10
    assert len(hub.requests("GET", "/commits/")) == 2  # 60 commits, pages of 50

    # Again: versions are read from the huggingface_hub cache (a commit never changes).
    hub.log.clear()
    again = acquire(AuditRequest(target="org/busy", code_discovery=False))
    assert again.repo.history == evidence.repo.history
    assert [e for e in history_requests(hub, head) if "/resolve/" in e.path] == []


def test_a_promise_older_than_the_newest_20_commits_is_dated_at_its_commit(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy_repo(hub, tmp_path / "weights")
    monkeypatch.setenv("CARDAUDIT_NOW", "2025-09-01")
    result = runner.invoke(
        app, ["audit", "org/busy", "--no-code-discovery", "-f", "json", "--fail-on", "never"]
    )
    assert result.exit_code == 0, result.stderr
    promises = json.loads(result.stdout)["facts"]["promises"]
    sft = [p for p in promises if p["item"] == "SFT code"]
    assert len(sft) == 1
    promised = START + timedelta(days=10)  # commit 10 of 60: 49 commits older than the head
    assert sft[0]["first_seen"] == promised.date().isoformat() == "2025-06-11"
    assert sft[0]["age_days"] == (datetime(2025, 9, 1, tzinfo=UTC) - promised).days


def test_the_version_bound_is_noted_in_skipped(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = busy_repo(hub, tmp_path / "weights")
    monkeypatch.setattr(hub_history, "MAX_VERSIONS", 2)
    evidence = acquire(AuditRequest(target="org/busy", code_discovery=False))
    assert [v.sha for v in evidence.repo.history["README.md"]] == written["README.md"][-2:]
    note = evidence.repo.skipped["README.md (history)"]
    assert note.startswith("history cut at the newest 2 versions")
    assert [v.sha for v in evidence.repo.history["LICENSE"]] == written["LICENSE"]
    assert "LICENSE (history)" not in evidence.repo.skipped


def test_licence_added_later_and_lfs_versions(hub: FakeHub, tmp_path: Path) -> None:
    """A licence added by a later commit ends its walk where it did not exist; a version stored
    in LFS is not downloaded, and the note says so."""
    first = hub.commit("org/m", {"README.md": card(body="One.\n")}, date=START)
    lfs = hub_server.HubFile(data=b"Licensed to you under terms.\n", lfs=True)
    added = hub.commit("org/m", {"LICENSE.txt": lfs}, date=START + timedelta(days=1))
    fixed = hub.commit(
        "org/m", {"LICENSE.txt": "MIT License\n\nCopyright.\n"}, date=START + timedelta(days=2)
    )
    evidence = acquire(AuditRequest(target="org/m", code_discovery=False))
    assert [v.sha for v in evidence.repo.history["LICENSE.txt"]] == [fixed]
    assert evidence.repo.skipped["LICENSE.txt (history)"] == (
        f"1 of 2 versions not read (in LFS, over {MAX_TEXT_BYTES:,} bytes, binary or not served)"
    )
    assert [v.sha for v in evidence.repo.history["README.md"]] == [first]
    assert not hub.requests(contains=f"/resolve/{added}/")
    # Both at the head; then LICENSE.txt at each parent until the root, where it is absent
    # (README.md was written by the root commit: no request past it).
    assert [e.path.rsplit("/", 1)[-1] for e in hub.requests("POST", "/paths-info/")] == [
        fixed,
        added,
        first,
    ]


def test_odd_last_commit_is_a_note_and_a_malformed_answer_one_line_error(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub.commit("org/m", {"README.md": card(body="One.\n"), "LICENSE": "Terms.\n"}, date=START)
    outside = [
        {
            "type": "file",
            "path": "README.md",
            "oid": "0" * 40,
            "size": 10,
            "lastCommit": {"id": "f" * 40, "title": "?", "date": "2026-01-01T00:00:00.000Z"},
        }
    ]
    hub.fault("/paths-info/", 200, body=json.dumps(outside).encode(), times=1)
    evidence = acquire(AuditRequest(target="org/m", code_discovery=False))
    assert "README.md" not in evidence.repo.history
    assert "a commit outside its history" in evidence.repo.skipped["README.md (history)"]

    hub.fault("/paths-info/", 200, body=b'[{"path": "README.md"}]', times=1)
    result = runner.invoke(app, ["audit", "org/m", "--no-code-discovery", "-f", "json"])
    assert result.exit_code == 2
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert (
        "malformed response" in message and "read the last commits of LICENSE, README.md" in message
    )


def test_a_transient_paths_info_failure_is_retried(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cardaudit.sources import hub_client

    monkeypatch.setattr(hub_client, "_sleep", lambda seconds: None)
    first = hub.commit("org/m", {"README.md": card(body="One.\n")}, date=START)
    head = hub.commit("org/m", {"README.md": card(body="Two.\n")}, date=START + timedelta(days=1))
    hub.fault("/paths-info/", 503, times=2)
    evidence = acquire(AuditRequest(target="org/m", code_discovery=False))
    assert [v.sha for v in evidence.repo.history["README.md"]] == [first, head]
    assert [e.status for e in hub.requests("POST", "/paths-info/")] == [503, 503, 200, 200]


def test_the_test_hub_answers_paths_info_like_the_hub(hub: FakeHub) -> None:
    """The endpoint the walk relies on, through the unmodified client: files and folders, a
    missing path left out, ``lastCommit`` only when expanded (RepoFile / RepoFolder)."""
    from urllib.request import Request, urlopen

    from huggingface_hub import HfApi

    first = hub.commit("org/m", {"README.md": "one\n", "docs/a.md": "a\n"}, date=START)
    head = hub.commit("org/m", {"config.json": "{}"}, date=START + timedelta(days=1))
    api = HfApi(endpoint=hub.endpoint, token=False)
    expanded = api.get_paths_info("org/m", ["README.md", "docs", "gone.md"], expand=True)
    assert [(type(e).__name__, e.path, e.last_commit.oid) for e in expanded] == [
        ("RepoFile", "README.md", first),
        ("RepoFolder", "docs", first),
    ]
    assert expanded[0].last_commit.date == START
    plain = api.get_paths_info("org/m", "config.json", revision=head)
    assert plain[0].last_commit is None and plain[0].size == 2
    # A JSON body is understood as well (other clients send one).
    url = f"{hub.endpoint}/api/models/org/m/paths-info/{head}"
    body = json.dumps({"paths": ["config.json"], "expand": True}).encode()
    request = Request(url, body, {"Content-Type": "application/json"}, method="POST")
    with urlopen(request, timeout=10) as response:
        answer = json.load(response)
    assert answer[0]["lastCommit"]["id"] == head


def test_a_warm_re_audit_asks_only_for_the_revision(hub: FakeHub, tmp_path: Path) -> None:
    """Listing, commit list and history steps are kept by commit: auditing the same commit
    again costs one request, the revision; a new commit is read afresh."""
    written = busy_repo(hub, tmp_path / "weights")
    first = acquire(AuditRequest(target="org/busy", code_discovery=False))
    hub.log.clear()
    again = acquire(AuditRequest(target="org/busy", code_discovery=False))
    assert [e.path.split("?")[0] for e in hub.log] == ["/api/models/org/busy"]  # model_info
    assert again.repo.history == first.repo.history and again.repo.files == first.repo.files
    head = hub.commit("org/busy", {"README.md": card(body="Delivered: the SFT code.\n")})
    hub.log.clear()
    newer = acquire(AuditRequest(target="org/busy", code_discovery=False))
    assert newer.target.revision == head != written["all"][-1]
    assert hub.requests("POST", "/paths-info/") and hub.requests("GET", "/tree/")
    assert [v.sha for v in newer.repo.history["README.md"]] == [*written["README.md"], head]
