"""Configuration: ``[tool.cardaudit]`` in pyproject.toml or a ``.cardaudit.toml`` file.

Settings: ``select`` / ``ignore`` (rule ids or prefixes), ``severity`` overrides
(``{"LIC003" = "warning"}``), ``fail-on``, and ``waivers`` — each with a rule id, an optional
path glob, a reason from :data:`WAIVER_REASONS`, a comment and an expiry date. Parsing is
pure (text in, :class:`Config` out); :func:`find_config` decides which text applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from cardaudit.errors import UsageError
from cardaudit.model import Evidence, Severity

#: Why a finding may be waived. A closed list, so reviewers can query and audit waivers.
WAIVER_REASONS: tuple[str, ...] = (
    "false-positive",
    "accepted-risk",
    "legal-approved",
    "fixed-upstream",
    "not-applicable",
)
CONFIG_FILE = ".cardaudit.toml"


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


def waiver_lines(text: str) -> list[int]:
    """1-based line of each ``[[...waivers]]`` table header, in file order."""
    return [
        number
        for number, line in enumerate(text.splitlines(), start=1)
        if re.match(r"^\s*\[\[\s*(tool\.cardaudit\.)?waivers\s*\]\]", line)
    ]


def parse_table(table: Any, *, source: str, text: str = "", in_repo: bool = False) -> Config:
    """Validate a ``[tool.cardaudit]`` table (or a whole .cardaudit.toml) against
    :class:`cardaudit.config_schema.ConfigTable` (pydantic; the editors' JSON Schema comes
    from the same model)."""
    from cardaudit.config_schema import validate_table

    try:
        model = validate_table(table)
    except ValueError as exc:
        raise _fail(source, str(exc)) from None
    lines = waiver_lines(text)
    waivers = tuple(
        Waiver(
            rule=item.rule.upper(),
            reason=item.reason,
            expires=item.expires,
            path=item.path,
            comment=item.comment.strip() if item.comment else None,
            source=source,
            line=lines[i] if i < len(lines) else None,
            in_repo=in_repo,
        )
        for i, item in enumerate(model.waivers)
    )
    return Config(
        select=_patterns(model.select, "select", source),
        ignore=_patterns(model.ignore, "ignore", source),
        severity={str(k).upper(): v for k, v in model.severity.items()},
        fail_on=model.fail_on,
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
    directory's. With ``trust_repo`` false, a working directory inside an audited repo (the
    model, its code or its base, run from their root) is not a fallback either: it would read
    the same file back."""
    if explicit is not None:
        return read_config_file(explicit)
    found = repo_config(evidence) if trust_repo else None
    if found is not None:
        return found
    cwd = (cwd or Path.cwd()).resolve()
    if not trust_repo and any(cwd.is_relative_to(root) for root in _audited_roots(evidence)):
        return Config()
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


def _audited_roots(evidence: Evidence) -> list[Path]:
    """Local folders of every audited repo (model, code, bases), resolved."""
    snapshots = [evidence.repo, evidence.code, *(base.repo for base in evidence.base)]
    return [
        Path(snapshot.path).resolve()
        for snapshot in snapshots
        if snapshot is not None and snapshot.path
    ]
