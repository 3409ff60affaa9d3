"""Saved searches and digests: `embedsearch watch add|list|remove` and `embedsearch
digest`, declared (`add_commands`) and run here."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import InputError
from .commands import open_index, say

if TYPE_CHECKING:
    from ..watching import Watch

__all__ = ["add_commands", "digest", "watch"]

Command = Callable[..., argparse.ArgumentParser]
Adder = Callable[[argparse.ArgumentParser], None]

_DIGEST_FORMATS = ("text", "json", "atom", "html")


def add_commands(command: Command, add_index: Adder, add_filters: Adder) -> None:
    """Declare watch and digest with the parser's `command` helper."""
    watching = command("watch", "Save a search (a query or a library) for digests.")
    actions = watching.add_subparsers(dest="action", metavar="ACTION", required=True)
    adding = actions.add_parser("add", help="save a query, or --from a library's papers",
                                description="Save a search under NAME: `digest` then lists "
                                            "the papers the index received since that "
                                            "match it.")
    adding.add_argument("name", metavar="NAME", help="its name (letters, digits, - _ .): "
                                                    "also its feed, /feeds/NAME.atom")
    adding.add_argument("query", nargs="?", help="what to look for, in words")
    adding.add_argument("--from", dest="from_files", action="append", metavar="SOURCE",
                        help="instead of a query: papers like those of SOURCE (a .bib, "
                             ".ris, .jsonl ... file or zotero:DIR), kept with the watch "
                             "(repeatable)")
    adding.add_argument("--min-similarity", type=float, metavar="SCORE",
                        help="list only papers scoring at least this, the score a digest "
                             "shows, on the cosine scale (default: the floor "
                             "measured for its kind, a query's or a library's; `embedsearch "
                             "watch list` shows it)")
    adding.add_argument("--replace", action="store_true", help="replace a watch of that name")
    add_filters(adding)
    # `watch add` reads --from files as `similar` does, without its reading options.
    adding.set_defaults(k=20, strict=False, report=None)
    listing = actions.add_parser("list", help="the saved searches")
    listing.add_argument("--json", action="store_true", help="one JSON object per watch")
    removing = actions.add_parser("remove", help="forget a saved search")
    removing.add_argument("name", metavar="NAME")
    for sub in (adding, listing, removing):
        add_index(sub)
        sub.add_argument("-q", "--quiet", action="store_true", help="no messages on stderr")
        sub.set_defaults(run=watch, cache_dir=None, debug=False)

    digesting = command("digest", "For each saved search, the papers added since a time.")
    add_index(digesting)
    since = digesting.add_mutually_exclusive_group()
    since.add_argument("--since", metavar="WHEN",
                       help="papers the index received since WHEN: a date (2026-12-01), a "
                            "date and time, or a span back from now (7d, 24h)")
    since.add_argument("--since-last", action="store_true",
                       help="each watch from its last digest read with --since-last (the "
                            "first time: from when it was saved), then mark this one read "
                            "(the default without --since)")
    digesting.add_argument("--watch", action="append", metavar="NAME",
                           help="only this saved search (repeatable; default: all)")
    digesting.add_argument("--format", dest="digest_format", choices=_DIGEST_FORMATS,
                           default="text", help="text (default), json, atom (a feed) or "
                                                "html (a page to mail)")
    digesting.set_defaults(run=digest)


def watch(args: argparse.Namespace) -> None:
    from ..digests import similarity_floor

    engine = open_index(args, verify=False)
    if args.action == "list":
        kept = engine.watches.all()
        for item in kept:
            if args.json:
                print(json.dumps({key: value for key, value in item.to_dict().items()
                                  if key != "papers"}, ensure_ascii=False))
            else:
                print(f"{item.name:<20} {item.describe()}  (score "
                      f"{similarity_floor(item):.3f} or more"
                      + (f"; last digest {item.last_digest})" if item.last_digest else ")"))
        if not kept and not args.json:
            say(args, "No saved searches yet: embedsearch watch add NAME \"QUERY\"")
        return
    if args.action == "remove":
        engine.watches.remove(args.name)
        say(args, f"Removed the watch '{args.name}'.")
        return
    kept = engine.watches.add(_new_watch(args), replace_existing=args.replace)
    say(args, f"Saved the watch '{kept.name}': {kept.describe()}. `embedsearch digest` "
              "lists what the index receives from now on.")


def _new_watch(args: argparse.Namespace) -> Watch:
    from ..watching import Watch
    from .commands import filters_of, read_files

    if bool(args.query) == bool(args.from_files):
        raise InputError("give the watch a QUERY or --from FILE (one of them)")
    papers = read_files(args, args.from_files or [], title_only=True).papers
    if args.from_files and not papers:
        raise InputError(f"no papers in {', '.join(args.from_files)}")
    return Watch(name=args.name, query=args.query or "", papers=tuple(papers),
                 filters=filters_of(args), k=args.k, min_similarity=args.min_similarity,
                 source=", ".join(args.from_files or []))


def digest(args: argparse.Namespace) -> None:
    from ..dates import parse_since
    from ..digests import digest as make_digest
    from ..feeds import atom_feed, digest_html, digest_text, index_name

    engine = open_index(args, verify=False)
    chosen = ([engine.watches.get(name) for name in args.watch] if args.watch
              else engine.watches.all())
    if not chosen:
        raise InputError("no saved searches: add one with embedsearch watch add NAME "
                         "\"QUERY\"")
    since = parse_since(args.since) if args.since else None
    found = make_digest(engine, chosen, since=since)
    shape = args.digest_format
    if shape == "json":
        print(json.dumps(found.to_dict(), ensure_ascii=False, indent=1))
    elif shape == "atom":
        sys.stdout.buffer.write(atom_feed(found, index=index_name(engine.info())))
    else:
        sys.stdout.write(digest_html(found) if shape == "html" else digest_text(found))
    if since is None:
        engine.watches.mark_read([item.name for item in chosen], found.until)
