"""What reading PDFs' first pages costs: the worker's start, then milliseconds per PDF.

Copies the real papers of tests/data/pdfs/real (or the PDFs of `--folder`) into a
temporary folder until it holds `--files` of them, then prints:

1. the worker's start: the first `extract_pdf`, which starts the process the readers
   share (imports and PDFium's start);
2. a folder through `read_papers`, with that worker running: seconds per PDF, what a
   build of a folder of papers pays for each;
3. the same files read in this process (`extract_pdf(isolated=False)`): the part of
   the cost that is PDFium and our layout rules, not the trip to the worker.

Each PDF is read for its first pages only (`full_text=False`, what `--abstract-only`
reads); what the body adds is scripts/pdf_body_cost.py's to measure.

The speed claim `tests/readers/test_pdf.py` used to make with a stopwatch ("a folder
costs milliseconds per PDF") is this script's to measure; the test checks that a
folder is read by one worker. Usage: python scripts/pdf_reading_cost.py [--files N]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from embedsearch.readers import read_papers
from embedsearch.readers.pdf import extract_pdf

__all__ = ["main"]

REAL = Path(__file__).resolve().parents[1] / "tests" / "data" / "pdfs" / "real"


def fill_folder(folder: Path, sources: list[Path], count: int) -> list[Path]:
    """`count` PDFs in `folder`, copies of `sources` in turn (distinct names, so each is
    its own paper)."""
    copies = []
    for number in range(count):
        source = sources[number % len(sources)]
        copy = folder / f"{number:04}-{source.name}"
        shutil.copyfile(source, copy)
        copies.append(copy)
    return copies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--folder", type=Path, default=REAL, help="where the PDFs come from")
    args = parser.parse_args(argv)
    sources = sorted(args.folder.glob("*.pdf"))
    if not sources:
        parser.error(f"no PDFs in {args.folder}")
    with tempfile.TemporaryDirectory(prefix="embedsearch-pdfs-") as name:
        folder = Path(name)
        files = fill_folder(folder, sources, args.files)
        started = time.perf_counter()
        extract_pdf(files[0], full_text=False)
        print(f"worker start and the first PDF: {time.perf_counter() - started:.3f} s")
        started = time.perf_counter()
        papers = read_papers([folder], full_text=False)
        per_pdf = (time.perf_counter() - started) / len(files)
        print(f"{len(files)} PDFs ({len(sources)} distinct) through read_papers: "
              f"{len(papers)} papers, {per_pdf * 1000:.1f} ms per PDF")
        started = time.perf_counter()
        for file in files:
            extract_pdf(file, full_text=False, isolated=False)
        per_pdf = (time.perf_counter() - started) / len(files)
        print(f"the same read in this process: {per_pdf * 1000:.1f} ms per PDF")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
