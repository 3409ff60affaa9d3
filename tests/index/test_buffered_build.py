"""A build in buffers: papers read, encoded and written a buffer at a time, each buffer a
segment, so that what a build holds is one buffer whatever the corpus (a folder of PDFs
is never all in memory); the index ranks as one built at once, and is published whole
or not at all."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embedsearch import InputError, Paper, SearchEngine, read_papers
from embedsearch.bundled import corpus_files
from embedsearch.encoding import Encoder
from embedsearch.index.writing import build_index
from embedsearch.readers.records import papers_from_records
from embedsearch.storage import IndexOptions
from embedsearch.storage.directory import IndexDirectory
from tests.conftest import dev_records, dev_vectors, needs_dev_data
from tests.storage.local.test_full_text import host_paper

QUERIES = ("low-rank visual prompting", "web agents that browse", "speech and audio models",
           "graph neural networks for molecules")


def _every(size: int) -> Callable[[int, int], bool]:
    """A buffer rule: full at `size` papers."""
    return lambda papers, passages: papers >= size


@pytest.fixture(scope="module")
def papers() -> list[Paper]:
    """The seed abstracts and two papers read in full (bodies: other seeds' abstracts)."""
    seeds = read_papers(corpus_files())
    return [*seeds[:24], host_paper(seeds[24:29], "host-a"), *seeds[29:33],
            host_paper(seeds[33:38], "host-b")]


@pytest.fixture(scope="module")
def encoder(seed_engine: SearchEngine) -> Encoder:
    """The bundled model on the seed index's backend (`auto` would time the runtimes)."""
    return Encoder(backend=seed_engine.info().encoder_backend)


def _segments(index: Path) -> list[dict[str, Any]]:
    return list(json.loads((index / "manifest.json").read_text())["segments"])


def test_a_build_leaves_no_merge_for_the_next_add(papers: list[Paper], encoder: Encoder,
                                                  tmp_path: Path) -> None:
    # Buffers of three papers fill the smallest tier (ten segments): the build merges
    # them as a write would, so the add after it writes its own segment and nothing else.
    out = tmp_path / "index"
    build_index(IndexDirectory(out), papers, encoder, flush=_every(3))
    built = [segment["name"] for segment in _segments(out)]
    assert len(built) < 10
    with SearchEngine.open(out) as engine:
        assert len(engine) == len(papers)
        engine.add([Paper(id="late", title="Sparse attention", abstract="Long documents.")])
    after = [segment["name"] for segment in _segments(out)]
    assert after[: len(built)] == built and len(after) == len(built) + 1


def test_a_build_in_buffers_ranks_as_a_build_at_once(papers: list[Paper], encoder: Encoder,
                                                    tmp_path: Path) -> None:
    at_once, buffered = tmp_path / "once", tmp_path / "buffered"
    build_index(IndexDirectory(at_once), papers, encoder)
    build_index(IndexDirectory(buffered), papers, encoder, flush=_every(8))
    assert len(_segments(at_once)) == 1 and len(_segments(buffered)) == 4
    with SearchEngine.open(at_once) as one, SearchEngine.open(buffered) as many:
        assert len(many) == len(papers)
        for query in QUERIES + (papers[24].passages[0].text[:80],):
            for mode in ("hybrid", "dense", "lexical"):
                ours, theirs = many.search(query, k=8, mode=mode), one.search(query, k=8, mode=mode)
                assert [h.id for h in ours] == [h.id for h in theirs], (query, mode)
                assert np.allclose([h.score for h in ours], [h.score for h in theirs], atol=1e-5)
                assert [h.passage for h in ours] == [h.passage for h in theirs]
        assert many.passages("host-b") == one.passages("host-b")


def test_a_build_writes_each_buffer_before_reading_the_next(papers: list[Paper],
                                                           encoder: Encoder,
                                                           tmp_path: Path) -> None:
    out = tmp_path / "index"
    written_when_read: list[int] = []

    def stream() -> Iterator[Paper]:
        for paper in papers:
            # Segments written so far, in the staged generation (not yet published).
            written_when_read.append(len(list(tmp_path.rglob("passages.sqlite")))
                                     + len(list(tmp_path.rglob("papers.sqlite"))))
            yield paper

    build_index(IndexDirectory(out), stream(), encoder, flush=_every(10))
    # Papers 0-9 make the first segment: when paper 10 is read it is on disk already.
    stores = written_when_read
    assert stores[9] == 0 and stores[10] >= 1 and stores[20] >= 2
    assert len(_segments(out)) == 3 and len(SearchEngine.open(out)) == len(papers)


def test_a_stream_given_to_the_engine_is_built(papers: list[Paper], tmp_path: Path) -> None:
    engine = SearchEngine.build(tmp_path / "index", (paper for paper in papers))
    assert len(engine) == len(papers)
    hit = engine.search(papers[24].passages[3].text, k=1)[0]
    assert hit.id == "host-a" and hit.passage == papers[24].passages[3]


def test_an_id_repeated_in_a_later_buffer_leaves_no_index(papers: list[Paper],
                                                         encoder: Encoder,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "index"
    with pytest.raises(InputError, match="duplicate id 'host-a' .records 25 and 31"):
        build_index(IndexDirectory(out), iter([*papers, papers[24]]), encoder,
                    flush=_every(8))
    assert not out.exists() or not any(out.iterdir())


def test_stream_vectors_of_the_wrong_length_are_refused(papers: list[Paper], encoder: Encoder,
                                                        tmp_path: Path) -> None:
    abstracts = [paper for paper in papers if not paper.passages]
    vectors = encoder.encode_documents([paper.abstract for paper in abstracts])
    with pytest.raises(InputError, match="precomputed vectors of 20 rows"):
        build_index(IndexDirectory(tmp_path / "index"), iter(abstracts[:20]), encoder,
                    vectors=vectors, flush=_every(8))
    assert not (tmp_path / "index" / "manifest.json").exists()


@needs_dev_data
@pytest.mark.data
def test_buffers_typed_before_the_size_was_known_are_retyped(encoder: Encoder,
                                                             tmp_path: Path) -> None:
    # 12,000 dev papers in buffers of 6,000 with exact search up to 10,000: each buffer
    # alone is exact, the index is not, so both become graphs, as one build would make them.
    papers, vectors = papers_from_records(dev_records(12_000)), dev_vectors(12_000)
    options = IndexOptions(exact_max=10_000)
    out = tmp_path / "index"
    build_index(IndexDirectory(out), iter(papers), encoder, options, vectors=vectors,
                flush=_every(6_000))
    kinds = [segment["index"]["type"] for segment in _segments(out)]
    assert kinds == ["hnsw-sq8", "hnsw-sq8"]
    with SearchEngine.open(out) as engine:
        assert len(engine) == 12_000
        hits = engine.search(papers[11_000].title, k=10, mode="dense")
        assert papers[11_000].id in [hit.id for hit in hits]
