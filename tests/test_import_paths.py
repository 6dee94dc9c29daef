"""Heavy libraries stay off the paths that do not need them (speed is measured by
benchmarks/targets.py; these tests only pin which modules a path imports)."""

from __future__ import annotations

import json
import subprocess
import sys

from scenarios import FIXTURES

HEAVY_FOR_HELP = ("huggingface_hub", "git", "askalono", "licenseid", "jsonschema", "sqlalchemy")


def imported_after(code: str) -> set[str]:
    """Top-level packages imported by a fresh interpreter running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    return {name.split(".")[0] for name in json.loads(result.stdout.splitlines()[-1])}


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys\nfrom cardaudit.cli import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass"
    )
    assert imported_after(code) & set(HEAVY_FOR_HELP) == set()


def test_cyclonedx_is_written_without_its_library_or_validator() -> None:
    """jsonschema's format checkers cost seconds to build, cyclonedx-python-lib a quarter of
    an audit: the BOM is written as JSON, validated and compared with the library's in the
    tests (test_formats_golden.py, test_cyclonedx_reference.py), never while rendering."""
    code = (
        "from cardaudit.pipeline import audit\nfrom cardaudit.reporters import render\n"
        "from cardaudit.sources import AuditRequest\n"
        f"render(audit(AuditRequest({str(FIXTURES / 'clover' / 'model')!r})), 'cyclonedx')"
    )
    modules = imported_after(code)
    assert "cyclonedx" not in modules
    assert "jsonschema" not in modules


def test_a_warm_audit_imports_no_licence_engine() -> None:
    """The second audit of the same folders finds every identification in the user cache
    (the test's own ``CARDAUDIT_CACHE``)."""
    clover = FIXTURES / "clover"
    code = (
        "from cardaudit.pipeline import audit\nfrom cardaudit.sources import AuditRequest\n"
        f"audit(AuditRequest({str(clover / 'model')!r}, code={str(clover / 'code')!r}, "
        f"base={str(clover / 'base')!r}))"
    )
    cold = imported_after(code)
    assert "askalono" in cold
    warm = imported_after(code)
    assert warm & {"askalono", "licenseid"} == set()
