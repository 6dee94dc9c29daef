"""Command line: a thin typer app over the pipeline. Exit 0 clean, 1 findings, 2 errors."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from cardaudit.cli_coercion import PlainCoercionCommand, PlainCoercionGroup
from cardaudit.errors import AuditError

EXAMPLES = """\
[bold]Examples[/bold]

  cardaudit audit ./my-model               [dim]# tables; piped: a line per finding[/dim]
  cardaudit audit org/name --revision v1.0 [dim]# a Hub repo, no weights fetched[/dim]
  cardaudit audit ./m --code ../code --base ./base --fail-on warning
  cardaudit audit ./m -f sarif,html,badge --output-dir reports/
  cardaudit audit ./m -f github            [dim]# annotate a pull request[/dim]
  cardaudit audit ./m --no-repo-config     [dim]# ignore the repo's waivers[/dim]
  cardaudit rules LIC004                   [dim]# what a rule checks, the fix[/dim]
  cardaudit rules --format json
  cardaudit track add org/name; cardaudit track run
  cardaudit history org/name
  cardaudit --install-completion           [dim]# tab completion[/dim]
"""

app = typer.Typer(
    name="cardaudit",
    help="Audit a model repo's card, licence, lineage, memory claims and promises.",
    epilog=EXAMPLES,
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    cls=PlainCoercionGroup,
)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FAIL_ON = ("error", "warning", "info", "never")


def _show_version(value: bool) -> None:
    if value:
        from cardaudit import __version__

        typer.echo(f"cardaudit {__version__}")
        raise typer.Exit(EXIT_CLEAN)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Audit a model repo's card, licence, lineage, memory claims and promises."""


def fail(message: str) -> typer.Exit:
    """Print a one-line error and return the exit to raise.

    Messages quote repo-supplied values; :func:`one_line` guarantees that none of them
    can add a line (a forged ``::error::`` workflow command) or a terminal escape.
    """
    from cardaudit.safe_text import one_line

    typer.echo(f"cardaudit: error: {one_line(message)}", err=True)
    return typer.Exit(EXIT_ERROR)


def _write_formats(report, formats: list[str], output_dir: Path, options: dict) -> None:
    """Write every format; one that fails to render costs only its own file (exit 2)."""
    from cardaudit.reporters import output_name, render

    failed = []
    for name in formats:
        try:
            text = render(report, name, color=False, **options)
        except Exception as exc:  # a reporter's failure must not lose the other formats
            failed.append(f"{name}: {exc}")
            continue
        _write(output_dir / output_name(name), text)
    if failed:
        raise fail("could not write " + "; ".join(failed) + " (the other formats were written)")


def _use_color(output: Path | None) -> bool:
    if output is not None or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def _width() -> int:
    try:
        return max(60, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return 100


def default_format(to_stdout: bool) -> str:
    """Tables for a person at a terminal; one line per finding for a pipe or a file."""
    return "text" if to_stdout and sys.stdout.isatty() else "concise"


def _formats(values: list[str] | None, default: str = "text") -> list[str]:
    """``["json,sarif", "html"]`` → ``["json", "sarif", "html"]`` (order kept, no repeats)."""
    formats: list[str] = []
    for value in values or [default]:
        for part in value.split(","):
            name = part.strip().lower()
            if name and name not in formats:
                formats.append(name)
    return formats or [default]


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {path}: {exc.strerror or exc}") from exc


@app.command(epilog=EXAMPLES, cls=PlainCoercionCommand)
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
            help="The model's code repo: a directory or git checkout, an https:// git URL (URL#REV) or a GitHub org/name.",
        ),
    ] = None,
    base: Annotated[
        list[str] | None,
        typer.Option(
            "--base",
            help="A base model: a directory or a Hub repo id (overrides the card); repeat it "
            "for each parent of a merge.",
        ),
    ] = None,
    output_format: Annotated[
        list[str] | None,
        typer.Option(
            "--format",
            "-f",
            help="text, concise, github, json, sarif, markdown, html, spdx, cyclonedx, badge, "
            "shields (repeatable or comma-separated; several need --output-dir). Default: text "
            "on a terminal, concise (one finding per line) otherwise.",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to FILE.")
    ] = None,
    repo_config: Annotated[
        bool,
        typer.Option(
            "--repo-config/--no-repo-config",
            help="Apply the audited repo's own .cardaudit.toml / [tool.cardaudit] (selection, "
            "severities, waivers). Turn off to review a third party's model on your terms.",
        ),
    ] = True,
    kv_batch: Annotated[
        int,
        typer.Option(
            "--kv-batch",
            min=1,
            help="Batch size the KV cache is shown for at the stated context, beside batch 1.",
        ),
    ] = 8,
    kv_dtype: Annotated[
        str,
        typer.Option(
            "--kv-dtype",
            help="Dtype the KV cache is served in: auto (FP8 when the config quantizes the "
            "cache, else FP16 for a float16 model, else BF16), bf16, fp16, fp32, fp8, "
            "fp8_e4m3, fp8_e5m2.",
        ),
    ] = "auto",
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=1,
            help="Seconds the audit may spend on Hub requests in all; past it, it ends "
            "with a one-line error (each request is also limited, see CARDAUDIT_TIMEOUT).",
        ),
    ] = 300.0,
    output_dir: Annotated[
        Path | None,
        typer.Option("--output-dir", help="Write one file per format into DIR (created)."),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 on findings at or above: error, warning, info, never "
            "(default: the config's fail-on, else error).",
        ),
    ] = None,
    select: Annotated[
        list[str] | None,
        typer.Option(
            "--select", help="Only these rule ids or prefixes (repeatable, comma-separated)."
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", help="Skip these rule ids or prefixes.")
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="Config file: .cardaudit.toml, or pyproject.toml with a tool.cardaudit table "
            "(default: the audited repo's, else the working directory's).",
        ),
    ] = None,
    show_suppressed: Annotated[
        bool, typer.Option("--show-suppressed", help="Also list findings hidden by waivers.")
    ] = False,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="Store this audit in the tracking store and compare it with the previous one.",
        ),
    ] = False,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Tracking store URL or SQLite path (default: $CARDAUDIT_DB)."),
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
    from cardaudit.config import find_config
    from cardaudit.extract import FactOptions
    from cardaudit.gc_pause import gc_paused
    from cardaudit.pipeline import audit_evidence
    from cardaudit.policy import policy_from, split_patterns, validate_patterns
    from cardaudit.reporters import REPORTERS, render
    from cardaudit.rules import load_rules
    from cardaudit.sources import AuditRequest, acquire

    formats = _formats(output_format, default_format(output is None and output_dir is None))
    unknown = [name for name in formats if name not in REPORTERS]
    if unknown:
        raise fail(f"unknown --format {unknown[0]!r}; choose from {', '.join(REPORTERS)}")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise fail(f"unknown --fail-on {fail_on!r}; choose from {', '.join(FAIL_ON)}")
    if len(formats) > 1 and output_dir is None:
        raise fail("several formats need --output-dir DIR (one file per format)")
    if output is not None and output_dir is not None:
        raise fail("use either --output FILE or --output-dir DIR, not both")
    from cardaudit.extract.memory import KV_DTYPES

    if kv_dtype.lower() != "auto" and kv_dtype.lower() not in KV_DTYPES:
        raise fail(f"unknown --kv-dtype {kv_dtype!r}; choose from auto, {', '.join(KV_DTYPES)}")
    try:
        catalogue = load_rules()
        to_stdout = output is None and output_dir is None
        request = AuditRequest(
            target=target,
            code=code,
            base=tuple(base or ()),
            revision=revision,
            base_depth=base_depth,
            code_discovery=code_discovery,
            # Silent when asked, and when a machine-readable report goes to stdout.
            progress=not quiet and not (to_stdout and formats[0] not in ("text", "concise")),
            timeout=timeout,
        )
        fact_options = FactOptions(kv_batch=kv_batch, kv_dtype=kv_dtype)
        # One bounded audit: what it builds is freed by reference counting, and pausing the
        # cyclic collector saves its repeated scans of a growing heap (~4% of a long card).
        with gc_paused():
            evidence = acquire(request)
            config = find_config(evidence, config_file, trust_repo=repo_config)
            policy = policy_from(
                config,
                select=split_patterns(select),
                ignore=split_patterns(ignore),
                fail_on=fail_on,
            )
            validate_patterns(policy.select + policy.ignore, catalogue)
            unknown_ids = sorted(set(policy.severity) - set(catalogue))
            if unknown_ids:
                raise fail(f"severity override for unknown rule {unknown_ids[0]!r}")
            if record:
                from cardaudit.cli_track import audit_recorded

                report = audit_recorded(evidence, policy, db, fact_options)
            else:
                report = audit_evidence(evidence, policy, fact_options)
            options = {
                "show_suppressed": show_suppressed,
                "width": _width(),
                "fail_on": policy.fail_on,
            }
            if output_dir is not None:
                try:
                    output_dir.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise fail(f"cannot create {output_dir}: {exc.strerror or exc}") from exc
                _write_formats(report, formats, output_dir, options)
            else:
                text = render(report, formats[0], color=_use_color(output), **options)
                if output is not None:
                    _write(output, text)
                else:
                    sys.stdout.write(text)
    except AuditError as exc:
        raise fail(str(exc)) from exc
    if output is not None or output_dir is not None:
        from cardaudit.outcome import outcome_line
        from cardaudit.reporters import output_name

        # Reports went to files: say which, and the outcome, on stderr (stdout stays clean).
        for name in formats:
            typer.echo(f"cardaudit: wrote {output or output_dir / output_name(name)}", err=True)
        typer.echo(f"cardaudit: {outcome_line(report, policy)}", err=True)
    raise typer.Exit(EXIT_FINDINGS if policy.fails(report) else EXIT_CLEAN)


@app.command(cls=PlainCoercionCommand)
def rules(
    rule_id: Annotated[str | None, typer.Argument(help="Explain one rule, e.g. LIC001.")] = None,
    output_format: Annotated[
        str,
        typer.Option("--format", "-f", help="text, or json (every field of each rule, for tools)."),
    ] = "text",
) -> None:
    """List every rule, or explain one."""
    from cardaudit.reporters.rules import (
        render_rule,
        render_rule_lines,
        render_rule_list,
        rules_json,
    )
    from cardaudit.rules import load_rules

    if output_format not in ("text", "json"):
        raise fail(f"unknown --format {output_format!r}; choose from text, json")
    try:
        catalogue = load_rules()
    except AuditError as exc:
        raise fail(str(exc)) from exc
    selected = list(catalogue.values())
    if rule_id is not None:
        rule = catalogue.get(rule_id.upper())
        if rule is None:
            raise fail(f"unknown rule {rule_id!r} (see `cardaudit rules`)")
        selected = [rule]
    if output_format == "json":
        sys.stdout.write(rules_json(selected, single=rule_id is not None))
    elif rule_id is None and not sys.stdout.isatty():  # a table only for a person
        sys.stdout.write(render_rule_lines(catalogue))
    elif rule_id is None:
        sys.stdout.write(render_rule_list(catalogue, color=_use_color(None), width=_width()))
    else:
        sys.stdout.write(render_rule(selected[0], color=_use_color(None), width=_width()))


from cardaudit.cli_serve import register as _register_serve  # noqa: E402
from cardaudit.cli_track import register as _register_tracking  # noqa: E402

_register_tracking(app)
_register_serve(app)


def main() -> None:
    """Console-script entry point; an unexpected crash is one line unless CARDAUDIT_DEBUG is set."""
    from cardaudit import regex_cache

    regex_cache.install()  # patterns compiled by earlier runs (this process only)
    try:
        app()
    except Exception as exc:  # a bug: say so plainly instead of dumping a traceback
        if os.environ.get("CARDAUDIT_DEBUG"):
            raise
        from cardaudit.safe_text import one_line

        typer.echo(
            f"cardaudit: internal error: {type(exc).__name__}: {one_line(str(exc))} "
            "(set CARDAUDIT_DEBUG=1 for the traceback and please report it)",
            err=True,
        )
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":  # pragma: no cover
    main()
