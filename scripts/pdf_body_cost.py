"""What reading PDFs in full costs and gives: passages, seconds, memory, pages right.

Over the PDFs of a folder (default tests/data/pdfs/real), read through the worker the
readers share (started first, so no file pays its start), prints:

1. for each PDF: its pages, the passages of its body, seconds for the first pages alone
   (`full_text=False`, what `--abstract-only` reads) and in full, and milliseconds per
   page of the body;
2. passages per paper (mean, max) and seconds per PDF, full text against first pages;
3. pages right: each sentence of the passages is looked for in the pages' own text
   (pypdfium2's `get_text_range`, words only); of those found on exactly one page,
   the share whose block (`body.read_body`) is on that page, and the share with a
   passage holding it that starts on that page (a passage is placed on the page of its
   first sentence, so one that runs on over a page break holds sentences of the next);
4. the worker's peak memory (VmHWM) reading the largest PDF in full, and then a PDF of
   `--long` pages made of the folder's pages one after another (the page cap's worst
   case: its seconds, passages and memory against the worker's limits).

Usage: python scripts/pdf_body_cost.py [--folder DIR] [--long 600]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

import pypdfium2 as pdfium  # type: ignore[import-untyped]

from embedsearch.papers import split_sentences
from embedsearch.readers.pdf import PdfExtraction
from embedsearch.readers.pdf.body import read_body
from embedsearch.readers.pdf.extraction import extract_here
from embedsearch.readers.pdf.layout import open_document
from embedsearch.readers.pdf.worker import PdfWorker, body_limit

__all__ = ["main"]

REAL = Path(__file__).resolve().parents[1] / "tests" / "data" / "pdfs" / "real"
_BREAKS = re.compile(r"[\ufffe\u00ad\u0002]\s*")


def words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def timed(worker: PdfWorker, path: Path, full_text: bool) -> tuple[PdfExtraction, float]:
    started = time.perf_counter()
    found = worker.extract(path, 600, full_text=full_text)
    return found, time.perf_counter() - started


def peak_kib(worker: PdfWorker) -> int:
    """The worker's peak resident memory so far (Linux's VmHWM), KiB."""
    assert worker.process is not None
    for line in Path(f"/proc/{worker.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def pages_right(path: Path, found: PdfExtraction) -> tuple[int, int, int]:
    """(sentences found on one page, of them with their block on it, with a passage
    holding them that starts on it)."""
    pdf = pdfium.PdfDocument(path)
    texts = []
    for index in range(len(pdf)):
        textpage = pdf[index].get_textpage()
        texts.append(words(_BREAKS.sub("", textpage.get_text_range())))
    pdf.close()
    document = open_document(path, 10**9)
    headed = not found.abstract_source.startswith(("first paragraph", "paragraph before"))
    blocks, _ = read_body(document, title=found.title, abstract=found.abstract,
                          headed=headed)
    document.close()
    placed = {words(sentence): block.page for block in blocks
              for sentence in split_sentences(block.text)}
    counted = block_right = passage_right = 0
    for sentence, page in placed.items():
        if len(sentence.split()) < 6:
            continue
        on = [number for number, text in enumerate(texts, 1) if sentence in text]
        if len(on) != 1:
            continue
        counted += 1
        block_right += page == on[0]
        passage_right += any(passage.page == on[0] for passage in found.passages
                             if sentence in words(passage.text))
    return counted, block_right, passage_right


def long_pdf(sources: list[Path], pages: int, target: Path) -> Path:
    """A PDF of `pages` pages: the pages of `sources`, one file after another."""
    made = pdfium.PdfDocument.new()
    while len(made) < pages:
        for source in sources:
            pdf = pdfium.PdfDocument(source)
            wanted = min(len(pdf), pages - len(made))
            made.import_pages(pdf, list(range(wanted)))
            pdf.close()
            if len(made) >= pages:
                break
    made.save(target)
    made.close()
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=REAL, help="where the PDFs are")
    parser.add_argument("--long", type=int, default=600, metavar="PAGES",
                        help="pages of the long PDF made of the folder's (0: none)")
    args = parser.parse_args(argv)
    sources = sorted(args.folder.glob("*.pdf"))
    if not sources:
        parser.error(f"no PDFs in {args.folder}")
    worker = PdfWorker()
    try:
        worker.extract(sources[0], 60)  # started: no file below pays the start
        rows = []
        print(f"{'file':28} {'pages':>5} {'passages':>8} {'first s':>8} {'full s':>7} "
              f"{'ms/page':>7}")
        for path in sources:
            _, first = min((timed(worker, path, False) for _ in range(3)),
                           key=lambda pair: pair[1])
            found, full = min((timed(worker, path, True) for _ in range(3)),
                              key=lambda pair: pair[1])
            rows.append((path, found, first, full))
            print(f"{path.name:28} {found.pages:5} {len(found.passages):8} {first:8.3f} "
                  f"{full:7.3f} {1000 * (full - first) / max(found.body_pages, 1):7.1f}"
                  + (f"  body skipped: {found.body_skipped}" if found.body_skipped else ""))
        counts = [len(found.passages) for _, found, _, _ in rows]
        pages = sum(found.body_pages for _, found, _, _ in rows)
        body_s = sum(full - first for _, _, first, full in rows)
        print(f"\npassages per paper: mean {statistics.mean(counts):.1f}, max {max(counts)}"
              f" ({sum(counts) / max(pages, 1):.1f} a page)")
        print(f"seconds per PDF: first pages {statistics.mean(r[2] for r in rows):.3f}, "
              f"full text {statistics.mean(r[3] for r in rows):.3f}; the body "
              f"{1000 * body_s / max(pages, 1):.1f} ms a page over {pages} pages")
        totals = [pages_right(path, found) for path, found, _, _ in rows]
        counted = sum(total[0] for total in totals)
        print(f"pages right: of {counted} sentences found on one page, "
              f"{sum(t[1] for t in totals) / counted:.3f} in a block on it, "
              f"{sum(t[2] for t in totals) / counted:.3f} in a passage that starts on it")
        largest = max(sources, key=lambda path: path.stat().st_size)
        fresh = PdfWorker()
        try:
            fresh.extract(largest, 60, full_text=False)
            first_kib = peak_kib(fresh)
            fresh.extract(largest, 60, full_text=True)
            print(f"worker peak RSS on {largest.name} ({largest.stat().st_size / 1e6:.2f} "
                  f"MB): first pages {first_kib / 1024:.0f} MiB, in full "
                  f"{peak_kib(fresh) / 1024:.0f} MiB")
        finally:
            fresh.close()
        if args.long:
            with tempfile.TemporaryDirectory() as folder:
                made = long_pdf(sources, args.long, Path(folder) / "long.pdf")
                fresh = PdfWorker()
                try:
                    fresh.extract(made, 60, full_text=False)
                    found, full = timed(fresh, made, True)
                    print(f"a {found.pages}-page PDF of them: {full:.1f} s in full "
                          f"(limit {body_limit(found.pages):.0f} s), {len(found.passages)} "
                          f"passages from {found.body_pages} pages, worker peak RSS "
                          f"{peak_kib(fresh) / 1024:.0f} MiB"
                          + (f"; body skipped: {found.body_skipped}"
                             if found.body_skipped else ""))
                finally:
                    fresh.close()
                started = time.perf_counter()
                extract_here(made, True)
                print(f"the same in this process: {time.perf_counter() - started:.1f} s")
    finally:
        worker.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
