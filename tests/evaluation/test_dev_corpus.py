"""The engine on a few thousand real papers of the dev corpus (skipped without it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from embedsearch import Filters, IndexOptions, SearchEngine
from embedsearch.encoding.calibrate import MIN_MEAN_COSINE
from embedsearch.storage.exact import exact_search
from embedsearch.storage.local import LocalView
from tests.conftest import contents, dev_records, dev_vectors, needs_dev_data

pytestmark = [needs_dev_data, pytest.mark.data, pytest.mark.slow]
COUNT = 2000
#: Dev papers encoded to compare with the precomputed embeddings.
REFERENCE = 300


@pytest.fixture(scope="module")
def dev_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,000 dev papers with `auto` lowered so that it picks HNSW, as it would past 50k,
    built from the corpus's precomputed embeddings: what is tested here is the index,
    and encoding 2,000 abstracts took most of this module's time
    (`test_vectors_match_the_reference_embeddings` encodes)."""
    out = tmp_path_factory.mktemp("dev") / "index"
    SearchEngine.build(out, dev_records(COUNT), IndexOptions(exact_max=1000),
                       vectors=dev_vectors(COUNT)).close()
    return out


def test_auto_picks_hnsw_and_it_agrees_with_exact_search(dev_index: Path) -> None:
    engine = SearchEngine.open(dev_index)
    assert engine.info().index_type == "hnsw-sq8" and len(engine) == COUNT
    titles = [record["title"] for record in dev_records(COUNT)[::20]]
    queries = engine.encoder.encode_queries([str(title) for title in titles])
    with engine.snapshot() as view:
        assert isinstance(view, LocalView)
        keys = view.keys()
        _, truth = exact_search(view.vectors(keys), keys, queries, 10)
        none = np.zeros(0, np.int64)
        found = np.array([view.dense(query, 10, None, none)[1] for query in queries])
    agreement = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth)])
    assert agreement >= 0.97
    hits = engine.search_many([str(title) for title in titles], k=10)
    ranks = [next((h.rank for h in row if h.paper.title == title), None)
             for row, title in zip(hits, titles)]
    assert sum(rank == 1 for rank in ranks) >= 0.8 * len(titles)  # a title finds its paper


def test_vectors_match_the_reference_embeddings(tmp_path: Path) -> None:
    # The precomputed file is the same model on title + ". " + abstract, in corpus order:
    # a file of dev records read, its papers' text made and encoded, gives those vectors.
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in dev_records(REFERENCE)))
    engine = SearchEngine.build_from_files(tmp_path / "index", [path], batch_size=64)
    keys, ours, _ = contents(engine)  # keys follow insertion order: key i+1 is record i
    reference = dev_vectors(REFERENCE)
    # `auto` may pick an int8 backend where it is clearly the fastest; its contract is then
    # the agreement `auto` demands, not float precision.
    floor = MIN_MEAN_COSINE if engine.info().encoder_backend.endswith("int8") else 0.999
    assert float(np.mean(np.sum(ours * reference, axis=1))) >= floor


def test_filters_and_similar_at_scale(dev_index: Path, tmp_path: Path) -> None:
    shutil.copytree(dev_index, tmp_path / "index")
    engine = SearchEngine.open(tmp_path / "index")
    records = dev_records(COUNT)
    venue = str(records[0]["venue"])
    expected = sum(1 for record in records if record["venue"] == venue)
    hits = engine.search("robot grasping", k=expected + 5, filters=Filters.parse(venues=[venue]))
    assert len(hits) == expected and {h.paper.venue for h in hits} == {venue}
    first = str(records[0]["id"])
    similar = engine.similar(first, k=10, filters=Filters.parse(venues=[venue]))
    assert len(similar) == 10 and first not in {h.paper.id for h in similar}
    engine.remove([h.paper.id for h in similar[:3]])
    again = engine.similar(first, k=10, filters=Filters.parse(venues=[venue]))
    assert len(again) == 10 and not {h.paper.id for h in similar[:3]} & {
        h.paper.id for h in again}
