"""Token-protected writes: track and untrack Hub models over HTTP (``CARDAUDIT_SERVE_TOKEN``).

Only Hub ids are accepted (a code repo as an https:// URL, a base as a Hub id): nothing over
HTTP can make the server read a local path.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from cardaudit.serve.service import Service
from cardaudit.serve.targets import is_hub_id


def write_endpoints(
    service: Service,
) -> tuple[Callable[[Request], Awaitable[Response]], Callable[[Request], Response]]:
    """(add, remove) handlers over ``service``."""

    def authorised(request: Request) -> Response | None:
        token = service.settings.token
        if not token:
            return JSONResponse(
                {"error": "writes are disabled: start serve with CARDAUDIT_SERVE_TOKEN set"},
                status_code=403,
            )
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.encode(), token.encode()):
            return JSONResponse(
                {"error": "a valid token is needed (Authorization: Bearer …)"},
                status_code=401,
                headers={"www-authenticate": "Bearer"},
            )
        return None

    async def add_tracked(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        refused = authorised(request)
        if refused is not None:
            return refused
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return JSONResponse({"error": "the body must be JSON"}, status_code=400)
        return await run_in_threadpool(track, body)

    def track(body: Any) -> Response:
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        target = str(body.get("target") or "").strip().strip("/")
        code, base = body.get("code"), body.get("base")
        if not is_hub_id(target):
            return JSONResponse({"error": "target must be a Hub id like org/name"}, 400)
        if code is not None and not (isinstance(code, str) and code.startswith("https://")):
            return JSONResponse({"error": "code must be an https:// git URL"}, 400)
        if base is not None and not (isinstance(base, str) and is_hub_id(base)):
            return JSONResponse({"error": "base must be a Hub id like org/name"}, 400)
        key = f"hub:{target}"
        added = service.store.track(key, target, code, base)
        tracked = next(t for t in service.store.tracked() if t.key == key)
        queued = service.refresh_one(tracked)
        return JSONResponse(
            {"target": target, "added": added, "audit": queued},
            status_code=201 if added else 200,
        )

    def remove_tracked(request: Request) -> Response:
        refused = authorised(request)
        if refused is not None:
            return refused
        target = f"{request.path_params['org']}/{request.path_params['name']}"
        if not is_hub_id(target):
            return JSONResponse({"error": "target must be a Hub id like org/name"}, 400)
        if not service.store.untrack(f"hub:{target}"):
            return JSONResponse({"error": f"{target} is not tracked"}, status_code=404)
        return JSONResponse({"target": target, "removed": True})

    return add_tracked, remove_tracked
