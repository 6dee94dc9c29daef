"""Time every regular expression cardaudit runs on repo text against pumped inputs.

A pattern that backtracks catastrophically takes super-linear time on some input made of
one short unit repeated: ``[`` + ``\\]`` × n, a long digit run, ``<a href="`` × n. For each
pattern this tries units drawn from the pattern's own literals and from characters every
class matches (digits, letters, spaces, brackets, quotes, separators), each alone and after
the pattern's leading literal, and times ``finditer`` over the whole input at 500 and 2,000
repetitions. A linear pattern takes about 4× as long on 4× the input; a quadratic one 16×.

The patterns: every compiled pattern held by a module of ``cardaudit.extract`` (and the
``sources``/``checks`` modules, which scan the same texts), every pattern in the tables the
zero-argument cached loaders build from ``rules/tables``, and every string of a
``rules/tables/*.yaml`` file that looks like a regex, compiled as the extractors compile it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cardaudit.extract", "cardaudit.sources", "cardaudit.checks")
CHARACTERS = (*"a1 .-_/[]()<>\"'=:|\\*x\n,#", "A")
COMBOS = ("1 ", "1.", "a ", "a-", "a.", "[a", "](", "\\]", "<a ", "a=", "1x", "1 x ", "a\n")


@dataclass(frozen=True)
class Timing:
    pattern: str
    origin: str
    unit: str
    short: float
    long: float

    @property
    def ratio(self) -> float:
        return self.long / self.short if self.short > 0 else 0.0


def _walk(value: object, seen: set[int], depth: int = 0) -> Iterator[re.Pattern[str]]:
    if id(value) in seen or depth > 8:
        return
    seen.add(id(value))
    if isinstance(value, re.Pattern):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _walk(item, seen, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _walk(item, seen, depth + 1)
    elif is_dataclass(value) and not isinstance(value, type):
        for field in fields(value):
            yield from _walk(getattr(value, field.name), seen, depth + 1)
    elif isinstance(value, Mapping):  # MappingProxyType
        for _key, item in value.items():
            yield from _walk(item, seen, depth + 1)


def _modules() -> Iterator[object]:
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        yield package
        for info in pkgutil.iter_modules(package.__path__):
            yield importlib.import_module(f"{package_name}.{info.name}")


def _table_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _table_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _table_strings(item)


def collected_patterns() -> dict[str, tuple[re.Pattern[str], str]]:
    """Pattern source → (compiled pattern, where it comes from)."""
    found: dict[str, tuple[re.Pattern[str], str]] = {}
    seen: set[int] = set()
    for module in _modules():
        for name, value in vars(module).items():
            origin = f"{module.__name__}.{name}"
            loader = getattr(value, "cache_info", None) and getattr(value, "__wrapped__", None)
            if loader is not None and getattr(value, "__module__", None) == module.__name__:
                try:
                    value = value()  # a zero-argument cached table loader
                except TypeError:
                    continue
            for pattern in _walk(value, seen):
                if isinstance(pattern.pattern, str):
                    found.setdefault(pattern.pattern, (pattern, origin))
    for path in sorted((ROOT / "rules" / "tables").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for text in _table_strings(data):
            if not any(ch in text for ch in "\\([|*+?{"):
                continue
            try:
                pattern = re.compile(text, re.IGNORECASE)
            except re.error:
                continue
            found.setdefault(text, (pattern, f"rules/tables/{path.name}"))
    return found


def _literals(pattern: str) -> list[str]:
    """Runs of literal characters in ``pattern`` (what a pumped unit may need to contain)."""
    parsed = re._parser.parse(pattern)  # type: ignore[attr-defined]
    runs: list[str] = []

    def visit(items) -> None:
        run = ""
        for op, arg in items:
            if op is re._constants.LITERAL:  # type: ignore[attr-defined]
                run += chr(arg)
                continue
            if run:
                runs.append(run)
            run = ""
            if op in (re._constants.SUBPATTERN,):  # type: ignore[attr-defined]
                visit(arg[-1])
            elif op in (
                re._constants.MAX_REPEAT,
                re._constants.MIN_REPEAT,  # type: ignore[attr-defined]
                re._constants.POSSESSIVE_REPEAT,
            ):  # type: ignore[attr-defined]
                visit(arg[2])
            elif op is re._constants.BRANCH:  # type: ignore[attr-defined]
                for branch in arg[1]:
                    visit(branch)
            elif op in (
                re._constants.ATOMIC_GROUP,
                re._constants.ASSERT,  # type: ignore[attr-defined]
                re._constants.ASSERT_NOT,
            ):  # type: ignore[attr-defined]
                visit(arg[-1] if isinstance(arg, tuple) else arg)
        if run:
            runs.append(run)

    visit(parsed)
    return [run for run in dict.fromkeys(runs) if run.strip()][:8]


def units_for(pattern: str) -> list[tuple[str, str]]:
    """(prefix, unit) pairs to pump for ``pattern``."""
    literals = _literals(pattern)
    units = list(dict.fromkeys([*CHARACTERS, *COMBOS, *literals, *(x + " " for x in literals)]))
    prefixes = ["", *literals[:1]]
    return [(prefix, unit) for prefix in prefixes for unit in units]


def _time(pattern: re.Pattern[str], text: str) -> float:
    start = time.process_time()
    for _ in pattern.finditer(text):
        pass
    return time.process_time() - start


#: Above this a pumped input is slow enough to measure; below it at 2,000 units the
#: pattern is linear for that unit (a quadratic one needs about 2,000²/2 steps there).
FLOOR = 0.002
#: At a small repetition count a pattern over this is exploding (exponential backtracking)
#: and is not pumped further (2,000 units would run for hours).
BUDGET = 0.05


def time_pattern(pattern: re.Pattern[str], origin: str) -> Timing:
    """The worst pumped unit for ``pattern``: its CPU times at 500 and 2,000 repetitions."""
    worst = Timing(pattern.pattern, origin, "", 0.0, 0.0)
    for prefix, unit in units_for(pattern.pattern):
        if any(_time(pattern, prefix + unit * count) > BUDGET for count in (12, 18, 24)):
            return Timing(pattern.pattern, origin, prefix + unit, BUDGET, float("inf"))
        long = _time(pattern, prefix + unit * 2000)
        if long < FLOOR:
            continue
        short = min(_time(pattern, prefix + unit * 500) for _ in range(3))
        long = min(long, _time(pattern, prefix + unit * 2000))
        candidate = Timing(pattern.pattern, origin, prefix + unit, short, long)
        if super_linear(candidate):
            return candidate
        if candidate.long > worst.long:
            worst = candidate
    return worst


def super_linear(timing: Timing) -> bool:
    """Grows faster than linearly: 4× the input costs more than 8× the time (and it shows)."""
    return timing.long == float("inf") or (timing.long > FLOOR and timing.ratio > 8)
