"""``cardaudit serve``: the command only; the web app (``cardaudit.serve``) and its
dependencies (the ``serve`` extra) are imported when it runs, never by ``--help``."""

from __future__ import annotations

import os
import re
from typing import Annotated

import typer

from cardaudit.errors import AuditError, UsageError

TOKEN_VAR = "CARDAUDIT_SERVE_TOKEN"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """``"24h"`` → 86400.0; ``s``, ``m``, ``h``, ``d`` or plain seconds (at least 60 s)."""
    match = _DURATION.match(text)
    if not match:
        raise UsageError(f"--refresh {text!r}: give a duration like 30m, 24h or 7d")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds < 60:
        raise UsageError(f"--refresh {text!r} is under a minute")
    return seconds


def serve(
    db: Annotated[
        str | None,
        typer.Option("--db", help="Tracking store URL or SQLite path (default: $CARDAUDIT_DB)."),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8000,
    refresh: Annotated[
        str, typer.Option("--refresh", help="Re-audit tracked models this often (30m, 24h, 7d).")
    ] = "24h",
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, max=32, help="Audits at once.")] = 2,
) -> None:
    """Serve live badges (/badge/ORG/NAME.svg|.json) and the tracking dashboard on the store.

    Writes (POST /api/tracked, DELETE /api/tracked/ORG/NAME) need $CARDAUDIT_SERVE_TOKEN;
    everything else is read-only. See docs/serve.md.
    """
    from cardaudit.cli import fail

    try:
        seconds = parse_duration(refresh)
        import uvicorn

        from cardaudit.serve.app import create_app
        from cardaudit.serve.service import ServeSettings, Service
    except ModuleNotFoundError as exc:
        raise fail(f"cardaudit serve needs {exc.name}: pip install 'cardaudit[serve]'") from exc
    except AuditError as exc:
        raise fail(str(exc)) from exc
    settings = ServeSettings(
        db=db, refresh_seconds=seconds, jobs=jobs, token=os.environ.get(TOKEN_VAR) or None
    )
    try:
        service = Service(settings)
    except AuditError as exc:
        raise fail(str(exc)) from exc
    typer.echo(
        f"cardaudit serve: store {service.store.url}; http://{host}:{port}/ "
        f"(refresh every {refresh}, {jobs} audit(s) at once; writes "
        f"{'need the token' if settings.token else f'disabled: {TOKEN_VAR} is not set'})",
        err=True,
    )
    service.start_scheduler()
    try:
        uvicorn.run(create_app(service), host=host, port=port, log_level="warning")
    finally:
        service.close()


def register(app: typer.Typer) -> None:
    from cardaudit.cli_coercion import PlainCoercionCommand

    app.command("serve", cls=PlainCoercionCommand)(serve)
