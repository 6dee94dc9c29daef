"""How a finding names the other places its promise or claim is stated.

The message names files only (a message is part of a finding's identity, and lines move);
the places themselves, with lines, travel in ``Hit.also`` and every reporter shows them.
"""

from __future__ import annotations

from collections.abc import Iterable

from cardaudit.model import Location


def also_stated(first: Location, places: Iterable[Location]) -> str:
    """'; also stated in code:README.md', '; also stated elsewhere in README.md' (the
    finding's own file), or '' when there is no other place."""
    own = Location(first.path, None, repo=first.repo).display()
    files = dict.fromkeys(Location(p.path, None, repo=p.repo).display() for p in places)
    named = [f"elsewhere in {name}" if name == own else f"in {name}" for name in files]
    return f"; also stated {', '.join(named)}" if named else ""
