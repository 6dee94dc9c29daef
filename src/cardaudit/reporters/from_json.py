"""The JSON report read back into a :class:`Report`, so every reporter works on stored audits.

The tracking store keeps the published JSON (facts, checks) and one row per finding; ``serve``
renders the HTML report of a stored audit with :func:`cardaudit.reporters.html.render`, which
takes a ``Report``. The conversion follows the dataclasses' own type hints, so fields other
engineers add to the facts come back without touching this module (unknown keys are dropped,
top-level facts the model does not name go to ``Facts.extra`` as the extractors put them).
What a stored audit cannot give back — the raw evidence, hence ``not_read`` — stays empty.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from cardaudit.model import CheckRun, Facts, Finding, Location, Report, Target

#: Facts that are ``Facts`` fields; every other top-level key is an extractor's ``extra``.
_FACT_FIELDS = tuple(f.name for f in dataclasses.fields(Facts) if f.name != "extra")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(hint: Any, value: Any) -> Any:
    """``value`` (parsed JSON) as the type ``hint`` describes: dataclasses built from dicts,
    tuples from lists, everything else as it is."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build(hint, value) if isinstance(value, Mapping) else value
    if origin is tuple and isinstance(value, list):
        args = typing.get_args(hint)
        item = args[0] if args else Any
        return tuple(_convert(item, element) for element in value)
    return value


def build(cls: type, data: Mapping[str, Any]) -> Any:
    """An instance of dataclass ``cls`` from its JSON form (missing fields keep defaults)."""
    hints = _hints(cls)
    values = {
        field.name: _convert(hints[field.name], data[field.name])
        for field in dataclasses.fields(cls)
        if field.init and field.name in data
    }
    return cls(**values)


def facts_from_json(data: Mapping[str, Any]) -> Facts:
    known = {name: data[name] for name in _FACT_FIELDS if name in data}
    extra = {key: value for key, value in data.items() if key not in _FACT_FIELDS}
    facts = build(Facts, known)
    return dataclasses.replace(facts, extra=extra) if extra else facts


def _location(location: Mapping[str, Any]) -> Location:
    return Location(
        location.get("path"),
        location.get("line"),
        key=location.get("key"),
        repo=location.get("repo") or "model",
    )


def _finding(data: Mapping[str, Any], suppressed_by: str | None = None) -> Finding:
    location = data.get("location") or {}
    return Finding(
        rule_id=str(data["rule_id"]),
        severity=data["severity"],
        message=str(data.get("message") or ""),
        location=_location(location),
        evidence=data.get("evidence"),
        remediation=data.get("remediation"),
        suppressed_by=data.get("suppressed_by") or suppressed_by,
        also=tuple(
            _location(place) for place in data.get("also_at") or () if isinstance(place, Mapping)
        ),
    )


def report_from_json(data: Mapping[str, Any]) -> Report:
    """A ``Report`` from a JSON report (``report_to_json``'s shape, schema_version "1")."""
    target = data.get("target") or {}
    offline = target.get("offline")
    return Report(
        target=Target(
            kind="hub" if target.get("kind") == "hub" else "local",
            id=str(target.get("id") or ""),
            path=target.get("path"),
            revision=target.get("revision"),
            offline=tuple(offline.get("unavailable") or ()) if isinstance(offline, dict) else None,
        ),
        facts=facts_from_json(data.get("facts") or {}),
        checks=tuple(
            CheckRun(str(run["rule_id"]), run.get("outcome") or "error", run.get("note"))
            for run in data.get("checks") or []
        ),
        findings=tuple(_finding(item) for item in data.get("findings") or []),
        suppressed=tuple(
            _finding(item, "suppressed") for item in data.get("suppressed_findings") or []
        ),
    )
