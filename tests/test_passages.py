"""Cutting a body into passages: windows of whole sentences, overlapping by a sentence,
never across a section heading or a page break, each on the page it is printed on."""

from __future__ import annotations

import pytest

from embedsearch.bundled import corpus_files
from embedsearch.papers import Block, Paper, Passage, split_sentences
from embedsearch.passages import passage_embedding_text, passage_window, split_passages
from embedsearch.readers import read_papers


@pytest.fixture(scope="module")
def body() -> list[Block]:
    """Real paragraphs (the seed abstracts), two a page, a section every three pages."""
    papers = read_papers(corpus_files())[:12]
    return [Block(paper.abstract, page=1 + number // 2, page_label=str(10 + number // 2),
                  section=f"{1 + number // 6} Section") for number, paper in enumerate(papers)]


def test_windows_hold_whole_sentences_within_their_size(body: list[Block]) -> None:
    passages = split_passages(body, words=80, overlap=1)
    sentences = {s for block in body for s in split_sentences(block.text)}
    for passage in passages:
        parts = split_sentences(passage.text)
        assert all(part in sentences for part in parts)
        assert len(passage.text.split()) <= 80 or len(parts) == 1


def test_every_sentence_is_in_a_passage_on_its_page_and_section(body: list[Block]) -> None:
    passages = split_passages(body, words=60, overlap=0)
    for block in body:
        for sentence in split_sentences(block.text):
            holding = [p for p in passages if sentence in split_sentences(p.text)]
            assert len(holding) == 1  # overlap 0: once
            assert (holding[0].page, holding[0].page_label, holding[0].section) == (
                block.page, block.page_label, block.section)


def test_a_window_repeats_the_last_sentence_of_the_one_before(body: list[Block]) -> None:
    passages = split_passages(body[:3], words=90, overlap=1)
    assert len(passages) > 1
    repeated = 0
    for before, after in zip(passages, passages[1:]):
        # A window of one sentence moves on; a new page or section starts afresh.
        if len(split_sentences(before.text)) > 1 and before.page == after.page:
            assert split_sentences(after.text)[0] == split_sentences(before.text)[-1]
            repeated += 1
    assert repeated


def test_the_limit_and_the_window_are_checked(body: list[Block]) -> None:
    assert len(split_passages(body, words=30, limit=5)) == 5
    with pytest.raises(ValueError):
        passage_window(0, 1)
    assert split_passages([]) == ()


def test_the_encoder_reads_title_section_and_text() -> None:
    paper = Paper(id="p", abstract="a", title="Deep Residual Learning")
    passage = Passage("We compare shortcuts.", 6, "", "4.1 Shortcuts")
    assert passage_embedding_text(paper, passage) == (
        "Deep Residual Learning. 4.1 Shortcuts. We compare shortcuts.")
    assert passage.where == "p. 6 (§4.1 Shortcuts)"
    assert Passage.from_dict(passage.to_dict()) == passage


def test_a_citation_abbreviation_does_not_end_a_sentence() -> None:
    text = ("As Vaswani et al. (2017) show in Fig. 3b, attention suffices. Eq. 2 and cf. "
            "Table 1 agree. Results follow. Smith et al. [4] disagree.")
    assert split_sentences(text) == [
        "As Vaswani et al. (2017) show in Fig. 3b, attention suffices.",
        "Eq. 2 and cf. Table 1 agree.", "Results follow.", "Smith et al. [4] disagree."]
