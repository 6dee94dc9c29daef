"""Build a fixture's history as a real git repo, to audit it by hand.

python scripts/build_fixture_history.py fixtures/clover/code-history /tmp/clover-code
CARDAUDIT_NOW=2026-06-15 cardaudit audit /tmp/clover-model --code /tmp/clover-code
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fixture_history import build_history_repo


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print("usage: build_fixture_history.py HISTORY_DIR DEST [UPTO]", file=sys.stderr)
        return 2
    dest = Path(argv[1])
    if dest.exists():
        print(f"error: {dest} exists", file=sys.stderr)
        return 2
    upto = int(argv[2]) if len(argv) == 3 else None
    repo = build_history_repo(Path(argv[0]), dest, upto)
    count = len(list(repo.iter_commits()))
    print(f"built {dest} at {repo.head.commit.hexsha[:12]} ({count} commits)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
