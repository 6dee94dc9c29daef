"""A thin layer over huggingface_hub: endpoint, token, cache, retries and error translation.

Retries are tenacity's loop (:func:`retry_policy`) with the Hub's Retry-After as the wait.

Every library error is translated here into a one-line :class:`SourceError` (the CLI prints
it and exits 2). The token is passed to the library and never put in any message.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from cardaudit.errors import AuditError, SourceError
from cardaudit.sources.hub_cache import CacheMiss, offline_mode
from cardaudit.sources.hub_http import DEFAULT_AUDIT_TIMEOUT

T = TypeVar("T")

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Attempts per request (the first try included) on 429, 5xx, timeouts and refused connections.
ATTEMPTS = 4
#: First backoff delay in seconds (doubled on each retry) when no Retry-After is sent.
BACKOFF_SECONDS = 1.0
#: A Retry-After longer than this is not waited for: the audit fails with a clear message.
MAX_WAIT_SECONDS = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def request_timeout() -> float:
    """Seconds to wait for the Hub to answer (``CARDAUDIT_TIMEOUT``, default 20)."""
    try:
        return max(0.05, float(os.environ.get("CARDAUDIT_TIMEOUT", "20")))
    except ValueError:
        return 20.0


def hub_endpoint() -> str:
    """``HF_ENDPOINT`` read now (huggingface_hub itself reads it only once, at import)."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def hub_cache_dir() -> Path:
    """The huggingface_hub cache: ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else the default."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def user_token() -> str | None:
    """The user's token: ``HF_TOKEN`` or the one saved by ``hf auth login``."""
    from huggingface_hub import get_token

    try:
        return get_token()
    except Exception:  # an unreadable token file means "no token"
        return None


def _mro_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def retry_after(exc: BaseException) -> float | None:
    """Seconds asked for by a Retry-After header (delta-seconds or HTTP date), if any.

    Read here rather than by huggingface_hub's own ``http_backoff``: that wraps raw requests
    (these are ``HfApi`` calls) and reads delta-seconds only, not the HTTP-date form."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def is_transient(exc: BaseException) -> bool:
    """429, 5xx, timeouts and network failures are worth retrying."""
    if _status(exc) in RETRY_STATUSES:
        return True
    names = _mro_names(exc)
    return bool(names & {"TimeoutException", "TransportError", "NetworkError"}) or isinstance(
        exc, TimeoutError | ConnectionError
    )


def _worth_retrying(exc: BaseException) -> bool:
    if isinstance(exc, AuditError) or not is_transient(exc):
        return False
    wait = retry_after(exc)
    return wait is None or wait <= MAX_WAIT_SECONDS  # a long Retry-After: fail, do not wait


def _wait_seconds(state) -> float:  # type: ignore[no-untyped-def]
    """Retry-After when the Hub sends one, else BACKOFF_SECONDS doubled per attempt."""
    asked = retry_after(state.outcome.exception()) if state.outcome is not None else None
    if asked is not None:
        return asked
    return BACKOFF_SECONDS * 2 ** (state.attempt_number - 1)


def retry_policy(attempts: int):  # type: ignore[no-untyped-def]
    """tenacity's retry loop: ``attempts`` tries in all, on 429 / 5xx / timeouts / network
    failures, waiting as :func:`_wait_seconds` says; the last error is re-raised as is."""
    from tenacity import Retrying, retry_if_exception, stop_after_attempt

    return Retrying(
        stop=stop_after_attempt(attempts),
        wait=_wait_seconds,
        retry=retry_if_exception(_worth_retrying),
        sleep=lambda seconds: _sleep(seconds),  # looked up at call time (tests replace it)
        reraise=True,
    )


class HubRefusal(SourceError):
    """The Hub's definitive answer that a repo or revision cannot be read (not found,
    gated, private): kept by online audits so an offline audit can give the same answer."""


@dataclass
class HubClient:
    """Calls into huggingface_hub for one audit, with retries and translated errors."""

    endpoint: str
    token: str | None
    cache_dir: Path
    timeout: float
    #: ``HF_HUB_OFFLINE``: every answer comes from the caches; nothing is requested.
    offline: bool = False

    @classmethod
    def from_environment(cls, audit_timeout: float | None = DEFAULT_AUDIT_TIMEOUT) -> HubClient:
        """The client for one audit; its Hub traffic ends after ``audit_timeout`` seconds
        (``--timeout``) and each request after a multiple of the read timeout
        (:mod:`cardaudit.sources.hub_http`)."""
        from huggingface_hub.utils import disable_progress_bars, logging

        from cardaudit.sources.hub_http import HttpGuard, install

        disable_progress_bars()  # cardaudit draws its own progress display on stderr
        logging.set_verbosity_error()  # retries are reported by the final error, not warnings
        client = cls(
            hub_endpoint(), user_token(), hub_cache_dir(), request_timeout(), offline_mode()
        )
        install(HttpGuard(client.endpoint, client.timeout, audit_timeout))
        return client

    @property
    def api(self):
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.endpoint, token=self.token or False)

    def repo_url(self, repo_id: str) -> str:
        return f"{self.endpoint}/{repo_id}"

    # ------------------------------------------------------------------ retries + errors

    def call(
        self,
        what: str,
        repo_id: str,
        fn: Callable[[], T],
        revision: str | None = None,
        *,
        attempts: int | None = None,
    ) -> T:
        """Run ``fn`` with bounded retries; translate any failure into a SourceError.

        ``attempts=1`` for calls the library already retries itself (file downloads).
        Offline, nothing is called: whatever was not answered from the caches is missing.
        """
        if self.offline:
            raise CacheMiss(f"what is needed to {what} for {repo_id}")
        retrying = retry_policy(attempts or ATTEMPTS)
        try:
            return retrying(fn)
        except AuditError:
            raise
        except Exception as exc:
            wait = retry_after(exc)
            if is_transient(exc) and wait is not None and wait > MAX_WAIT_SECONDS:
                raise SourceError(
                    f"the Hub is rate-limiting requests for {repo_id} "
                    f"(asked to retry after {int(wait)} s); try again later"
                ) from None
            attempt = retrying.statistics.get("attempt_number", 1)
            raise self.translate(exc, what, repo_id, revision, attempt) from None

    def translate(
        self, exc: BaseException, what: str, repo_id: str, revision: str | None, attempts: int = 1
    ) -> SourceError:
        """A one-line message for a library error (never containing the token)."""
        from huggingface_hub import errors

        url = self.repo_url(repo_id)
        login = "set HF_TOKEN or run `hf auth login`"
        if isinstance(exc, errors.GatedRepoError):
            return HubRefusal(
                f"model {repo_id} is gated and "
                + ("your token has not been granted access" if self.token else "no token was sent")
                + f": request access at {url}, then {login}"
            )
        if isinstance(exc, errors.RepositoryNotFoundError):
            if self.token:
                hint = "or it is private and your token cannot read it"
            else:
                hint = f"or it is private and no token was sent: {login}"
            return HubRefusal(f"model repo {repo_id} not found on the Hub ({hint})")
        if isinstance(exc, errors.RevisionNotFoundError):
            return HubRefusal(f"revision {revision!r} not found in model repo {repo_id}")
        if isinstance(exc, errors.OfflineModeIsEnabled):
            return SourceError(
                f"cannot {what} for {repo_id}: HF_HUB_OFFLINE is set (unset it to reach the Hub)"
            )
        status = _status(exc)
        if status == 401 and self.token:
            return SourceError(
                f"the Hub rejected your token (HTTP 401) while trying to {what}: "
                f"check HF_TOKEN or run `hf auth login` again"
            )
        if status in (401, 403):
            return SourceError(f"access to {repo_id} denied (HTTP {status}) while trying to {what}")
        if status is not None:
            tried = f" after {attempts} attempts" if attempts > 1 else ""
            return SourceError(f"the Hub answered HTTP {status}{tried} while trying to {what}")
        names = _mro_names(exc)
        if names & {"TimeoutException"} or isinstance(exc, TimeoutError):
            return SourceError(
                f"the Hub at {self.endpoint} did not answer within {self.timeout:g} s "
                f"({attempts} attempts) while trying to {what}"
            )
        if names & {"TransportError", "NetworkError"} or isinstance(exc, ConnectionError):
            return SourceError(
                f"cannot reach the Hub at {self.endpoint} ({attempts} attempts) "
                f"while trying to {what}: {_short(exc)}"
            )
        if isinstance(exc, errors.LocalEntryNotFoundError):
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, AuditError):  # a deadline or a refused redirect, as said
                return cause if isinstance(cause, SourceError) else SourceError(str(cause))
            if cause is not None and cause is not exc:
                return self.translate(cause, what, repo_id, revision, attempts)
            return SourceError(f"cannot reach the Hub at {self.endpoint} to {what}")
        if isinstance(exc, ValueError | TypeError | KeyError | AttributeError):
            return SourceError(
                f"malformed response from {self.endpoint} while trying to {what}: {_short(exc)}"
            )
        return SourceError(f"cannot {what} for {repo_id}: {_short(exc)}")

    # ------------------------------------------------------------------ calls

    def download(self, repo_id: str, filename: str, revision: str) -> Path | None:
        """A small file into the huggingface_hub cache; None when the repo lacks it.
        Offline: the file from that cache, as huggingface_hub would find it."""
        from huggingface_hub import errors, hf_hub_download

        if self.offline:
            return self.cached_file(repo_id, filename, revision)

        def fetch() -> Path | None:
            try:
                return Path(
                    hf_hub_download(
                        repo_id,
                        filename,
                        revision=revision,
                        cache_dir=self.cache_dir,
                        token=self.token or False,
                        endpoint=self.endpoint,
                        etag_timeout=self.timeout,
                    )
                )
            except errors.RemoteEntryNotFoundError:
                return None

        # hf_hub_download retries 429/5xx/network errors itself (bounded, honouring
        # Retry-After): no second layer of retries here.
        return self.call(f"download {filename}", repo_id, fetch, revision, attempts=1)

    def cached_file(self, repo_id: str, filename: str, revision: str) -> Path | None:
        """``filename`` at commit ``revision`` in the huggingface_hub cache; None when the
        Hub said it does not exist there (the library's ``.no_exist`` marker)."""
        from huggingface_hub import try_to_load_from_cache

        try:
            found = try_to_load_from_cache(
                repo_id, filename, cache_dir=self.cache_dir, revision=revision
            )
        except ValueError:  # a name the library refuses: it cannot be in its cache
            found = None
        if isinstance(found, str):
            return Path(found)
        if found is not None:
            return None
        raise CacheMiss(f"{filename} of {repo_id} at {revision}")

    def read_range(self, repo_id: str, filename: str, revision: str, start: int, end: int) -> bytes:
        """Bytes ``start``..``end`` (inclusive) of a file by HTTP Range, redirects followed."""
        from huggingface_hub import hf_hub_url
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

        if self.offline:
            raise CacheMiss(f"the header of {filename} of {repo_id} at {revision}")
        url = hf_hub_url(repo_id, filename, revision=revision, endpoint=self.endpoint)
        headers = build_hf_headers(token=self.token or False)
        headers["range"] = f"bytes={start}-{end}"

        limit = end - start + 1

        def fetch() -> bytes:
            with get_session().stream(
                "GET", url, headers=headers, timeout=self.timeout
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    hf_raise_for_status(response)
                # A server ignoring Range sends the file from byte 0: skip to ``start``.
                skip = 0 if response.status_code == 206 else start
                chunks: list[bytes] = []
                received = 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    received += len(chunk)
                    if received >= skip + limit:
                        break  # cut off here: never read a weight file to its end
                return b"".join(chunks)[skip : skip + limit]

        return self.call(f"read the header of {filename}", repo_id, fetch, revision)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
