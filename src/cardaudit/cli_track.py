"""Tracking commands: ``track add|list|remove|run``, ``history`` and ``diff``.

Registered on the main typer app by :func:`register`; heavy imports stay inside the
commands so ``cardaudit --help`` stays fast.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cardaudit.cli_coercion import PlainCoercionCommand, PlainCoercionGroup
from cardaudit.errors import AuditError, UsageError

if TYPE_CHECKING:
    from cardaudit.extract import FactOptions
    from cardaudit.model import Evidence, Report
    from cardaudit.policy import Policy
    from cardaudit.store import Store

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
FORMATS = ("text", "json")
HISTORY_FORMATS = ("text", "json", "markdown", "csv")

track_app = typer.Typer(
    name="track",
    help="Keep a list of models to re-audit, and re-audit them all with `track run`.",
    no_args_is_help=True,
    cls=PlainCoercionGroup,
)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Tracking store: a SQLAlchemy URL (postgresql://…) or a SQLite file path. "
        "Default: $CARDAUDIT_DB, else cardaudit.db in the user data directory.",
    ),
]
FormatOption = Annotated[str, typer.Option("--format", "-f", help="text or json.")]


def _fail(message: str) -> typer.Exit:
    from cardaudit.cli import fail

    return fail(message)


def _color() -> bool:
    from cardaudit.cli import _use_color

    return _use_color(None)


def _width() -> int:
    from cardaudit.cli import _width as width

    return width()


def _check_format(output_format: str, formats: tuple[str, ...] = FORMATS) -> None:
    if output_format not in formats:
        raise UsageError(f"unknown --format {output_format!r}; choose from {', '.join(formats)}")


def _open(db: str | None, *, must_exist: bool = False, announce: bool = True) -> Store:
    """Open the store and say on stderr which one it is (``--db``, ``CARDAUDIT_DB`` or the
    default file are easy to confuse); read-only commands need one that exists."""
    from cardaudit.store import Store

    store = Store.open(db, must_exist=must_exist)
    if announce:
        typer.echo(f"cardaudit: store {store.url}", err=True)
    return store


def _normalise_target(argument: str) -> tuple[str, str]:
    """(store key, what to audit): a local path made absolute, or a Hub ``org/name``."""
    from cardaudit.store import key_for_argument

    path = Path(argument).expanduser()
    if path.exists():
        return key_for_argument(argument), str(path.resolve())
    if HUB_ID.match(argument.strip("/")):
        return key_for_argument(argument), argument.strip("/")
    raise UsageError(f"{argument!r} is neither an existing path nor a Hub id like org/name")


def _optional_path(value: str | None) -> str | None:
    if value is None:
        return None
    path = Path(value).expanduser()
    return str(path.resolve()) if path.exists() else value


def audit_recorded(
    evidence: Evidence, policy: Policy, db: str | None, options: FactOptions | None = None
) -> Report:
    """``cardaudit audit --record``: audit against the previous stored audit, then store."""
    from cardaudit.store.sqlite_record import SqliteRecorder
    from cardaudit.tracking import record_evidence

    # an existing SQLite store at the current schema is written without SQLAlchemy
    recorder = SqliteRecorder.open(db)
    opened = recorder if recorder is not None else _open(db, announce=False)
    with opened as store:  # the line below names the store
        recorded = record_evidence(store, evidence, policy, options=options)
        previous = f" (previous: #{recorded.previous_id})" if recorded.previous_id else ""
        typer.echo(
            f"cardaudit: recorded audit #{recorded.audit_id}{previous} in {store.url}", err=True
        )
    return recorded.report


# --------------------------------------------------------------------------- track


@track_app.command("add", cls=PlainCoercionCommand)
def track_add(
    targets: Annotated[list[str], typer.Argument(help="Hub ids (org/name) or local paths.")],
    code: Annotated[str | None, typer.Option("--code", help="The models' code repo.")] = None,
    base: Annotated[str | None, typer.Option("--base", help="The models' base model.")] = None,
    db: DbOption = None,
) -> None:
    """Add models to the tracked list."""
    try:
        resolved = [_normalise_target(target) for target in targets]
        with _open(db) as store:
            for key, target in resolved:
                added = store.track(key, target, _optional_path(code), _optional_path(base))
                typer.echo(f"{'tracking' if added else 'updated'} {target}")
    except AuditError as exc:
        raise _fail(str(exc)) from exc


@track_app.command("remove", cls=PlainCoercionCommand)
def track_remove(
    targets: Annotated[list[str], typer.Argument(help="Tracked Hub ids or paths.")],
    db: DbOption = None,
) -> None:
    """Remove models from the tracked list (their stored audits are kept)."""
    from cardaudit.store import key_for_argument

    try:
        with _open(db, must_exist=True) as store:
            missing = []
            for target in targets:
                # A tracked folder may be gone by now: try it as a path and as a Hub id.
                keys = {key_for_argument(target), f"local:{Path(target).expanduser().resolve()}"}
                if any([store.untrack(key) for key in sorted(keys)]):
                    typer.echo(f"no longer tracking {target}")
                else:
                    missing.append(target)
    except AuditError as exc:
        raise _fail(str(exc)) from exc
    if missing:
        raise _fail(f"not tracked: {', '.join(missing)}")


@track_app.command("list", cls=PlainCoercionCommand)
def track_list(db: DbOption = None, output_format: FormatOption = "text") -> None:
    """List tracked models with their latest stored audit and open promises (from the
    promise ledger: count, and how long the oldest has been open)."""
    import json

    from cardaudit.ledger import LedgerSummary, ledgers_of

    try:
        _check_format(output_format)
        with _open(db, must_exist=True) as store:
            tracked = store.tracked()
            rows = [(t, store.latest(t.key)) for t in tracked]
            ledgers = ledgers_of(store, [t.key for t in tracked])
    except AuditError as exc:
        raise _fail(str(exc)) from exc
    summaries = {t.key: LedgerSummary.of(ledgers.get(t.key, [])) for t in tracked}
    if output_format == "json":
        data = [
            {
                "target": tracked.target,
                "key": tracked.key,
                "code": tracked.code,
                "base": tracked.base,
                "added_at": tracked.added_at.isoformat(),
                "latest_audit": None
                if latest is None
                else {
                    "id": latest.id,
                    "revision": latest.revision,
                    "audited_at": latest.audited_at.isoformat(),
                    "licence": latest.licence_declared,
                    "summary": {
                        "error": latest.errors,
                        "warning": latest.warnings,
                        "info": latest.infos,
                    },
                },
                "promises": {
                    "open": summaries[tracked.key].open,
                    "oldest_open_days": summaries[tracked.key].oldest_open_days,
                    "delivered": summaries[tracked.key].delivered,
                    "dropped": summaries[tracked.key].dropped,
                },
            }
            for tracked, latest in rows
        ]
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return
    if not rows:
        typer.echo("Nothing tracked yet: `cardaudit track add org/name`.")
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(expand=True)
    for column in ("target", "last audit", "revision", "licence", "E/W/I", "open promises"):
        table.add_column(column, overflow="fold")
    for tracked, latest in rows:
        summary = summaries[tracked.key]
        promises = str(summary.open)
        if summary.oldest_open_days is not None:
            promises += f" (oldest {summary.oldest_open_days} d)"
        if latest is None:
            table.add_row(escape(tracked.target), "never", "-", "-", "-", "-")
        else:
            table.add_row(
                escape(tracked.target),
                f"#{latest.id} {latest.audited_at:%Y-%m-%d %H:%M}",
                latest.short_revision,
                escape(latest.licence_declared or "-"),
                f"{latest.errors}/{latest.warnings}/{latest.infos}",
                promises,
            )
    Console(width=_width(), no_color=not _color(), highlight=False).print(table)


@track_app.command("run", cls=PlainCoercionCommand)
def track_run(
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, max=64, help="Audits at once.")] = 4,
    db: DbOption = None,
    output_format: FormatOption = "text",
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on", help="Exit 1 on findings at or above: error, warning, info, never."
        ),
    ] = "error",
) -> None:
    """Re-audit every tracked model and record each audit as it finishes."""
    import json

    from cardaudit.tracking import RunResult, run_tracked

    if fail_on is not None and fail_on not in ("error", "warning", "info", "never"):
        raise _fail(f"unknown --fail-on {fail_on!r}")
    try:
        _check_format(output_format)
        with _open(db, must_exist=True) as store:
            targets = store.tracked()
            if not targets:
                raise _fail("nothing tracked: add models with `cardaudit track add org/name`")
            results = _run_with_progress(store, targets, fail_on, jobs, run_tracked)
    except AuditError as exc:
        raise _fail(str(exc)) from exc

    def licence_findings(result: RunResult) -> list:
        if result.recorded is None:
            return []
        return [f for f in result.recorded.report.findings if f.rule_id == "LIC050"]

    if output_format == "json":
        from cardaudit.reporters.json_report import report_to_json

        data = [
            {
                "target": r.tracked.target,
                "error": r.error,
                "audit_id": r.recorded.audit_id if r.recorded else None,
                "previous_audit_id": r.recorded.previous_id if r.recorded else None,
                "report": report_to_json(r.recorded.report) if r.recorded else None,
            }
            for r in results
        ]
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_run_table(results, licence_findings)
    if any(r.error for r in results):
        raise typer.Exit(2)
    if any(r.recorded and r.recorded.policy.fails(r.recorded.report) for r in results):
        raise typer.Exit(1)


def _run_with_progress(store, targets, fail_on, jobs, run_tracked):  # type: ignore[no-untyped-def]
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True, no_color=not _color())
    with Progress(
        TextColumn("auditing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=len(targets))

        def advance(result) -> None:  # type: ignore[no-untyped-def]
            progress.update(task, advance=1, description=result.tracked.target)

        return run_tracked(store, targets, jobs=jobs, on_result=advance, fail_on=fail_on)


def _print_run_table(results, licence_findings) -> None:  # type: ignore[no-untyped-def]
    from rich.console import Console
    from rich.table import Table

    from cardaudit.safe_text import markup as escape

    console = Console(width=_width(), no_color=not _color(), highlight=False)
    table = Table(expand=True)
    for column in ("target", "audit", "revision", "licence", "E/W/I", "note"):
        table.add_column(column, overflow="fold")
    for result in results:
        if result.recorded is None:
            table.add_row(
                escape(result.tracked.target),
                "-",
                "-",
                "-",
                "-",
                f"[red]{escape(result.error or '')}[/]",
            )
            continue
        report = result.recorded.report
        summary = report.summary
        changed = licence_findings(result)
        table.add_row(
            escape(result.tracked.target),
            f"#{result.recorded.audit_id}",
            (report.target.revision or "-")[:12],
            escape(report.facts.license.declared or "-"),
            f"{summary.error}/{summary.warning}/{summary.info}",
            "[bold red]LICENCE CHANGED[/]" if changed else "",
        )
    console.print(table)
    for result in results:
        for finding in licence_findings(result):
            console.print(
                f"[bold red]ERROR {finding.rule_id}[/] {escape(result.tracked.target)}: "
                f"{escape(finding.message)}"
            )
    failed = sum(1 for r in results if r.error)
    console.print(f"\n{len(results) - failed} audit(s) recorded, {failed} failed.")


# --------------------------------------------------------------------------- history, diff


def history(
    target: Annotated[str, typer.Argument(help="Hub id (org/name) or local path.")],
    db: DbOption = None,
    output_format: Annotated[
        str, typer.Option("--format", "-f", help="text, json, markdown or csv (the ledger).")
    ] = "text",
) -> None:
    """Timeline of a model in date order (promises appearing, delivered or dropped; licence
    changes; findings added and resolved) and its promise ledger: item, first promised,
    delivered on (or open), days open, where. --format text, json, markdown or csv (the
    ledger alone)."""
    from cardaudit.ledger import promise_ledger
    from cardaudit.reporters.timeline import dumps, history_to_json, render_history
    from cardaudit.store import key_for_argument
    from cardaudit.timeline import build_history

    try:
        _check_format(output_format, HISTORY_FORMATS)
        key = key_for_argument(target)
        with _open(db, must_exist=True) as store:
            audits = store.require_audits(key)
        timeline = build_history(key, audits)
        ledger = promise_ledger(audits)
    except AuditError as exc:
        raise _fail(str(exc)) from exc
    if output_format == "json":
        sys.stdout.write(dumps(history_to_json(timeline, ledger)))
    elif output_format == "csv":
        from cardaudit.reporters.ledger import render_csv

        sys.stdout.write(render_csv(ledger))
    elif output_format == "markdown":
        from cardaudit.reporters.ledger import render_history_markdown

        sys.stdout.write(render_history_markdown(timeline, ledger))
    else:
        sys.stdout.write(render_history(timeline, color=_color(), width=_width(), ledger=ledger))


def diff(
    target: Annotated[str, typer.Argument(help="Hub id (org/name) or local path.")],
    from_rev: Annotated[
        str | None, typer.Option("--from", help="Older audit: a revision (prefix) or #ID.")
    ] = None,
    to_rev: Annotated[
        str | None, typer.Option("--to", help="Newer audit: a revision (prefix) or #ID.")
    ] = None,
    db: DbOption = None,
    output_format: FormatOption = "text",
) -> None:
    """What changed between two stored audits (default: the last two). Exit 1 when the
    licence changed (LIC050)."""
    from cardaudit.reporters.timeline import diff_to_json, dumps, render_diff
    from cardaudit.store import key_for_argument
    from cardaudit.timeline import diff_audits, pick_audit

    try:
        _check_format(output_format)
        key = key_for_argument(target)
        with _open(db, must_exist=True) as store:
            # one row each, enough to pick the two; only the last two for the default diff
            audits = store.require_summaries(key, None if from_rev or to_rev else 2)
            new = pick_audit(audits, to_rev) if to_rev else audits[-1]
            if from_rev:
                old = pick_audit(audits, from_rev)
            else:
                earlier = [a for a in audits if (a.audited_at, a.id) < (new.audited_at, new.id)]
                if not earlier:
                    raise UsageError(
                        f"only one stored audit of {target} up to #{new.id}: nothing to diff"
                    )
                old = earlier[-1]
            loaded = {a.id: a for a in store.audits_by_id(key, [old.id, new.id])}
        result = diff_audits(loaded[old.id], loaded[new.id])
    except AuditError as exc:
        raise _fail(str(exc)) from exc
    if output_format == "json":
        sys.stdout.write(dumps(diff_to_json(result)))
    else:
        sys.stdout.write(render_diff(result, color=_color(), width=_width()))
    if result.findings:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the tracking commands to the main app."""
    app.add_typer(track_app, name="track")
    app.command("history", cls=PlainCoercionCommand)(history)
    app.command("diff", cls=PlainCoercionCommand)(diff)
