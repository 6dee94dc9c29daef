"""Command line: a thin typer app over the pipeline. Exit 0 clean, 1 findings, 2 errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from cardaudit.errors import AuditError

app = typer.Typer(
    name="cardaudit",
    help="Audit a model repo's card, licence, lineage, memory claims and promises.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("text", "json")
FAIL_ON = ("error", "warning", "info", "never")


def fail(message: str) -> typer.Exit:
    """Print a one-line error and return the exit to raise."""
    typer.echo(f"cardaudit: error: {message}", err=True)
    return typer.Exit(EXIT_ERROR)


def _use_color(output: Path | None) -> bool:
    if output is not None or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def _width() -> int:
    try:
        return max(60, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return 100


@app.command()
def audit(
    target: Annotated[str, typer.Argument(help="Model repo: a local directory.")],
    code: Annotated[
        str | None,
        typer.Option("--code", help="The model's code repo (directory or git checkout)."),
    ] = None,
    base: Annotated[
        str | None, typer.Option("--base", help="The base model's repo (directory).")
    ] = None,
    output_format: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to FILE.")
    ] = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on", help="Exit 1 on findings at or above: error, warning, info, never."
        ),
    ] = "error",
    select: Annotated[
        list[str] | None,
        typer.Option(
            "--select", help="Only these rule ids or prefixes (repeatable, comma-separated)."
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", help="Skip these rule ids or prefixes.")
    ] = None,
) -> None:
    """Audit a model repo and report what holds and what does not."""
    from cardaudit.pipeline import audit as run_audit
    from cardaudit.policy import Policy, split_patterns, validate_patterns
    from cardaudit.reporters import render
    from cardaudit.rules import load_rules
    from cardaudit.sources import AuditRequest

    if output_format not in FORMATS:
        raise fail(f"unknown --format {output_format!r}; choose from {', '.join(FORMATS)}")
    if fail_on not in FAIL_ON:
        raise fail(f"unknown --fail-on {fail_on!r}; choose from {', '.join(FAIL_ON)}")
    try:
        selected, ignored = split_patterns(select), split_patterns(ignore)
        validate_patterns(selected + ignored, load_rules())
        policy = Policy(select=selected, ignore=ignored, fail_on=fail_on)  # type: ignore[arg-type]
        report = run_audit(AuditRequest(target=target, code=code, base=base), policy)
        text = render(report, output_format, color=_use_color(output), width=_width())
        if output is not None:
            try:
                output.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise fail(f"cannot write {output}: {exc.strerror or exc}") from exc
        else:
            sys.stdout.write(text)
    except AuditError as exc:
        raise fail(str(exc)) from exc
    raise typer.Exit(EXIT_FINDINGS if policy.fails(report) else EXIT_CLEAN)


@app.command()
def rules(
    rule_id: Annotated[str | None, typer.Argument(help="Explain one rule, e.g. LIC001.")] = None,
) -> None:
    """List every rule, or explain one."""
    from cardaudit.reporters.rules import render_rule, render_rule_list
    from cardaudit.rules import load_rules

    try:
        catalogue = load_rules()
    except AuditError as exc:
        raise fail(str(exc)) from exc
    if rule_id is None:
        sys.stdout.write(render_rule_list(catalogue, color=_use_color(None), width=_width()))
        return
    rule = catalogue.get(rule_id.upper())
    if rule is None:
        raise fail(f"unknown rule {rule_id!r} (see `cardaudit rules`)")
    sys.stdout.write(render_rule(rule, color=_use_color(None), width=_width()))


def main() -> None:
    """Console-script entry point; an unexpected crash is one line unless CARDAUDIT_DEBUG is set."""
    try:
        app()
    except Exception as exc:  # a bug: say so plainly instead of dumping a traceback
        if os.environ.get("CARDAUDIT_DEBUG"):
            raise
        typer.echo(
            f"cardaudit: internal error: {type(exc).__name__}: {exc} "
            "(set CARDAUDIT_DEBUG=1 for the traceback and please report it)",
            err=True,
        )
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":  # pragma: no cover
    main()
