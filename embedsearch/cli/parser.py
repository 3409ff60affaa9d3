"""The `embedsearch` command line, assembled: every command group declares its own
commands, options and handlers (`add_commands`, see `options.Declare`); this module
gives them the `command` helper, the options every command shares, and the overview."""

from __future__ import annotations

import argparse
import sys

from .._version import __version__
from . import (
    assistant,
    describing,
    indexing,
    library,
    measuring,
    sample,
    searching,
    serving,
    upkeep,
    watches,
)
from .options import Declare

__all__ = ["build_parser", "overview"]

#: The command groups, in the order of the help: making and finding first, then
#: watching, operating, serving and measuring.
GROUPS = (indexing, searching, sample, describing, watches, library, upkeep, serving,
          assistant, measuring)

_COMMON = """\
most used:
  embedsearch search "low-rank visual prompting"          # the bundled ICLR 2025 sample
  embedsearch build papers.jsonl --out indexes/mine       # index your own papers
  embedsearch similar PAPER_ID --index indexes/mine       # papers like one you know
"""

_EXAMPLES = """\
examples:
  embedsearch search "low-rank visual prompting"          # bundled ICLR 2025 sample
  embedsearch sample papers.jsonl                         # the sample as a file of yours
  embedsearch build papers.jsonl --out indexes/mine
  embedsearch search "graph neural networks" --index indexes/mine -k 5 --year 2023-2025
  embedsearch similar iclr2025:7 --index indexes/mine --json
  embedsearch similar ID1 ID2 --not ID3 --index indexes/mine  # like these, unlike that
  embedsearch similar --from refs.bib --index indexes/mine    # like your own papers
  embedsearch search "diffusion" --format ris > diffusion.ris  # or bibtex, csl-json
  embedsearch add new.csv --index indexes/mine
  embedsearch build papers.jsonl --out indexes/big --storage milvus:http://milvus:19530
  embedsearch remove iclr2025:7 --index indexes/mine
  embedsearch serve --index indexes/mine            # web page and API on 127.0.0.1:8000
  embedsearch mcp --index indexes/mine              # tools for an AI assistant (stdio)
"""


def _common_options() -> argparse.ArgumentParser:
    """-q, --debug and --cache-dir, a parent of every command but bench and eval."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars, messages or warnings on stderr (errors "
                             "still print)")
    common.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    common.add_argument("--cache-dir", metavar="DIR",
                        help="exported models and the embedding cache (default: "
                             "$EMBEDSEARCH_CACHE_DIR or ~/.cache/embedsearch)")
    return common


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every command, its options and its help."""
    parser = argparse.ArgumentParser(
        prog="embedsearch",
        description="Semantic search over research papers: build an index of abstracts, "
                    "then find papers by meaning or by example.",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"embedsearch {__version__}")
    shared = _common_options()
    # No COMMAND prints the overview rather than argparse's bare "the following
    # arguments are required"; the defaults are what `main` reads.
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    summaries: list[tuple[str, str]] = []  # for the overview, in the order added

    def command(name: str, summary: str, *, common: bool = True) -> argparse.ArgumentParser:
        summaries.append((name, summary))
        return subparsers.add_parser(name, parents=[shared] if common else [], help=summary,
                                     description=summary)

    declare: Declare = command  # what every group's add_commands takes
    for group in GROUPS:
        group.add_commands(declare)
    # `commands`: every command's name, in the order of the help (the docs test the
    # reference against it).
    parser.set_defaults(run=overview, quiet=False, debug=False,
                        overview=_overview(summaries),
                        commands=tuple(name for name, _ in summaries))
    return parser


def overview(args: argparse.Namespace) -> None:
    """`embedsearch` alone: the commands and the commonest uses, on stderr, status 2.

    2, as for any unusable command line: a script that lost its command fails rather
    than printing help to a pipe and succeeding; `embedsearch --help` is the one that
    prints help and succeeds.
    """
    sys.stderr.write(args.overview)
    raise SystemExit(2)


def _overview(rows: list[tuple[str, str]]) -> str:
    """What `embedsearch` alone prints: every command in a line, and the commonest uses."""
    width = max(len(name) for name, _ in rows) + 2
    lines = [f"  {name:<{width}}{summary}" for name, summary in rows]
    return ("usage: embedsearch COMMAND [options]  (embedsearch COMMAND --help for its "
            "options)\n\ncommands:\n" + "\n".join(lines) + "\n\n" + _COMMON)
