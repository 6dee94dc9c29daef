"""Every regex run on repo text is linear on pumped inputs (500 vs 2,000 repetitions).

See ``regex_pumping.py`` for how patterns are collected and pumped; the benchmark
``benchmarks/regex_timing.py`` prints the same figures.
"""

from __future__ import annotations

import re

from regex_pumping import collected_patterns, super_linear, time_pattern


def test_patterns_are_collected_from_modules_and_tables() -> None:
    origins = {origin for _pattern, origin in collected_patterns().values()}
    assert any(o.startswith("cardaudit.extract.figure_sizes") for o in origins)
    assert any(o.endswith("gpu_table") for o in origins)
    assert any(o.startswith("rules/tables/") for o in origins)


def test_the_check_catches_catastrophic_patterns() -> None:
    """The measurement itself can fail: known quadratic and exponential shapes are caught."""
    assert super_linear(time_pattern(re.compile(r"\d+\s*x?\s*A100"), "quadratic"))
    assert super_linear(time_pattern(re.compile(r"(a+)+b"), "exponential"))
    assert not super_linear(time_pattern(re.compile(r"(?<!\d)\d++\s*+A100"), "linear"))


def test_no_pattern_grows_super_linearly() -> None:
    slow = []
    for pattern, origin in collected_patterns().values():
        timing = time_pattern(pattern, origin)
        if super_linear(timing) and super_linear(time_pattern(pattern, origin)):  # twice: noise
            slow.append(
                f"{origin}: {pattern.pattern[:80]!r} on {timing.unit!r}: "
                f"{timing.short * 1000:.1f} ms at 500, {timing.long * 1000:.1f} ms at 2,000"
            )
    assert not slow, "\n".join(slow)
