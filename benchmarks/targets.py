"""The speed targets of the project, each as whole-process CPU time and as a ratio to a
baseline measured in the same run.

    PYTHONPATH=src:tests python benchmarks/targets.py [--runs N] [--rows startup,audit,...]

Rows (``--rows``, default all):

- ``startup``: ``cardaudit --help`` and a local audit of ``fixtures/clover`` against
  ``python -c "import typer, rich"``.
- ``audit``: the same audit (model + ``--code`` + ``--base``), with a cold and a warm
  identification cache, against a bare askalono identification of the same licence files
  (a fresh interpreter calling ``askalono.identify`` on each); target ≤ 0.5 s and ≤ 0.6×.
- ``record``: the audit with ``--record`` into an existing SQLite store, minus the plain
  audit; target ≤ +0.15 s.
- ``store``: ``history`` and ``diff`` with 10, 1,000 and 10,000 stored audits of one model,
  against ``python -c "import typer, rich"``; target ≤ 0.5 s at 1,000 and flat.
- ``card``: ``cardaudit audit -f json`` of a model whose card has 1,000, 5,000 and 50,000
  lines (``benchmarks/card_length.py``'s varied block). The ratio is the CPU per line
  beyond the 1,000-line audit, to that of the 5,000-line card (start-up cancels out; 1.00
  is linear); target linear, 50,000 lines ≤ 5 s. Two interleaved rounds at most.
- ``headers``: an audit of a 200,000-tensor, 100-shard repo (sparse files), against a bare
  interpreter that reads and ``json.loads`` the same headers; target ≤ 2 s.
- ``formats``: ``-f cyclonedx`` against ``-f json`` on the clover audit; target ≤ 1.1×.

CPU is user + system time of the child process (``RUSAGE_CHILDREN``), the median of
``--runs`` interleaved rounds (each round runs every command of a row once), so a busy
machine slows the figure and its baseline alike. A "cold" audit runs with a fresh empty
``CARDAUDIT_CACHE``, a "warm" one after an audit of the same folders. Python bytecode is
cached (in a temporary ``PYTHONPYCACHEPREFIX``) as for an installed package, whatever
``PYTHONDONTWRITEBYTECODE`` says.

To measure another checkout (the figures before a change), run this script with
``PYTHONPATH=<checkout>/src:<checkout>/tests``: the child processes import that code.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLOVER = ROOT / "fixtures" / "clover"
BIN = Path(sys.executable).parent
CARDAUDIT = (
    [str(BIN / "cardaudit")]
    if (BIN / "cardaudit").exists()
    else [
        sys.executable,
        "-m",
        "cardaudit.cli",
    ]
)
PYTHON = sys.executable
TYPER_RICH = [PYTHON, "-c", "import typer, rich"]
CLOVER_AUDIT = [
    "audit",
    str(CLOVER / "model"),
    "--code",
    str(CLOVER / "code"),
    "--base",
    str(CLOVER / "base"),
]
LICENCE_NAMES = ("license", "licence", "copying", "notice")


def child_cpu(args: Sequence[str], env: dict[str, str], before: Callable[[], None] | None) -> float:
    """User + system CPU seconds of one child process running ``args``."""
    if before is not None:
        before()
    start = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(list(args), capture_output=True, env=env, check=False)
    end = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):
        detail = result.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise SystemExit(f"{' '.join(args[:4])}… exited {result.returncode}: {detail}")
    return (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)


class Row:
    """Commands measured together in interleaved rounds; medians by label."""

    def __init__(self, runs: int, env: dict[str, str]) -> None:
        self.runs = runs
        self.env = env
        self.commands: list[tuple[str, list[str], Callable[[], None] | None]] = []

    def add(self, label: str, args: Sequence[str], before: Callable[[], None] | None = None):
        self.commands.append((label, list(args), before))

    def measure(self, warm_up: bool = True) -> dict[str, float]:
        for _, args, before in self.commands if warm_up else ():  # OS file cache, .pyc files
            child_cpu(args, self.env, before)
        samples: dict[str, list[float]] = {label: [] for label, _, _ in self.commands}
        for _ in range(self.runs):
            for label, args, before in self.commands:
                samples[label].append(child_cpu(args, self.env, before))
        return {label: statistics.median(values) for label, values in samples.items()}


def show(label: str, seconds: float, baseline: float | None = None, target: str = "") -> None:
    ratio = f"{seconds / baseline:6.2f}×" if baseline else " " * 7
    print(f"  {label:<58} {seconds:7.3f} s  {ratio}  {target}")


def fresh_cache(folder: Path) -> Callable[[], None]:
    def reset() -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)

    return reset


def licence_files() -> list[str]:
    found = []
    for repo in ("model", "code", "base"):
        for path in sorted((CLOVER / repo).iterdir()):
            if path.is_file() and path.name.lower().split(".")[0] in LICENCE_NAMES:
                found.append(str(path))
    return found


# --------------------------------------------------------------------------- rows


def row_startup(runs: int, env: dict[str, str], tmp: Path) -> None:
    print('start-up (ratio to `python -c "import typer, rich"`)')
    cache = tmp / "startup-cache"
    row = Row(runs, {**env, "CARDAUDIT_CACHE": str(cache)})
    row.add("baseline", TYPER_RICH)
    row.add("help", [*CARDAUDIT, "--help"])
    row.add("audit", [*CARDAUDIT, *CLOVER_AUDIT], fresh_cache(cache))
    row.add("warm", [*CARDAUDIT, *CLOVER_AUDIT])
    got = row.measure()
    show('python -c "import typer, rich"', got["baseline"], got["baseline"])
    show("cardaudit --help", got["help"], got["baseline"])
    show("cardaudit audit fixtures/clover (cold cache)", got["audit"], got["baseline"])
    show("cardaudit audit fixtures/clover (warm cache)", got["warm"], got["baseline"])


def row_audit(runs: int, env: dict[str, str], tmp: Path) -> None:
    files = licence_files()
    print(
        f"audit fixtures/clover --code --base (ratio to a bare askalono identification of "
        f"its {len(files)} licence files)"
    )
    cache = tmp / "audit-cache"
    row = Row(runs, {**env, "CARDAUDIT_CACHE": str(cache)})
    bare = "import askalono, sys\nfor p in sys.argv[1:]: askalono.identify(open(p).read())"
    row.add("askalono", [PYTHON, "-c", bare, *files])
    row.add("cold", [*CARDAUDIT, *CLOVER_AUDIT], fresh_cache(cache))
    row.add("warm", [*CARDAUDIT, *CLOVER_AUDIT])
    got = row.measure()
    show("bare askalono identification", got["askalono"], got["askalono"])
    show("cardaudit audit (cold identification cache)", got["cold"], got["askalono"])
    show(
        "cardaudit audit (warm identification cache)",
        got["warm"],
        got["askalono"],
        "≤ 0.5 s, ≤ 0.6×",
    )


def row_record(runs: int, env: dict[str, str], tmp: Path) -> None:
    print("audit --record into an existing SQLite store (difference to the plain audit)")
    db = tmp / "record.db"
    cache = tmp / "record-cache"
    run_env = {**env, "CARDAUDIT_CACHE": str(cache)}
    subprocess.run(
        [*CARDAUDIT, *CLOVER_AUDIT, "--record", "--db", str(db)],
        env=run_env,
        capture_output=True,
        check=False,
    )
    row = Row(runs, run_env)
    row.add("plain", [*CARDAUDIT, *CLOVER_AUDIT, "-f", "json"])
    row.add("record", [*CARDAUDIT, *CLOVER_AUDIT, "-f", "json", "--record", "--db", str(db)])
    got = row.measure()
    show("cardaudit audit -f json", got["plain"], got["plain"])
    show("cardaudit audit -f json --record", got["record"], got["plain"])
    show("  --record costs", got["record"] - got["plain"], None, "≤ +0.15 s")


def _variants(report: dict) -> list[dict]:
    """Ten audits that differ as a model's audits do: a finding resolved, then back."""
    findings = report.get("findings") or []
    out = []
    for index in range(10):
        data = json.loads(json.dumps(report))
        if findings and index % 5 == 4:
            data["findings"] = findings[1:]
        out.append(data)
    return out


def seed_store(db: Path, count: int, report: dict) -> None:
    """``count`` stored audits of hub:bench/model, as ``track run`` leaves them: ten that
    differ, recorded through the store's API, then re-audits of the unchanged model (copies
    of the tenth, an hour apart, with its findings and promises) written in SQL."""
    from datetime import UTC, datetime, timedelta

    from cardaudit.store import Store

    store = Store.open(f"sqlite:///{db}")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for index, data in enumerate(_variants(report)[: min(count, 10)]):
        store.record_json(data, "hub:bench/model", start + timedelta(hours=index))
    store.close()
    if count <= 10:
        return
    connection = sqlite3.connect(db)
    columns = {
        table: [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
        for table in ("audits", "findings", "promises")
    }
    copied = [c for c in columns["audits"] if c not in ("id", "audited_at")]
    connection.execute(
        f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count - 10}) "
        f"INSERT INTO audits (id, audited_at, {', '.join(copied)}) "
        f"SELECT 10 + i, datetime(audited_at, '+' || i || ' hours') || '.000000', "
        f"{', '.join(copied)} FROM audits, n WHERE audits.id = 10 ORDER BY i"
    )
    for table in ("findings", "promises"):
        cols = [c for c in columns[table] if c not in ("id", "audit_id")]
        connection.execute(
            f"INSERT INTO {table} (audit_id, {', '.join(cols)}) "
            f"SELECT audits.id, {', '.join(f'{table}.{c}' for c in cols)} "
            f"FROM audits JOIN {table} ON {table}.audit_id = 10 "
            f"WHERE audits.id > 10 ORDER BY audits.id, {table}.id"
        )
    connection.commit()
    connection.close()


def row_store(runs: int, env: dict[str, str], tmp: Path) -> None:
    from cardaudit.pipeline import audit
    from cardaudit.reporters.json_report import report_to_json
    from cardaudit.sources import AuditRequest

    print('history / diff of one model (ratio to `python -c "import typer, rich"`)')
    report = report_to_json(
        audit(
            AuditRequest(
                str(CLOVER / "model"), code=str(CLOVER / "code"), base=str(CLOVER / "base")
            )
        )
    )
    row = Row(runs, env)
    row.add("baseline", TYPER_RICH)
    sizes = (10, 1_000, 10_000)
    for size in sizes:
        db = tmp / f"history-{size}.db"
        seed_store(db, size, report)
        row.add(f"history {size}", [*CARDAUDIT, "history", "bench/model", "--db", str(db)])
        row.add(f"diff {size}", [*CARDAUDIT, "diff", "bench/model", "--db", str(db)])
    got = row.measure()
    show('python -c "import typer, rich"', got["baseline"], got["baseline"])
    for command in ("history", "diff"):
        for size in sizes:
            target = "≤ 0.5 s" if size == 1_000 else ""
            show(
                f"cardaudit {command}, {size:,} stored audits",
                got[f"{command} {size}"],
                got["baseline"],
                target,
            )
        flat = got[f"{command} {sizes[-1]}"] / got[f"{command} {sizes[0]}"]
        print(f"  {command}: {sizes[-1]:,} audits / {sizes[0]} audits = {flat:.2f}× (flat: ≈ 1)")


def row_card(runs: int, env: dict[str, str], tmp: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from card_length import card_text

    lengths = (1_000, 5_000, 50_000)
    print(
        f"card length (ratio: CPU per line beyond the {lengths[0]:,}-line card, to that of the "
        f"{lengths[1]:,}-line card; 1.00 is linear)"
    )
    cache = tmp / "card-cache"
    row = Row(min(runs, 2), {**env, "CARDAUDIT_CACHE": str(cache)})
    row.add("warm-up", [*CARDAUDIT, *CLOVER_AUDIT, "-f", "json"])  # .pyc files, tables
    for lines in lengths:
        folder = tmp / "cards" / str(lines)
        folder.mkdir(parents=True)
        (folder / "README.md").write_text(card_text(lines), encoding="utf-8")
        row.add(str(lines), [*CARDAUDIT, "audit", str(folder), "-f", "json"])
    got = row.measure(warm_up=False)
    first = got[str(lengths[0])]
    show(f"cardaudit audit, {lengths[0]:,}-line card", first)
    # per-line cost beyond the first card, over that of the second: 1.00 is linear
    unit = (got[str(lengths[1])] - first) / (lengths[1] - lengths[0])
    for lines in lengths[1:]:
        cpu = got[str(lines)]
        marginal = (cpu - first) / (lines - lengths[0])
        target = "linear (1.00); ≤ 5 s" if lines == lengths[-1] else ""
        show(f"cardaudit audit, {lines:,}-line card", cpu, cpu / marginal * unit, target)


HEADER_BASELINE = """
import json, struct, sys, pathlib
for path in sorted(pathlib.Path(sys.argv[1]).glob('*.safetensors')):
    with open(path, 'rb') as stream:
        (length,) = struct.unpack('<Q', stream.read(8))
        json.loads(stream.read(length))
"""


def row_headers(runs: int, env: dict[str, str], tmp: Path, tensors: int = 200_000) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from stub_weights import write_repo

    experts, per_expert = 64, 3
    layers = tensors // (experts * per_expert)
    names = {}
    for index in range(layers * experts * per_expert):
        layer, rest = divmod(index, experts * per_expert)
        expert, proj = divmod(rest, per_expert)
        kind = ("gate_proj", "up_proj", "down_proj")[proj]
        shape = (512, 256) if kind != "down_proj" else (256, 512)
        names[f"model.layers.{layer}.mlp.experts.{expert}.{kind}.weight"] = ("BF16", shape)
    config = {
        "architectures": ["MixtralForCausalLM"],
        "model_type": "mixtral",
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": layers,
        "num_local_experts": experts,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "vocab_size": 1000,
        "torch_dtype": "bfloat16",
    }
    shard_bytes = -(-len(names) // 100) * 512 * 256 * 2
    for name in ("model", "base"):  # a fine-tune and its base, the same layout
        folder = tmp / "headers" / name
        write_repo(folder, names, shard_bytes=shard_bytes, sparse=True)
        (folder / "README.md").write_text("---\nlicense: mit\n---\n# bench\n")
        (folder / "config.json").write_text(json.dumps(config))
    model, base = tmp / "headers" / "model", tmp / "headers" / "base"
    shards = len(list(model.glob("*.safetensors")))
    print(f"headers: {len(names):,} tensors in {shards} shards (ratio to reading + json.loads)")
    cache = tmp / "headers-cache"
    row = Row(runs, {**env, "CARDAUDIT_CACHE": str(cache)})
    row.add("baseline", [PYTHON, "-c", HEADER_BASELINE, str(model)])
    row.add("audit", [*CARDAUDIT, "audit", str(model), "-f", "json"])
    row.add("base", [*CARDAUDIT, "audit", str(model), "--base", str(base), "-f", "json"])
    got = row.measure()
    show("read + json.loads every header (bare interpreter)", got["baseline"], got["baseline"])
    show("cardaudit audit -f json", got["audit"], got["baseline"], "≤ 2 s")
    show("cardaudit audit --base (same layout) -f json", got["base"], got["baseline"])


def row_formats(runs: int, env: dict[str, str], tmp: Path) -> None:
    print("output formats of the clover audit (ratio to -f json)")
    cache = tmp / "formats-cache"
    row = Row(runs, {**env, "CARDAUDIT_CACHE": str(cache)})
    row.add("json", [*CARDAUDIT, *CLOVER_AUDIT, "-f", "json"])
    row.add("cyclonedx", [*CARDAUDIT, *CLOVER_AUDIT, "-f", "cyclonedx"])
    got = row.measure()
    show("cardaudit audit -f json", got["json"], got["json"])
    show("cardaudit audit -f cyclonedx", got["cyclonedx"], got["json"], "≤ 1.10×")


ROWS = {
    "startup": row_startup,
    "audit": row_audit,
    "record": row_record,
    "store": row_store,
    "card": row_card,
    "headers": row_headers,
    "formats": row_formats,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds (median)")
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated rows")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.rows.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in ROWS]
    if unknown:
        parser.error(f"unknown rows: {', '.join(unknown)} (choose from {', '.join(ROWS)})")
    env = {**os.environ, "NO_COLOR": "1", "CARDAUDIT_NOW": "2026-06-15"}
    for name in ("CARDAUDIT_DB", "CARDAUDIT_NO_CACHE", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    print(f"median CPU of {args.runs} interleaved runs; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="cardaudit-targets-") as tmp:
        # bytecode is cached as an installed package has it (pip compiles at install time);
        # the warm-up run of each row writes it, under the temp folder, not beside the source
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for name in chosen:
            ROWS[name](args.runs, env, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
