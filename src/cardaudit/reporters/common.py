"""Helpers shared by the reader-facing reporters: verdict, rule metadata, fact tables.

Facts are rendered generically: every section is a list of rows, and an empty list is shown
as "none found", so facts added by new extractors appear without touching the reporters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cardaudit.model import Finding, Report, to_jsonable
from cardaudit.rules import Rule

NONE_FOUND = "none found"
KNOWN_FACTS = ("license", "parameters", "memory", "base_models", "promises", "claims")


@dataclass(frozen=True)
class Verdict:
    """The one-line outcome shown on badges and summaries."""

    message: str
    colour: str
    worst: str | None


#: shields.io named colours by worst severity (None = no findings).
BADGE_COLOURS: Mapping[str | None, str] = {
    None: "brightgreen",
    "info": "green",
    "warning": "yellow",
    "error": "red",
}


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def verdict(report: Report, fail_on: str = "error") -> Verdict:
    """``failing`` when the ``--fail-on`` gate fails, else ``N error(s)`` / ``N warning(s)``
    (findings under the gate) / ``passing``, coloured by the worst severity: the badge
    says what the exit code says."""
    from cardaudit.policy import Policy

    summary = report.summary
    worst = report.worst_severity()
    if Policy(fail_on=fail_on).fails(report):  # type: ignore[arg-type]
        return Verdict("failing", "red", worst)
    if summary.error:
        message = plural(summary.error, "error")
    elif summary.warning:
        message = plural(summary.warning, "warning")
    elif summary.not_checked:  # unchecked is not passed
        message = f"{summary.not_checked} not checked"
        return Verdict(message, "lightgrey", worst)
    else:
        message = "passing"
    if summary.not_checked:
        message += f", {summary.not_checked} not checked"
    return Verdict(message, BADGE_COLOURS[worst], worst)


def rules_for(report: Report) -> list[Rule]:
    """Catalogue entries for every rule that ran or has a finding, in id order."""
    from cardaudit.rules import load_rules

    catalogue = load_rules()
    ids = {run.rule_id for run in report.checks}
    ids |= {f.rule_id for f in (*report.findings, *report.suppressed)}
    return [catalogue[rule_id] for rule_id in sorted(ids) if rule_id in catalogue]


def rule_title(rule_id: str) -> str:
    from cardaudit.rules import load_rules

    rule = load_rules().get(rule_id)
    return rule.title if rule else rule_id


def where(finding: Finding) -> str:
    return finding.location.display()


def fmt_int(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def fmt_bytes(value: int | None) -> str:
    """Exact bytes, then decimal and binary units (GB = 10^9 B, GiB = 2^30 B)."""
    if value is None:
        return "unknown"
    for power, decimal, binary in ((3, "GB", "GiB"), (2, "MB", "MiB"), (1, "kB", "KiB")):
        if value >= 1000**power:
            return (
                f"{value:,} B ({value / 1000**power:.2f} {decimal} = "
                f"{value / 1024**power:.2f} {binary})"
            )
    return f"{value:,} B"


def fmt_value(value: Any) -> str:
    """A compact, readable rendering of any fact value."""
    value = to_jsonable(value)
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return fmt_int(value)
    if isinstance(value, list):
        return ", ".join(fmt_value(item) for item in value) if value else NONE_FOUND
    if isinstance(value, dict):
        if not value:
            return "—"
        return "; ".join(f"{key}: {fmt_value(item)}" for key, item in value.items())
    return str(value)


# --------------------------------------------------------------------------- fact sections


def licence_rows(report: Report) -> list[tuple[str, str, str]]:
    """(where, what, detail) rows: the card's declaration, licence files, code repo."""
    licence = report.facts.license
    rows: list[tuple[str, str, str]] = []
    declared = licence.declared or "not declared"
    detail = []
    if licence.declared_spdx:
        detail.append(f"SPDX: {licence.declared_spdx}")
    if licence.declared_name:
        detail.append(f"name: {licence.declared_name}")
    if licence.declared_link:
        detail.append(f"link: {licence.declared_link}")
    rows.append(("model card (license key)", declared, "; ".join(detail) or "—"))
    for match in licence.files:
        label = match.path if match.repo == "model" else f"{match.repo}:{match.path}"
        what = match.identified or "not identified"
        extra = f"confidence {match.confidence:.2f}"
        if match.also:
            extra += f"; also {', '.join(match.also)}"
        if match.note:
            extra += f"; {match.note}"
        rows.append((label, what, extra))
    code = licence.code_repo
    if code:
        rows.append(
            (
                f"code repo {code.get('id') or ''}".strip(),
                str(code.get("identified") or "not identified"),
                fmt_value({k: v for k, v in code.items() if k not in ("id", "identified")}),
            )
        )
    for item in licence.prose:
        rows.append(("card prose", fmt_value(item.get("identified", "")), fmt_value(item)))
    return rows


def lineage_rows(report: Report) -> list[tuple[str, str, str]]:
    """(model, relation, source) from the audited model down its declared base models."""
    rows = [(report.target.id, "audited model", report.target.path or report.target.kind)]
    for ref in report.facts.base_models:
        rows.append((ref.id, ref.relation or "relation unknown", ref.source))
    return rows


def parameter_rows(report: Report) -> list[tuple[str, str]]:
    """(quantity, value) rows for parameters and memory; empty when nothing is known."""
    params, memory = report.facts.parameters, report.facts.memory
    rows: list[tuple[str, str]] = []
    if params.total is not None:
        rows.append(("parameters (total)", fmt_int(params.total)))
    if params.active is not None:
        rows.append(("parameters (active)", fmt_int(params.active)))
    for dtype, count in params.by_dtype.items():
        rows.append((f"parameters in {dtype}", fmt_int(count)))
    if params.source:
        rows.append(("counted from", params.source))
    for key, value in params.details.items():
        rows.append((f"parameters: {key}", fmt_value(value)))
    if memory.weight_bytes is not None:
        rows.append(("weight memory", fmt_bytes(memory.weight_bytes)))
    kv = memory.details.get("kv_cache")
    if kv:
        from cardaudit.reporters.sizing import kv_cache_text

        rows.append(("KV cache per token", kv_cache_text(kv)))
    elif memory.kv_cache_bytes_per_token is not None:
        rows.append(("KV cache per token", fmt_bytes(memory.kv_cache_bytes_per_token)))
    if memory.context_length is not None:
        rows.append(("context length", f"{fmt_int(memory.context_length)} tokens"))
    for key, value in memory.details.items():
        if key == "kv_cache":  # shown above as one figure; its sizes at the context below
            for batch, size in (value.get("at_context") or {}).items():
                if batch.startswith("batch_"):
                    tokens = value["at_context"]["tokens"]
                    rows.append(
                        (
                            f"KV cache at {fmt_int(tokens)} tokens, batch {batch[6:]}",
                            fmt_bytes(size["bytes"]),
                        )
                    )
            continue
        rows.append((f"memory: {key}", fmt_value(value)))
    return rows


def promise_rows(report: Report) -> list[tuple[str, str, str, str, str]]:
    """(first seen, artifact, status, where, text), oldest first; unknown dates last."""
    promises = sorted(
        report.facts.promises,
        key=lambda p: (p.first_seen is None, p.first_seen or "", p.path, p.line),
    )
    return [
        (
            p.first_seen or "unknown",
            p.artifact,
            p.status + (f" ({p.reason})" if p.reason else ""),
            f"{p.path}:{p.line}" if p.repo == "model" else f"{p.repo}:{p.path}:{p.line}",
            p.text,
        )
        for p in promises
    ]


def claim_rows(report: Report) -> list[tuple[str, str, str, str]]:
    """(kind, where, text, what it does not disclose)."""
    return [
        (
            c.kind,
            f"{c.path}:{c.line}" if c.repo == "model" else f"{c.repo}:{c.path}:{c.line}",
            c.text,
            ", ".join(c.missing) or "—",
        )
        for c in report.facts.claims
    ]


def extra_rows(report: Report) -> list[tuple[str, str]]:
    """Facts published under ``facts.extra`` by newer extractors."""
    return [
        (str(key), fmt_value(value))
        for key, value in report.facts.extra.items()
        if key not in KNOWN_FACTS
    ]


def check_counts(report: Report) -> dict[str, int]:
    counts = {"pass": 0, "fail": 0, "not_applicable": 0, "not_checked": 0, "error": 0}
    for run in report.checks:
        counts[run.outcome] = counts.get(run.outcome, 0) + 1
    return counts


def not_checked_rows(report: Report) -> list[tuple[str, str, str]]:
    """(rule id, why it could not be checked, how to supply the input) per not_checked rule."""
    return [
        (run.rule_id, run.note or "an input was missing", run.fix or "")
        for run in report.checks
        if run.outcome == "not_checked"
    ]


def build_time() -> datetime:
    """Now (UTC, whole seconds), or ``SOURCE_DATE_EPOCH`` for reproducible documents."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), UTC)
    return datetime.now(UTC).replace(microsecond=0)


def hub_url(repo_id: str) -> str | None:
    """The Hub page of ``org/name``-shaped ids; None for anything else (e.g. a local dir)."""
    parts = repo_id.split("/")
    if len(parts) == 2 and all(re.fullmatch(r"[A-Za-z0-9][\w.-]*", p) for p in parts):
        return f"https://huggingface.co/{repo_id}"
    return None


def base_licences(report: Report) -> dict[str, str | None]:
    """Declared licence (as written in its card) of each base model whose repo was audited."""
    from cardaudit.extract.licence import declared_licence

    found: dict[str, str | None] = {}
    evidence = report.evidence
    for base in evidence.base if evidence is not None else ():
        metadata = base.card.metadata if base.card is not None else {}
        found[base.target.id] = declared_licence(metadata)
    return found


@dataclass(frozen=True)
class Ancestor:
    """A base model for the BOMs: what the card declares, joined with its audited repo."""

    id: str
    relation: str | None
    licence: str | None
    revision: str | None
    url: str | None


def ancestors(report: Report) -> list[Ancestor]:
    """Declared base models, each paired with the base repo audited alongside (if any).

    A single declared base and a single audited base repo are taken to be the same model;
    otherwise audited base repos are matched by id and the rest listed on their own.
    """
    evidence = report.evidence
    bases = list(evidence.base) if evidence is not None else []
    licences = base_licences(report)
    # one ancestor per base model: the card, config and prose may each name the same id
    unique: dict[str, Any] = {}
    for ref in report.facts.base_models:
        seen = unique.get(ref.id.lower())
        if seen is None or (seen.relation is None and ref.relation is not None):
            unique[ref.id.lower()] = ref
    refs = list(unique.values())
    found: list[Ancestor] = []
    for ref in refs:
        match = None
        if len(refs) == 1 and len(bases) == 1:
            match = bases[0]
        else:
            match = next((b for b in bases if b.target.id == ref.id), None)
        if match is not None:
            bases.remove(match)
        found.append(
            Ancestor(
                id=ref.id,
                relation=ref.relation,
                licence=licences.get(match.target.id) if match else None,
                revision=match.target.revision if match else None,
                url=(match.repo.url if match else None) or hub_url(ref.id),
            )
        )
    for base in bases:
        found.append(
            Ancestor(
                id=base.target.id,
                relation=evidence.base_relation if evidence is not None else None,
                licence=licences.get(base.target.id),
                revision=base.target.revision,
                url=base.repo.url or hub_url(base.target.id),
            )
        )
    return found


def not_read(report: Report) -> list[dict[str, str]]:
    """What the audit did not read, and why, for the model repo, its code repo and its base
    models (from each snapshot's ``skipped``): files over a size limit, binary texts, headers
    read from the Hub's totals instead, histories cut short..."""
    evidence = report.evidence
    if evidence is None:
        return []
    rows: list[dict[str, str]] = []

    def add(repo: str, skipped: Mapping[str, str]) -> None:
        rows.extend({"repo": repo, "path": path, "reason": why} for path, why in skipped.items())

    add("model", evidence.repo.skipped)
    if evidence.code is not None:
        add("code", evidence.code.skipped)
    pending = list(evidence.base)
    while pending:
        base = pending.pop(0)
        add(f"base {base.target.id}", base.repo.skipped)
        pending += base.base
    return rows


def text_console(buffer: Any, color: bool, width: int) -> Any:
    """A rich Console writing into ``buffer``: colour only when asked, no highlighting or
    emoji codes (card text such as ``:smile:`` or numbers stays as written)."""
    from rich.console import Console

    return Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        width=width,
        highlight=False,
        emoji=False,
    )
