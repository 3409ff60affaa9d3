"""When a local index received each paper, from the keys it handed out.

Keys are handed out in order and never reused, so one entry per write that added papers
(`LocalRecord.additions`: its first key, its instant) dates every paper: a paper was added
by the last write whose first key is at most its key. The record costs one entry per
write whatever the index holds, survives merges (which keep keys), and makes "added
since T" one bound on the key: every paper from the first key written after T on.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from ...text.dates import now
from ..records import Addition

__all__ = ["added_at", "first_key_after", "recorded"]


def recorded(additions: Sequence[Addition], first_key: int,
             when: str | None = None) -> tuple[Addition, ...]:
    """`additions` with a write that added papers from `first_key` on, at `when`
    (default: now)."""
    return (*additions, (int(first_key), when or now()))


def first_key_after(additions: Sequence[Addition], since: str) -> int | None:
    """The first key the index handed out after the instant `since`; None when no write
    has added papers since."""
    for first, when in additions:
        if when > since:
            return first
    return None


def added_at(additions: Sequence[Addition], keys: list[int]) -> list[str]:
    """The instant each of `keys` was added ('' for papers from before dates were kept)."""
    firsts = [first for first, _ in additions]
    found = []
    for key in keys:
        at = bisect_right(firsts, int(key)) - 1
        found.append(additions[at][1] if at >= 0 else "")
    return found
