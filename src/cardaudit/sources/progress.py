"""Progress display on stderr while evidence is fetched (rich), or nothing at all."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Step = Callable[[str], None]
_COUNTER = re.compile(r"\((\d+)/(\d+)\)$")


def _silent(message: str) -> None:
    return None


@contextmanager
def progress_display(enabled: bool) -> Iterator[Step]:
    """Yield a ``step(message)`` callback.

    On a terminal a rich spinner shows the current step; elsewhere (CI logs, captured
    stderr) each phase is printed once as a plain line (no per-file lines, counters when complete).
    """
    if not enabled:
        yield _silent
        return
    from rich.console import Console

    from cardaudit.safe_text import markup, one_line

    console = Console(stderr=True, highlight=False)
    if console.is_terminal:  # messages name repos and files: shown escaped
        with console.status("Starting", spinner="dots") as status:
            yield lambda message: status.update(markup(one_line(message)))
        return
    lock = threading.Lock()

    def line(message: str) -> None:
        counter = _COUNTER.search(message)
        if (counter and counter.group(1) != counter.group(2)) or message.startswith("Downloading"):
            return  # per-file detail is for the live display only
        with lock:
            console.print(one_line(message), markup=False, soft_wrap=True)

    yield line
