"""Building an index from precomputed embeddings (the dev corpus's f16 file) instead of
encoding: the manifest records the model that made them; queries search it as usual."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from embedsearch import InputError, SearchEngine, read_papers
from embedsearch.encoding import Encoder
from embedsearch.index.writing import build_index
from embedsearch.papers import embedding_text
from embedsearch.storage.directory import IndexDirectory
from tests.conftest import DEV_PAPERS, DEV_VECTORS, REPO, dev_records, needs_dev_data


def test_given_vectors_index_like_encoded_ones(seed_files: list[Path], seed_engine: SearchEngine,
                                               tmp_path: Path) -> None:
    papers = list(read_papers(seed_files))
    encoder = Encoder(backend=seed_engine.info().encoder_backend)  # the same vectors
    # Stored as float16 and scaled, as published embeddings may be: renormalised on build.
    given = (encoder.encode_documents([embedding_text(p) for p in papers]) * 3).astype(np.float16)
    build_index(IndexDirectory(tmp_path / "index"), papers, encoder, vectors=given)
    engine = SearchEngine.open(tmp_path / "index")
    assert engine.info().model == seed_engine.info().model
    assert engine.info().fingerprint == seed_engine.info().fingerprint
    for query in ("low-rank visual prompting", "web agents", "audio"):
        ours = engine.search(query, k=5)
        theirs = seed_engine.search(query, k=5)
        assert [h.paper.id for h in ours] == [h.paper.id for h in theirs]
        assert np.allclose([h.score for h in ours], [h.score for h in theirs], atol=2e-3)


@pytest.mark.parametrize("bad", ["shape", "zero"])
def test_unusable_vectors_are_refused_before_writing(seed_files: list[Path], tmp_path: Path,
                                                     bad: str) -> None:
    papers = list(read_papers(seed_files))
    vectors = np.ones((len(papers) - (bad == "shape"), 384), np.float32)
    if bad == "zero":
        vectors[3] = 0
    with pytest.raises(InputError, match="precomputed vectors"):
        build_index(IndexDirectory(tmp_path / "index"), papers, Encoder(), vectors=vectors)
    assert not (tmp_path / "index").exists()


@needs_dev_data
@pytest.mark.data
def test_script_indexes_the_dev_corpus_from_its_embeddings(tmp_path: Path) -> None:
    out = tmp_path / "dev"
    subprocess.run([sys.executable, str(REPO / "scripts" / "index_from_embeddings.py"),
                    str(DEV_PAPERS), str(DEV_VECTORS), "--out", str(out), "--limit", "300"],
                   check=True, capture_output=True)
    engine = SearchEngine.open(out)
    assert len(engine) == 300 and json.loads((out / "manifest.json").read_text())["model"][
        "name"] == "sentence-transformers/all-MiniLM-L6-v2"
    titles = [str(record["title"]) for record in dev_records(300)[:40:4]]
    found = [engine.search(title, k=1)[0].paper.title for title in titles]
    assert sum(a == b for a, b in zip(found, titles)) >= 8  # a title finds its paper
