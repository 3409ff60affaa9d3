"""Where scripts/fulltext_quality.py gets the papers it indexes.

- `corpus_papers`: the dev abstracts of a set's corpus.jsonl;
- `reader_papers`: the PDFs through `embedsearch.read_papers`, passages as the reader
  cuts them (source "pdf", what a user gets);
- `truth_papers`: the typeset body of scripts/fulltext_devset.py's truth.jsonl, cut by
  `split_passages` (source "truth": a perfect reader; synthetic PDFs only);
- `raw_papers`: the reader's title and abstract, and each page's raw PDFium text as one
  block (source "raw": a reader that cleans nothing, the floor to beat).

Every source can be cut with another passage window, so that window sizes can be
compared on the same text: truth and raw are cut from their blocks; the reader's
passages, cut with the reader's window, are first joined back into blocks
(`unwindowed`), each sentence taking the page of the passage it came in, which is the
page of that passage's first sentence (exact for a sentence that starts its passage).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pypdfium2 as pdfium

from embedsearch import read_papers
from embedsearch.papers import Block, Paper, Passage, split_sentences
from embedsearch.passages import split_passages

__all__ = ["SOURCES", "TRUTH_KINDS", "corpus_papers", "papers_from", "paper_key",
           "raw_papers", "reader_papers", "truth_papers", "unwindowed", "without_passages"]

SOURCES = ("pdf", "truth", "raw")
#: The typeset blocks a perfect reader keeps: the reference list is left out (the issue
#: lets a reader leave it out or mark it; its titles are other papers' words).
TRUTH_KINDS = ("body", "caption", "footnote")


def paper_key(paper_id: str) -> str:
    """A PDF paper's id without the folder prefix a reader may give it: its file's stem."""
    return paper_id.rsplit("/", 1)[-1]


def corpus_papers(set_dir: Path) -> list[Paper]:
    return read_papers([set_dir / "corpus.jsonl"])


def reader_papers(pdf_dir: Path, window: tuple[int, int] | None = None) -> list[Paper]:
    """The PDFs as the reader gives them; with a `window` (words, overlap), their
    passages cut again with it."""
    papers = read_papers([pdf_dir])
    if window is None:
        return papers
    return [replace(paper, passages=split_passages(unwindowed(paper.passages),
                                                   words=window[0], overlap=window[1]))
            for paper in papers]


def unwindowed(passages: tuple[Passage, ...]) -> list[Block]:
    """Passages back as blocks: each passage's sentences less those it repeats from the
    one before (its overlap: the longest run that ends the previous passage)."""
    blocks: list[Block] = []
    previous: list[str] = []
    for passage in passages:
        sentences = split_sentences(passage.text)
        repeated = 0
        if blocks and blocks[-1].section == passage.section:
            repeated = max((n for n in range(1, min(len(previous), len(sentences)) + 1)
                            if previous[-n:] == sentences[:n]), default=0)
        fresh = sentences[repeated:]
        if fresh:
            blocks.append(Block(" ".join(fresh), passage.page, passage.page_label,
                                passage.section))
        previous = sentences
    return blocks


def truth_papers(set_dir: Path, words: int, overlap: int) -> list[Paper]:
    papers = []
    with (set_dir / "truth.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            truth = json.loads(line)
            blocks = [Block(b["text"], b["page"], b["page_label"], b["section"])
                      for b in truth["blocks"] if b["kind"] in TRUTH_KINDS]
            papers.append(Paper(id=truth["id"], abstract=truth["abstract"],
                                title=truth["title"], authors=tuple(truth["authors"]),
                                passages=split_passages(blocks, words=words, overlap=overlap),
                                file=str(set_dir / "pdfs" / truth["file"])))
    return papers


def raw_papers(pdf_dir: Path, words: int, overlap: int) -> list[Paper]:
    """The reader's papers, their bodies replaced by every page's text as PDFium gives
    it: running heads, page numbers, hyphens, footnotes, references and all."""
    papers = []
    for paper in read_papers([pdf_dir]):
        path = pdf_dir / f"{paper_key(paper.id)}.pdf"
        document = pdfium.PdfDocument(path)
        try:
            blocks = [Block(document[i].get_textpage().get_text_range(), i + 1, str(i + 1))
                      for i in range(len(document))]
        finally:
            document.close()
        passages = split_passages(blocks, words=words, overlap=overlap)
        papers.append(replace(paper, passages=passages, file=str(path)))
    return papers


def papers_from(source: str, set_dir: Path, pdf_dir: Path, words: int, overlap: int,
                window: bool = False) -> list[Paper]:
    """The PDFs' papers as `source` reads them; the reader's passages are cut again with
    (`words`, `overlap`) only when `window` (else they are its own)."""
    if source == "truth":
        return truth_papers(set_dir, words, overlap)
    if source == "raw":
        return raw_papers(pdf_dir, words, overlap)
    return reader_papers(pdf_dir, (words, overlap) if window else None)


def without_passages(papers: list[Paper]) -> list[Paper]:
    """The papers as an --abstract-only build knows them: title and abstract."""
    return [replace(paper, passages=()) for paper in papers]
