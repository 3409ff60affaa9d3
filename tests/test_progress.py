"""Progress bars on a real pseudo-terminal: drawn even where the terminal reports no
size, and not at all when nothing is left to do."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import sys
import termios
from collections.abc import Iterator
from typing import IO

import pytest

from embedsearch.progress import progress_bar


@pytest.fixture
def terminal() -> Iterator[tuple[int, IO[str]]]:
    """A pseudo-terminal opened without a size (0 × 0), as `script`, some CI runners and
    editors' shells open them: (its reading end, a text stream writing to it)."""
    reading, writing = os.openpty()
    fcntl.ioctl(writing, termios.TIOCSWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
    with os.fdopen(writing, "w", encoding="utf-8") as stream:
        yield reading, stream
    os.close(reading)


def _drawn(reading: int, wait: float = 5.0) -> str:
    """What reached the terminal; the pty hands written bytes on to its reader shortly
    after, so this waits for the first (up to `wait` seconds) and takes what follows."""
    drawn = b""
    while select.select([reading], [], [], wait if not drawn else 0.2)[0]:
        drawn += os.read(reading, 1 << 16)
    return drawn.decode("utf-8", "replace")


def test_a_bar_is_drawn_on_a_terminal_that_reports_no_size(
        terminal: tuple[int, IO[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    # tqdm measured 0 columns there and drew nothing: the sample's first search showed
    # no bar in such a terminal, while the tutorial promised one. (stderr is set here,
    # in the test: pytest sets its own again when the test starts.)
    reading, stream = terminal
    monkeypatch.setattr(sys, "stderr", stream)
    bar = progress_bar(38, "Encoding")
    bar.update(38)
    bar.close()
    stream.flush()
    drawn = _drawn(reading)
    assert "Encoding: 100%" in drawn and "38/38 [" in drawn


def test_no_bar_when_everything_is_done_already(terminal: tuple[int, IO[str]],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    reading, stream = terminal
    monkeypatch.setattr(sys, "stderr", stream)
    progress_bar(38, "Encoding", done=38).close()  # every vector cached
    stream.write("done\n")
    stream.flush()
    assert _drawn(reading).strip() == "done"
