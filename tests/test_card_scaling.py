"""A pathological card (4,000-character lines of figures and promises, wide tables, lists
and quotes nested 40 deep, unclosed constructs) is audited within the bound that
benchmarks/card_length.py states: a ratio to a plain card of the same length, timed in the
same test (CPU time, best of two interleaved rounds), so a loaded machine slows both."""

from __future__ import annotations

import time
from pathlib import Path

from card_texts import PATHOLOGICAL_BOUND, card_text, pathological_text
from cardaudit.extract.markdown_blocks import clear_cache
from cardaudit.pipeline import audit
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest, local

LINES = 1500


def cpu_audit(folder: Path) -> float:
    clear_cache()  # every round parses its Markdown afresh
    start = time.process_time()
    audit(AuditRequest(str(folder)), Policy())
    return time.process_time() - start


def test_a_pathological_card_stays_within_its_bound(tmp_path: Path) -> None:
    plain, hostile = tmp_path / "plain", tmp_path / "hostile"
    for folder, text in ((plain, card_text(LINES)), (hostile, pathological_text(LINES))):
        folder.mkdir()
        (folder / "README.md").write_text(text)
        assert len(text.splitlines()) == LINES
    hostile_text = (hostile / "README.md").read_text()
    assert max(len(line) for line in hostile_text.splitlines()) >= 3900
    assert len(hostile_text.encode()) < local.MAX_TEXT_BYTES  # read, not refused by the cap
    cpu_audit(plain)  # warm imports and tables
    times: dict[Path, float] = {plain: float("inf"), hostile: float("inf")}
    for _ in range(2):
        for folder in (plain, hostile):
            times[folder] = min(times[folder], cpu_audit(folder))
    ratio = times[hostile] / times[plain]
    assert ratio <= PATHOLOGICAL_BOUND, (
        f"pathological card: {times[hostile]:.2f} s CPU, {ratio:.1f}× the plain card "
        f"({times[plain]:.2f} s; bound {PATHOLOGICAL_BOUND:g}×)"
    )
