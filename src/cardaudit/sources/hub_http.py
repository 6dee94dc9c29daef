"""The HTTP client huggingface_hub uses during an audit: deadlines, redirects, the token.

The Hub (or whatever answers at ``HF_ENDPOINT``) is untrusted input too. The stock client
has no overall deadline (a body drip-fed a byte every few seconds never trips a read
timeout) and follows redirects anywhere. The client installed here
(``huggingface_hub.set_client_factory``) keeps the library's own request hook and adds:

- a deadline per request (:data:`REQUEST_DEADLINE_FACTOR` × the per-read timeout) and per
  audit (``--timeout``), checked before every request and between body chunks; past it the
  audit ends with one line (:class:`DeadlineExceeded`);
- requests only to the endpoint's origin, or, for files (``/resolve/`` answers), to the
  Hub's own file storage (``*.hf.co``, ``*.huggingface.co``, the endpoint's host, or hosts
  named in ``CARDAUDIT_HUB_STORAGE_HOSTS``); an API answer redirecting anywhere else, or a
  file redirected to any other host, is refused;
- the ``Authorization`` header only on requests to the endpoint's origin: the token never
  reaches file storage or any other host.

One guard is active per process (the audit running now); ``track run`` audits in turn.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from cardaudit.errors import SourceError

#: A request may take this many times the per-read timeout in all (headers and body).
REQUEST_DEADLINE_FACTOR = 6
#: Default seconds for a whole audit's Hub traffic (``--timeout``).
DEFAULT_AUDIT_TIMEOUT = 300.0
#: Storage hosts of the real Hub (LFS and Xet file storage): suffixes of the host name.
HUB_STORAGE_SUFFIXES = (".hf.co", ".huggingface.co")
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class DeadlineExceeded(SourceError):
    """A request or the whole audit ran past its deadline."""


class RedirectRefused(SourceError):
    """The Hub sent us to a host we do not follow."""


def _origin(url: Any) -> tuple[str, str, int | None]:
    parts = urlsplit(str(url))
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


@dataclass
class HttpGuard:
    """The limits of one audit's Hub traffic."""

    endpoint: str
    read_timeout: float
    #: Seconds for the whole audit (None: no audit deadline).
    audit_timeout: float | None = DEFAULT_AUDIT_TIMEOUT
    started: float = field(default_factory=time.monotonic)

    @property
    def audit_deadline(self) -> float | None:
        return None if self.audit_timeout is None else self.started + self.audit_timeout

    def storage_host(self, host: str) -> bool:
        """Whether ``host`` is the Hub's own file storage."""
        extra = {
            name.strip().lower()
            for name in os.environ.get("CARDAUDIT_HUB_STORAGE_HOSTS", "").split(",")
            if name.strip()
        }
        own = _origin(self.endpoint)[1]
        return host == own or host in extra or host.endswith(HUB_STORAGE_SUFFIXES)

    def check_time(self, request_deadline: float | None = None, what: str = "") -> None:
        now = time.monotonic()
        deadline = self.audit_deadline
        if deadline is not None and now > deadline:
            raise DeadlineExceeded(
                f"the audit ran past its --timeout of {self.audit_timeout:g} s"
                + (f" while reading {what}" if what else "")
                + " (the Hub answered too slowly)"
            )
        if request_deadline is not None and now > request_deadline:
            raise DeadlineExceeded(
                f"a Hub request took more than {self.request_seconds:g} s"
                + (f" ({what})" if what else "")
                + ": the Hub answered too slowly"
            )

    @property
    def request_seconds(self) -> float:
        return self.read_timeout * REQUEST_DEADLINE_FACTOR

    # ------------------------------------------------------------------ hooks

    def on_request(self, request: Any) -> None:
        """Before every request (redirects included): time, destination, token."""
        self.check_time(what=_what(request.url))
        request.extensions["cardaudit_deadline"] = time.monotonic() + self.request_seconds
        if _origin(request.url) != _origin(self.endpoint):
            host = _origin(request.url)[1]
            if not self.storage_host(host):
                raise RedirectRefused(
                    f"refused a request to {host}: neither the Hub at {self.endpoint} "
                    "nor its file storage"
                )
            request.headers.pop("authorization", None)  # the token stays with the Hub

    def on_response(self, response: Any) -> None:
        """After every response: an API answer never redirects to another origin."""
        if response.status_code not in REDIRECT_STATUSES or "location" not in response.headers:
            return
        source = response.request.url
        target = urljoin(str(source), response.headers["location"])
        if _origin(target) == _origin(source):
            return
        host = _origin(target)[1]
        if _is_file(source) and self.storage_host(host):
            return
        kind = "a file" if _is_file(source) else "an API answer"
        raise RedirectRefused(
            f"the Hub redirected {kind} ({_what(source)}) to {host}, which is not "
            + ("the Hub's file storage" if _is_file(source) else "the Hub")
            + ": not followed"
        )


def _is_file(url: Any) -> bool:
    parts = urlsplit(str(url))
    return "/resolve/" in parts.path or parts.path.startswith("/cdn/")


def _what(url: Any) -> str:
    path = urlsplit(str(url)).path
    return path if len(path) <= 120 else path[:119] + "…"


_LOCK = threading.Lock()
_ACTIVE: HttpGuard | None = None


def active_guard() -> HttpGuard | None:
    return _ACTIVE


def install(guard: HttpGuard) -> None:
    """Make ``guard`` the active one and huggingface_hub's client the guarded client."""
    global _ACTIVE
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils import _http

    with _LOCK:
        already = _ACTIVE is not None
        _ACTIVE = guard
        if not already or _http._GLOBAL_CLIENT_FACTORY is not _guarded_client:
            set_client_factory(_guarded_client)


def _on_request(request: Any) -> None:
    guard = _ACTIVE
    if guard is not None:
        guard.on_request(request)


def _on_response(response: Any) -> None:
    guard = _ACTIVE
    if guard is not None:
        guard.on_response(response)


def _guarded_client():
    import httpx2
    from huggingface_hub.utils._http import hf_request_event_hook

    return httpx2.Client(
        event_hooks={"request": [hf_request_event_hook, _on_request], "response": [_on_response]},
        follow_redirects=True,
        timeout=None,
        transport=_DeadlineTransport(httpx2.HTTPTransport()),
    )


class _DeadlineTransport:
    """Wraps the real transport: a body is read only until the request's deadline."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def handle_request(self, request: Any) -> Any:
        import httpx2

        response = self.inner.handle_request(request)
        deadline = request.extensions.get("cardaudit_deadline")
        response.stream = _DeadlineStream(response.stream, deadline, _what(request.url))
        if not isinstance(response.stream, httpx2.SyncByteStream):  # pragma: no cover
            raise TypeError("unexpected stream type")
        return response

    def close(self) -> None:
        self.inner.close()

    def __enter__(self):
        self.inner.__enter__()
        return self

    def __exit__(self, *args: Any) -> None:
        self.inner.__exit__(*args)


def _stream_base():
    import httpx2

    return httpx2.SyncByteStream


class _DeadlineStream(_stream_base()):  # type: ignore[misc]
    def __init__(self, inner: Any, deadline: float | None, what: str) -> None:
        self.inner = inner
        self.deadline = deadline
        self.what = what

    def __iter__(self):
        for chunk in self.inner:
            guard = _ACTIVE
            if guard is not None:
                guard.check_time(self.deadline, self.what)
            yield chunk

    def close(self) -> None:
        self.inner.close()
