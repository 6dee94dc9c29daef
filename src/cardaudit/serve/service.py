"""The serving side of the store: Hub commit resolution, a bounded audit queue, refresh.

Audits go through :func:`cardaudit.tracking.audit_and_record` (the pipeline, the Hub
transfer budget and the store exactly as ``cardaudit audit --record``), at most ``jobs`` at a
time and at most ``max_pending`` waiting; each is committed as it finishes. Before auditing, a
worker takes the store's per-target claim (:func:`cardaudit.store.queries.claim`) and looks
again for an audit of that commit, so several ``serve`` processes on one store never audit
the same commit twice. Refresh runs on an APScheduler interval job: one ``model_info``
request per tracked Hub repo finds its current commit; only a new commit is re-audited. A
failed refresh (Hub down, rate-limited) is remembered per target and shown, and the last
good audit keeps being served.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cachetools import LRUCache, TTLCache

from cardaudit.errors import AuditError, StoreError
from cardaudit.model import Report
from cardaudit.store import Store, TrackedTarget

log = logging.getLogger("cardaudit.serve")


@dataclass(frozen=True)
class ServeSettings:
    db: str | None = None
    refresh_seconds: float = 24 * 3600
    jobs: int = 2
    #: Audits waiting beyond the running ones; more on-demand requests are turned away.
    max_pending: int = 32
    #: How long a resolved Hub commit (and a "not found") is trusted by badge requests.
    resolve_ttl: float = 300
    token: str | None = None


@dataclass
class RefreshStatus:
    """The last refresh attempt of one target, as pages show it."""

    at: datetime
    outcome: str  # "unchanged", "queued", "audited", "failed", "busy"
    detail: str | None = None


@dataclass
class Resolution:
    sha: str | None
    refusal: str | None = None  # the Hub's definitive "not found / private / gated"


@dataclass
class AuditQueue:
    """A bounded pool of audit workers; one queued or running audit per target key."""

    jobs: int
    max_pending: int
    _pool: ThreadPoolExecutor = field(init=False)
    _keys: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.jobs), thread_name_prefix="audit")

    def submit(self, key: str, work: Callable[[], None]) -> str:
        """ "queued", "already" (queued or running) or "full"."""
        with self._lock:
            if key in self._keys:
                return "already"
            if len(self._keys) >= self.jobs + self.max_pending:
                return "full"
            self._keys.add(key)

        def run() -> None:
            try:
                work()
            finally:
                with self._lock:
                    self._keys.discard(key)

        self._pool.submit(run)
        return "queued"

    def busy(self, key: str) -> bool:
        with self._lock:
            return key in self._keys

    def size(self) -> int:
        with self._lock:
            return len(self._keys)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class Service:
    """What the web app reads and asks for; one per process."""

    def __init__(self, settings: ServeSettings, store: Store | None = None) -> None:
        self.settings = settings
        self.store = store or Store.open(settings.db)
        self.queue = AuditQueue(settings.jobs, settings.max_pending)
        self.status: dict[str, RefreshStatus] = {}
        self._resolved: TTLCache = TTLCache(maxsize=4096, ttl=settings.resolve_ttl)
        #: (target key, revision) → (audit id, Report): the badge's hot path never reads
        #: the store twice for one commit. Dropped when this process records that target.
        self._reports: LRUCache = LRUCache(maxsize=1024)
        #: URL slug → store key, for the badges of local folders (30 s).
        self._slugs: TTLCache = TTLCache(maxsize=4096, ttl=30)
        self._lock = threading.Lock()
        self._scheduler: Any = None

    # ------------------------------------------------------------------ store health

    def check_store(self) -> None:
        """A SQLite store whose file has gone is a clear error, not a new empty database."""
        url = self.store.engine.url
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            path = Path(url.database)
            if not path.exists():
                raise StoreError(f"the store {path} has disappeared (was it deleted or moved?)")

    # ------------------------------------------------------------------ Hub commits

    def resolve(self, repo_id: str, revision: str | None, *, fresh: bool = False) -> Resolution:
        """The commit ``revision`` (default: main) of a Hub repo points at: one request,
        remembered for ``resolve_ttl`` seconds. A refusal (not found, private, gated) is a
        :class:`Resolution` without a sha; a Hub that cannot be reached raises."""
        from cardaudit.sources.hub import HubRef, HubSource
        from cardaudit.sources.hub_client import HubClient, HubRefusal

        cache_key = (repo_id, revision)
        if not fresh:
            with self._lock:
                known = self._resolved.get(cache_key)
            if known is not None:
                return known
        source = HubSource(HubClient.from_environment())
        try:
            found = Resolution(source.resolve(HubRef(repo_id, revision)))
        except HubRefusal as refusal:
            found = Resolution(None, str(refusal))
        with self._lock:
            self._resolved[cache_key] = found
        return found

    def cached_resolution(self, repo_id: str, revision: str | None) -> Resolution | None:
        """The remembered commit of ``repo_id@revision``, or None (nothing is asked)."""
        with self._lock:
            return self._resolved.get((repo_id, revision))

    def cached_report(self, key: str, revision: str) -> tuple[int, Report] | None:
        """The remembered audit of ``key`` at ``revision``, or None (the store is not read)."""
        with self._lock:
            return self._reports.get((key, revision))

    # ------------------------------------------------------------------ stored audits

    def stored_report(self, key: str, revision: str | None) -> tuple[int, Report] | None:
        """The latest stored audit of ``key`` at ``revision`` (None: of any revision)."""
        from cardaudit.reporters.from_json import report_from_json
        from cardaudit.serve.targets import visible_data
        from cardaudit.store.queries import latest_reports

        cache_key = (key, revision)
        with self._lock:
            cached = self._reports.get(cache_key)
        if cached is not None:
            return cached
        found = latest_reports(self.store, [key], revision=revision).get(key)
        if found is None:
            return None
        record, data = found
        result = (record.id, report_from_json(visible_data(data)))
        with self._lock:
            self._reports[cache_key] = result
        return result

    def slug_target(self, wanted: str, find: Callable[[], Any]) -> Any:
        """``find()``'s answer for the slug ``wanted``, remembered for 30 seconds."""
        with self._lock:
            if wanted in self._slugs:
                return self._slugs[wanted]
        found = find()
        with self._lock:
            self._slugs[wanted] = found
        return found

    def forget(self, key: str) -> None:
        with self._lock:
            for cache_key in [k for k in self._reports if k[0] == key]:
                self._reports.pop(cache_key, None)

    # ------------------------------------------------------------------ auditing

    def request_audit(
        self, key: str, target: str, revision: str | None, tracked: TrackedTarget | None = None
    ) -> str:
        """Queue an audit of ``target`` at ``revision``: "queued", "already" or "full"."""
        return self.queue.submit(key, lambda: self._audit(key, target, revision, tracked))

    def _audit(
        self, key: str, target: str, revision: str | None, tracked: TrackedTarget | None
    ) -> None:
        try:
            self._claimed_audit(key, target, revision, tracked)
        except Exception as exc:  # the claim or the store failed: say so on the pages
            log.exception("audit of %s could not run", target)
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.status[key] = RefreshStatus(datetime.now(UTC), "failed", detail)

    def _claimed_audit(
        self, key: str, target: str, revision: str | None, tracked: TrackedTarget | None
    ) -> None:
        from cardaudit.sources import AuditRequest
        from cardaudit.store.queries import claim, latest_reports
        from cardaudit.tracking import audit_and_record

        now = datetime.now(UTC)
        with claim(self.store, key) as won:
            if not won:
                self.status[key] = RefreshStatus(now, "busy", "another process is auditing it")
                return
            if revision is not None and latest_reports(self.store, [key], revision=revision):
                self.status[key] = RefreshStatus(now, "unchanged", revision)
                return  # another process recorded this commit while we waited
            request = AuditRequest(
                target=target,
                code=tracked.code if tracked else None,
                base=tracked.base if tracked else None,
                revision=revision,
            )
            try:
                recorded = audit_and_record(self.store, request)
            except AuditError as exc:
                log.warning("audit of %s failed: %s", target, exc)
                self.status[key] = RefreshStatus(datetime.now(UTC), "failed", str(exc))
                return
            except Exception as exc:  # a bug in one audit must not stop the worker
                log.exception("audit of %s crashed", target)
                self.status[key] = RefreshStatus(
                    datetime.now(UTC), "failed", f"internal error: {type(exc).__name__}"
                )
                return
        self.forget(key)
        self.status[key] = RefreshStatus(
            datetime.now(UTC), "audited", f"audit #{recorded.audit_id}"
        )

    # ------------------------------------------------------------------ refresh

    def refresh_one(self, tracked: TrackedTarget) -> str:
        """Re-audit one tracked target if its Hub commit changed (a local folder: when its
        latest audit is older than the refresh period)."""
        from cardaudit.store.queries import latest_reports

        now = datetime.now(UTC)
        revision = None
        if tracked.key.startswith("hub:"):
            try:
                resolution = self.resolve(tracked.target, None, fresh=True)
            except AuditError as exc:
                self.status[tracked.key] = RefreshStatus(now, "failed", str(exc))
                return "failed"
            if resolution.sha is None:
                self.status[tracked.key] = RefreshStatus(now, "failed", resolution.refusal)
                return "failed"
            revision = resolution.sha
            if latest_reports(self.store, [tracked.key], revision=revision, facts=()):
                self.status[tracked.key] = RefreshStatus(now, "unchanged", revision)
                return "unchanged"
        else:  # a local folder has no commit to compare: re-audit once per refresh period
            latest = latest_reports(self.store, [tracked.key], facts=()).get(tracked.key)
            if latest is not None:
                age = (datetime.now(UTC) - latest[0].audited_at).total_seconds()
                if 0 <= age < self.settings.refresh_seconds * 0.9:
                    self.status[tracked.key] = RefreshStatus(now, "unchanged", None)
                    return "unchanged"
        outcome = self.request_audit(tracked.key, tracked.target, revision, tracked)
        if outcome == "full":
            self.status[tracked.key] = RefreshStatus(now, "failed", "the audit queue is full")
        elif outcome == "queued":
            self.status[tracked.key] = RefreshStatus(now, "queued", revision)
        return outcome

    def refresh_all(self) -> dict[str, str]:
        """One refresh round over every tracked target (the scheduler's job)."""
        try:
            self.check_store()
            targets = self.store.tracked()
        except (AuditError, Exception) as exc:  # the store is gone: say so, keep serving
            log.error("refresh skipped: %s", exc)
            return {}
        return {tracked.key: self.refresh_one(tracked) for tracked in targets}

    def start_scheduler(self) -> None:
        """Refresh now, then every ``refresh_seconds`` (APScheduler; one round at a time)."""
        from apscheduler.schedulers.background import BackgroundScheduler

        scheduler = BackgroundScheduler(timezone="UTC")
        scheduler.add_job(
            self.refresh_all,
            "interval",
            seconds=self.settings.refresh_seconds,
            next_run_time=datetime.now(UTC),
            max_instances=1,
            coalesce=True,
            id="refresh",
        )
        scheduler.start()
        self._scheduler = scheduler

    def close(self) -> None:
        if self._scheduler is not None:
            self._scheduler.shutdown(wait=False)
            self._scheduler = None
        self.queue.shutdown()
        self.store.close()
