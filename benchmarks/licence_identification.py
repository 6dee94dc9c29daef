"""Accuracy and speed of licence identification: cardaudit's approach vs the raw engines.

Usage: PYTHONPATH=src python benchmarks/licence_identification.py [CORPUS] [LICENSES]

CORPUS is a folder with labels.json (default /work/shared/licence-corpus); LICENSES a folder
of <id>.txt reference texts (default /work/shared/licenses). Prints accuracy overall, on the
AI-model licences and on real model-repo files, the confident mistakes, and time per file and
cold start (a fresh interpreter identifying one file).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cardaudit.extract import licence_id
from cardaudit.extract.licence_table import lookup

CORPUS = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/licence-corpus")
LICENSES = Path(sys.argv[2] if len(sys.argv) > 2 else "/work/shared/licenses")
REPOS = Path(sys.argv[3] if len(sys.argv) > 3 else "/work/shared/realworld/repos")
STEMS = ("license", "licence", "copying", "notice")


def canonical(licence: str | None) -> str:
    if not licence or licence == "none":
        return "none"
    info = lookup(licence)
    return info.hub_id if info else licence.lower()


def samples() -> list[tuple[str, str, str, str]]:
    """(name, set, label, text) for every labelled file."""
    out = []
    labels = json.loads((CORPUS / "labels.json").read_text())
    for path, label in sorted(labels.items()):
        text = (CORPUS / path).read_text(encoding="utf-8", errors="replace")
        out.append((f"corpus/{path}", label["set"], label["label"], text))
    for path in sorted(LICENSES.glob("*.txt")):
        label_set = "ai" if "openrail" in path.stem else "licenses"
        out.append((f"licenses/{path.name}", label_set, path.stem, path.read_text()))
    return out


def askalono_raw(text: str) -> tuple[str | None, float]:
    import askalono

    result = askalono.identify(text)
    return (str(result.name), float(result.score)) if result else (None, 0.0)


def model_store_raw(text: str) -> tuple[str | None, float]:
    answer = licence_id._model_store(text)
    return (answer.licence, answer.score) if answer else (None, 0.0)


def chosen(text: str) -> tuple[str | None, float]:
    found = licence_id.identify_text(text)
    return found.licence, found.confidence


def run(name: str, identify: Callable[[str], tuple[str | None, float]], data) -> None:
    right = {"all": 0, "ai": 0, "realworld": 0}
    total = {"all": 0, "ai": 0, "realworld": 0}
    confident_wrong = []
    times = []
    for path, label_set, label, text in data:
        start = time.perf_counter()
        found, score = identify(text)
        times.append(time.perf_counter() - start)
        if score < licence_id.MIN_CONFIDENCE:
            found = None
        ok = canonical(found) == canonical(label)
        for key in ("all", label_set):
            if key in total:
                total[key] += 1
                right[key] += ok
        if not ok and found is not None:
            confident_wrong.append(f"{path}: {label} -> {found} ({score:.2f})")
    print(f"\n## {name}")
    for key in ("all", "ai", "realworld"):
        share = right[key] / total[key] if total[key] else 0
        print(f"  right ({key:9}): {right[key]:3}/{total[key]:3}  {share:.0%}")
    print(
        f"  per file: mean {statistics.mean(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
    )
    print(f"  confident mistakes: {len(confident_wrong)}")
    for line in confident_wrong:
        print(f"    {line}")


def cold_start(code: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def real_repos() -> None:
    """Every licence / notice file under REPOS (unlabelled): what cardaudit says, for review."""
    print(f"\n## licence and notice files in {REPOS} (unlabelled)")
    for path in sorted(REPOS.rglob("*")):
        if not path.is_file() or not path.name.lower().startswith(STEMS):
            continue
        start = time.perf_counter()
        found = licence_id.identify_text(path.read_text(encoding="utf-8", errors="replace"))
        took = (time.perf_counter() - start) * 1000
        extra = f" also {', '.join(found.also)}" if found.also else ""
        note = f" ({found.note})" if found.note else ""
        print(
            f"  {path.relative_to(REPOS)}: {found.licence} {found.confidence:.2f}{extra}"
            f"{note} [{took:.0f} ms]"
        )


def main() -> None:
    real_repos()
    data = samples()
    print(f"{len(data)} labelled files ({CORPUS}, {LICENSES})")
    run("askalono (raw)", askalono_raw, data)
    run("licenseid over the bundled model-licence store (raw)", model_store_raw, data)
    run("cardaudit: askalono + licenseid model store + parts", chosen, data)
    mit = str(LICENSES / "MIT.txt")
    llama = str(CORPUS / "ai/llama3_1/LICENSE")
    print("\n## cold start (fresh interpreter, median of 5)")
    print(
        f"  askalono, one MIT file:          "
        f"{cold_start(f'import askalono; askalono.identify(open({mit!r}).read())'):.2f} s"
    )
    for label, path in (("MIT", mit), ("Llama 3.1", llama)):
        code = (
            "from cardaudit.extract.licence_id import identify_text; "
            f"identify_text(open({path!r}).read())"
        )
        print(f"  cardaudit, one {label} file: {' ' * (14 - len(label))}{cold_start(code):.2f} s")


if __name__ == "__main__":
    main()
