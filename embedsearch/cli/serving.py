"""The commands that serve an index: `serve` (HTTP, the page), declared here
(`add_commands`, called by the parser) with everything that decides who can reach it."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from . import commands

__all__ = ["add_commands"]

Command = Callable[..., argparse.ArgumentParser]
Adder = Callable[[argparse.ArgumentParser], None]


def add_commands(command: Command, add_index: Adder) -> None:
    """Declare serve with the parser's `command` helper."""
    serve = command("serve", "Serve the index over HTTP: a JSON API and a web page.")
    add_index(serve)
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1, this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--allow-writes", action="store_true",
                       help="accept POST /papers and DELETE /papers/{id} (default read-only)")
    serve.add_argument("--no-map", action="store_true",
                       help="do not compute the corpus map when the index has none")
    serve.add_argument("--token", metavar="TOKEN",
                       help="writes need the header 'Authorization: Bearer TOKEN' (which "
                            "grants reads too); required with --allow-writes on a --host "
                            "other than loopback (default: $EMBEDSEARCH_TOKEN; prefer it, "
                            "other users can see command lines)")
    serve.add_argument("--read-token", metavar="TOKEN",
                       help="every endpoint but the page shell and /docs needs this token "
                            "or --token; the page asks for it once (default: "
                            "$EMBEDSEARCH_READ_TOKEN)")
    serve.add_argument("--allowed-host", metavar="NAME", action="append", default=[],
                       help="also answer requests whose Host header is NAME (repeatable); "
                            "localhost, 127.0.0.1, ::1 and --host are always answered, any "
                            "other Host is refused (this defeats DNS rebinding). With --host "
                            "0.0.0.0 pass each name or address clients use, e.g. "
                            "--allowed-host myserver.lan --allowed-host 192.168.1.20")
    serve.add_argument("--cors-origin", metavar="ORIGIN", action="append", default=[],
                       help="let pages on ORIGIN (e.g. https://example.org) call the API "
                            "from a browser (repeatable; default: no other origin may)")
    serve.set_defaults(run=commands.serve)
