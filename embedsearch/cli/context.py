"""What every command's handler reads of its arguments: the index it names (opened), its
filters, and whether to talk to the person at the keyboard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..bundled import default_index
from ..errors import InputError
from ..filters import Filters

__all__ = ["filters_of", "index_path", "open_index", "progress", "say", "storage_options"]


def progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


def say(args: argparse.Namespace, message: str) -> None:
    """Print a message for the person at the keyboard on stderr, unless --quiet."""
    if not args.quiet:
        print(message, file=sys.stderr)


def open_index(args: argparse.Namespace, *, model: str | None = None,
               verify: bool = True) -> Any:
    """The engine of the index the command names. `verify` False: files are checked by
    size, not hashed (a write that reads a few records should not hash the index)."""
    from ..engine import SearchEngine

    options = {"backend": getattr(args, "backend", None), "cache_dir": args.cache_dir,
               "verify": verify,
               "cache": not getattr(args, "no_cache", False),
               "secrets": storage_options(args),
               "query_prompt": getattr(args, "query_prompt", None)}
    if args.index is None:
        sample = default_index()
        if not (sample / "manifest.json").exists():
            say(args, f"Building the default index of the bundled ICLR 2025 sample in "
                       f"{sample} (first use only)...")
        return SearchEngine.open_default(sample, progress=progress(args),
                                         cache_dir=args.cache_dir)
    return SearchEngine.open(args.index, model=model, **options)


def index_path(args: argparse.Namespace) -> Path:
    """The index a command names: --index, else the bundled sample's."""
    return Path(args.index) if args.index else default_index()


def storage_options(args: argparse.Namespace) -> dict[str, str]:
    """--storage-option KEY=VALUEs, with the older --milvus-token. (The older Milvus
    --collection is gone: --collection chooses a Zotero collection, or filters.)"""
    options: dict[str, str] = {}
    for option in getattr(args, "storage_option", None) or []:
        key, equals, value = option.partition("=")
        if not equals or not key:
            raise InputError(f"--storage-option {option}: write KEY=VALUE")
        options[key.strip()] = value
    token = getattr(args, "milvus_token", None)
    if token is not None:
        options.setdefault("token", token)
    return options


def filters_of(args: argparse.Namespace) -> Filters:
    """The filters --year, --venue, --keyword, --collection, --library and
    --added-since give."""
    return Filters.parse(year=args.year, venues=args.venue or (), keywords=args.keyword or (),
                         collections=args.collection or (),
                         added_since=getattr(args, "added_since", None),
                         libraries=getattr(args, "library", None) or ())
