"""How a command group declares itself, and the options several groups share.

Every group (`indexing`, `searching`, `watches`, ...) has an `add_commands(command)`
that declares its commands with the parser's `command` helper (a `Declare`) and sets
each one's handler (`run`), so a command's arguments and what it does are read in one
file; `parser` only assembles the groups.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Protocol

__all__ = ["BACKEND_CHOICES", "Declare", "add_filters", "add_index", "add_reading_checks",
           "add_renamed", "add_storage_secrets", "add_wait", "say_renamed"]

# Spelled out rather than read from the backend registry: importing that (and numpy with
# it) would double the cold start of `embedsearch info`. A test holds the two equal.
BACKEND_CHOICES = ("torch", "cuda", "onnx", "onnx-int8", "openvino", "openvino-bf16",
                   "openvino-int8", "auto")


class Declare(Protocol):
    """The parser's `command` helper: a new command `name` with its one-line `summary`
    (the overview's line, its --help's description). `common` False: without -q,
    --debug and --cache-dir (bench and eval, whose runs read none of them)."""

    def __call__(self, name: str, summary: str, *,
                 common: bool = True) -> argparse.ArgumentParser: ...


class _Renamed(argparse.Action):
    """An option's old spelling: it still works, and says once on stderr (after parsing,
    unless --quiet: see `cli.main`) what it is called now."""

    def __init__(self, option_strings: list[str], dest: str, *, new: str,
                 **options: Any) -> None:
        super().__init__(option_strings, dest, **options)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        notes = list(getattr(namespace, "renamed", None) or [])
        notes.append(f"{parser.prog}: {option_string} is deprecated: it is now {self.new} "
                     "(the old spelling will go in a later version)")
        namespace.renamed = notes


def add_renamed(parser: argparse.ArgumentParser, old: str, new: str, **options: Any) -> None:
    """Accept `old` as a hidden, deprecated spelling of the option `new` (declared
    already, with the same `options`: dest, choices, ...)."""
    parser.add_argument(old, action=_Renamed, new=new, help=argparse.SUPPRESS, **options)


def add_wait(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wait", type=float, default=600, metavar="SECONDS",
                        help="if another process is writing the index (a server, a cron "
                             "add), wait up to SECONDS for it, then give up (default 600; "
                             "encoding happens before the wait)")


def add_storage_secrets(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--storage-option", action="append", metavar="KEY=VALUE",
                        help="an option of the index's storage, repeatable: for a Milvus "
                             "server that asks for one, token=USER:PASSWORD or an API key "
                             "(default: $MILVUS_TOKEN; prefer it, other users can see "
                             "command lines; never written to disk)")
    parser.add_argument("--milvus-token", metavar="TOKEN", help="same as --storage-option "
                                                                "token=TOKEN")


def add_index(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--index", metavar="DIR",
                        help="index directory (default: the bundled ICLR 2025 sample's, "
                             "built on first use in ~/.local/share/embedsearch/indexes/"
                             "iclr2025, or indexes/iclr2025 of an embedsearch checkout)")
    add_storage_secrets(parser)


def add_filters(parser: argparse.ArgumentParser, k: int = 10) -> None:
    """-k (its default `k`) and the filters, for search, similar and watch add."""
    parser.add_argument("-k", type=int, default=k, help=f"how many papers (default {k})")
    parser.add_argument("--year", help="a year (2024) or a range (2023-2025, 2023-, -2024)")
    parser.add_argument("--venue", action="append", metavar="NAME",
                        help="only papers of this venue (case-insensitive; repeat for any of "
                             "several)")
    parser.add_argument("--keyword", action="append", metavar="WORD",
                        help="only papers with this author keyword (repeat for any of several)")
    parser.add_argument("--collection", action="append", metavar="NAME",
                        help="only papers in this collection of your reference manager or "
                             "its sub-collections: a path (Thesis/Methods) or a name (repeat "
                             "for any of several)")
    parser.add_argument("--library", action="append", metavar="NAME",
                        help="only papers of this reference-manager library: a Zotero "
                             "group library's name, or \"My Library\" (repeat for any of "
                             "several)")
    parser.add_argument("--added-since", metavar="WHEN",
                        help="only papers the index received since WHEN: a date "
                             "(2026-12-01), a date and time, or a span back (7d, 24h)")


def add_reading_checks(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true",
                        help="refuse a file with a malformed entry (a missing brace, a cut RIS "
                             "entry) instead of skipping that entry with a warning")
    parser.add_argument("--report", metavar="FILE",
                        help="write every skipped or title-only entry (file, line, entry, "
                             "reason) to FILE as JSON")


def say_renamed(args: argparse.Namespace) -> None:
    """The deprecation notes of the old spellings used (`add_renamed`), on stderr."""
    if not getattr(args, "quiet", False):
        for note in getattr(args, "renamed", None) or ():
            print(note, file=sys.stderr)
