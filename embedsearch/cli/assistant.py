"""`embedsearch mcp`: the index's tools for an AI assistant, over MCP on stdio.

Its arguments are declared here too (`add_commands`, called by the parser). The
assistant's client starts the command and speaks the protocol on its stdin and stdout,
so nothing else may reach stdout: opening the index and loading the model happen with
stdout pointed at stderr, and the SDK diverts it likewise while it serves.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout

from .context import open_index
from .options import Declare, add_index

__all__ = ["add_commands", "mcp"]

#: `integrations.mcp.MAX_CHARS`, spelt out so that `--help` does not import the SDK; a
#: test holds the two equal.
MAX_CHARS = 16_000

_EPILOG = """\
An assistant's client starts this command itself. In Claude Desktop's
claude_desktop_config.json, for example:

  {"mcpServers": {"papers": {"command": "embedsearch",
                             "args": ["mcp", "--index", "/home/me/indexes/mine"]}}}

Tools: search, similar, recommend, get and info, all read-only. Each answer lists a
paper per line (id, title, venue, year, score) with its evidence sentence, abstracts
only when asked (detail="full"), and at most --max-chars characters. The same tools are
served over HTTP at /mcp by `embedsearch serve`.

Needs pip install "embedsearch[mcp]". A one-shot check that it answers:
  echo '{"jsonrpc": "2.0", "id": 1, "method": "ping"}' | embedsearch mcp --index DIR
"""


def add_commands(command: Declare) -> None:
    """Declare `mcp`."""
    serving = command("mcp", "Serve the index's tools to an AI assistant (MCP over stdio).")
    serving.epilog = _EPILOG
    serving.formatter_class = argparse.RawDescriptionHelpFormatter
    add_index(serving)
    serving.add_argument("--max-chars", type=int, default=MAX_CHARS, metavar="N",
                         help=f"the most characters one answer holds; a longer one is cut "
                              f"at a paper's end, saying so (default {MAX_CHARS:,}, about "
                              f"{MAX_CHARS // 4:,} tokens)")
    serving.set_defaults(run=mcp)


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Anything printed meanwhile, by Python or by a native library, goes to stderr: on
    stdout it would corrupt the protocol."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def mcp(args: argparse.Namespace) -> None:
    from ..errors import InputError
    from ..integrations.mcp import create_server  # DependencyError without the extra

    if args.max_chars < 1000:
        raise InputError(f"--max-chars: {args.max_chars} is too few for one paper; give "
                         "1000 or more")
    with _stdout_to_stderr():
        engine = open_index(args)
        engine.search("warm up the encoder", k=1)  # load the model before the first call
    try:
        create_server(engine, local=True, max_chars=args.max_chars).run("stdio")
    finally:
        engine.close()
