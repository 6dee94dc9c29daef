"""The badge route: ``/badge/{org}/{name}.svg`` and ``.json`` (see docs/serve.md).

A badge is never an error page: whatever goes wrong answers a grey "unknown" badge with the
reason in ``X-Cardaudit-Note``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from cachetools import LRUCache
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from cardaudit.errors import AuditError
from cardaudit.serve import views
from cardaudit.serve.badges import FAIL_ON, Badge, audited_badge, pending_badge, unknown_badge
from cardaudit.serve.service import Service
from cardaudit.serve.targets import LOCAL_ORG, is_hub_id

BADGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors *"
REVISION = re.compile(r"^[\w.\-/]{1,128}$")


def badge_endpoint(service: Service) -> Callable[[Request], Awaitable[Response]]:
    """The badge handler over ``service``."""
    badges_made: LRUCache = LRUCache(maxsize=4096)

    def badge_for(org: str, name: str, rev: str | None, fail_on: str | None) -> Badge:
        """The badge, asking the Hub and the store as needed (run in the thread pool)."""
        if fail_on is not None and fail_on not in FAIL_ON:
            return unknown_badge(f"unknown fail_on {fail_on!r}")
        if rev is not None and not REVISION.match(rev):
            return unknown_badge("invalid revision")
        repo_id = f"{org}/{name}"
        if org == LOCAL_ORG:
            local = service.slug_target(repo_id, lambda: views.find_target(service, repo_id))
            if local is not None and local[0].startswith("local:"):
                stored = service.stored_report(local[0], None)
                if stored is None:
                    return pending_badge("not audited yet")
                audit_id, report = stored
                return audited_badge(report, fail_on, f'"local-{audit_id}-{fail_on}"', 300)
        if not is_hub_id(repo_id):
            return unknown_badge("not a Hub repo id")
        key = f"hub:{repo_id}"
        try:
            resolution = service.resolve(repo_id, rev)
        except AuditError as exc:  # the Hub cannot be reached: the last good audit stands
            stored = service.stored_report(key, None)
            if stored is None:
                return unknown_badge(f"cannot reach the Hub: {exc}")
            audit_id, report = stored
            return audited_badge(report, fail_on, f'"{audit_id}-{fail_on}-stale"', 60)
        if resolution.sha is None:
            return unknown_badge(resolution.refusal or "not found")
        stored = service.stored_report(key, resolution.sha)
        if stored is not None:
            audit_id, report = stored
            etag = f'"{resolution.sha}-{audit_id}-{fail_on or "audited"}"'
            return audited_badge(report, fail_on, etag, 300)
        tracked = next((t for t in service.store.tracked() if t.key == key), None)
        queued = service.request_audit(key, repo_id, resolution.sha, tracked)
        if queued == "full":
            return pending_badge("the audit queue is full; ask again later")
        return pending_badge(f"auditing {resolution.sha[:12]}")

    def cached_badge(org: str, name: str, rev: str | None, fail_on: str | None) -> Badge | None:
        """The badge from memory alone (commit and audit already known), without a thread,
        the store or the Hub: the hot path of a badge that caches keep asking for. None
        when anything is missing (then :func:`badge_for` answers)."""
        if org == LOCAL_ORG or (fail_on is not None and fail_on not in FAIL_ON):
            return None
        repo_id = f"{org}/{name}"
        resolution = service.cached_resolution(repo_id, rev)
        if resolution is None or resolution.sha is None:
            return None
        stored = service.cached_report(f"hub:{repo_id}", resolution.sha)
        if stored is None:
            return None
        audit_id, report = stored
        memo_key = (repo_id, resolution.sha, audit_id, fail_on)
        answer = badges_made.get(memo_key)
        if answer is None:
            etag = f'"{resolution.sha}-{audit_id}-{fail_on or "audited"}"'
            answer = badges_made[memo_key] = audited_badge(report, fail_on, etag, 300)
        return answer

    async def badge(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        org = request.path_params["org"]
        filename = request.path_params["file"]
        stem, dot, extension = filename.rpartition(".")
        if not dot or extension not in ("svg", "json"):
            return PlainTextResponse("badge URLs end in .svg or .json", status_code=404)
        rev = request.query_params.get("rev") or None
        fail_on = request.query_params.get("fail_on") or None
        try:
            answer = cached_badge(org, stem, rev, fail_on)
            if answer is None:
                answer = await run_in_threadpool(badge_for, org, stem, rev, fail_on)
        except Exception as exc:  # a badge is never an error page
            answer = unknown_badge(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        headers = {"content-security-policy": BADGE_CSP}
        if answer.etag:
            headers["etag"] = answer.etag
            if request.headers.get("if-none-match") == answer.etag:
                headers["cache-control"] = f"public, max-age={answer.max_age}"
                return Response(status_code=304, headers=headers)
        headers["cache-control"] = (
            f"public, max-age={answer.max_age}" if answer.max_age else "no-cache"
        )
        headers["x-cardaudit-badge"] = answer.state
        if answer.note:
            note = " ".join(answer.note.split())  # one header line, ASCII
            headers["x-cardaudit-note"] = note.encode("ascii", "replace").decode()[:300]
        if extension == "json":
            return Response(answer.shields_json, media_type="application/json", headers=headers)
        return Response(answer.svg, media_type="image/svg+xml", headers=headers)

    return badge
