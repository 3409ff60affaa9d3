"""`embedsearch sample FILE`: the bundled sample written as a file of your own, declared
(`add_commands`) and run here. The tutorial starts from it: its papers are the default
index's, with the same ids (iclr2025:1 ... iclr2025:38)."""

from __future__ import annotations

import argparse
import io
import re
import sys
from pathlib import Path

from ..errors import InputError
from .context import say
from .options import Declare

__all__ = ["SUFFIXES", "add_commands", "sample"]

#: The file extensions written (`exporting.EXPORT_FORMATS`' suffixes; a test holds them).
SUFFIXES = (".jsonl", ".csv", ".bib", ".ris", ".json")
_RANGE = re.compile(r"^\s*(\d+)?\s*-\s*(\d+)?\s*$|^\s*(\d+)\s*$")


def add_commands(command: Declare) -> None:
    """Declare sample."""
    sampling = command("sample", "Write the bundled sample (38 ICLR 2025 papers) to a file.")
    sampling.add_argument("file", metavar="FILE",
                          help="where to write it, as its extension says: .jsonl (JSON "
                               "lines), .csv, .bib, .ris or .json (CSL-JSON); '-' for JSON "
                               "lines on stdout")
    sampling.add_argument("--papers", metavar="RANGE",
                          help="only papers in RANGE of their numbers, e.g. 1-30 or 31-38 "
                               "(default: all 38; the ids are iclr2025:NUMBER)")
    sampling.set_defaults(run=sample)


def _chosen(text: str | None, count: int) -> range:
    """The paper numbers (1-based) `--papers` names."""
    if text is None:
        return range(1, count + 1)
    match = _RANGE.match(text)
    if not match:
        raise InputError(f"--papers {text}: write a range such as 1-30 or 31-38")
    single = match.group(3)
    first = int(single or match.group(1) or 1)
    last = int(single or match.group(2) or count)
    if not 1 <= first <= last <= count:
        raise InputError(f"--papers {text}: the sample's papers are numbered 1 to {count}")
    return range(first, last + 1)


def sample(args: argparse.Namespace) -> None:
    from ..bundled import sample_papers
    from ..exporting import EXPORT_FORMATS, write

    papers = sample_papers()
    chosen = [papers[number - 1] for number in _chosen(args.papers, len(papers))]
    if args.file == "-":
        write(chosen, "jsonl", sys.stdout)
        return
    path = Path(args.file)
    shape = next((f.name for f in EXPORT_FORMATS.values() if f.suffix == path.suffix.lower()),
                 None)
    if shape is None:
        raise InputError(f"cannot tell a format from '{path.suffix or path.name}': name the "
                         f"file {', '.join(SUFFIXES[:-1])} or {SUFFIXES[-1]}", path=path)
    if path.exists():
        raise InputError("exists already; remove it or choose another name", path=path)
    from ..fs import write_atomic

    text = io.StringIO()
    write(chosen, shape, text)
    write_atomic(path, text.getvalue())
    say(args, f"Wrote {len(chosen)} paper{'s' * (len(chosen) != 1)} of the bundled sample "
              f"({chosen[0].id} to {chosen[-1].id}) to {path}.")
