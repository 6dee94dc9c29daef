"""`cardaudit serve` driven in-process (Starlette's TestClient) against the local test Hub.

Badges in every state, the dashboard, the model page, token-protected writes, escaping of
hostile card text, and the faults: the Hub down or rate-limiting during a refresh, a store
that disappears, two processes claiming one audit.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cardaudit.serve.app import create_app
from cardaudit.serve.service import ServeSettings, Service
from cardaudit.store import Store
from cardaudit.store.queries import claim
from scenarios import FIXTURES

TOKEN = "s3cret-token"
SHIELDS_KEYS = {"schemaVersion", "label", "message", "color"}
HOSTILE_CARD = """---
license: "<script>alert('lic')</script>"
---

# Hostile <img src=x onerror=alert(1)>

Training code <img src=x onerror=alert(2)> is coming soon.
The evaluation harness [click me](javascript:alert(3)) will be released.
Setup guides \u202eexe.txt\u202c are coming soon.
"""


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from cardaudit.sources import hub_client

    monkeypatch.setattr(hub_client, "_sleep", lambda seconds: None)  # retries without waiting
    made = Service(ServeSettings(db=str(tmp_path / "serve.db"), jobs=2, token=TOKEN))
    yield made
    made.close()


@pytest.fixture
def client(service: Service) -> TestClient:
    return TestClient(create_app(service))


def drain(service: Service, timeout: float = 60) -> None:
    """Wait for queued audits to finish."""
    deadline = time.monotonic() + timeout
    while service.queue.size():
        assert time.monotonic() < deadline, "audits did not finish"
        time.sleep(0.05)


def publish(hub, repo_id: str, fixture: str) -> str:
    return hub.commit_folder(repo_id, FIXTURES / fixture / "model")


def auth() -> dict[str, str]:
    return {"authorization": f"Bearer {TOKEN}"}


def badge_json(client: TestClient, path: str) -> dict:
    response = client.get(path)
    assert response.status_code == 200
    data = response.json()
    assert set(data) >= SHIELDS_KEYS and data["schemaVersion"] == 1
    assert all(isinstance(data[key], str) for key in ("label", "message", "color"))
    return data


def assert_svg(text: str, message: str) -> None:
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.attrib["aria-label"] == f"model audit: {message}"


# --------------------------------------------------------------------------- badges


def test_badge_pending_then_passing_with_etag(hub, service: Service, client: TestClient) -> None:
    sha = publish(hub, "acme/clean", "clean-card")
    first = client.get("/badge/acme/clean.svg")
    assert first.status_code == 200 and first.headers["x-cardaudit-badge"] == "pending"
    assert_svg(first.text, "pending")
    assert first.headers["cache-control"] == "no-cache"
    drain(service)
    svg = client.get("/badge/acme/clean.svg")
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert_svg(svg.text, "passing")
    etag = svg.headers["etag"]
    assert sha in etag
    assert "max-age=300" in svg.headers["cache-control"]
    again = client.get("/badge/acme/clean.svg", headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    data = badge_json(client, "/badge/acme/clean.json")
    assert (data["message"], data["color"]) == ("passing", "brightgreen")
    # the same commit is not audited twice, and a pinned ?rev= names the same audit
    assert len(Store.open(str(service.settings.db)).audits("hub:acme/clean")) == 1
    assert badge_json(client, f"/badge/acme/clean.json?rev={sha}")["message"] == "passing"


def test_badge_failing_and_fail_on(hub, service: Service, client: TestClient) -> None:
    publish(hub, "acme/typo", "licence-typo")
    publish(hub, "acme/infos", "promises-kept")
    client.get("/badge/acme/typo.svg"), client.get("/badge/acme/infos.svg")
    drain(service)
    failing = badge_json(client, "/badge/acme/typo.json")
    assert (failing["message"], failing["color"]) == ("failing", "red")
    assert_svg(client.get("/badge/acme/typo.svg").text, "failing")
    relaxed = badge_json(client, "/badge/acme/typo.json?fail_on=never")
    assert relaxed["message"] == "1 error"
    infos = badge_json(client, "/badge/acme/infos.json")
    assert infos["message"] == "passing" and infos["color"] == "green"  # info only
    strict = badge_json(client, "/badge/acme/infos.json?fail_on=info")
    assert (strict["message"], strict["color"]) == ("failing", "red")
    strict_tag = client.get("/badge/acme/infos.svg?fail_on=info").headers["etag"]
    assert strict_tag != client.get("/badge/acme/infos.svg").headers["etag"]


def test_badge_unknown_never_an_error_page(hub, client: TestClient) -> None:
    for path in (
        "/badge/nobody/missing.svg",  # not on the Hub (or private)
        "/badge/bad..id/x.svg",
        "/badge/acme/clean.svg?fail_on=sometimes",
        "/badge/acme/clean.svg?rev=%3Cscript%3E",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.headers["x-cardaudit-badge"] == "unknown", path
        assert_svg(response.text, "unknown")
    data = badge_json(client, "/badge/nobody/missing.json")
    assert (data["message"], data["color"]) == ("unknown", "lightgrey")
    assert client.get("/badge/acme/clean.png").status_code == 404


# --------------------------------------------------------------------------- writes


def test_writes_need_the_token(hub, service: Service, client: TestClient) -> None:
    publish(hub, "acme/clean", "clean-card")
    body = {"target": "acme/clean"}
    assert client.post("/api/tracked", json=body).status_code == 401
    wrong = client.post("/api/tracked", json=body, headers={"authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert client.post("/api/tracked", json={"target": "/etc"}, headers=auth()).status_code == 400
    local = client.post("/api/tracked", json={"target": "acme/x", "code": "/tmp"}, headers=auth())
    assert local.status_code == 400  # no local paths over HTTP
    added = client.post("/api/tracked", json=body, headers=auth())
    assert added.status_code == 201 and added.json()["audit"] == "queued"
    drain(service)
    assert [t.target for t in service.store.tracked()] == ["acme/clean"]
    assert client.delete("/api/tracked/acme/clean").status_code == 401
    assert client.delete("/api/tracked/acme/clean", headers=auth()).json()["removed"] is True
    assert client.delete("/api/tracked/acme/clean", headers=auth()).status_code == 404
    assert service.store.tracked() == []


def test_writes_disabled_without_a_token(tmp_path: Path) -> None:
    service = Service(ServeSettings(db=str(tmp_path / "ro.db")))
    try:
        client = TestClient(create_app(service))
        refused = client.post("/api/tracked", json={"target": "acme/x"}, headers=auth())
        assert refused.status_code == 403 and "CARDAUDIT_SERVE_TOKEN" in refused.json()["error"]
    finally:
        service.close()


# --------------------------------------------------------------------------- pages


@pytest.fixture
def tracked_three(hub, service: Service, client: TestClient) -> Service:
    for repo_id, fixture in (
        ("acme/clean", "clean-card"),
        ("acme/typo", "licence-typo"),
        ("other/promises", "promises-kept"),
    ):
        publish(hub, repo_id, fixture)
        assert client.post("/api/tracked", json={"target": repo_id}, headers=auth()).is_success
    drain(service)
    return service


def test_dashboard_lists_filters_and_sorts(tracked_three, client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script" not in csp  # no script source at all
    assert "<script" not in page.text
    for name in ("acme/clean", "acme/typo", "other/promises"):
        assert f'href="/models/{name}"' in page.text
    data = client.get("/api/dashboard").json()
    rows = {row["target"]: row for row in data["models"]}
    assert rows["acme/typo"]["verdict"] == "failing"
    assert rows["acme/typo"]["licence"] == "apache2"
    assert rows["other/promises"]["open_promises"] >= 1
    assert rows["acme/clean"]["open_promises"] == 0
    failing = client.get("/api/dashboard?verdict=failing").json()["models"]
    assert [row["target"] for row in failing] == ["acme/typo"]
    typo = client.get("/api/dashboard?licence=apache2").json()["models"]
    assert [row["target"] for row in typo] == ["acme/typo"]
    other = client.get("/api/dashboard?org=other").json()["models"]
    assert [row["target"] for row in other] == ["other/promises"]
    by_open = client.get("/api/dashboard?sort=open&order=desc").json()["models"]
    assert by_open[0]["target"] == "other/promises"
    assert "failing" in client.get("/?verdict=failing").text
    assert "acme/clean" not in client.get("/?verdict=failing").text.split("<tbody>")[1]


def test_model_page_report_ledger_timeline_and_diff(
    hub, tracked_three: Service, client: TestClient
) -> None:
    service = tracked_three
    card = (FIXTURES / "promises-kept" / "model" / "README.md").read_text()
    hub.commit("other/promises", {"README.md": card + "\nGGUF files will be released.\n"})
    service.refresh_all()
    drain(service)
    audits = service.store.audits("hub:other/promises")
    assert len(audits) == 2
    page = client.get("/models/other/promises")
    assert page.status_code == 200
    text = page.text
    for heading in ("Promise ledger", "Timeline", "Compare two audits", "Latest audit report"):
        assert heading in text
    assert "first promised" in text and "days open" in text
    assert '<iframe class="report" src="/models/other/promises/report" sandbox' in text
    assert f"From #{audits[0].id}" in text  # the default diff: the last two audits
    assert "promise appeared" in text
    for link in ("/api/models/other/promises", "/api/models/other/promises/history"):
        assert f'href="{link}"' in text
        assert client.get(link).status_code == 200
    diff = client.get(f"/api/models/other/promises/diff?from={audits[0].id}&to={audits[1].id}")
    assert diff.json()["promises"]["appeared"]
    report = client.get("/models/other/promises/report")
    assert report.status_code == 200
    assert "script-src" not in report.headers["content-security-policy"]
    assert "Model audit: other/promises" in report.text
    ledger = client.get("/api/models/other/promises/ledger").json()
    assert ledger and {"item", "first_promised", "delivered_on", "days_open"} <= set(ledger[0])
    csv_text = client.get("/api/models/other/promises/ledger?format=csv").text
    assert csv_text.startswith("item,artifact,state")
    assert client.get("/models/nobody/here").status_code == 404


def test_every_page_escapes_hostile_card_text(hub, service: Service, client: TestClient) -> None:
    hub.commit("evil/card", {"README.md": HOSTILE_CARD})
    assert client.post("/api/tracked", json={"target": "evil/card"}, headers=auth()).is_success
    drain(service)
    assert service.store.audits("hub:evil/card"), service.status
    pages = {
        path: client.get(path)
        for path in (
            "/",
            "/models/evil/card",
            "/models/evil/card/report",
            "/api/models/evil/card/ledger?format=markdown",
        )
    }
    for path, response in pages.items():
        assert response.status_code == 200, path
        body = response.text
        assert "<script>alert" not in body, path
        assert "<img src=x" not in body, path
        assert 'href="javascript:' not in body.lower(), path
        assert "\u202e" not in body and "\u202c" not in body, path
    assert "&lt;script&gt;alert(" in pages["/"].text  # shown, as text
    assert "&lt;U+202E&gt;" in pages["/models/evil/card"].text  # the bidi control made visible
    from cardaudit.reporters.markdown_escape import escape_text

    cell = escape_text("a | <img src=x onerror=alert(2)> [x](javascript:y) @octocat\n\u202eb")
    assert "\u202e" not in cell and "\n" not in cell
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").enable("table").render(f"| h |\n|---|\n| {cell} |\n")
    assert "<img" not in rendered and "<a " not in rendered and rendered.count("<td>") == 1
    assert "&lt;img src=x onerror=alert(2)&gt;" in rendered
    assert "@octocat" not in rendered  # no mention (a word joiner follows the @)


# --------------------------------------------------------------------------- faults


def test_refresh_asks_the_hub_once_per_model_and_audits_only_new_commits(
    hub, tracked_three: Service
) -> None:
    service = tracked_three
    hub.log.clear()
    assert set(service.refresh_all().values()) == {"unchanged"}
    asked = [entry.path for entry in hub.requests()]
    assert sorted(path.split("?")[0] for path in asked) == [
        "/api/models/acme/clean",
        "/api/models/acme/typo",
        "/api/models/other/promises",
    ]
    hub.commit("acme/clean", {"NOTES.md": "new commit\n"})
    assert service.refresh_all()["hub:acme/clean"] == "queued"
    drain(service)
    assert len(service.store.audits("hub:acme/clean")) == 2
    assert len(service.store.audits("hub:acme/typo")) == 1


def test_hub_down_or_rate_limiting_keeps_the_last_good_audit(
    hub, tracked_three: Service, client: TestClient
) -> None:
    service = tracked_three
    hub.fault(r"/api/models/acme/typo", 503)
    outcomes = service.refresh_all()
    assert outcomes["hub:acme/typo"] == "failed"
    assert outcomes["hub:acme/clean"] == "unchanged"  # one request each, no new commit
    page = client.get("/models/acme/typo").text
    assert "The last refresh failed" in page and "HTTP 503" in page
    assert "this page shows the last good audit" in page
    assert "refresh failed" in client.get("/").text
    service._resolved.clear()  # a badge asked while the Hub is down: the stored audit stands
    stale = badge_json(client, "/badge/acme/typo.json")
    assert stale["message"] == "failing"
    hub.faults.clear()
    hub.fault(r"/api/models/acme/clean", 429, headers={"Retry-After": "3600"})
    service.refresh_all()
    assert "rate-limiting" in service.status["hub:acme/clean"].detail
    assert len(service.store.audits("hub:acme/clean")) == 1
    assert badge_json(client, "/badge/acme/clean.json")["message"] == "passing"


def test_store_that_disappears_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "gone.db"
    service = Service(ServeSettings(db=str(path)))
    try:
        client = TestClient(create_app(service))
        assert client.get("/").status_code == 200
        path.unlink()
        page = client.get("/")
        assert page.status_code == 503
        assert f"the store {path} has disappeared" in page.text
        api = client.get("/api/dashboard")
        assert api.status_code == 503 and "disappeared" in api.json()["error"]
        badge = client.get("/badge/acme/x.svg")
        assert badge.status_code == 200 and badge.headers["x-cardaudit-badge"] == "unknown"
        assert service.refresh_all() == {}  # the scheduler's round says so and keeps running
        assert not path.exists()  # nothing re-created an empty store behind the user's back
    finally:
        service.close()


def test_a_claimed_target_is_not_audited_twice(hub, tmp_path: Path, monkeypatch) -> None:
    """Two serve processes on one store: while one holds the claim, the other skips."""
    publish(hub, "acme/clean", "clean-card")
    db = str(tmp_path / "shared.db")
    first, second = (Service(ServeSettings(db=db)) for _ in range(2))
    try:
        with claim(first.store, "hub:acme/clean") as won:
            assert won
            with claim(second.store, "hub:acme/clean") as also:
                assert not also
            second._audit("hub:acme/clean", "acme/clean", None, None)
            assert second.status["hub:acme/clean"].outcome == "busy"
            assert second.store.audits("hub:acme/clean") == []
        sha = second.resolve("acme/clean", None).sha
        second._audit("hub:acme/clean", "acme/clean", sha, None)
        first._audit("hub:acme/clean", "acme/clean", sha, None)  # finds it recorded: skips
        assert first.status["hub:acme/clean"].outcome == "unchanged"
        assert len(first.store.audits("hub:acme/clean")) == 1
    finally:
        first.close(), second.close()


def test_bounded_queue_turns_away_what_it_cannot_hold() -> None:
    from threading import Event

    from cardaudit.serve.service import AuditQueue

    release = Event()
    queue = AuditQueue(jobs=1, max_pending=1)
    try:
        assert queue.submit("a", release.wait) == "queued"
        assert queue.submit("a", release.wait) == "already"
        assert queue.submit("b", release.wait) == "queued"
        assert queue.submit("c", release.wait) == "full"
    finally:
        release.set()
        queue.shutdown()


def test_shields_json_is_the_endpoint_schema(hub, service: Service, client: TestClient) -> None:
    publish(hub, "acme/clean", "clean-card")
    client.get("/badge/acme/clean.json")
    drain(service)
    data = json.loads(client.get("/badge/acme/clean.json").text)
    assert set(data) <= SHIELDS_KEYS | {"cacheSeconds", "namedLogo", "logoColor", "style"}
    assert data["cacheSeconds"] >= 300


def fill_store(url: str, models: int) -> None:
    """``models`` tracked Hub models with two audits each (a real fixture report, one promise
    delivered in the second), written in bulk: the read path is what is measured."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import insert

    from cardaudit.reporters.json_report import report_to_json
    from cardaudit.store.schema import AuditRow, FindingRow, PromiseRow, TrackedRow
    from scenarios import scenario_report

    data = report_to_json(scenario_report("clover"))
    shown = {key: data["facts"][key] for key in ("license", "lineage", "base_models", "promises")}
    store = Store.open(url)
    audits, findings, promises, tracked = [], [], [], []
    first = datetime(2026, 5, 1, tzinfo=UTC)
    for index in range(models):
        repo_id = f"org{index % 40}/model-{index:04d}"
        tracked.append(
            {
                "key": f"hub:{repo_id}",
                "target": repo_id,
                "code": None,
                "base": None,
                "added_at": first,
            }
        )
        for step in range(2):
            audit_id = index * 2 + step + 1
            audits.append(
                {
                    "id": audit_id,
                    "target_key": f"hub:{repo_id}",
                    "target_kind": "hub",
                    "target_id": repo_id,
                    "target_path": None,
                    "revision": f"{audit_id:040x}",
                    "audited_at": first + timedelta(days=30 * step),
                    "tool_version": "0",
                    "schema_version": "1",
                    "licence_declared": "apache-2.0",
                    "licence_spdx": "Apache-2.0",
                    "errors": 0,
                    "warnings": len(data["findings"]),
                    "infos": 0,
                    "facts": shown,
                    "checks": data["checks"],
                    "deliveries": None,
                }
            )
            for finding in data["findings"]:
                location = finding["location"]
                findings.append(
                    {
                        "audit_id": audit_id,
                        "rule_id": finding["rule_id"],
                        "severity": "warning",
                        "message": finding["message"],
                        "repo": location.get("repo", "model"),
                        "path": location["path"],
                        "line": location["line"],
                        "evidence": finding["evidence"],
                        "suppressed_by": None,
                    }
                )
            for number, promise in enumerate(data["facts"]["promises"]):
                delivered = step == 1 and number == 0
                promises.append(
                    {
                        "audit_id": audit_id,
                        "artifact": promise["artifact"],
                        "item": promise["item"],
                        "text": promise["text"],
                        "repo": promise["repo"],
                        "path": promise["path"],
                        "line": promise["line"],
                        "status": "delivered" if delivered else promise["status"],
                        "first_seen": promise["first_seen"],
                        "reason": None,
                    }
                )
    with store.engine.begin() as connection:
        for table, rows in (
            (TrackedRow, tracked),
            (AuditRow, audits),
            (FindingRow, findings),
            (PromiseRow, promises),
        ):
            connection.execute(insert(table), rows)
    store.close()


def test_dashboard_over_a_thousand_models_under_a_second(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'thousand.db'}"
    fill_store(url, 1000)
    service = Service(ServeSettings(db=url))
    try:
        client = TestClient(create_app(service))
        rows = client.get("/api/dashboard?org=org7").json()["models"]  # also warms up
        from cardaudit.reporters.json_report import report_to_json
        from scenarios import scenario_report

        promised = len(report_to_json(scenario_report("clover"))["facts"]["promises"])
        # every clover promise is open but the one the second audit delivers
        assert len(rows) == 25 and all(row["open_promises"] == promised - 1 for row in rows)
        started = time.process_time()
        page = client.get("/?sort=oldest&order=desc")
        spent = time.process_time() - started
        assert page.status_code == 200
        assert page.text.count('<a href="/models/org') == 1000
        assert spent < 1.0, f"dashboard took {spent:.2f} s CPU"
    finally:
        service.close()


def test_claim_is_exclusive_across_connections(store_url: str) -> None:
    """The store's per-target claim (an advisory lock on PostgreSQL, a lock file beside a
    SQLite store) admits one holder; another store object — another process — is refused."""
    with Store.open(store_url) as one, Store.open(store_url) as other:
        with claim(one, "hub:acme/x") as first:
            assert first
            with claim(other, "hub:acme/x") as second:
                assert not second
            with claim(other, "hub:acme/y") as different:
                assert different
        with claim(other, "hub:acme/x") as after:
            assert after


def test_two_services_on_one_store_audit_a_commit_once(hub, store_url: str) -> None:
    """Two serve processes asked for the same never-audited badge at once: one audit."""
    from concurrent.futures import ThreadPoolExecutor

    sha = publish(hub, "acme/clean", "clean-card")
    services = [Service(ServeSettings(db=store_url)) for _ in range(2)]
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(
                pool.map(
                    lambda service: service._audit("hub:acme/clean", "acme/clean", sha, None),
                    services * 2,
                )
            )
        assert len(services[0].store.audits("hub:acme/clean")) == 1
        outcomes = sorted(s.status["hub:acme/clean"].outcome for s in services)
        assert "audited" in outcomes or outcomes == ["unchanged", "unchanged"]
        client = TestClient(create_app(services[1]))
        assert badge_json(client, "/badge/acme/clean.json")["message"] == "passing"
        services[1].store.track("hub:acme/clean", "acme/clean", None, None)
        rows = client.get("/api/dashboard").json()["models"]
        assert [(r["target"], r["verdict"], r["licence"]) for r in rows] == [
            ("acme/clean", "passing", "apache-2.0")
        ]
        assert client.get("/models/acme/clean").status_code == 200
    finally:
        for service in services:
            service.close()


def test_serve_is_never_imported_by_help_or_audit() -> None:
    """Start-up stays light: the web stack loads only when `cardaudit serve` runs."""
    import subprocess
    import sys

    heavy = ("starlette", "uvicorn", "apscheduler", "cachetools", "cardaudit.serve")
    script = (
        "import sys\n"
        "from cardaudit.cli import main\n"
        "sys.argv = ['cardaudit', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print([m for m in sys.modules if m.startswith({heavy!r})])\n"
    )
    for arguments in (
        ["--help"],
        ["audit", str(FIXTURES / "clean-card" / "model"), "-f", "json"],
        ["serve", "--help"],
    ):
        done = subprocess.run(
            [sys.executable, "-c", script, *arguments], capture_output=True, text=True, check=True
        )
        assert done.stdout.rstrip().endswith("[]"), (arguments, done.stdout[-300:])


def test_serve_command_errors_are_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cardaudit.cli import app
    from cardaudit.cli_serve import parse_duration

    assert parse_duration("24h") == 86400 and parse_duration("30m") == 1800
    assert parse_duration("7d") == 7 * 86400 and parse_duration("90") == 90
    runner = CliRunner()
    short = runner.invoke(app, ["serve", "--refresh", "5s", "--db", str(tmp_path / "x.db")])
    assert short.exit_code == 2 and "under a minute" in short.stderr
    assert len(short.stderr.strip().splitlines()) == 1
    bad = runner.invoke(app, ["serve", "--refresh", "daily"])
    assert bad.exit_code == 2 and "30m, 24h or 7d" in bad.stderr
    store = runner.invoke(app, ["serve", "--db", "nosuchdb://x"])
    assert store.exit_code == 2 and store.stderr.startswith("cardaudit: error: ")
    assert len(store.stderr.strip().splitlines()) == 1


def test_a_tracked_model_not_yet_audited_says_so(hub, service: Service, client: TestClient) -> None:
    added = client.post("/api/tracked", json={"target": "ghost/model"}, headers=auth())
    assert added.json()["audit"] == "failed"  # not on the Hub: nothing to audit
    page = client.get("/models/ghost/model")
    assert page.status_code == 200
    assert "Tracked, not audited yet" in page.text and "not found on the Hub" in page.text
    row = client.get("/api/dashboard").json()["models"][0]
    assert (row["verdict"], row["refresh"]["outcome"]) == ("never audited", "failed")
    assert "never audited" in client.get("/").text
    assert client.get("/badge/ghost/model.svg").headers["x-cardaudit-badge"] == "unknown"
