"""Fuzz every parser of untrusted repo content and report crashes, hangs and peak memory.

For each parser (front matter, Markdown body, config.json, safetensors header and index,
GGUF header, adapter/mergekit config, licence text) it generates ``--inputs`` seeded hostile
repos (``fuzz_inputs.py``), writes each into a scratch folder and audits it the way the CLI
does: ``local_evidence`` (listing, text reading, header parsing), the repo's own config,
every extractor and check, and the reports (text and JSON for every input, every format for
one input in ``--all-formats-every``).

Each input runs in a forked child process with a memory limit (``RLIMIT_AS``) and a CPU-time
limit the parent enforces by reading the child's CPU clock; a child over the limit is killed
and counted as a hang, and a fresh child takes over. A child serves many inputs in a row to
keep the run within minutes (a fork per input costs more than most audits), and its peak RSS
is reset before every input (``/proc/self/clear_refs``) so the figure is per input.

Counted per parser:
- ``crash``: an exception escaped the audit (the CLI would print ``internal error``), or the
  child died (signal, stack overflow);
- ``memory``: a MemoryError (the input needed more than the limit);
- ``hang``: over the CPU-time limit;
- ``refused``: a clean one-line error (an invalid repo config), as the CLI ends;
- ``soft``: the audit finished but an extractor or a check recorded an error
  (``facts.extract_errors`` or a check with outcome ``error``): facts lost to the input.

    PYTHONPATH=src python benchmarks/fuzz_parsers.py [--inputs 10000] [--workers 2]
        [--seed 14] [--start 0] [--cpu-limit 2] [--memory-mb 1024] [--parsers front_matter,config]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

from fuzz_inputs import GENERATORS

TICKS = os.sysconf("SC_CLK_TCK")


def _preload() -> None:
    """Import and warm everything once in the parent, so forked children start ready."""
    import cardaudit.cli  # noqa: F401
    from cardaudit.reporters import REPORTERS, get_reporter

    for name in REPORTERS:
        get_reporter(name)
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "README.md").write_text("---\nlicense: mit\n---\n# x\n")
        _audit(Path(tmp), all_formats=True)


def _audit(root: Path, *, all_formats: bool) -> list[str]:
    """Audit ``root`` as the CLI does; returns the soft errors (extract and check errors)."""
    from cardaudit.config import find_config
    from cardaudit.pipeline import audit_evidence
    from cardaudit.policy import policy_from
    from cardaudit.reporters import REPORTERS, render
    from cardaudit.sources import local_evidence

    evidence = local_evidence(str(root))
    config = find_config(evidence, None, trust_repo=True)
    report = audit_evidence(evidence, policy_from(config))
    for name in REPORTERS if all_formats else ("text", "json"):
        render(report, name, color=False, show_suppressed=True, width=100)
    soft = [
        ": ".join(error.split(": ")[:2]) for error in report.facts.extra.get("extract_errors", ())
    ]
    soft += [
        f"check {run.rule_id}: {(run.note or '').split(':')[0]}"
        for run in report.checks
        if run.outcome == "error"
    ]
    return soft


def _write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for child in root.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8", "surrogatepass"))


def _peak_rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:  # an old kernel: the figure becomes the child's running peak
        pass


def _worker(requests: int, replies: int, scratch: Path, memory_mb: int, every: int) -> None:
    """Child loop: read ``parser index`` lines, audit that input, answer one JSON line."""
    with open("/proc/self/status", encoding="ascii") as status:
        vm = int(next(line for line in status if line.startswith("VmSize:")).split()[1])
    limit = (vm + memory_mb * 1024) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from cardaudit.errors import AuditError

    reader = os.fdopen(requests, "r")
    writer = os.fdopen(replies, "w")
    for line in reader:
        parser, seed, index = line.split()
        rng = random.Random(f"{seed}:{parser}:{index}")
        _reset_peak()
        started = time.process_time()
        status, detail = "ok", []
        try:
            files = GENERATORS[parser](rng)
            _write_files(scratch, files)
            detail = _audit(scratch, all_formats=int(index) % every == 0)
            status = "soft" if detail else "ok"
        except AuditError as exc:  # a clean one-line error, as the CLI prints it
            status, detail = "refused", [type(exc).__name__]
        except MemoryError:
            status, detail = "memory", ["MemoryError"]
        except BaseException as exc:
            frames = [
                f for f in traceback.extract_tb(exc.__traceback__) if "cardaudit" in f.filename
            ]
            where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
            status, detail = "crash", [f"{type(exc).__name__} at {where}"]
        reply = {
            "status": status,
            "detail": detail,
            "cpu": time.process_time() - started,
            "rss_kb": _peak_rss_kb(),
        }
        writer.write(json.dumps(reply) + "\n")
        writer.flush()
    os._exit(0)


class Child:
    """A forked worker with its pipes and the CPU clock at the start of its current input."""

    def __init__(self, scratch: Path, memory_mb: int, every: int) -> None:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(req_w)
            os.close(rep_r)
            try:
                _worker(req_r, rep_w, scratch, memory_mb, every)
            finally:
                os._exit(3)
        os.close(req_r)
        os.close(rep_w)
        self.requests = os.fdopen(req_w, "w")
        self.replies = rep_r
        self.buffer = b""
        self.job: tuple[str, int] | None = None
        self.cpu_start = 0.0

    def cpu(self) -> float:
        try:
            with open(f"/proc/{self.pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / TICKS
        except OSError:
            return self.cpu_start

    def send(self, parser: str, seed: int, index: int) -> None:
        self.job = (parser, index)
        self.cpu_start = self.cpu()
        self.requests.write(f"{parser} {seed} {index}\n")
        self.requests.flush()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self.requests.close()
        os.close(self.replies)


def new_results(args: argparse.Namespace) -> dict[str, dict]:
    parsers = args.parsers.split(",") if args.parsers else list(GENERATORS)
    return {
        p: {
            "inputs": 0,
            "ok": 0,
            "refused": 0,
            "soft": 0,
            "crash": 0,
            "memory": 0,
            "hang": 0,
            "cpu": [],
            "rss_kb": 0,
            "kinds": collections.Counter(),
            "examples": {},
        }
        for p in parsers
    }


def run(args: argparse.Namespace, results: dict[str, dict]) -> dict[str, dict]:
    """Audit every input; ``results`` fills as answers come (partial when interrupted).

    Inputs are handed out round-robin over the parsers, so an interrupted run has covered
    every parser about equally."""
    _preload()
    first = args.start
    jobs = collections.deque((p, i) for i in range(first, first + args.inputs) for p in results)
    base = Path(
        tempfile.mkdtemp(
            prefix="cardaudit-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None
        )
    )
    scratches = [base / f"w{n}" for n in range(args.workers)]
    for scratch in scratches:
        scratch.mkdir()
    children = [Child(s, args.memory_mb, args.all_formats_every) for s in scratches]
    try:
        return _serve(args, jobs, results, scratches, children)
    finally:  # also on SIGTERM: no child or scratch folder is left behind
        for child in children:
            with contextlib.suppress(OSError, ChildProcessError):
                child.kill()
        shutil.rmtree(base, ignore_errors=True)


def _serve(args, jobs, results, scratches, children) -> dict[str, dict]:
    """Hand out inputs to the children until every one is answered, killed or dead."""

    done, total = [0], len(jobs)

    def record(child: Child, status: str, detail: list[str], cpu: float, rss: int) -> None:
        parser, index = child.job  # type: ignore[misc]
        entry = results[parser]
        entry["inputs"] += 1
        entry[status] += 1
        done[0] += 1
        if done[0] % 1000 == 0:
            print(f"  {done[0]} of {total} inputs", file=sys.stderr, flush=True)
        entry["cpu"].append(cpu)
        entry["rss_kb"] = max(entry["rss_kb"], rss)
        for kind in detail if status != "ok" else ():
            kind = f"{status}: {kind}"
            entry["kinds"][kind] += 1
            shown = entry["examples"].setdefault(kind, [])
            if len(shown) < 5:
                shown.append(index)
        child.job = None

    def dispatch(child: Child) -> None:
        if jobs:
            parser, index = jobs.popleft()
            child.send(parser, args.seed, index)

    for child in children:
        dispatch(child)
    while any(child.job for child in children):
        busy = {child.replies: child for child in children if child.job}
        ready, _, _ = select.select(list(busy), [], [], 0.2)
        for fd in ready:
            child = busy[fd]
            chunk = os.read(fd, 65536)
            if not chunk:  # the child died mid-input
                _parser, _index = child.job  # type: ignore[misc]
                record(child, "crash", ["child died"], child.cpu() - child.cpu_start, 0)
                position = children.index(child)
                child.kill()
                children[position] = Child(
                    scratches[position], args.memory_mb, args.all_formats_every
                )
                dispatch(children[position])
                continue
            child.buffer += chunk
            while b"\n" in child.buffer:
                line, child.buffer = child.buffer.split(b"\n", 1)
                reply = json.loads(line)
                record(child, reply["status"], reply["detail"], reply["cpu"], reply["rss_kb"])
                dispatch(child)
        for position, child in enumerate(children):
            if child.job and child.cpu() - child.cpu_start > args.cpu_limit:
                record(child, "hang", [f"over {args.cpu_limit:g} s CPU"], args.cpu_limit, 0)
                child.kill()
                children[position] = Child(
                    scratches[position], args.memory_mb, args.all_formats_every
                )
                dispatch(children[position])
    return results


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="inputs per parser")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument(
        "--start", type=int, default=0, help="first input index (to split a run over machines)"
    )
    parser.add_argument("--cpu-limit", type=float, default=2.0, help="CPU seconds per input")
    parser.add_argument("--memory-mb", type=int, default=1024, help="memory per input")
    parser.add_argument("--all-formats-every", type=int, default=10)
    parser.add_argument("--parsers", default="", help="comma-separated subset")
    parser.add_argument(
        "--examples", action="store_true", help="print up to five input indices per kind"
    )
    args = parser.parse_args()
    started, cpu_started = time.perf_counter(), time.process_time()
    results = new_results(args)
    complete = True
    try:
        run(args, results)
    except (KeyboardInterrupt, SystemExit):  # SIGINT / SIGTERM: report what was measured
        complete = False
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"seed {args.seed}, {args.inputs} inputs per parser"
        + (f" from input {args.start}" if args.start else "")
        + ("" if complete else " (interrupted: the counts below are what ran)")
        + f", limits {args.cpu_limit:g} s CPU and {args.memory_mb} MB per input"
    )
    header = f"{'parser':<20}{'inputs':>7}{'crash':>7}{'memory':>7}{'hang':>6}{'soft':>6}"
    print(header + f"{'cpu p50 ms':>12}{'p99 ms':>9}{'max s':>8}{'peak RSS MB':>13}")
    totals = collections.Counter()
    for name, entry in results.items():
        for key in ("inputs", "crash", "memory", "hang", "soft"):
            totals[key] += entry[key]
        print(
            f"{name:<20}{entry['inputs']:>7}{entry['crash']:>7}{entry['memory']:>7}"
            f"{entry['hang']:>6}{entry['soft']:>6}"
            f"{_percentile(entry['cpu'], 0.5) * 1000:>12.1f}"
            f"{_percentile(entry['cpu'], 0.99) * 1000:>9.1f}"
            f"{max(entry['cpu'], default=0):>8.2f}{entry['rss_kb'] / 1024:>13.0f}"
        )
    print(
        f"{'total':<20}{totals['inputs']:>7}{totals['crash']:>7}{totals['memory']:>7}"
        f"{totals['hang']:>6}{totals['soft']:>6}"
    )
    for name, entry in results.items():
        for kind, count in entry["kinds"].most_common():
            shown = ", ".join(map(str, entry["examples"][kind]))
            example = f" (inputs {shown})" if args.examples else ""
            print(f"  {name}: {count} × {kind}{example}")
    print(
        f"CPU: {children.ru_utime + children.ru_stime:.1f} s in children, "
        f"{time.process_time() - cpu_started:.1f} s in the parent "
        f"(wall {time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
