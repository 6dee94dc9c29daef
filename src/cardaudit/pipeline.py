"""The pipeline: sources → evidence → extract → checks → findings → policy → report."""

from __future__ import annotations

from cardaudit.checks.registry import NotApplicable, NotChecked, registered_checks
from cardaudit.checks.waivers import EXPIRED_WAIVER_RULE, expired_waiver_hit
from cardaudit.extract import FactOptions, build_facts
from cardaudit.model import CheckRun, Evidence, Facts, Finding, Report
from cardaudit.policy import Policy, apply_waivers, sort_findings, today
from cardaudit.rules import Rule, load_rules
from cardaudit.sources import AuditRequest, acquire


def run_checks(
    evidence: Evidence, facts: Facts, policy: Policy
) -> tuple[tuple[CheckRun, ...], list[Finding]]:
    """Run every selected rule's check; a crashing check is an ``error`` outcome, not a crash."""
    rules = load_rules()
    checks = registered_checks()
    runs: list[CheckRun] = []
    findings: list[Finding] = []
    for rule_id, rule in rules.items():
        if not policy.selected(rule_id) or rule_id not in checks:
            continue
        try:
            hits = list(checks[rule_id](evidence, facts, rule))
        except NotApplicable as reason:
            runs.append(CheckRun(rule_id, "not_applicable", str(reason) or None))
            continue
        except NotChecked as missing:
            runs.append(CheckRun(rule_id, "not_checked", missing.reason, missing.fix))
            continue
        except Exception as exc:  # a bug in one check must not hide the others' findings
            runs.append(CheckRun(rule_id, "error", f"{type(exc).__name__}: {exc}"))
            continue
        runs.append(CheckRun(rule_id, "fail" if hits else "pass"))
        findings += [_finding(rule, policy, hit) for hit in hits]
    return tuple(runs), findings


def _finding(rule: Rule, policy: Policy, hit) -> Finding:
    return Finding(
        rule_id=rule.id,
        severity=policy.severity_for(rule.id, hit.severity or rule.severity),
        message=hit.message,
        location=hit.location,
        evidence=hit.evidence,
        remediation=rule.fix,
        also=hit.also,
    )


def audit_evidence(
    evidence: Evidence, policy: Policy, options: FactOptions | None = None
) -> Report:
    """Audit already-acquired evidence."""
    facts = build_facts(evidence, options)
    runs, findings = run_checks(evidence, facts, policy)
    findings += _external_expired_waivers(policy)
    kept, suppressed = apply_waivers(findings, policy.waivers, today())
    return Report(
        target=evidence.target,
        facts=facts,
        checks=runs,
        findings=sort_findings(kept),
        suppressed=sort_findings(suppressed),
        evidence=evidence,
    )


def _external_expired_waivers(policy: Policy) -> list[Finding]:
    """SRC030 findings for expired waivers in a config file outside the audited repo.

    Waivers in the repo's own config are reported (with their line) by the SRC030 check.
    """
    rule = load_rules().get(EXPIRED_WAIVER_RULE)
    if rule is None or not policy.selected(rule.id):
        return []
    on = today()
    return [
        _finding(rule, policy, expired_waiver_hit(waiver, repo="config"))
        for waiver in policy.waivers
        if waiver.expired(on) and not waiver.in_repo
    ]


def audit(
    request: AuditRequest, policy: Policy | None = None, options: FactOptions | None = None
) -> Report:
    """Acquire the evidence for ``request`` and audit it."""
    return audit_evidence(acquire(request), policy or Policy(), options)
