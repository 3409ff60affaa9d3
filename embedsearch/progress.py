"""Progress bars on stderr for long work (encoding, sending rows to a server), or none.

The command line asks for one when stderr is a terminal and not `--quiet`; a bar counts
only what is left to do, so papers whose vectors are cached (a rebuild of the same
papers) show none.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["FALLBACK_COLUMNS", "FALLBACK_ROWS", "progress_bar"]

#: The width of a bar on a terminal that reports none (a pseudo-terminal opened without
#: a size, as `script`, some CI runners and editors' shells open them): tqdm's own
#: measure gives 0 columns there, and it drew nothing at all.
FALLBACK_COLUMNS = 80
#: Its height: tqdm draws no bar below a terminal's last row, and 0 rows hid it too.
FALLBACK_ROWS = 24


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

    sized = _columns() > 0
    return tqdm(total=total, initial=done, unit="paper", desc=description, file=sys.stderr,
                dynamic_ncols=sized, ncols=None if sized else FALLBACK_COLUMNS,
                nrows=None if sized else FALLBACK_ROWS, smoothing=0.05)


def _columns() -> int:
    """The width stderr's terminal reports (0: none, or not a terminal)."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0
