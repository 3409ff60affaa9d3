"""The command line's reference-manager library: `--zotero` on build and add, and `sync`.

Their arguments are declared here too (`add_library_options`, `add_commands`), so that
reading a library in place is one file to read.
"""

from __future__ import annotations

import argparse
import json

from ..errors import InputError
from .context import open_index, progress, say
from .options import Declare, add_index, add_wait
from .sources import library

__all__ = ["add_commands", "add_library_options", "sync"]


def add_library_options(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """--zotero [DATA_DIR] and what to read of the library."""
    chosen = parser.add_argument_group("a Zotero library, read in place (read-only, safe "
                                       "while Zotero runs)")
    chosen.add_argument("--zotero", nargs="?", const="", metavar="DATA_DIR",
                        required=required,
                        help="read the papers of the Zotero library in DATA_DIR (default: "
                             "the one Zotero's preferences name, else ~/Zotero), each "
                             "item's attachment in full (Zotero's full-text cache of it, "
                             "else its PDF); items without an abstract take it from their "
                             "stored PDF")
    chosen.add_argument("--collection", metavar="NAME",
                        help="with --zotero: only items in this collection or its "
                             "sub-collections (a path Thesis/Methods or a name)")
    chosen.add_argument("--tag", metavar="TAG", help="with --zotero: only items with this tag")
    chosen.add_argument("--group-library", dest="group", metavar="NAME",
                        help="with --zotero: this group library instead of My Library")
    chosen.add_argument("--all-libraries", dest="every_library", action="store_true",
                        help="with --zotero: My Library and every group library in one "
                             "index, each paper knowing its library (search --library "
                             "NAME keeps one's papers)")


def add_commands(command: Declare) -> None:
    """Declare sync."""
    syncing = command("sync", "Bring an index in step with a Zotero library: add new "
                              "items, update changed ones, remove deleted and trashed ones.")
    add_library_options(syncing, required=True)
    add_index(syncing)
    add_wait(syncing)
    syncing.add_argument("--dry-run", action="store_true",
                         help="say what would change, and change nothing")
    syncing.add_argument("--abstract-only", action="store_true",
                         help="keep each item as its record (and a PDF's abstract), reading "
                              "no attachment in full; without it, an attachment is read "
                              "again when its file or Zotero's text of it changed")
    syncing.add_argument("--allow-title-only", action="store_true",
                         help="index items without an abstract (nor a PDF that gives one) "
                              "on their titles")
    syncing.add_argument("--json", action="store_true",
                         help="one JSON object: the ids added, updated and removed")
    syncing.set_defaults(run=sync)


def sync(args: argparse.Namespace) -> None:
    if args.index is None:
        raise InputError("--index: give the index to keep in step (make it first with "
                         "`embedsearch build --zotero --out DIR`)")
    with open_index(args, verify=False) as engine:
        report = engine.sync(library(args), dry_run=args.dry_run,
                             allow_title_only=args.allow_title_only,
                             progress=progress(args), wait=args.wait)
    if args.json:
        print(json.dumps(report.to_dict()))
        return
    say(args, f"{engine.path}: {report.summary()}.")
    if args.dry_run:
        for verb, ids in (("add", report.added), ("update", report.updated),
                          ("remove", report.removed)):
            for paper_id in ids:
                print(f"would {verb} {paper_id}")
