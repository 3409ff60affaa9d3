"""The commands that serve an index: `serve` (HTTP, the page), declared here
(`add_commands`, called by the parser) with everything that decides who can reach it."""

from __future__ import annotations

import argparse
import os

from ..errors import DependencyError
from .context import open_index, say
from .options import Declare, add_index
from .output import counted

__all__ = ["add_commands", "serve"]


def add_commands(command: Declare) -> None:
    """Declare serve."""
    serving = command("serve", "Serve the index over HTTP: a JSON API and a web page.")
    add_index(serving)
    serving.add_argument("--host", default="127.0.0.1",
                         help="address to listen on (default 127.0.0.1, this machine only)")
    serving.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serving.add_argument("--allow-writes", action="store_true",
                         help="accept POST /papers and DELETE /papers/{id} (default read-only)")
    serving.add_argument("--no-map", action="store_true",
                         help="do not compute the corpus map when the index has none")
    serving.add_argument("--token", metavar="TOKEN",
                         help="writes need the header 'Authorization: Bearer TOKEN' (which "
                              "grants reads too); required with --allow-writes on a --host "
                              "other than loopback (default: $EMBEDSEARCH_TOKEN; prefer it, "
                              "other users can see command lines)")
    serving.add_argument("--read-token", metavar="TOKEN",
                         help="every endpoint but the page shell and /docs needs this token "
                              "or --token; the page asks for it once (default: "
                              "$EMBEDSEARCH_READ_TOKEN)")
    serving.add_argument("--allowed-host", metavar="NAME", action="append", default=[],
                         help="also answer requests whose Host header is NAME (repeatable); "
                              "localhost, 127.0.0.1, ::1 and --host are always answered, any "
                              "other Host is refused (this defeats DNS rebinding). With --host "
                              "0.0.0.0 pass each name or address clients use, e.g. "
                              "--allowed-host myserver.lan --allowed-host 192.168.1.20")
    serving.add_argument("--cors-origin", metavar="ORIGIN", action="append", default=[],
                         help="let pages on ORIGIN (e.g. https://example.org) call the API "
                              "from a browser (repeatable; default: no other origin may)")
    serving.set_defaults(run=serve)


def serve(args: argparse.Namespace) -> None:
    try:
        from ..server import serve as serve_engine
        from ..server.security import check_options, is_loopback, is_wildcard
    except ImportError as exc:
        raise DependencyError(f"embedsearch serve needs the server extra ({exc.name} is "
                              "missing): pip install 'embedsearch[server]'") from None

    # An explicit empty --token is an error, not "no token": only the variables may be empty.
    token = args.token if args.token is not None else os.environ.get("EMBEDSEARCH_TOKEN") or None
    read_token = (args.read_token if args.read_token is not None
                  else os.environ.get("EMBEDSEARCH_READ_TOKEN") or None)
    check_options(args.host, allow_writes=args.allow_writes, token=token,
                  read_token=read_token, cors_origins=args.cors_origin)
    if not is_loopback(args.host) and read_token is None:
        say(args, f"Warning: on --host {args.host} anyone who can reach this machine can "
                  "search the index and read every paper in it; pass --read-token (or set "
                  "EMBEDSEARCH_READ_TOKEN) to require a token, or serve on --host 127.0.0.1.")
    if is_wildcard(args.host) and not args.allowed_host:
        say(args, f"Note: on --host {args.host} only requests to localhost are answered; "
                  "pass --allowed-host NAME for each name or address clients use.")
    engine = open_index(args)
    say(args, f"Serving {engine.path} ({counted(len(engine), 'paper')}) on "
              f"http://{args.host}:{args.port}/ "
              f"({'read-write' if args.allow_writes else 'read-only'}); Ctrl+C stops.")
    serve_engine(engine, host=args.host, port=args.port, allow_writes=args.allow_writes,
                 compute_map=not args.no_map, log_level="warning" if args.quiet else "info",
                 token=token, read_token=read_token, allowed_hosts=args.allowed_host,
                 cors_origins=args.cors_origin)
