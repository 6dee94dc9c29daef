#!/usr/bin/env python3
"""Render the HTML report and look at it in headless Chromium: a PNG screenshot and a PDF.

    python scripts/html_screenshot.py [FIXTURE] [--out DIR] [--demo-facts]

``--demo-facts`` fills in parameters, memory, lineage, promises and claims (made-up values,
clearly for layout only) so every section of the page can be inspected. Needs ``chromium``
(Debian: ``apt-get install -y chromium``). Prints the files written and their sizes.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from cardaudit.config import find_config  # noqa: E402
from cardaudit.model import (  # noqa: E402
    BaseModelRef,
    Claim,
    MemoryFacts,
    ParameterFacts,
    Promise,
    Report,
)
from cardaudit.pipeline import audit_evidence  # noqa: E402
from cardaudit.policy import policy_from  # noqa: E402
from cardaudit.reporters import render  # noqa: E402
from cardaudit.sources import AuditRequest, acquire  # noqa: E402

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def fixture_report(name: str) -> Report:
    folder = ROOT / "fixtures" / name
    request = AuditRequest(
        target=str(folder / "model"),
        code=str(folder / "code") if (folder / "code").is_dir() else None,
        base=str(folder / "base") if (folder / "base").is_dir() else None,
    )
    evidence = acquire(request)
    return audit_evidence(evidence, policy_from(find_config(evidence, None, cwd=folder)))


def with_demo_facts(report: Report) -> Report:
    """Layout-only sample facts, so every section has rows to look at."""
    facts = dataclasses.replace(
        report.facts,
        parameters=ParameterFacts(
            total=35_951_822_848,
            active=3_000_000_000,
            by_dtype={"BF16": 35_951_822_848},
            source="safetensors",
        ),
        memory=MemoryFacts(
            weight_bytes=71_903_645_696, kv_cache_bytes_per_token=81_920, context_length=262_144
        ),
        base_models=(BaseModelRef("Qwen/Qwen3.6-35B-A3B", "finetune", "card"),),
        promises=(
            Promise(
                "Training code will be released soon 🚀🔥 (stay tuned!)",
                "training code",
                "README.md",
                31,
                "missing",
                first_seen="2025-03-02",
            ),
            Promise(
                "GGUF quantisations are coming.",
                "gguf weights",
                "README.md",
                35,
                "delivered",
                first_seen="2025-04-18",
            ),
        ),
        claims=(
            Claim(
                "benchmark",
                "Beats GPT-4 on HumanEval.",
                "README.md",
                20,
                missing=("evaluation harness", "prompt format"),
            ),
        ),
    )
    obligations = [
        {
            "duty": "Keep the licence and NOTICE with every copy",
            "detail": "ship LICENSE and NOTICE unchanged with the weights and derivatives",
            "source": "Apache-2.0 §4(a), §4(d)",
            "binds": "redistributor",
        },
        {
            "duty": "Mark modified files",
            "detail": "state in each changed file that you changed it",
            "source": "Apache-2.0 §4(b)",
            "binds": "redistributor",
        },
    ]
    facts = dataclasses.replace(facts, extra={**facts.extra, "obligations": obligations})
    return dataclasses.replace(report, facts=facts)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("chromium not found: apt-get install -y chromium")


def shoot(html: Path, out: Path) -> tuple[Path, Path]:
    png, pdf = out / f"{html.stem}.png", out / f"{html.stem}.pdf"
    with tempfile.TemporaryDirectory(prefix="cardaudit-chromium-") as profile:
        base = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
        subprocess.run(
            [*base, "--window-size=1280,2400", f"--screenshot={png}", html.as_uri()],
            check=True,
            capture_output=True,
            timeout=120,
        )
        subprocess.run(
            [*base, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", html.as_uri()],
            check=True,
            capture_output=True,
            timeout=120,
        )
    return png, pdf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixture", nargs="?", default="waived")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "cardaudit-html")
    parser.add_argument("--demo-facts", action="store_true")
    args = parser.parse_args()
    report = fixture_report(args.fixture)
    if args.demo_facts:
        report = with_demo_facts(report)
    args.out.mkdir(parents=True, exist_ok=True)
    html = args.out / f"{args.fixture}.html"
    html.write_text(render(report, "html", show_suppressed=True), encoding="utf-8")
    if args.demo_facts:  # a distinct name, so both variants can sit side by side
        demo = html.with_name(f"{args.fixture}-demo.html")
        html.rename(demo)
        html = demo
    for path in (html, *shoot(html, args.out)):
        print(f"{path}  {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
