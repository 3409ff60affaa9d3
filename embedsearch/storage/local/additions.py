"""When a local index received each paper, from the keys it handed out.

Keys are handed out in order and never reused, so one entry per write that added papers
(`Manifest.additions`: [its first key, its instant]) dates every paper: a paper was added
by the last write whose first key is at most its key. The record costs one entry per
write whatever the index holds, survives merges (which keep keys), and makes "added
since T" one bound on the key: every paper from the first key written after T on.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from ...text.dates import now

__all__ = ["added_at", "first_key_after", "recorded"]


def recorded(additions: list[list[Any]], first_key: int,
             when: str | None = None) -> list[list[Any]]:
    """`additions` with a write that added papers from `first_key` on, at `when`
    (default: now)."""
    return [*additions, [int(first_key), when or now()]]


def first_key_after(additions: list[list[Any]], since: str) -> int | None:
    """The first key the index handed out after the instant `since`; None when no write
    has added papers since."""
    for first, when in additions:
        if str(when) > since:
            return int(first)
    return None


def added_at(additions: list[list[Any]], keys: list[int]) -> list[str]:
    """The instant each of `keys` was added ('' for papers from before dates were kept)."""
    firsts = [int(first) for first, _ in additions]
    found = []
    for key in keys:
        at = bisect_right(firsts, int(key)) - 1
        found.append(str(additions[at][1]) if at >= 0 else "")
    return found
