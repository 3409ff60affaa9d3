"""The MCP tools over a paper read in full: `search` names each hit's passage with its
page and section, cut to the answer's budget, and `get` lists a paper's passages, page
by page, as many as fit, saying how to ask for the rest."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

pytest.importorskip("mcp")

from embedsearch import Paper, SearchEngine  # noqa: E402
from embedsearch.integrations.mcp import PASSAGE_CHARS, create_server  # noqa: E402
from tests.assistant import calls, text  # noqa: E402
from tests.fulltext import DONOR, fulltext_papers  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SearchEngine, list[Paper]]]:
    folder = tmp_path_factory.mktemp("mcp-fulltext")
    papers, donors = fulltext_papers(folder)
    SearchEngine.build(folder / "index", papers).close()
    engine = SearchEngine.open(folder / "index")
    yield engine, donors
    engine.close()


def test_search_names_the_passage_and_its_page(built: tuple[SearchEngine, list[Paper]]
                                               ) -> None:
    engine, donors = built
    [answer] = calls(create_server(engine), ("search", {"query": donors[DONOR].title,
                                                        "k": 5}))
    said = text(answer)
    first = said.splitlines()[1:3]
    assert first[0].startswith("1. host |")
    # The printed page to cite, the file's page to open, the section, and the text.
    location, _, shown = first[1].strip().partition(": ")
    assert location == "p. 102 (§3 Part 3), PDF page 4"
    passage = engine.search(donors[DONOR].title, k=1)[0].passage
    assert passage is not None and len(shown) <= PASSAGE_CHARS
    words = shown.strip("…").split()
    assert " ".join(words[1:-1]) in " ".join(passage.text.split())
    assert "> " not in first[1]  # the passage replaces the evidence line, not repeats it


def test_a_long_passage_is_cut_around_its_evidence(built: tuple[SearchEngine, list[Paper]]
                                                   ) -> None:
    engine, donors = built
    small = create_server(engine)
    for donor in donors:
        hit = engine.search(donor.title, k=1)[0]
        if hit.passage is None or len(" ".join(hit.passage.text.split())) <= PASSAGE_CHARS:
            continue
        [answer] = calls(small, ("search", {"query": donor.title, "k": 1}))
        line = text(answer).splitlines()[2]
        assert len(line.partition(": ")[2]) <= PASSAGE_CHARS
        assert "…" in line
        assert hit.evidence and hit.evidence.split()[0] in line
        return
    pytest.skip("no donor's passage is longer than PASSAGE_CHARS")


def test_get_lists_the_passages_with_their_pages(built: tuple[SearchEngine, list[Paper]]
                                                 ) -> None:
    engine, _ = built
    server = create_server(engine)
    plain, listed, abstract_only = calls(
        server, ("get", {"id": "host"}), ("get", {"id": "host", "passages": True}),
        ("get", {"id": "000_ae22c05437d8edef:1", "passages": True}))
    passages = engine.passages("host")
    assert "Passages" not in text(plain) and "[1]" not in text(plain)
    said = text(listed)
    assert f"Passages ({len(passages)}):" in said and "BibTeX:" in said
    numbered = re.findall(r"^\[(\d+)\] (p\. \d+ \(§[^)]*\), PDF page \d+): ", said, re.M)
    assert [int(n) for n, _ in numbered] == list(range(1, len(passages) + 1))
    assert numbered[0][1] == "p. 100 (§1 Part 1), PDF page 2"
    assert " ".join(passages[-1].text.split()) in said
    assert "none; the index knows this paper by its abstract" in text(abstract_only)


def test_get_cuts_the_passages_to_its_budget_and_pages_on(
        built: tuple[SearchEngine, list[Paper]]) -> None:
    engine, _ = built
    total = len(engine.passages("host"))
    small = create_server(engine, max_chars=1800)
    [first] = calls(small, ("get", {"id": "host", "passages": True}))
    said = text(first)
    assert len(said) <= 1800 and not first.is_error
    cut = re.search(r"passages 1-(\d+) of (\d+) shown, (\d+) left out; ask again with "
                    r"from_passage=(\d+)\]$", said)
    assert cut is not None, said[-300:]
    shown, of, left, then = (int(group) for group in cut.groups())
    assert of == total and shown + left == total and then == shown + 1 and shown >= 1
    [rest] = calls(small, ("get", {"id": "host", "passages": True, "from_passage": then}))
    assert re.search(rf"^\[{then}\] ", text(rest), re.M) and "[1] " not in text(rest)
    [past] = calls(small, ("get", {"id": "host", "passages": True, "from_passage": 999}))
    assert "past the last" in text(past)

