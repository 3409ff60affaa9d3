"""How a paper's body is cut into passages (the `Passage` record is in `papers`).

A paper read in full (a PDF, a Zotero attachment) carries its body as `Passage`s:
windows of whole sentences, each knowing the page it starts on and the section it is
in, so that a hit can say "p. 6 (§4.1): ..." and a link can open the PDF at that page.
Readers give a body as `Block`s (paragraphs, each on its page under its heading);
`split_passages` cuts them into windows by the rule in `passage_window`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .papers import Block, Paper, Passage, split_sentences

__all__ = ["MAX_PASSAGES", "OVERLAP_SENTENCES", "PASSAGE_WORDS", "passage_embedding_text",
           "passage_texts", "passage_window", "split_passages"]

#: Words a passage holds at most (a sentence longer than this is a passage alone).
PASSAGE_WORDS = 100
#: Sentences each passage repeats from the end of the one before it, so that a statement
#: that spans two windows is whole in one of them.
OVERLAP_SENTENCES = 1
#: Passages kept of one paper: a 300-page thesis gives about 3,000; more than this is a
#: book or a collection, whose tail is dropped rather than letting one file fill the index.
MAX_PASSAGES = 4_000


def passage_window(words: int = PASSAGE_WORDS, overlap: int = OVERLAP_SENTENCES
                   ) -> tuple[int, int]:
    """The window passages are cut with: at most `words` words, `overlap` sentences
    repeated from the passage before. The encoder reads 256 word pieces (about 180
    English words); a window well inside that is read whole, and a short one keeps a
    passage's vector about one statement rather than the average of a page."""
    if words < 1 or overlap < 0:
        raise ValueError("a passage window needs words >= 1 and overlap >= 0")
    return words, overlap


def split_passages(blocks: Iterable[Block], *, words: int = PASSAGE_WORDS,
                   overlap: int = OVERLAP_SENTENCES, limit: int = MAX_PASSAGES
                   ) -> tuple[Passage, ...]:
    """`blocks` cut into passages of whole sentences (`passage_window`): a window never
    crosses a section heading or a page break (a paragraph that does is on the page it
    starts on); it may run on over paragraphs."""
    words, overlap = passage_window(words, overlap)
    passages: list[Passage] = []
    for section, sentences in _sections(blocks):
        for window in _windows(sentences, words, overlap):
            first = window[0]
            passages.append(Passage(" ".join(text for text, _ in window), first[1].page,
                                    first[1].page_label, section))
            if len(passages) >= limit:
                return tuple(passages)
    return tuple(passages)


def _sections(blocks: Iterable[Block]) -> Iterable[tuple[str, list[tuple[str, Block]]]]:
    """Each run of blocks under one heading and on one page, as its sentences with the
    block of each. A window that ran on over a page break was placed on the page it
    starts on, so a statement at the top of the next page was cited a page early: on
    the full-text dev set (scripts/fulltext_quality.py, tune half, hybrid) windows kept
    to a page cited the right page for 1.000 of quoted sentences against 0.980, and
    0.860 of paraphrases as before."""
    current: tuple[str, int | None] | None = None
    sentences: list[tuple[str, Block]] = []
    for block in blocks:
        place = (block.section, block.page)
        if place != current and sentences:
            yield (current[0] if current else ""), sentences
            sentences = []
        current = place
        sentences.extend((sentence, block) for sentence in split_sentences(block.text))
    if sentences:
        yield (current[0] if current else ""), sentences


def _windows(sentences: Sequence[tuple[str, Block]], words: int, overlap: int
             ) -> Iterable[Sequence[tuple[str, Block]]]:
    start = 0
    while start < len(sentences):
        end, count = start, 0
        while end < len(sentences):
            size = len(sentences[end][0].split())
            if end > start and count + size > words:
                break
            count += size
            end += 1
        yield sentences[start:end]
        if end >= len(sentences):
            return
        # The next window repeats the last `overlap` sentences, but always moves on.
        start = max(end - overlap, start + 1)


def passage_embedding_text(paper: Paper, passage: Passage) -> str:
    """What the encoder sees of a passage: its paper's title, its section heading and
    its text. The title says whose passage it is, so that a question naming the
    paper's subject finds the passage that answers it within that paper."""
    head = ". ".join(part for part in (paper.title, passage.section) if part)
    return f"{head}. {passage.text}" if head else passage.text


def passage_texts(papers: Sequence[Paper]) -> list[str]:
    """The embedded text of every passage of `papers`, paper after paper: the order of
    a write's passage vectors."""
    return [passage_embedding_text(paper, passage) for paper in papers
            for passage in paper.passages]
