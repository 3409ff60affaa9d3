"""What build, add, sync, `similar --from` and `watch add` read: INPUT files and the
--zotero library they name, and the --report of what was skipped."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["inputs", "library", "read_files", "stream_files", "write_report"]

#: Each ZoteroLibrary selector and the option that gives it.
_SELECTORS = {"collection": "--collection", "tag": "--tag", "group": "--group-library"}


def library(args: argparse.Namespace) -> Any:
    """The `ZoteroLibrary` --zotero names, or None."""
    given = {name: getattr(args, name, None) for name in _SELECTORS}
    every = bool(getattr(args, "every_library", False))
    if getattr(args, "zotero", None) is None:
        stray = [_SELECTORS[name] for name, value in given.items() if value is not None]
        stray += ["--all-libraries"] if every else []
        if stray:
            raise InputError(f"{stray[0]} chooses what to read of a Zotero library: give "
                             "--zotero [DATA_DIR] too (a Milvus collection is "
                             "--storage-option collection=NAME)")
        return None
    from ..readers import ZoteroLibrary

    # --abstract-only (build, add, sync): each item its record, no attachment read in full.
    if every and given["group"] is not None:
        raise InputError("--group-library reads one group library, --all-libraries every "
                         "library with My Library: give one of them")
    return ZoteroLibrary(args.zotero or None, collection=given["collection"],
                         tag=given["tag"], group=given["group"],
                         full_text=not getattr(args, "abstract_only", False),
                         every_library=every)


def inputs(args: argparse.Namespace) -> list[Any]:
    """What build and add read: the INPUT files, then the --zotero library."""
    chosen = library(args)
    found = list(args.inputs) + ([chosen] if chosen is not None else [])
    if not found:
        raise InputError("give the papers to read: INPUT files, or --zotero [DATA_DIR]")
    return found


def read_files(args: argparse.Namespace, files: list[Any], *, title_only: bool,
               full_text: bool = False) -> Any:
    """The papers of `files` as --input-format, --strict say (a `Bibliography`); PDFs
    read in full with `full_text` (what build and add index), else their first pages
    only (examples and watches are known by their abstracts)."""
    from ..readers import read_bibliography

    return read_bibliography(files, getattr(args, "input_format", None),
                             title_only=title_only, strict=args.strict, full_text=full_text)


def stream_files(args: argparse.Namespace, files: list[Any], found: Any, *,
                 title_only: bool, full_text: bool) -> Iterator[Any]:
    """`read_files` as a stream of papers, for a build to read a buffer at a time: what
    is passed over, the notes and the title-only papers (their bodies left out) go to
    the `Bibliography` `found` as they are read, for `write_report`."""
    from ..readers import stream_papers

    for paper in stream_papers(files, getattr(args, "input_format", None),
                               title_only=title_only, strict=args.strict,
                               skipped=found.skipped, notes=found.notes, full_text=full_text):
        if paper.title_only:
            found.papers.append(dataclasses.replace(paper, passages=()))
        yield paper


def write_report(args: argparse.Namespace, *found: Any) -> None:
    """--report FILE: every skipped and title-only entry of what was read, as JSON."""
    if args.report:
        from ..fs import write_atomic

        entries = [entry for bibliography in found for entry in bibliography.report()]
        write_atomic(Path(args.report), json.dumps(entries, indent=2, ensure_ascii=False))
