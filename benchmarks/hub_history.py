"""Requests and wall time to read a busy Hub repo's card and licence history.

A repo served by tests/hub_server.py to the unmodified huggingface_hub client: ``--commits``
commits (weight uploads), of which ``--card-edits`` write README.md and ``--licence-edits``
write LICENSE (the first commit writes both). Prints the requests the history cost
(paths-info steps, commit-list pages, file HEAD/GETs), next to the commits it did not have
to visit, for a first audit and a second one (files then come from the huggingface_hub cache).

    python benchmarks/hub_history.py [--commits 600] [--card-edits 12] [--licence-edits 3]
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime, timedelta

from local_hub import local_hub


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=600)
    parser.add_argument("--card-edits", type=int, default=12)
    parser.add_argument("--licence-edits", type=int, default=3)
    args = parser.parse_args()

    with local_hub() as (hub, _work):
        run(hub, args.commits, args.card_edits, args.licence_edits)


def spread(count: int, total: int) -> set[int]:
    """``count`` commit numbers spread over ``total`` (0 always among them)."""
    return {round(i * total / count) for i in range(count)}


def run(hub, commits: int, card_edits: int, licence_edits: int) -> None:
    from cardaudit.sources.hub import HubSource
    from cardaudit.sources.hub_client import HubClient
    from hub_repos import LICENCE, card
    from hub_server import HubFile

    card_at, licence_at = spread(card_edits, commits), spread(licence_edits, commits)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for number in range(commits):
        files: dict = {"model.safetensors": HubFile(data=b"\0" * 64, lfs=True)}
        if number in card_at:
            files["README.md"] = card(body=f"Revision {number}. Training code coming soon.\n")
        if number in licence_at:
            files["LICENSE"] = LICENCE.read_bytes() + f"\nRevision {number}.\n".encode()
        hub.commit("org/busy", files, date=start + timedelta(hours=number))
    head = hub.repos["org/busy"].branches["main"]
    source = HubSource(HubClient.from_environment())
    texts = ("README.md", "LICENSE")
    print(
        f"repo: {commits} commits; README.md written by {len(card_at)}, "
        f"LICENSE by {len(licence_at)}"
    )
    for label in ("first audit", "again (cache)"):
        hub.log.clear()
        began = time.perf_counter()
        history, notes = source.card_history("org/busy", head, texts)
        elapsed = time.perf_counter() - began
        versions = sum(len(v) for v in history.values())
        steps = len(hub.requests("POST", "/paths-info/"))
        pages = len(hub.requests("GET", "/commits/"))
        heads = len([e for e in hub.log if e.method == "HEAD" and "/resolve/" in e.path])
        gets = len([e for e in hub.log if e.method == "GET" and "/resolve/" in e.path])
        print(
            f"{label}: {versions} versions in {elapsed * 1000:.0f} ms; {len(hub.log)} requests "
            f"= {steps} paths-info + {pages} commit pages + {heads} HEAD + {gets} GET "
            f"(per-commit downloads would be {commits} HEADs per file)"
            + (f"; notes: {notes}" if notes else "")
        )


if __name__ == "__main__":
    main()
