"""Saved searches and digests: `embedsearch watch add|list|remove` and `embedsearch
digest`, declared (`add_commands`) and run here."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ..errors import InputError
from .context import filters_of, open_index, say
from .options import Declare, add_filters, add_index
from .sources import read_files

if TYPE_CHECKING:
    from ..watches.saved import Watch

__all__ = ["WATCH_K", "add_commands", "digest", "watch"]

_DIGEST_FORMATS = ("text", "json", "atom", "html")
#: `watching.WATCH_K`, spelled out: importing `watching` (numpy with it) would slow the
#: start of every command. tests/watches/test_digests.py holds the two equal.
WATCH_K = 20


def add_commands(command: Declare) -> None:
    """Declare watch and digest."""
    watching = command("watch", "Save a search (a query or a library) for digests.")
    actions = watching.add_subparsers(dest="action", metavar="ACTION", required=True)
    adding = actions.add_parser("add", help="Save a query, or --from a library's papers.",
                                description="Save a search under NAME: `digest` then lists "
                                            "the papers the index received since that "
                                            "match it.")
    adding.add_argument("name", metavar="NAME", help="its name (letters, digits, - _ .): "
                                                    "also its feed, /feeds/NAME.atom")
    adding.add_argument("query", nargs="?", metavar="QUERY", help="what to look for, in words")
    adding.add_argument("--from", dest="from_files", action="append", metavar="SOURCE",
                        help="instead of a query: papers like those of SOURCE (a .bib, "
                             ".ris, .jsonl ... file or zotero:DIR), kept with the watch "
                             "(repeatable)")
    # --min-similarity: its name while the floor compared the cosine; kept as an alias.
    adding.add_argument("--min-score", "--min-similarity", dest="min_similarity", type=float,
                        metavar="SCORE",
                        help="list only papers scoring at least this, the score a digest "
                             "shows, on the cosine scale (default: the floor "
                             "measured for its kind, a query's or a library's; `embedsearch "
                             "watch list` shows it; --min-similarity is its old name)")
    adding.add_argument("--replace", action="store_true", help="replace a watch of that name")
    add_filters(adding, WATCH_K)
    # `watch add` reads --from files as `similar` does, without its reading options.
    adding.set_defaults(strict=False, report=None)
    listing = actions.add_parser("list", help="List the saved searches.",
                                 description="List the saved searches: what each looks "
                                             "for, the most papers it lists (-k), its "
                                             "score floor, its filters and its last "
                                             "digest read.")
    listing.add_argument("--json", action="store_true", help="one JSON object per watch")
    removing = actions.add_parser("remove", help="Forget a saved search.",
                                  description="Forget the saved search NAME.")
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
    digesting.add_argument("--page-url", metavar="URL", default="",
                           help="the address of the index's embedsearch serve (http://"
                                "papers.lab:8000): papers without a URL, DOI or arXiv id "
                                "link to their view on its page (default: no link)")
    digesting.set_defaults(run=digest)


def watch(args: argparse.Namespace) -> None:
    engine = open_index(args, verify=False)
    if args.action == "list":
        _list(args, engine.watches.all())
        return
    if args.action == "remove":
        engine.watches.remove(args.name)
        say(args, f"Removed the watch '{args.name}'.")
        return
    kept = engine.watches.add(_new_watch(args), replace_existing=args.replace)
    say(args, f"Saved the watch '{kept.name}': {kept.describe()}. `embedsearch digest` "
              "lists what the index receives from now on.")


def _list(args: argparse.Namespace, kept: list[Watch]) -> None:
    """Each watch: its name and what it looks for, then its k, floor and filters, and
    when its last digest was read."""
    from ..text.dates import moment_in_words
    from ..watches.feeds import watch_details, watch_summary

    if args.json:
        for item in kept:
            print(json.dumps(watch_summary(item), ensure_ascii=False))
        return
    width = max((len(item.name) for item in kept), default=0) + 2
    for item in kept:
        read = (f"last digest read {moment_in_words(item.last_digest)}" if item.last_digest
                else f"saved {moment_in_words(item.created)}, no digest read yet"
                if item.created else "no digest read yet")
        print(f"{item.name:<{width}}{item.describe()}\n{'':<{width}}{watch_details(item)}"
              f"\n{'':<{width}}{read}")
    if not kept:
        say(args, "No saved searches yet: embedsearch watch add NAME \"QUERY\"")


def _new_watch(args: argparse.Namespace) -> Watch:
    from ..watches.saved import Watch

    if bool(args.query) == bool(args.from_files):
        raise InputError("give the watch a QUERY or --from FILE (one of them)")
    papers = read_files(args, args.from_files or [], title_only=True).papers
    if args.from_files and not papers:
        raise InputError(f"no papers in {', '.join(args.from_files)}")
    return Watch(name=args.name, query=args.query or "", papers=tuple(papers),
                 filters=filters_of(args), k=args.k, min_similarity=args.min_similarity,
                 source=", ".join(args.from_files or []))


def digest(args: argparse.Namespace) -> None:
    from ..text.dates import parse_since
    from ..watches.digests import digest as make_digest
    from ..watches.feeds import atom_feed, digest_text, index_name
    from ..watches.mails import digest_html

    engine = open_index(args, verify=False)
    chosen = ([engine.watches.get(name) for name in args.watch] if args.watch
              else engine.watches.all())
    if not chosen:
        raise InputError("no saved searches: add one with embedsearch watch add NAME "
                         "\"QUERY\"")
    since = parse_since(args.since) if args.since else None
    found = make_digest(engine, chosen, since=since)
    shape = args.digest_format
    page = args.page_url
    if shape == "json":
        print(json.dumps(found.to_dict(), ensure_ascii=False, indent=1))
    elif shape == "atom":
        sys.stdout.buffer.write(atom_feed(found, index=index_name(engine.info()),
                                          page_url=page))
    else:
        sys.stdout.write(digest_html(found, page_url=page) if shape == "html"
                         else digest_text(found, page_url=page))
    if since is None:
        engine.watches.mark_read([item.name for item in chosen], found.until)
