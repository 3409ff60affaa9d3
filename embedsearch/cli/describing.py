"""The commands that describe an index and its papers: `show` (one paper), `info` (the
index) and `map` (its clusters), declared (`add_commands`) and run here."""

from __future__ import annotations

import argparse

from ..bundled import default_index
from ..errors import EmbedSearchError
from . import output
from .context import open_index, say
from .options import Declare, add_index, add_wait

__all__ = ["add_commands", "corpus_map", "info", "show"]


def add_commands(command: Declare) -> None:
    """Declare show, info and map."""
    showing = command("show", "Print one paper of the index.")
    showing.add_argument("paper_id", metavar="PAPER_ID")
    add_index(showing)
    showing.add_argument("--json", action="store_true", help="the paper as one JSON object")
    showing.add_argument("--passages", action="store_true",
                         help="also its passages, each with its page and section, for a "
                              "paper read in full (a PDF): what a citation points at")
    showing.set_defaults(run=show)

    describing = command("info", "Describe an index: size, model, index type, files.")
    add_index(describing)
    describing.add_argument("--json", action="store_true", help="one JSON object")
    describing.set_defaults(run=info)

    mapping = command("map", "Compute the 2D map of an index (stored with it) and print its "
                             "clusters.")
    add_index(mapping)
    add_wait(mapping)
    mapping.add_argument("--json", action="store_true",
                         help="one JSON object per cluster (id, label, words, x, y, size)")
    mapping.set_defaults(run=corpus_map)


def show(args: argparse.Namespace) -> None:
    engine = open_index(args)
    found = engine.get(args.paper_id)
    output.paper(found, json_lines=args.json,
                 passages=engine.passages(args.paper_id) if args.passages else None)


def info(args: argparse.Namespace) -> None:
    from ..index.info import index_info

    if args.index is None and not (default_index() / "manifest.json").exists():
        open_index(args)
    output.info(index_info(args.index or default_index()), json_lines=args.json)


def corpus_map(args: argparse.Namespace) -> None:
    """`embedsearch map`: the stored map's clusters, computed first if the index has none."""
    engine = open_index(args)
    computed = engine.corpus_map()
    if computed is None:
        say(args, f"Computing the map of {output.counted(len(engine), 'paper')} (UMAP takes "
                  "a few minutes for tens of thousands)...")
        computed = engine.compute_map(wait=args.wait)
    if computed is None:
        raise EmbedSearchError("the index changed while its map was computed; run this again")
    output.corpus_map(computed, json_lines=args.json)
