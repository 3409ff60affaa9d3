"""A segment's postings are memory-mapped, not read, when a view opens them: the arrays
lie aligned in `lexical.npz`, which `np.load` still reads as before, and postings that
`np.savez` wrote (indexes of earlier versions) or that are compressed are read as ever.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedsearch.bundled import corpus_files
from embedsearch.papers import embedding_text
from embedsearch.readers import read_papers
from embedsearch.storage.local.lexical import LEXICAL_FILE, Postings
from embedsearch.storage.local.lexical_search import LexicalSearch
from embedsearch.storage.local.mapped import ALIGN, mapped_npz, write_npz

QUERIES = ("low-rank visual prompting", "web agents", "speech recognition models")


@pytest.fixture(scope="module")
def postings() -> Postings:
    papers = read_papers(corpus_files())
    keys = np.arange(1, len(papers) + 1, dtype=np.int64)
    return Postings.build(keys, [embedding_text(paper) for paper in papers])


def _scores(index: Postings) -> list[np.ndarray]:
    search = LexicalSearch([(index, None)])
    return [search.scores(query) for query in QUERIES]


def test_saved_postings_open_mapped_and_score_alike(postings: Postings, tmp_path: Path) -> None:
    postings.save(tmp_path)
    loaded = Postings.load(tmp_path)
    words = loaded.postings("words")
    for array in (words.terms, words.indptr, words.rows, words.tf, words.lengths):
        assert isinstance(array.base, np.memmap) or isinstance(array, np.memmap)
        assert array.flags.aligned and not array.flags.writeable
    assert np.array_equal(loaded.keys(), postings.keys())
    for ours, theirs in zip(_scores(loaded), _scores(postings)):
        assert np.array_equal(ours, theirs) and ours.max() > 0


def test_the_file_is_still_what_np_load_reads(postings: Postings, tmp_path: Path) -> None:
    postings.save(tmp_path)
    mapped = mapped_npz(tmp_path / LEXICAL_FILE)
    with np.load(tmp_path / LEXICAL_FILE, allow_pickle=False) as data:
        assert sorted(data.files) == sorted(mapped)
        for name in data.files:
            assert np.array_equal(data[name], mapped[name]), name


@pytest.mark.parametrize("writer", [np.savez, np.savez_compressed])
def test_postings_written_otherwise_are_read(postings: Postings, tmp_path: Path,
                                             writer: object) -> None:
    postings.save(tmp_path)
    with np.load(tmp_path / LEXICAL_FILE, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    (tmp_path / LEXICAL_FILE).unlink()
    writer(tmp_path / LEXICAL_FILE, **arrays)  # type: ignore[operator]
    for ours, theirs in zip(_scores(Postings.load(tmp_path)), _scores(postings)):
        assert np.array_equal(ours, theirs)


def test_every_array_starts_aligned(tmp_path: Path) -> None:
    arrays = {f"a{size}": np.arange(size, dtype=np.int64 if size % 2 else np.float32)
              for size in (1, 3, 17, 1000)}
    write_npz(tmp_path / "x.npz", arrays)
    for name, array in mapped_npz(tmp_path / "x.npz").items():
        assert isinstance(array, np.memmap) and array.offset % ALIGN == 0
        assert np.array_equal(array, arrays[name])
