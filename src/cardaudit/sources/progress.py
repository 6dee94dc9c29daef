"""Progress display on stderr while evidence is fetched (rich), or nothing at all."""

from __future__ import annotations

import os
import re
import sys
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
    from cardaudit.safe_text import markup, one_line

    write = _plain_write
    if _may_be_terminal():  # rich only for a live display (its import costs a tenth of an audit)
        from rich.console import Console

        console = Console(stderr=True, highlight=False)
        if console.is_terminal:  # messages name repos and files: shown escaped
            with console.status("Starting", spinner="dots") as status:
                yield lambda message: status.update(markup(one_line(message)))
            return
        write = lambda text: console.print(text, markup=False, soft_wrap=True)  # noqa: E731
    lock = threading.Lock()

    def line(message: str) -> None:
        counter = _COUNTER.search(message)
        if (counter and counter.group(1) != counter.group(2)) or message.startswith("Downloading"):
            return  # per-file detail is for the live display only
        with lock:
            write(one_line(message))

    yield line


def _may_be_terminal() -> bool:
    """Whether rich could take stderr for a terminal (a TTY, or one forced by rich's
    environment variables)."""
    if any(os.environ.get(name) for name in ("FORCE_TERMINAL", "TTY_COMPATIBLE")):
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def _plain_write(text: str) -> None:
    stream = sys.stderr
    stream.write(text + "\n")
    stream.flush()
