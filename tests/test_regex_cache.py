"""Compiled patterns kept across runs: rebuilt equal to what ``re`` compiles, and any
damaged, foreign or missing cache file is only a slower start (each run in its own
interpreter: installing the cache is a process-wide choice)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATTERNS = [
    (r"(?P<year>\d{4})-(?P<month>\d\d)", 0),
    (r"(?<![\w-])licen[cs]e(?![\w-])", 2),  # re.IGNORECASE
    (r"^\s*#+\s*(.+?)\s*$", 8),  # re.MULTILINE
    (r"[\u3040-\u30ff]+|モデル", 0),
    (r"(a|b)*+c(?=d)", 0),
    ("x" * 3 + r"(?:\.\d+)?", 16),  # re.DOTALL
]
SCRIPT = """
import json, re, sys
from cardaudit import regex_cache
installed = regex_cache.install()
patterns = json.loads(sys.argv[1])
compiled = [re.compile(p, f) for p, f in patterns]
state = regex_cache._state
report = {"installed": installed}
if installed:
    original = state["original"]
    report["equal"] = all(c == original(p, f) for c, (p, f) in zip(compiled, patterns))
    report["hits"] = sum((p, f) in state["used"] for p, f in patterns)
    report["new"] = state["state"]["new"]
    report["matches"] = [bool(c.search("2026-01 licence モデル xxx.5 aac")) for c in compiled]
print(json.dumps(report))
"""


def _run(cache: Path, **env: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(PATTERNS)],
        capture_output=True,
        text=True,
        env={"CARDAUDIT_CACHE": str(cache), "PATH": "/usr/bin:/bin", **env},
        check=True,
    )
    assert result.stderr == ""  # no traceback, no warning
    return json.loads(result.stdout)


def _files(cache: Path) -> list[Path]:
    return sorted((cache / "regex").glob("*.bin"))


def test_a_warm_run_rebuilds_every_pattern_equal_to_re(tmp_path):
    cold = _run(tmp_path)
    assert cold["installed"] and cold["equal"] and cold["new"]
    assert len(_files(tmp_path)) == 1
    warm = _run(tmp_path)
    assert warm["equal"] and warm["hits"] == len(PATTERNS) and not warm["new"]
    assert warm["matches"] == cold["matches"]


def test_a_damaged_cache_file_is_ignored_and_rewritten(tmp_path):
    _run(tmp_path)
    (path,) = _files(tmp_path)
    good = path.read_bytes()
    digest, _, body = good.partition(b"\n")
    for damage in (b"", b"garbage", digest + b"\n" + body[:-7], b"0" * 64 + b"\n" + body):
        path.write_bytes(damage)
        again = _run(tmp_path)
        assert again["equal"] and again["new"]  # compiled afresh, then stored again
        assert path.read_bytes().partition(b"\n")[0] != b"0" * 64


def test_entries_of_the_wrong_shape_are_compiled_afresh(tmp_path):
    import hashlib
    import marshal

    _run(tmp_path)
    (path,) = _files(tmp_path)
    entries = {(p, f): (1, (1, b"\x00\x01", 0, {}, ())) for p, f in PATTERNS}
    body = marshal.dumps({"run": 1, "entries": entries})
    path.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    again = _run(tmp_path)
    assert again["equal"] and again["hits"] == len(PATTERNS)  # re-derived, all kept


def test_patterns_no_recent_run_used_are_dropped(tmp_path):
    import hashlib
    import marshal

    from cardaudit.regex_cache import KEEP_RUNS

    _run(tmp_path)
    (path,) = _files(tmp_path)
    content = marshal.loads(path.read_bytes().partition(b"\n")[2])
    assert content["run"] == 1 and len(content["entries"]) >= len(PATTERNS)
    payload = next(iter(content["entries"].values()))[1]
    content["entries"][("stale", 0)] = (1, payload)  # last used long ago
    content["entries"][("recent", 0)] = (KEEP_RUNS, payload)
    content["entries"][("new pattern", 0)] = (KEEP_RUNS, payload)  # keeps the run "new"
    content["run"] = KEEP_RUNS
    del content["entries"][(PATTERNS[0][0], PATTERNS[0][1])]  # this run compiles it anew
    body = marshal.dumps(content)
    path.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    _run(tmp_path)
    saved = marshal.loads(path.read_bytes().partition(b"\n")[2])
    assert saved["run"] == KEEP_RUNS + 1
    assert ("stale", 0) not in saved["entries"] and ("recent", 0) in saved["entries"]
    assert saved["entries"][(PATTERNS[0][0], PATTERNS[0][1])][0] == KEEP_RUNS + 1


def test_the_store_keeps_at_most_max_patterns_most_recent_first(tmp_path, monkeypatch):
    import hashlib
    import marshal

    _run(tmp_path)
    (path,) = _files(tmp_path)
    content = marshal.loads(path.read_bytes().partition(b"\n")[2])
    payload = next(iter(content["entries"].values()))[1]
    content["entries"].update({(f"old {n}", 0): (1, payload) for n in range(50)})
    del content["entries"][(PATTERNS[0][0], PATTERNS[0][1])]  # this run compiles it anew
    body = marshal.dumps(content)
    path.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    code = (
        "import re, sys, json\nfrom cardaudit import regex_cache\n"
        f"regex_cache.MAX_PATTERNS = {len(PATTERNS)}\nregex_cache.install()\n"
        "[re.compile(p, f) for p, f in json.loads(sys.argv[1])]\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, json.dumps(PATTERNS)],
        env={"CARDAUDIT_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    saved = marshal.loads(path.read_bytes().partition(b"\n")[2])["entries"]
    assert set(saved) == {(p, f) for p, f in PATTERNS}


def test_the_cache_can_be_turned_off(tmp_path):
    assert _run(tmp_path, CARDAUDIT_NO_CACHE="1") == {"installed": False}
    assert _files(tmp_path) == []


def test_a_warm_audit_reports_exactly_what_a_cold_one_does(tmp_path):
    clover = ROOT / "fixtures" / "clover"
    args = ["audit", str(clover / "model"), "--code", str(clover / "code"), "-f", "json"]
    code = (
        "import sys\nfrom cardaudit.cli import main\n"
        "sys.argv = ['cardaudit', *sys.argv[1:]]\nmain()"
    )
    env = {
        "CARDAUDIT_CACHE": str(tmp_path / "cache"),
        "CARDAUDIT_NOW": "2026-06-15",
        "NO_COLOR": "1",
        "PATH": "/usr/bin:/bin",
    }

    def audit() -> str:
        result = subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=False,
        )
        assert result.returncode in (0, 1), result.stderr
        return result.stdout

    cold = audit()
    assert _files(tmp_path / "cache")
    assert audit() == cold
