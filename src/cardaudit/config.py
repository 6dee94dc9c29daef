"""Configuration: ``[tool.cardaudit]`` in pyproject.toml or a ``.cardaudit.toml`` file.

Settings: ``select`` / ``ignore`` (rule ids or prefixes), ``severity`` overrides
(``{"LIC003" = "warning"}``), ``fail-on``, and ``waivers`` — each with a rule id, an optional
path glob, a reason from :data:`WAIVER_REASONS`, a comment and an expiry date. Parsing is
pure (text in, :class:`Config` out); :func:`find_config` decides which text applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from cardaudit.errors import UsageError
from cardaudit.model import SEVERITIES, Evidence, Severity

#: Why a finding may be waived. A closed list, so reviewers can query and audit waivers.
WAIVER_REASONS: tuple[str, ...] = (
    "false-positive",
    "accepted-risk",
    "legal-approved",
    "fixed-upstream",
    "not-applicable",
)
FAIL_ON_VALUES: tuple[str, ...] = ("error", "warning", "info", "never")
CONFIG_FILE = ".cardaudit.toml"
TOP_KEYS = {"select", "ignore", "severity", "fail-on", "fail_on", "waivers"}
WAIVER_KEYS = {"rule", "path", "reason", "comment", "expires"}
RULE_ID = re.compile(r"\A[A-Z]{3}\d{3}\Z")


class ConfigError(UsageError):
    """The configuration file is invalid (reported in one line, exit 2)."""


@dataclass(frozen=True)
class Waiver:
    """Permission to suppress one rule's findings (optionally only in files matching ``path``)."""

    rule: str
    reason: str
    expires: date
    path: str | None = None
    comment: str | None = None
    source: str = CONFIG_FILE
    line: int | None = None
    in_repo: bool = False

    def expired(self, today: date) -> bool:
        """A waiver applies up to and including its expiry day."""
        return today > self.expires

    def describe(self) -> str:
        where = f" in {self.path}" if self.path else ""
        text = f"waiver {self.rule}{where}: {self.reason}, expires {self.expires.isoformat()}"
        return f"{text} — {self.comment}" if self.comment else text


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict[str, Severity] = field(default_factory=dict)
    fail_on: str | None = None
    waivers: tuple[Waiver, ...] = ()
    source: str | None = None


def _fail(source: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: {message}")


def _patterns(value: Any, key: str, source: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _fail(source, f"`{key}` must be a list of rule ids or prefixes")
    parts = [part.strip() for item in value for part in item.split(",") if part.strip()]
    return tuple(parts)


def _expiry(value: Any, source: str, rule: str) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise _fail(source, f"waiver {rule}: `expires` must be a date like 2026-12-31")


def waiver_lines(text: str) -> list[int]:
    """1-based line of each ``[[...waivers]]`` table header, in file order."""
    return [
        number
        for number, line in enumerate(text.splitlines(), start=1)
        if re.match(r"^\s*\[\[\s*(tool\.cardaudit\.)?waivers\s*\]\]", line)
    ]


def _waiver(item: Any, index: int, source: str, line: int | None, in_repo: bool) -> Waiver:
    if not isinstance(item, dict):
        raise _fail(source, f"waiver #{index + 1} must be a table")
    unknown = sorted(set(item) - WAIVER_KEYS)
    if unknown:
        raise _fail(source, f"waiver #{index + 1}: unknown key {unknown[0]!r}")
    rule = item.get("rule")
    if not isinstance(rule, str) or not RULE_ID.match(rule.upper()):
        raise _fail(source, f"waiver #{index + 1}: `rule` must be a rule id like LIC001")
    rule = rule.upper()
    reason = item.get("reason")
    if reason not in WAIVER_REASONS:
        raise _fail(source, f"waiver {rule}: `reason` must be one of {', '.join(WAIVER_REASONS)}")
    if "expires" not in item:
        raise _fail(source, f"waiver {rule}: `expires` is required (a date like 2026-12-31)")
    path, comment = item.get("path"), item.get("comment")
    if path is not None and not isinstance(path, str):
        raise _fail(source, f"waiver {rule}: `path` must be a string (a glob)")
    if comment is not None and not isinstance(comment, str):
        raise _fail(source, f"waiver {rule}: `comment` must be a string")
    return Waiver(
        rule=rule,
        reason=reason,
        expires=_expiry(item["expires"], source, rule),
        path=path,
        comment=comment.strip() if comment else None,
        source=source,
        line=line,
        in_repo=in_repo,
    )


def parse_table(table: Any, *, source: str, text: str = "", in_repo: bool = False) -> Config:
    """Validate a ``[tool.cardaudit]`` table (or a whole .cardaudit.toml)."""
    if not isinstance(table, dict):
        raise _fail(source, "[tool.cardaudit] must be a table")
    unknown = sorted(set(table) - TOP_KEYS)
    if unknown:
        raise _fail(source, f"unknown setting {unknown[0]!r}")
    severity = table.get("severity", {})
    if not isinstance(severity, dict):
        raise _fail(source, "`severity` must be a table of rule id = severity")
    for rule_id, level in severity.items():
        if level not in SEVERITIES:
            raise _fail(source, f"severity of {rule_id!r}: must be one of {', '.join(SEVERITIES)}")
    fail_on = table.get("fail-on", table.get("fail_on"))
    if fail_on is not None and fail_on not in FAIL_ON_VALUES:
        raise _fail(source, f"`fail-on` must be one of {', '.join(FAIL_ON_VALUES)}")
    items = table.get("waivers", [])
    if not isinstance(items, list):
        raise _fail(source, "`waivers` must be an array of tables ([[waivers]])")
    lines = waiver_lines(text)
    waivers = tuple(
        _waiver(item, i, source, lines[i] if i < len(lines) else None, in_repo)
        for i, item in enumerate(items)
    )
    return Config(
        select=_patterns(table.get("select", []), "select", source),
        ignore=_patterns(table.get("ignore", []), "ignore", source),
        severity={str(k).upper(): v for k, v in severity.items()},
        fail_on=fail_on,
        waivers=waivers,
        source=source,
    )


def parse_config(text: str, *, source: str, in_repo: bool = False) -> Config | None:
    """Parse a config file's text; None when a pyproject.toml has no [tool.cardaudit]."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _fail(source, f"invalid TOML: {exc}") from exc
    is_pyproject = Path(source).name == "pyproject.toml"
    if "tool" in data and isinstance(data["tool"], dict) and "cardaudit" in data["tool"]:
        table = data["tool"]["cardaudit"]
    elif is_pyproject:
        return None
    else:
        table = data
    return parse_table(table, source=source, text=text, in_repo=in_repo)


def read_config_file(path: Path) -> Config:
    """An explicit ``--config FILE``; missing, unreadable or invalid → :class:`ConfigError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from exc
    config = parse_config(text, source=str(path))
    if config is None:
        raise ConfigError(f"{path}: no [tool.cardaudit] table")
    return config


def repo_config(evidence: Evidence) -> Config | None:
    """The audited repo's own ``.cardaudit.toml`` or ``pyproject.toml`` [tool.cardaudit]."""
    for name in (CONFIG_FILE, "pyproject.toml"):
        text = evidence.repo.text(name)
        if text is not None:
            config = parse_config(text.text, source=name, in_repo=True)
            if config is not None:
                return config
    return None


def find_config(
    evidence: Evidence,
    explicit: Path | None,
    cwd: Path | None = None,
    *,
    trust_repo: bool = True,
) -> Config:
    """``--config FILE``, else the audited repo's config (unless ``trust_repo`` is false: a
    reviewer auditing someone else's model need not accept its own waivers), else the working
    directory's."""
    if explicit is not None:
        return read_config_file(explicit)
    found = repo_config(evidence) if trust_repo else None
    if found is not None:
        return found
    cwd = cwd or Path.cwd()
    for name in (CONFIG_FILE, "pyproject.toml"):
        path = cwd / name
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from exc
            config = parse_config(text, source=name)
            if config is not None:
                return config
    return Config()
