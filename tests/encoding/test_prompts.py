"""Query and document prompts, end to end: every backend against sentence-transformers'
own `encode_query` / `encode_document`, the manifest, the cache, the query check."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embedsearch import IndexIncompatibleError, SearchEngine, read_papers
from embedsearch.encoding import Encoder, Prompts, resolve_model
from embedsearch.encoding.prompts import model_prompts, resolve_prompts
from embedsearch.papers import embedding_text
from tests.conftest import CliResult, backend_param, model_copy

Cli = Callable[..., CliResult]
BACKENDS = ["torch", *(backend_param(name) for name in
                       ("onnx", "openvino", "openvino-bf16", "onnx-int8", "openvino-int8"))]
#: Float backends agree with sentence-transformers to a cosine of 0.999 on every text;
#: int8 ones to 0.99 on average and 0.97 on every text (their bar in test_encoding).
INT8 = {"onnx-int8", "openvino-int8"}
QUERIES = ["offline preference-based reinforcement learning", "low-rank visual prompting",
           "graph neural networks for molecules"]


@pytest.fixture(scope="module")
def prompted_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled model whose configuration carries e5-style prompts, as models on the
    hub do (the default prompt is the document's, to check that queries ignore it)."""
    return model_copy(tmp_path_factory.mktemp("model") / "prompted",
                      config_sentence_transformers={
                          "prompts": {"query": "query: ", "document": "passage: "},
                          "default_prompt_name": "document"})


@pytest.fixture(scope="module")
def texts(seed_files: list[Path]) -> list[str]:
    return [embedding_text(paper) for paper in read_papers(seed_files)]


def _sentence_transformers(model: Path) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model), device="cpu")


@pytest.fixture(scope="module")
def reference(prompted_model: Path, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    model = _sentence_transformers(prompted_model)
    return (model.encode_document(texts, normalize_embeddings=True),
            model.encode_query(QUERIES, normalize_embeddings=True))


def test_the_model_configuration_gives_the_prompts(prompted_model: Path) -> None:
    prompts = model_prompts(str(prompted_model), prompted_model)
    assert (prompts.query, prompts.document) == ("query: ", "passage: ")
    assert prompts.source == "model configuration"
    # encode_document's documented order: document, then passage, then corpus. (Some
    # sentence-transformers 6 releases add an empty "document" prompt of their own when
    # loading, which hides a configured "passage"; the configuration's intent is read.)
    passage = model_copy(prompted_model.parent / "passage", config_sentence_transformers={
        "prompts": {"query": "q: ", "passage": "p: ", "corpus": "c: "}})
    assert model_prompts("x", passage).document == "p: "
    # Only the default prompt: both roles take it (sentence-transformers 5's reading).
    only_default = model_copy(prompted_model.parent / "default-only",
                              config_sentence_transformers={
                                  "prompts": {"classification": "classify: "},
                                  "default_prompt_name": "classification"})
    assert model_prompts("x", only_default).query == "classify: "
    assert model_prompts("x", only_default).document == "classify: "


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_agrees_with_encode_query_and_encode_document(
        backend: str, prompted_model: Path, texts: list[str],
        reference: tuple[np.ndarray, np.ndarray]) -> None:
    encoder = Encoder(prompted_model, backend=backend, cache=False)
    documents = encoder.encode_documents(texts)
    queries = encoder.encode_queries(QUERIES)
    for got, expected in ((documents, reference[0]), (queries, reference[1])):
        cosines = np.sum(got * expected, axis=1)
        if backend in INT8:
            assert cosines.mean() >= 0.99 and cosines.min() >= 0.97
        else:
            assert cosines.min() >= 0.999
    # And the prompts matter: short queries without them are measurably elsewhere.
    assert np.sum(queries * Encoder(backend="torch", cache=False).encode_queries(QUERIES),
                  axis=1).max() < 0.97


def test_build_records_the_prompts_and_queries_use_them(
        prompted_model: Path, seed_files: list[Path], tmp_path: Path, texts: list[str],
        reference: tuple[np.ndarray, np.ndarray], cli: Cli) -> None:
    built = cli("build", *seed_files, "--out", tmp_path / "index", "--model", prompted_model,
                "--backend", "torch")
    assert built.code == 0 and "query prompt 'query: '" in built.err
    info = json.loads(cli("info", "--index", tmp_path / "index", "--json").out)
    assert info["prompts"] == {"query": "query: ", "document": "passage: ",
                               "source": "model configuration"}
    readable = cli("info", "--index", tmp_path / "index").out
    assert "prompts: query 'query: ', document 'passage: ' (from model configuration)" \
        in readable
    hits = cli("search", QUERIES[0], "--index", tmp_path / "index", "--mode", "dense",
               "-k", "38", "--json").json_lines()
    by_text = {text: i for i, text in enumerate(texts)}
    papers = {paper.id: paper for paper in read_papers(seed_files)}
    expected = {hit["id"]: float(reference[0][by_text[embedding_text(papers[str(hit["id"])])]]
                                 @ reference[1][0]) for hit in hits}
    assert [hit["score"] for hit in hits] == pytest.approx(
        [expected[str(hit["id"])] for hit in hits], abs=1e-4)


def test_prompts_given_on_the_command_line_for_a_model_without_them(
        seed_files: list[Path], tmp_path: Path, texts: list[str], cli: Cli) -> None:
    built = cli("build", *seed_files, "--out", tmp_path / "index", "--backend", "torch",
                "--query-prompt", "query: ", "--document-prompt", "passage: ")
    assert built.code == 0
    model = _sentence_transformers(resolve_model().path)
    documents = model.encode_document(texts, prompt="passage: ", normalize_embeddings=True)
    query = model.encode_query([QUERIES[1]], prompt="query: ", normalize_embeddings=True)[0]
    hits = cli("search", QUERIES[1], "--index", tmp_path / "index", "--mode", "dense", "-k",
               "5", "--json").json_lines()
    assert [hit["score"] for hit in hits] == pytest.approx(
        sorted((documents @ query).tolist(), reverse=True)[:5], abs=1e-4)
    # A query with another prompt is refused in one line, naming both.
    refused = cli("search", QUERIES[1], "--index", tmp_path / "index", "--query-prompt",
                  "search_query: ")
    assert refused.code != 0 and len(refused.err.strip().splitlines()) == 1
    assert "'query: '" in refused.err and "'search_query: '" in refused.err
    with pytest.raises(IndexIncompatibleError, match="prefixed 'query: '"):
        SearchEngine.open(tmp_path / "index", query_prompt="")


def test_the_cache_never_serves_a_vector_made_under_another_prompt(
        tmp_path: Path, texts: list[str]) -> None:
    first = Encoder(backend="torch", cache_dir=tmp_path, document_prompt="passage: ")
    prompted = first.encode_documents(texts[:6])
    other = Encoder(backend="torch", cache_dir=tmp_path, document_prompt="search_document: ")
    plain = Encoder(backend="torch", cache_dir=tmp_path)
    for encoder in (other, plain):
        cache = encoder.embedding_cache()
        assert cache is not None and cache.get(encoder.cache_namespace(), texts[:6], 384) == {}
    again = Encoder(backend="torch", cache_dir=tmp_path, document_prompt="passage: ")
    cache = again.embedding_cache()
    assert cache is not None and len(cache.get(again.cache_namespace(), texts[:6], 384)) == 6
    assert np.array_equal(again.encode_documents(texts[:6]), prompted)
    assert np.sum(plain.encode_documents(texts[:6]) * prompted, axis=1).max() < 0.999


def test_papers_outside_the_index_are_encoded_as_documents(
        prompted_model: Path, seed_files: list[Path], tmp_path: Path,
        reference: tuple[np.ndarray, np.ndarray], texts: list[str]) -> None:
    engine = SearchEngine.build_from_files(tmp_path / "index", seed_files,
                                           model=str(prompted_model), backend="torch")
    outside = {"id": "mine:1", "abstract": "We compress large language models by pruning "
                                           "attention heads and quantising what remains."}
    hits = engine.similar_to_papers([outside], 3)
    model = _sentence_transformers(prompted_model)
    vector = model.encode_document([embedding_text(read_papers_from(outside))],
                                   normalize_embeddings=True)[0]
    papers = {paper.id: paper for paper in read_papers(seed_files)}
    by_text = {text: i for i, text in enumerate(texts)}
    expected = [float(reference[0][by_text[embedding_text(papers[hit.paper.id])]] @ vector)
                for hit in hits]
    assert [hit.score for hit in hits] == pytest.approx(expected, abs=1e-4)
    engine.close()


def read_papers_from(record: dict[str, str]) -> Any:
    from embedsearch.readers.records import papers_from_records

    return papers_from_records([record])[0]


def test_known_families_apply_only_when_nothing_else_says(tmp_path: Path) -> None:
    bare = model_copy(tmp_path / "e5-base-v2", config_sentence_transformers=None)
    found = model_prompts("intfloat/e5-base-v2", bare)
    assert (found.query, found.document) == ("query: ", "passage: ")
    assert found.source == "known family: e5"
    assert model_prompts(str(bare), bare).query == "query: "  # a local copy, by folder name
    bge = model_prompts("BAAI/bge-small-en-v1.5", bare)
    assert bge.query.startswith("Represent this sentence") and bge.document == ""
    assert model_prompts("nomic-ai/nomic-embed-text-v1.5", bare).document == "search_document: "
    # The user's word wins, each prompt separately; "" means none.
    given = resolve_prompts("intfloat/e5-base-v2", bare, query="")
    assert (given.query, given.document, given.source) == ("", "passage: ", "given")
    # Unknown names and the bundled model: none.
    assert model_prompts("sentence-transformers/all-MiniLM-L6-v2",
                         resolve_model().path) == Prompts()
    assert model_prompts("intfloat/e5-base-v2-finetuned-by-me", bare.parent) == Prompts()


def test_the_bundled_model_has_no_prompts_and_its_index_says_so(seed_index: Path) -> None:
    manifest = json.loads((seed_index / "manifest.json").read_text())
    assert manifest["model"]["prompts"] == {"query": "", "document": "", "source": "none"}
    # The index's queries are encoded without a prompt: exactly as an encoder told to use
    # none, on the index's backend (whatever `auto` chose: a quantised one once an
    # earlier test in this process measured them)...
    with SearchEngine.open(seed_index) as engine:
        queries = engine.encoder.encode_queries(QUERIES)
    unprompted = Encoder(backend=manifest["model"]["backend"], query_prompt="", cache=False)
    assert np.sum(queries * unprompted.encode_queries(QUERIES), axis=1).min() >= 0.9999
    # ... which is sentence-transformers' plain encoding of the text.
    model = _sentence_transformers(resolve_model().path)
    plain = model.encode(QUERIES, normalize_embeddings=True)
    exact = Encoder(backend="torch", query_prompt="", cache=False).encode_queries(QUERIES)
    assert np.sum(exact * plain, axis=1).min() >= 0.999
