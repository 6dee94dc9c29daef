"""Make untrusted text safe to show: control and bidi characters become visible escapes.

Everything a report shows from an audited repo (licence names, base ids, promise and claim
texts, file names, config keys) is chosen by whoever wrote the repo. On a terminal an ESC
sequence can set the window title, clear the screen (hiding earlier findings) or plant an
OSC 8 hyperlink; a carriage return overwrites a line; a bidi override (U+202E) shows text
in an order other than the one it has; in a CI log a line starting with ``::`` is a GitHub
workflow command. These helpers replace every such character by a visible ``\\xNN`` /
``\\uNNNN`` escape, so the reader sees that it was there and nothing acts on it.

Hand-written because it is the point: the set of characters is the threat model.
"""

from __future__ import annotations

import re

#: C0 controls except tab and newline, DEL, C1 controls; bidi embeddings, overrides and
#: isolates, directional marks, zero-width characters, BOM.
_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb"
)
UNSAFE = re.compile(f"[{_UNSAFE}]")
#: The same, plus newline and tab: for text that must stay on one line.
UNSAFE_INLINE = re.compile(f"[{_UNSAFE}\t\n]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control, bidi and invisible format character escaped (newlines
    and tabs kept)."""
    return UNSAFE.sub(_escape, text)


def one_line(text: str) -> str:
    """``text`` as one safe line: newlines and tabs escaped too."""
    return UNSAFE_INLINE.sub(_escape, text)


def no_workflow_commands(text: str) -> str:
    """Every line of ``text`` made safe for a GitHub Actions log: control characters
    escaped and a leading ``::`` (a workflow command: ``::error``, ``::add-mask::``,
    ``::stop-commands::``) broken so the runner does not act on it."""
    lines = visible(text).split("\n")
    return "\n".join(_break_command(line) for line in lines)


def _break_command(line: str) -> str:
    stripped = line.lstrip()
    if stripped.startswith("::"):
        return line[: len(line) - len(stripped)] + ":\\:" + stripped[2:]
    return line


def safe_url(url: str | None, *, relative: bool = False) -> str | None:
    """``url`` when it is an http(s) URL (or, with ``relative``, a path with no scheme)
    free of spaces, controls and bidi characters; None otherwise."""
    if not url:
        return None
    if not re.match(r"https?://", url, re.IGNORECASE) and not (
        relative and not re.match(r"[a-z][a-z0-9+.-]*:|//", url, re.IGNORECASE)
    ):
        return None
    if UNSAFE_INLINE.search(url) or any(ch.isspace() for ch in url):
        return None
    return url


def visible_values(value: object) -> object:
    """A JSON-like value with :func:`visible` applied to every string, keys included."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_values(k): visible_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [visible_values(item) for item in value]
    return value


def markup(text: str) -> str:
    """``text`` for a rich console: control and bidi characters visible, markup escaped."""
    from rich.markup import escape

    return escape(visible(text))
