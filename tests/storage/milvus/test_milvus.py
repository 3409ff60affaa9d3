"""The Milvus storage at the storage and view level, on real Milvus Lite files.

The seed corpus (38 papers), given years, venues and keywords to filter on, is encoded
once with the bundled model and written into a Milvus Lite file through the `Storage`
API; the view must answer as an exact search of the same vectors does, honour filters
and exclusions with as many hits as pass, and round-trip papers and vectors.
"""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embedsearch import SearchEngine
from embedsearch.encoding import Encoder
from embedsearch.errors import (
    ConfigurationError,
    IndexCorruptError,
    IndexExistsError,
    IndexIncompatibleError,
    InputError,
    PaperNotFoundError,
)
from embedsearch.filters import Filters
from embedsearch.index.writing import model_record
from embedsearch.papers import Paper, Passage, embedding_text, normalise_title
from embedsearch.readers import read_papers
from embedsearch.storage import IndexOptions, PaperBatch, View, storage_class
from embedsearch.storage.directory import IndexDirectory, Manifest
from embedsearch.storage.exact import exact_search
from embedsearch.storage.local.lexical import Postings
from embedsearch.storage.local.lexical_search import LexicalSearch
from embedsearch.storage.milvus import Milvus, MilvusStorage, MilvusView
from embedsearch.storage.milvus import view as milvus_view
from embedsearch.storage.milvus.schema import filter_expression, paper_rows, truncate_text
from embedsearch.storage.records import ModelRecord, StorageRecord, TextRecord
from embedsearch.text.dates import now
from embedsearch.text.words import WordCounts

pytest.importorskip("pymilvus", reason="the Milvus extra is not installed: "
                                       "pip install -e '.[milvus]'")
pytest.importorskip("milvus_lite", reason="Milvus Lite is not installed: "
                                          "pip install -e '.[milvus]'")

LEXICAL_FIELDS = ["title", "abstract", "keywords"]
NONE = np.zeros(0, np.int64)
VENUES = ("ICLR", "NeurIPS", "ICML")


@dataclasses.dataclass
class Corpus:
    papers: list[Paper]
    vectors: np.ndarray
    model: ModelRecord
    encoder: Encoder


@pytest.fixture(scope="module")
def corpus(seed_files: list[Path]) -> Corpus:
    """The seed papers with years, venues and keywords to filter on, and their vectors."""
    papers = [dataclasses.replace(p, year=2021 + i % 4, venue=VENUES[i % 3],
                                  keywords=("even",) if i % 2 == 0 else ("odd", "Prime"))
              for i, p in enumerate(read_papers(seed_files))]
    encoder = Encoder(backend="torch", cache=False)  # no export to a fresh cache: 5 s, not 30
    vectors = encoder.encode_documents([embedding_text(p) for p in papers])
    return Corpus(papers, vectors, model_record(encoder), encoder)


def _manifest(corpus: Corpus, count: int) -> Manifest:
    return Manifest(model=corpus.model, count=count,
                    text=TextRecord(("title", "abstract"), tuple(LEXICAL_FIELDS)))


def _build(where: Path, corpus: Corpus, papers: list[Paper] | None = None,
           vectors: np.ndarray | None = None, *, overwrite: bool = False,
           name: str = "index") -> tuple[IndexDirectory, MilvusStorage]:
    """A Milvus-backed index of `papers` at where/name, its data in where/papers.db."""
    papers = corpus.papers if papers is None else papers
    vectors = corpus.vectors if vectors is None else vectors
    directory = IndexDirectory(where / name)
    target = Milvus(str(where / "papers.db"))
    storage = MilvusStorage(directory, StorageRecord.from_dict(target.settings()),
                            target.secrets())
    storage.check_build(IndexOptions(), len(papers), vectors.shape[1], overwrite=overwrite)
    with directory.write(replace=overwrite) as staging:
        storage.build(staging, [PaperBatch(papers, vectors)], _manifest(corpus, len(papers)),
                      IndexOptions())
    return directory, storage


def _open(directory: IndexDirectory, storage: MilvusStorage) -> View:
    manifest, lease = directory.open_current()
    return storage.view(manifest, lease, checksums=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, corpus: Corpus) -> Iterator[View]:
    """A read-only view of the whole corpus in Milvus Lite."""
    directory, storage = _build(tmp_path_factory.mktemp("milvus"), corpus)
    view = _open(directory, storage)
    storage.close()  # the view keeps the client
    yield view
    view.close()


@pytest.fixture
def writable(tmp_path: Path, corpus: Corpus) -> Iterator[tuple[IndexDirectory, MilvusStorage]]:
    """An index of all but the last 3 papers, to add to and remove from."""
    directory, storage = _build(tmp_path, corpus, corpus.papers[:-3], corpus.vectors[:-3])
    yield directory, storage
    storage.close()


def _ids(view: View, keys: np.ndarray) -> list[str]:
    papers = view.papers(keys)
    return [papers[int(k)].id for k in keys]


def _exact_ids(corpus: Corpus, query: np.ndarray, k: int,
               admit: list[bool] | None = None) -> list[str]:
    rows = np.array([i for i in range(len(corpus.papers)) if admit is None or admit[i]],
                    dtype=np.int64)
    _, found = exact_search(corpus.vectors[rows], rows.astype(np.int64), query[None, :], k)
    return [corpus.papers[int(i)].id for i in found[0] if i >= 0]


def _queries(corpus: Corpus) -> np.ndarray:
    texts = ["visual prompting for pre-trained models", "graph neural networks",
             "reinforcement learning from human feedback", "diffusion models for images"]
    return np.concatenate([corpus.encoder.encode_queries(texts), corpus.vectors[[0, 7, 20]]])


def test_target_settings_and_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    lite = Milvus("./papers.db", token="s3cret")
    assert lite.settings() == {"kind": "milvus", "uri": str(tmp_path / "papers.db"),
                               "collection": "papers"}
    assert lite.secrets() == {"token": "s3cret"} and "s3cret" not in repr(lite)
    server = Milvus("http://milvus.example:19530", "mine")
    assert server.settings()["uri"] == "http://milvus.example:19530"
    assert server.secrets() == {}
    assert storage_class("milvus") is MilvusStorage


def test_dense_equals_exact_search(built: View, corpus: Corpus) -> None:
    found = total = 0
    for query in _queries(corpus):
        scores, keys = built.dense(query, 10, None, NONE)
        expected = _exact_ids(corpus, query, 10)
        found += len(set(_ids(built, keys)) & set(expected))
        total += len(expected)
        assert len(keys) == 10 and keys.dtype == np.int64 and scores.dtype == np.float32
        assert np.all(np.diff(scores) <= 1e-6)  # best first
    assert found / total == 1.0  # HNSW over 38 papers is exact


def test_lexical_finds_the_papers_with_the_word(built: View, corpus: Corpus) -> None:
    scores, keys = built.lexical("prompting", len(corpus.papers), None, NONE)
    having = {p.id for p in corpus.papers if "prompt" in embedding_text(p, LEXICAL_FIELDS).lower()}
    assert having and set(_ids(built, keys)) == having
    assert np.all(scores > 0) and np.all(np.diff(scores) <= 1e-6)
    assert len(built.lexical("zyzzogeton", 10, None, NONE)[1]) == 0
    assert len(built.lexical("the of and", 10, None, NONE)[1]) == 0  # stop words only
    assert len(built.lexical("  ", 10, None, NONE)[1]) == 0


FILTERS = [Filters(year_min=2022, year_max=2023), Filters(venues=("iclr", "NEURIPS")),
           Filters(keywords=("PRIME",)), Filters(year_min=2024, venues=("ICML",)),
           Filters(year_min=2030)]


def _admits(filters: Filters, paper: Paper) -> bool:
    return ((filters.year_min is None or (paper.year or 0) >= filters.year_min)
            and (filters.year_max is None or (paper.year or 9999) <= filters.year_max)
            and (not filters.venues or paper.venue.casefold() in
                 {v.casefold() for v in filters.venues})
            and (not filters.keywords or bool({k.casefold() for k in paper.keywords} &
                                              {k.casefold() for k in filters.keywords})))


@pytest.mark.parametrize("filters", FILTERS, ids=str)
def test_filters_are_honoured_with_as_many_hits_as_pass(built: View, corpus: Corpus,
                                                        filters: Filters) -> None:
    admit = [_admits(filters, p) for p in corpus.papers]
    for query in _queries(corpus):
        _, keys = built.dense(query, 10, filters, NONE)
        assert _ids(built, keys) == _exact_ids(corpus, query, 10, admit)  # min(10, passing)
    passing = {p.id for p, ok in zip(corpus.papers, admit) if ok}
    _, keys = built.lexical("learning", 40, filters, NONE)
    assert set(_ids(built, keys)) <= passing


def test_filtered_lexical_misses_nothing(built: View, corpus: Corpus) -> None:
    """BM25 search within a filter is exhaustive: it returns every passing paper that an
    unfiltered search scores, with the same scores."""
    everything = dict(zip(*reversed(built.lexical("model learning", 100, None, NONE))))
    for filters in FILTERS:
        admit = {p.id for p in corpus.papers if _admits(filters, p)}
        scores, keys = built.lexical("model learning", 100, filters, NONE)
        expected = {k for k in everything if _ids(built, np.array([k]))[0] in admit}
        assert set(keys.tolist()) == expected
        assert np.allclose(scores, [everything[int(k)] for k in keys])


def test_exclude(built: View, corpus: Corpus) -> None:
    query = corpus.vectors[3]
    _, first = built.dense(query, 10, None, NONE)
    _, rest = built.dense(query, 10, Filters(keywords=("even",)), first[:5])
    assert len(rest) == 10 and not set(rest.tolist()) & set(first[:5].tolist())
    _, lexical = built.lexical("learning", 10, None, NONE)
    _, fewer = built.lexical("learning", 10, None, lexical[:3])
    assert not set(fewer.tolist()) & set(lexical[:3].tolist())
    assert fewer.tolist()[:7] == lexical.tolist()[3:]


def test_papers_vectors_and_lookups_round_trip(built: View, corpus: Corpus) -> None:
    keys = built.keys()
    assert len(built) == len(keys) == len(corpus.papers) and np.all(np.diff(keys) > 0)
    papers = built.papers(keys)
    assert [papers[int(k)] for k in keys] == corpus.papers  # keys are handed out in order
    order = keys[::-1]
    assert np.allclose(built.vectors(order), corpus.vectors[::-1], atol=1e-6)
    ids = [p.id for p in corpus.papers]
    assert built.keys_of([*ids[:3], "no such id"]) == dict(zip(ids[:3], keys[:3].tolist()))
    titles = [normalise_title(corpus.papers[i].title) for i in (0, 5)]
    assert built.keys_by_title([*titles, "no such title", ""]) == {
        titles[0]: int(keys[0]), titles[1]: int(keys[5])}
    assert built.papers([10**12]) == {}


def test_lexical_scores_of_given_keys(built: View) -> None:
    scores, keys = built.lexical("visual prompting", 5, None, NONE)
    everything = built.keys()
    unmatched = np.setdiff1d(everything, built.lexical("visual prompting", 100, None, NONE)[1])
    asked = np.concatenate([keys[::-1], unmatched[:2], keys[:1]])
    got = built.lexical_scores("visual prompting", asked)
    assert np.allclose(got, [*scores[::-1], 0, 0, scores[0]])
    assert np.all(built.lexical_scores("", keys) == 0)


def test_word_statistics_match_a_local_lexical_index(built: View, corpus: Corpus) -> None:
    texts = [embedding_text(p, LEXICAL_FIELDS) for p in corpus.papers]
    local = LexicalSearch([(Postings.build(np.arange(len(texts), dtype=np.int64), texts),
                            None)])
    stems = sorted({s for t in texts[:5] for s in local.tokenizer.words(t)}) + ["zyzzogeton"]
    assert len(built.words) == len(local)
    assert built.words.idf(stems) == pytest.approx(local.idf(stems))
    counts = WordCounts.build(texts[:30])
    counts.add(texts[30:])
    counts.remove(texts[:10])
    rest = LexicalSearch([(Postings.build(np.arange(28, dtype=np.int64), texts[10:]),
                           None)])
    assert len(counts) == 28 and counts.idf(stems) == pytest.approx(rest.idf(stems))


def test_add_and_remove(writable: tuple[IndexDirectory, MilvusStorage], corpus: Corpus) -> None:
    directory, storage = writable
    newest = directory.read_manifest()
    assert newest.storage.settings["physical"] == "papers_g000001" and newest.count == 35
    with directory.write(replace=True) as staging:  # two new papers and one it has
        added = storage.add(staging, newest, corpus.papers[-3:-1] + corpus.papers[:1],
                            corpus.vectors[[-3, -2, 0]])
    assert added is not None
    manifest, view = added, storage.view(added, directory.lease(added), checksums=True)
    assert manifest.count == len(view) == 37 and len(view.words) == 37
    assert manifest.generation == 2 and directory.read_manifest() == manifest
    new_id = corpus.papers[-2].id
    _, keys = view.dense(corpus.vectors[-2], 1, None, NONE)
    assert _ids(view, keys) == [new_id] and len(view.keys_of([new_id])) == 1
    view.close()
    with directory.write(replace=True) as staging:
        assert storage.add(staging, manifest, corpus.papers[:2], corpus.vectors[:2]) is None
    with directory.write(replace=True) as staging, pytest.raises(PaperNotFoundError):
        storage.remove(staging, manifest, [new_id, "no such id"])
    with directory.write(replace=True) as staging:
        manifest = storage.remove(staging, manifest, [new_id, corpus.papers[0].id])
    view = storage.view(manifest, directory.lease(manifest), checksums=True)
    assert manifest.count == len(view) == len(view.keys()) == 35 and len(view.words) == 35
    assert view.keys_of([new_id, corpus.papers[0].id]) == {}
    texts = [embedding_text(p, LEXICAL_FIELDS) for p in corpus.papers[1:-1] if p.id != new_id]
    stems = ["prompt", "graph", "learn", "diffus"]
    assert view.words.idf(stems) == pytest.approx(WordCounts.build(texts).idf(stems))
    view.close()
    reopened = _open(directory, storage)
    assert len(reopened) == 35 and reopened.manifest.generation == 3
    reopened.close()


def test_an_existing_collection_needs_overwrite(tmp_path: Path, corpus: Corpus) -> None:
    directory, storage = _build(tmp_path, corpus, corpus.papers[:5], corpus.vectors[:5])
    other = MilvusStorage(IndexDirectory(tmp_path / "other"), storage.where)
    with pytest.raises(IndexExistsError, match="'papers' already exists.*--overwrite"):
        other.check_build(IndexOptions(), 5, 384, overwrite=False)
    # A rebuild that fails after its collection is complete leaves the old index whole.
    papers, vectors = corpus.papers[5:12], corpus.vectors[5:12]
    with directory.write(replace=True) as staging, pytest.raises(OSError, match="disk full"):
        original = directory.commit

        def failing(*args: object) -> Manifest:
            raise OSError("disk full")

        directory.commit = failing  # type: ignore[method-assign]
        try:
            storage.build(staging, [PaperBatch(papers, vectors)], _manifest(corpus, 7),
                          IndexOptions())
        finally:
            directory.commit = original  # type: ignore[method-assign]
    view = _open(directory, storage)
    assert len(view.keys()) == 5 and view.manifest.storage.settings["physical"] == "papers_g000001"
    view.close()
    client = storage.connect(storage.where.settings["uri"]).client
    assert client.list_collections() == ["papers_g000001"]
    # The rebuild itself: the alias moves to the new collection, the old one is dropped.
    directory, storage = _build(tmp_path, corpus, papers, vectors, overwrite=True)
    view = _open(directory, storage)
    assert len(view.keys()) == 7 and view.manifest.storage.settings["physical"] == "papers_g000002"
    client = storage.connect(storage.where.settings["uri"]).client
    assert client.list_collections() == ["papers_g000002"]
    assert client.describe_alias("papers")["collection_name"] == "papers_g000002"
    view.close()
    storage.close()
    other.close()


def test_a_missing_collection_or_another_model(tmp_path: Path, corpus: Corpus) -> None:
    directory, storage = _build(tmp_path, corpus, corpus.papers[:3], corpus.vectors[:3])
    client = storage.connect(storage.where.settings["uri"]).client
    client.alter_collection_properties("papers_g000001", {"embedsearch.fingerprint": "other"})
    with pytest.raises(IndexIncompatibleError, match="built with model .*other.*manifest says"):
        _open(directory, storage)
    client.drop_alias("papers")
    client.drop_collection("papers_g000001")
    with pytest.raises(IndexCorruptError, match="collection 'papers' at .* is missing; rebuild"):
        _open(directory, storage)
    storage.close()


def test_unusable_papers_and_places(tmp_path: Path, corpus: Corpus) -> None:
    huge = dataclasses.replace(corpus.papers[0], id="huge-1", abstract="word " * 20_000)
    with pytest.raises(InputError, match="paper 'huge-1'.*JSON"):
        paper_rows([huge], corpus.vectors[:1], LEXICAL_FIELDS, now())
    cut = truncate_text("words " + "é" * 40_000)
    assert len(cut.encode()) == 65_535 - 1 and cut.endswith("é")  # a whole character
    with pytest.raises(InputError, match="huge-1"):
        _build(tmp_path, corpus, [huge], corpus.vectors[:1])
    assert not (tmp_path / "index").exists()
    unreachable = MilvusStorage(IndexDirectory(tmp_path / "x"),
                                StorageRecord.from_dict(Milvus("http://127.0.0.1:1").settings()))
    with pytest.raises(ConfigurationError, match="could not reach Milvus at http://127.0.0.1:1"):
        unreachable.check_build(IndexOptions(), 1, 384, overwrite=False)
    nowhere = MilvusStorage(IndexDirectory(tmp_path / "x"), StorageRecord.from_dict(
        Milvus(str(tmp_path / "no" / "p.db")).settings()))
    with pytest.raises(ConfigurationError, match="does not exist"):
        nowhere.check_build(IndexOptions(), 1, 384, overwrite=False)
    bad = MilvusStorage(IndexDirectory(tmp_path / "x"),
                        StorageRecord.from_dict(Milvus("x.db", "no-dashes").settings()))
    with pytest.raises(ConfigurationError, match="collection name"):
        bad.check_build(IndexOptions(), 1, 384, overwrite=False)
    params = IndexOptions(index_params={"nlist": 4})
    with pytest.raises(ConfigurationError, match="M, efConstruction and efSearch"):
        unreachable.check_build(params, 1, 384, overwrite=False)


def test_filter_expressions_quote_what_users_type() -> None:
    expr = filter_expression(Filters(venues=('A "B" \\ C',), keywords=("Ünï",)),
                             np.array([3, 1, 3]))
    assert expr == ('venue_key in ["a \\"b\\" \\\\ c"] and '
                    'ARRAY_CONTAINS_ANY(keyword_keys, ["ünï"]) and key not in [1, 3]')
    assert filter_expression(None, NONE) == ""


def test_another_process_reopens_it(tmp_path: Path, corpus: Corpus) -> None:
    directory, storage = _build(tmp_path, corpus, corpus.papers[:4], corpus.vectors[:4])
    view = _open(directory, storage)
    expected = _ids(view, view.dense(corpus.vectors[2], 2, None, NONE)[1])
    view.close()
    storage.close()  # the last user: Lite lets go of the file
    script = (
        "import sys, numpy as np\n"
        "from embedsearch.storage.directory import IndexDirectory\n"
        "from embedsearch.storage.milvus import MilvusStorage\n"
        "d = IndexDirectory(sys.argv[1]); m, lease = d.open_current()\n"
        "v = MilvusStorage(d, m.storage).view(m, lease, checksums=True)\n"
        "q = np.load(sys.argv[2])\n"
        "keys = v.dense(q, 2, None, np.zeros(0, np.int64))[1]\n"
        "print(' '.join(v.papers(keys)[int(k)].id for k in keys))\n"
    )
    np.save(tmp_path / "q.npy", corpus.vectors[2])
    done = subprocess.run([sys.executable, "-c", script, str(directory.path),
                           str(tmp_path / "q.npy")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == expected


def test_a_short_filtered_answer_is_completed(built: View, corpus: Corpus,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """HNSW under a wide filter may stop short: the view asks again more widely and in
    the end ranks the passing papers exactly, so it still returns min(k, passing) hits."""
    searches: list[tuple[int, int]] = []
    original = type(built).search_field

    def short(self: MilvusView, field: str, data: object, limit: int, expr: str,
              params: dict[str, Any]) -> list[tuple[float, int]]:
        searches.append((limit, params["params"]["ef"]))
        return original(self, field, data, limit, expr, params)[:3]

    monkeypatch.setattr(type(built), "search_field", short)
    monkeypatch.setattr(milvus_view, "_EXACT_SMALL", 0)  # HNSW even for a filter this narrow
    monkeypatch.setattr(built, "_subsets", None)
    filters = Filters(venues=("ICLR", "ICML"))
    admit = [_admits(filters, p) for p in corpus.papers]
    query = corpus.vectors[4]
    _, keys = built.dense(query, 10, filters, np.array([1], dtype=np.int64))
    expected = _exact_ids(corpus, query, 11, admit)
    expected = [i for i in expected if i != corpus.papers[0].id][:10]
    assert _ids(built, keys) == expected
    assert [limit for limit, _ in searches] == [10, 24, 24, 24]  # capped at the 24 passing
    assert [ef for _, ef in searches] == [1024, 4096, 16384, 65536]


def test_the_engine_end_to_end(tmp_path: Path, corpus: Corpus) -> None:
    lorvp = corpus.papers[0]
    engine = SearchEngine.build(tmp_path / "index", corpus.papers[:-1], vectors=corpus.vectors[:-1],
                                storage=Milvus(str(tmp_path / "p.db")), backend="torch",
                                cache=False)
    try:
        assert engine.search("low-rank visual prompting", k=1)[0].paper.id == lorvp.id
        hits = engine.search("prompting", k=5, mode="lexical",
                             filters=Filters(venues=("iclr",)))
        assert hits and all(h.paper.venue == "ICLR" for h in hits)
        similar = engine.similar(lorvp.id, k=5)
        assert len(similar) == 5 and lorvp.id not in {h.paper.id for h in similar}
        assert engine.add([corpus.papers[-1], lorvp]) == 1 and len(engine) == 38
        assert engine.remove([lorvp.id]) == 1 and lorvp.id not in engine
    finally:
        engine.close()
    reopened = SearchEngine.open(tmp_path / "index")
    assert len(reopened) == 37 and corpus.papers[-1].id in reopened
    reopened.close()


def test_check_finds_rows_the_manifest_does_not_count(
        writable: tuple[IndexDirectory, MilvusStorage]) -> None:
    directory, storage = writable
    view = _open(directory, storage)
    assert view.check() == []
    key = int(view.keys()[0])
    view.close()
    storage.connect(storage.where.settings["uri"]).call("delete", "papers_g000001", ids=[key])
    view = _open(directory, storage)
    assert view.check() == ["the Milvus collection holds 34 papers, the manifest counts 35"]
    view.close()


def test_papers_read_in_full_are_kept_by_their_abstracts_and_said_so(
        tmp_path: Path, corpus: Corpus, caplog: pytest.LogCaptureFixture) -> None:
    body = (Passage("A passage of the body that Milvus does not keep.", page=2),)
    papers = [dataclasses.replace(corpus.papers[0], passages=body), *corpus.papers[1:]]
    with caplog.at_level(logging.WARNING, logger="embedsearch.storage"):
        directory, storage = _build(tmp_path, corpus, papers)
    view = _open(directory, storage)
    try:
        assert len(view) == len(papers) and not view.has_passages
    finally:
        view.close()
        storage.close()
    assert "the passages of 1 paper read in full are not indexed" in caplog.text
