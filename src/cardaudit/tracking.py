"""Audits that go through the tracking store: compare with the previous one, then record.

``audit_and_record`` is what ``cardaudit audit --record`` and ``cardaudit track run`` do for
one model: acquire the evidence, attach the previous stored audit (so LIC050 can compare
licences), run the checks, and commit the audit in its own transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import datetime

from cardaudit.errors import AuditError
from cardaudit.extract import FactOptions
from cardaudit.model import Evidence, Report
from cardaudit.policy import Policy
from cardaudit.sources import AuditRequest
from cardaudit.store import Store, TrackedTarget, target_key


@dataclass(frozen=True)
class Recorded:
    """One audit written to the store, and the policy it was judged by."""

    report: Report
    audit_id: int
    previous_id: int | None
    policy: Policy


@dataclass(frozen=True)
class RunResult:
    """The outcome of re-auditing one tracked target."""

    tracked: TrackedTarget
    recorded: Recorded | None = None
    error: str | None = None


def record_evidence(
    store: Store,
    evidence: Evidence,
    policy: Policy,
    audited_at: datetime | None = None,
    options: FactOptions | None = None,
) -> Recorded:
    """Audit acquired ``evidence`` against its previous stored audit and store the result,
    with what it saw delivered, stamped by the audit clock (``CARDAUDIT_NOW`` when set: the
    same "now" that dates the promises' ages)."""
    from cardaudit.clock import audit_now
    from cardaudit.extract.promise_delivery import delivery_evidence
    from cardaudit.pipeline import audit_evidence

    moment = audited_at or audit_now()
    previous = store.latest(target_key(evidence.target), content=False)  # its summary row
    if previous is not None:
        evidence = replace(evidence, previous=previous.as_prior())
    report = audit_evidence(evidence, policy, options)
    audit_id = store.record(report, moment, delivery_evidence(evidence))
    return Recorded(report, audit_id, previous.id if previous else None, policy)


def audit_and_record(
    store: Store,
    request: AuditRequest,
    policy: Policy | None = None,
    audited_at: datetime | None = None,
    fail_on: str | None = None,
) -> Recorded:
    """Acquire ``request``, audit it under ``policy`` (default: the repo's own config, as
    ``cardaudit audit`` does) against the previous stored audit, and store the result."""
    from cardaudit.sources import acquire

    evidence = acquire(request)
    if policy is None:
        from cardaudit.config import find_config
        from cardaudit.policy import policy_from

        policy = policy_from(find_config(evidence, None), fail_on=fail_on)
    return record_evidence(store, evidence, policy, audited_at)


def request_for(tracked: TrackedTarget) -> AuditRequest:
    return AuditRequest(target=tracked.target, code=tracked.code, base=tracked.base)


def run_tracked(
    store: Store,
    targets: Sequence[TrackedTarget],
    jobs: int = 4,
    on_result: Callable[[RunResult], None] | None = None,
    fail_on: str | None = None,
) -> list[RunResult]:
    """Re-audit ``targets`` with at most ``jobs`` at a time; each audit commits on its own,
    under its repo's own config (waivers, severities) as ``cardaudit audit`` would.

    A target that cannot be audited is reported, not fatal: the others still run.
    """
    from cardaudit.checks.registry import registered_checks
    from cardaudit.rules import load_rules

    load_rules(), registered_checks()  # import once, before the threads race for it

    def one(tracked: TrackedTarget) -> RunResult:
        try:
            recorded = audit_and_record(store, request_for(tracked), fail_on=fail_on)
            return RunResult(tracked, recorded=recorded)
        except AuditError as exc:
            return RunResult(tracked, error=str(exc))
        except Exception as exc:  # a bug auditing one model must not stop the others
            return RunResult(tracked, error=f"internal error: {type(exc).__name__}: {exc}")

    results: list[RunResult] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="track") as pool:
        futures = [pool.submit(one, tracked) for tracked in targets]
        for future in as_completed(futures):
            result = future.result()
            results.append(result)
            if on_result is not None:
                on_result(result)
    order = {tracked.key: index for index, tracked in enumerate(targets)}
    return sorted(results, key=lambda result: order[result.tracked.key])
