"""The `embedsearch` command: arguments in, engine calls, results out.

Every error the engine raises on purpose becomes one line on stderr and exit status 1
(2 for bad arguments); `--debug` shows the traceback instead.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import EmbedSearchError, worded
from .options import say_renamed
from .parser import build_parser

__all__ = ["main"]

#: The flag of each engine parameter (`EmbedSearchError.parameter`) not spelt "--" and
#: the name with "-" for "_": the filters take one venue or keyword per flag; the query
#: is an argument, not a flag (None: the message is printed as it is), and so are
#: backup's DEST and a watch's NAME, named as the usage line names them.
_FLAGS: dict[str, str | None] = {"k": "-k", "venues": "--venue", "keywords": "--keyword",
                                 "libraries": "--library", "query": None, "dest": "DEST",
                                 "name": "NAME"}


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to sys.stderr as it is when each message comes, not as it was when the
    handler was made: callers (and tests) replace sys.stderr between commands."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _log_to_stderr(*, quiet: bool) -> None:
    """The engine reports slow one-off steps (model export, backend choice) by logging."""
    logger = logging.getLogger("embedsearch")
    if not logger.handlers:
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.propagate = False  # libraries that configure the root logger would echo it
    logger.setLevel(logging.ERROR if quiet else logging.INFO)


def _flag(parameter: str) -> str | None:
    """The flag that gives an engine parameter (None: the query, an argument)."""
    return _FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    _log_to_stderr(quiet=args.quiet)
    say_renamed(args)
    try:
        status = args.run(args)
    except BrokenPipeError:  # e.g. piped into `head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # and exit's flush
        return 0
    except KeyboardInterrupt:
        print("embedsearch: interrupted; no index was changed", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        if isinstance(exc, (EmbedSearchError, OSError)):
            print(f"embedsearch: error: {worded(exc, _flag)}", file=sys.stderr)
        else:
            print(f"embedsearch: unexpected error: {type(exc).__name__}: {exc} (rerun with "
                  "--debug to see where)", file=sys.stderr)
        return 1
    return status if isinstance(status, int) else 0
