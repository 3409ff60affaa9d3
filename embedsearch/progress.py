"""Progress bars on stderr for long work (encoding, sending rows to a server), or none."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar"]


class _NoBar:
    """What `progress_bar` gives when no bar is wanted: the same calls, doing nothing."""

    def update(self, count: int) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(total: int, description: str, *, done: int = 0,
                 enabled: bool = True) -> Any:
    """A tqdm bar counting papers from `done` to `total` if `enabled` and work remains;
    use it in a `with` or `close` it."""
    if not enabled or total == done:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="paper", desc=description, file=sys.stderr,
                dynamic_ncols=True, smoothing=0.05)
