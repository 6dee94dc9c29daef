#!/usr/bin/env python3
"""``cardaudit serve`` figures: cached badges under load, memory, and a 1,000-model dashboard.

    python benchmarks/serve_bench.py [--requests 10000] [--concurrency 16] [--models 1000]

1. Badges: the local test Hub (tests/hub_server.py) serves a few fixture repos; a real
   ``cardaudit serve`` process (uvicorn, 127.0.0.1 only) audits them on the first badge
   request; then a bounded asyncio + httpx load generator sends ``--requests`` badge
   requests (SVG and JSON, several repos, ``?fail_on=``) at ``--concurrency``. Printed:
   requests/s, p50/p99 latency, the server's CPU time per request against ``/healthz`` on
   the same server (the baseline: a route that touches nothing but the store's health), and
   its resident memory before and after.
2. Dashboard: a store with ``--models`` tracked Hub models, two audits each (a fixture's
   real JSON report recorded under each id, one promise delivered in between), rendered
   in-process; CPU time of ``GET /`` against the naive way (``store.latest`` per model).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

from local_hub import ROOT, local_hub

REPOS = (
    ("bench/clean", "clean-card"),
    ("bench/typo", "licence-typo"),
    ("bench/promises", "promises-kept"),
    ("bench/waived", "waived"),
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def proc_cpu(pid: int) -> float:
    """utime + stime of ``pid`` in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def load(urls: list[str], total: int, concurrency: int) -> tuple[float, list[float]]:
    """Send ``total`` GETs cycling over ``urls`` with ``concurrency`` workers."""
    import httpx

    latencies: list[float] = []
    counter = iter(range(total))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:

        async def worker() -> None:
            for index in counter:
                started = time.perf_counter()
                response = await client.get(urls[index % len(urls)])
                latencies.append(time.perf_counter() - started)
                if response.status_code != 200:
                    raise SystemExit(f"{response.status_code} for {response.url}")

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - started, latencies


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def badge_figures(requests: int, concurrency: int) -> None:
    with local_hub() as (hub, work):
        for repo_id, fixture in REPOS:
            hub.commit_folder(repo_id, ROOT / "fixtures" / fixture / "model")
        db, port = work / "serve.db", free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from cardaudit.cli import main; main()",
                "serve",
                "--db",
                str(db),
                "--port",
                str(port),
                "--jobs",
                "2",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        try:
            deadline = time.monotonic() + 60
            badges = [f"{base}/badge/{repo_id}.svg" for repo_id, _ in REPOS]
            while True:  # first requests queue the audits; wait until every badge is audited
                states = []
                for url in badges:
                    try:
                        with urllib.request.urlopen(url, timeout=5) as response:
                            states.append(response.headers["x-cardaudit-badge"])
                    except OSError:
                        states.append("down")
                if all(state == "audited" for state in states):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"badges not audited in time: {states}")
                time.sleep(0.2)
            urls = badges + [f"{base}/badge/{r}.json" for r, _ in REPOS]
            urls += [f"{base}/badge/{r}.svg?fail_on=warning" for r, _ in REPOS]
            asyncio.run(load(urls, 500, concurrency))  # warm-up: caches filled, pool started
            rss_before = proc_rss_mib(server.pid)
            cpu_before = proc_cpu(server.pid)
            elapsed, latencies = asyncio.run(load(urls, requests, concurrency))
            badge_cpu = proc_cpu(server.pid) - cpu_before
            rss_after = proc_rss_mib(server.pid)
            cpu_before = proc_cpu(server.pid)
            health_elapsed, health_latencies = asyncio.run(
                load([f"{base}/healthz"], requests, concurrency)
            )
            health_cpu = proc_cpu(server.pid) - cpu_before
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"badges: {requests:,} cached badge requests, concurrency {concurrency}, 127.0.0.1")
    print(f"  throughput          {requests / elapsed:8.0f} requests/s")
    print(
        f"  latency p50 / p99   {percentile(latencies, 0.5) * 1000:8.2f} / "
        f"{percentile(latencies, 0.99) * 1000:.2f} ms"
    )
    print(
        f"  server CPU          {badge_cpu / requests * 1e6:8.0f} µs per badge; "
        f"/healthz {health_cpu / requests * 1e6:.0f} µs per request "
        f"(ratio {badge_cpu / max(health_cpu, 1e-9):.2f})"
    )
    print(
        f"  /healthz            {requests / health_elapsed:8.0f} requests/s, p50 "
        f"{statistics.median(health_latencies) * 1000:.2f} ms"
    )
    print(
        f"  server memory       {rss_before:8.1f} MiB before, {rss_after:.1f} MiB after "
        f"{requests:,} badge requests"
    )


def dashboard_figures(models: int) -> None:
    from starlette.testclient import TestClient

    from cardaudit.serve.app import create_app
    from cardaudit.serve.service import ServeSettings, Service
    from cardaudit.store import Store

    report = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from cardaudit.cli import main; main()",
                "audit",
                str(ROOT / "fixtures" / "clover" / "model"),
                "--code",
                str(ROOT / "fixtures" / "clover" / "code"),
                "-f",
                "json",
                "--fail-on",
                "never",
            ],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        ).stdout
    )
    delivered = copy.deepcopy(report)
    delivered["facts"]["promises"][0]["status"] = "delivered"
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/dashboard.db"
        started = time.perf_counter()
        with Store.open(url) as store:
            first = datetime(2026, 5, 1, tzinfo=UTC)
            for index in range(models):
                repo_id = f"org{index % 40}/model-{index:04d}"
                key = f"hub:{repo_id}"
                store.track(key, repo_id, None, None)
                for offset, data in ((0, report), (30, delivered)):
                    data = {**data, "target": {**data["target"], "kind": "hub", "id": repo_id}}
                    store.record_json(data, key, first + timedelta(days=offset))
        filled = time.perf_counter() - started
        service = Service(ServeSettings(db=url))
        try:
            client = TestClient(create_app(service))
            client.get("/")  # templates compiled, rules loaded
            timings = []
            for _ in range(3):
                cpu, wall = time.process_time(), time.perf_counter()
                page = client.get("/?sort=open&order=desc")
                timings.append((time.process_time() - cpu, time.perf_counter() - wall))
                assert page.status_code == 200 and page.text.count("<tr>") == models + 1
            cpu, wall = time.process_time(), time.perf_counter()
            for tracked in service.store.tracked():
                service.store.latest(tracked.key)
            naive = (time.process_time() - cpu, time.perf_counter() - wall)
        finally:
            service.close()
    best_cpu, best_wall = min(timings)
    print(f"dashboard: {models:,} tracked models, 2 audits each (store filled in {filled:.1f} s)")
    print(
        f"  GET / (rendered)    {best_cpu:8.3f} s CPU, {best_wall:.3f} s wall (best of 3; "
        f"{len(page.text):,} bytes)"
    )
    print(
        f"  naive latest() loop {naive[0]:8.3f} s CPU, {naive[1]:.3f} s wall "
        f"(ratio GET / : loop {best_cpu / max(naive[0], 1e-9):.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--models", type=int, default=1000)
    args = parser.parse_args()
    badge_figures(args.requests, args.concurrency)
    dashboard_figures(args.models)


if __name__ == "__main__":
    main()
