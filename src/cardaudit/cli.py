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
    target: Annotated[
        str,
        typer.Argument(
            help="Model repo: a local directory, or a Hub repo (org/name, hf://org/name, https://huggingface.co/org/name)."
        ),
    ],
    code: Annotated[
        str | None,
        typer.Option(
            "--code",
            help="The model's code repo: a directory, a git checkout or a git URL (URL#REV).",
        ),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base", help="The base model: a directory or a Hub repo id (overrides the card)."
        ),
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
    revision: Annotated[
        str | None,
        typer.Option(
            "--revision", help="Hub branch, tag or commit to audit (resolved to a commit sha)."
        ),
    ] = None,
    base_depth: Annotated[
        int | None,
        typer.Option(
            "--base-depth",
            min=0,
            help="Generations of base models to fetch from the Hub (default 3 for Hub targets, 0 for local paths).",
        ),
    ] = None,
    code_discovery: Annotated[
        bool | None,
        typer.Option(
            "--code-discovery/--no-code-discovery",
            help="Clone the code repo linked from the card (default: on for Hub targets, off for local paths).",
        ),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress display on stderr.")
    ] = False,
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
        request = AuditRequest(
            target=target,
            code=code,
            base=base,
            revision=revision,
            base_depth=base_depth,
            code_discovery=code_discovery,
            progress=not quiet and not (output_format == "json" and output is None),
        )
        report = run_audit(request, policy)
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
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
