"""The Starlette app: badges, dashboard, model pages, JSON, and token-protected writes.

Every page is a Jinja2 template with autoescaping, and every value printed passes through
:func:`~cardaudit.serve.targets.visible` first (bidi and invisible characters shown), so card
text can neither inject markup nor reorder what a reader sees. The Content-Security-Policy
forbids every script; the HTML report of an audit (:func:`cardaudit.reporters.html.render`,
whose stylesheet is inline) is served on its own URL and shown in a sandboxed frame.
"""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cardaudit.errors import StoreError
from cardaudit.serve import views
from cardaudit.serve.badge_route import badge_endpoint
from cardaudit.serve.service import Service
from cardaudit.serve.targets import slug, visible
from cardaudit.serve.writes import write_endpoints

HERE = Path(__file__).parent
PAGE_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; frame-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: The audit report keeps its inline stylesheet (it is also a standalone file); no script.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'self'"
)


class SecurityHeaders:
    """Adds CSP, nosniff and a referrer policy to every response that has none."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", PAGE_CSP.encode()))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"no-referrer"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


def _finalize(value: Any) -> Any:
    """Every printed string through :func:`visible` (markup the templates built — macros —
    is theirs, already escaped, and passes as it is)."""
    if isinstance(value, Markup):
        return value
    return visible(value) if isinstance(value, str) else value


def templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["age"] = views.age
    env.filters["day"] = lambda moment: moment.strftime("%Y-%m-%d") if moment else "-"
    env.filters["when"] = lambda moment: moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "-"
    return env


def create_app(service: Service) -> Starlette:
    """The web app over ``service`` (its store, queue and scheduler)."""
    env = templates()

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(name).render(now=datetime.now(UTC), **context)
        return HTMLResponse(html, status_code=status)

    def store_failure(request: Request, exc: Exception) -> Response:
        message = str(exc) if isinstance(exc, StoreError) else f"the store failed: {exc}"
        message = message.splitlines()[0] if message else "the store failed"
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=503)
        return page("error.html", 503, title="Store unavailable", message=message)

    def guarded(handler):  # type: ignore[no-untyped-def]
        """Run ``handler`` (a plain function in the thread pool: the store is synchronous)
        and turn a store that fails into one clear 503 message."""

        async def run(request: Request) -> Response:
            from sqlalchemy.exc import SQLAlchemyError
            from starlette.concurrency import run_in_threadpool

            try:
                await run_in_threadpool(service.check_store)
                if inspect.iscoroutinefunction(handler):
                    return await handler(request)
                return await run_in_threadpool(handler, request)
            except (StoreError, SQLAlchemyError) as exc:
                return store_failure(request, exc)

        return run

    badge = badge_endpoint(service)
    add_tracked, remove_tracked = write_endpoints(service)

    # ------------------------------------------------------------------ dashboard

    def dashboard_data(request: Request) -> tuple[list[views.DashboardRow], dict]:
        rows = views.dashboard_rows(service)
        query = request.query_params
        chosen = {
            "licence": query.get("licence", ""),
            "verdict": query.get("verdict", ""),
            "org": query.get("org", ""),
            "sort": query.get("sort", "target"),
            "order": "desc" if query.get("order") == "desc" else "asc",
        }
        shown = views.filter_rows(
            rows, licence=chosen["licence"], verdict=chosen["verdict"], org=chosen["org"]
        )
        shown = views.sort_rows(shown, chosen["sort"], chosen["order"] == "desc")
        options = {
            "licences": sorted({row.licence for row in rows}),
            "verdicts": sorted({row.verdict_group for row in rows}, key=views.VERDICT_ORDER.get),
            "orgs": sorted({row.org for row in rows}),
        }
        return shown, {"chosen": chosen, "options": options, "total": len(rows)}

    def dashboard(request: Request) -> Response:
        rows, context = dashboard_data(request)
        return page("dashboard.html", rows=rows, sorts=views.SORTS, **context)

    def dashboard_json(request: Request) -> Response:
        rows, context = dashboard_data(request)
        return JSONResponse(
            {"total": context["total"], "models": [views.row_to_json(row) for row in rows]}
        )

    # ------------------------------------------------------------------ model pages

    def target_of(request: Request) -> tuple[str, Any] | None:
        wanted = f"{request.path_params['org']}/{request.path_params['name']}"
        return views.find_target(service, wanted)

    def not_found(request: Request) -> Response:
        name = f"{request.path_params['org']}/{request.path_params['name']}"
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": f"no stored audit of {name}"}, status_code=404)
        return page(
            "error.html",
            404,
            title="Not tracked",
            message=f"No stored audit of {name}. Badges audit Hub repos on demand; "
            "tracking needs CARDAUDIT_SERVE_TOKEN (see docs/serve.md).",
        )

    def _int(value: str | None) -> int | None:
        return int(value) if value and value.isdigit() else None

    def model(request: Request) -> Response:
        found = target_of(request)
        if found is None:
            return not_found(request)
        key, tracked = found
        query = request.query_params
        data = views.model_page(
            service, key, tracked, _int(query.get("from")), _int(query.get("to"))
        )
        if not data.audits:
            if tracked is None:
                return not_found(request)
            status = service.status.get(key)
            return page(
                "error.html",
                title=f"{slug(key)}: not audited yet",
                message="Tracked, not audited yet: the next refresh audits it"
                + (f" (last attempt: {status.outcome}, {status.detail})." if status else "."),
            )
        return page("model.html", model=data, base_url=str(request.base_url).rstrip("/"))

    def report(request: Request) -> Response:
        from cardaudit.reporters.from_json import report_from_json
        from cardaudit.reporters.html import render
        from cardaudit.serve.targets import visible_data
        from cardaudit.store.queries import audit_report, latest_reports

        found = target_of(request)
        if found is None:
            return not_found(request)
        key = found[0]
        wanted = _int(request.query_params.get("audit"))
        stored = audit_report(service.store, wanted) if wanted else None
        if stored is None or stored[0].target_key != key:
            stored = latest_reports(service.store, [key]).get(key)
        if stored is None:
            return not_found(request)
        html = render(report_from_json(visible_data(stored[1])))
        return HTMLResponse(html, headers={"content-security-policy": REPORT_CSP})

    def model_json(request: Request) -> Response:
        from cardaudit.ledger import ledger_of
        from cardaudit.reporters.ledger import ledger_to_json
        from cardaudit.store.queries import latest_reports

        found = target_of(request)
        if found is None:
            return not_found(request)
        key = found[0]
        stored = latest_reports(service.store, [key]).get(key)
        if stored is None:
            return not_found(request)
        record, data = stored
        return JSONResponse(
            {
                "target": slug(key),
                "audit": {"id": record.id, "audited_at": record.audited_at.isoformat()},
                "refresh": views.status_to_json(service.status.get(key)),
                "report": data,
                "ledger": ledger_to_json(ledger_of(service.store, key)),
            }
        )

    def history_json(request: Request) -> Response:
        from cardaudit.ledger import promise_ledger
        from cardaudit.reporters.timeline import history_to_json
        from cardaudit.timeline import build_history

        found = target_of(request)
        if found is None:
            return not_found(request)
        audits = service.store.audits(found[0])
        if not audits:
            return not_found(request)
        timeline = build_history(found[0], audits)
        return JSONResponse(history_to_json(timeline, promise_ledger(audits)))

    def diff_json(request: Request) -> Response:
        from cardaudit.reporters.timeline import diff_to_json

        found = target_of(request)
        if found is None:
            return not_found(request)
        query = request.query_params
        data = views.model_page(
            service, found[0], found[1], _int(query.get("from")), _int(query.get("to"))
        )
        if data.diff is None:
            return JSONResponse({"error": "two stored audits are needed to diff"}, 404)
        return JSONResponse(diff_to_json(data.diff))

    def ledger(request: Request) -> Response:
        from cardaudit.ledger import ledger_of
        from cardaudit.reporters.ledger import ledger_to_json, render_csv, render_markdown

        found = target_of(request)
        if found is None:
            return not_found(request)
        entries = ledger_of(service.store, found[0])
        wanted = request.query_params.get("format", "json")
        if wanted == "csv":
            return PlainTextResponse(render_csv(entries), media_type="text/csv")
        if wanted == "markdown":
            return PlainTextResponse(
                render_markdown(slug(found[0]), entries), media_type="text/markdown"
            )
        return JSONResponse(ledger_to_json(entries))

    def health(_request: Request) -> Response:
        return JSONResponse({"store": service.store.url, "queued": service.queue.size()})

    routes = [
        Route("/", guarded(dashboard)),
        Route("/api/dashboard", guarded(dashboard_json)),
        Route("/badge/{org}/{file}", badge),
        Route("/models/{org}/{name}", guarded(model)),
        Route("/models/{org}/{name}/report", guarded(report)),
        Route("/api/models/{org}/{name}", guarded(model_json)),
        Route("/api/models/{org}/{name}/history", guarded(history_json)),
        Route("/api/models/{org}/{name}/diff", guarded(diff_json)),
        Route("/api/models/{org}/{name}/ledger", guarded(ledger)),
        Route("/api/tracked", guarded(add_tracked), methods=["POST"]),
        Route("/api/tracked/{org}/{name}", guarded(remove_tracked), methods=["DELETE"]),
        Route("/healthz", guarded(health)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.service = service
    return SecurityHeaders(app)  # type: ignore[return-value]
