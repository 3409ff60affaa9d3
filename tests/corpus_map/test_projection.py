"""The corpus map: computed from the real vectors, stored as a generation of the index,
never shown once the index has changed; UMAP on real dev papers keeps neighbours near."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from embedsearch import IndexCorruptError, SearchEngine
from embedsearch.bundled import sample_abstracts
from embedsearch.corpus_map.attached import attach_map
from embedsearch.corpus_map.projection import MAP_FILE, UMAP_MIN_PAPERS, compute_map, load_map
from embedsearch.storage.directory import IndexDirectory
from embedsearch.text.words import label_words
from tests.conftest import CliResult, contents, dev_records, dev_vectors, needs_dev_data, snapshot

DATA_FILES = ("keys.npy", "papers.sqlite", "vectors.faiss")


def generation_files(index: Path) -> dict[str, str]:
    """sha256 by file name of the current generation's files."""
    manifest = json.loads((index / "manifest.json").read_text())
    return {name: entry["sha256"] for name, entry in manifest["files"].items()}


def test_map_is_stored_as_a_generation_sharing_the_data(seed_copy: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    assert engine.corpus_map() is None
    before = generation_files(seed_copy)
    segment = IndexDirectory(seed_copy).read_manifest().local.segments[0].name
    inodes = {name: (seed_copy / "g000001" / segment / name).stat().st_ino
              for name in DATA_FILES}
    hits_before = [(h.paper.id, h.score) for h in engine.search("visual prompting", k=5)]
    corpus_map = engine.compute_map()
    assert corpus_map is not None and len(corpus_map) == len(engine) == 38
    assert corpus_map.method == "pca"  # 38 papers is below UMAP_MIN_PAPERS
    after = generation_files(seed_copy)
    assert set(after) == set(before) | {MAP_FILE}
    assert {name: after[name] for name in before} == before  # data files unchanged
    assert [(h.paper.id, h.score) for h in engine.search("visual prompting", k=5)] == hits_before
    assert sorted(p.name for p in seed_copy.iterdir()) == [".lock", "g000002", "manifest.json"]
    # The new generation shares the data files (hard links), it does not copy them.
    assert {name: (seed_copy / "g000002" / segment / name).stat().st_ino
            for name in DATA_FILES} == inodes
    # Another process opening the index finds the same map, checked against its files.
    reopened = SearchEngine.open(seed_copy)
    again = reopened.corpus_map()
    assert again is not None and np.array_equal(again.xy, corpus_map.xy)
    assert set(corpus_map.keys.tolist()) == set(contents(reopened)[0].tolist())
    assert 0 <= corpus_map.xy.min() and corpus_map.xy.max() <= 1
    papers = engine.map_papers(corpus_map)
    assert {p.id for p in papers} == {h.paper.id for h in engine.search("papers", k=38)}
    stored = load_map(seed_copy / "g000002" / MAP_FILE)
    assert np.array_equal(stored.keys, corpus_map.keys) and stored.clusters == corpus_map.clusters


def test_clusters_are_labelled_with_characteristic_words(seed_engine: SearchEngine,
                                                         seed_copy: Path) -> None:
    corpus_map = SearchEngine.open(seed_copy).compute_map()
    assert corpus_map is not None
    assert 2 <= len(corpus_map.clusters) <= 30
    assert sum(c.size for c in corpus_map.clusters) == len(corpus_map)
    assert set(corpus_map.cluster.tolist()) == {c.id for c in corpus_map.clusters}
    labels = [c.words for c in corpus_map.clusters]
    assert all(1 <= len(words) <= 3 for words in labels)
    assert len({w for words in labels for w in words}) == sum(len(w) for w in labels)
    generic = {"paper", "propose", "method", "results", "the", "and", "using"}
    assert not generic & {w for words in labels for w in words}


# A LaTeX command as abstracts write one: "$\texttt{SELECT}$", "\textbf{G}raph".
LATEX_COMMAND = re.compile(r"\\([A-Za-z]+)")


def test_labels_hold_no_latex_command_names() -> None:
    # A map cluster was labelled "subset · texttt · reward". The bundled abstracts that
    # write \texttt or \textbf, as one cluster, were labelled "textbf · texttt · sparse".
    texts = sample_abstracts()
    marked = np.array([0 if LATEX_COMMAND.search(text) else 1 for text in texts])
    assert 3 <= int((marked == 0).sum()) < len(texts)
    commands = {name.lower() for text in texts for name in LATEX_COMMAND.findall(text)}
    assert {"texttt", "textbf"} <= commands
    labels = label_words(texts, marked, 2)
    assert all(labels) and not commands & {word for words in labels for word in words}


@needs_dev_data
def test_labels_of_dev_abstracts_with_latex_hold_none_of_its_commands() -> None:
    records = [record for record in dev_records(20000)
               if "\\texttt" in str(record["abstract"])][:20] + dev_records(300)
    texts = [str(record["abstract"]) for record in records]
    cluster = np.array([0 if "\\texttt" in text else 1 for text in texts])
    assert int((cluster == 0).sum()) >= 10
    commands = {name.lower() for text in texts for name in LATEX_COMMAND.findall(text)}
    assert "texttt" in commands
    labels = label_words(texts, cluster, 2)
    assert all(labels) and not commands & {word for words in labels for word in words}


@pytest.mark.parametrize("change", ["add", "remove"])
def test_a_changed_index_has_no_map_until_recomputed(seed_copy: Path, change: str) -> None:
    engine = SearchEngine.open(seed_copy)
    assert engine.compute_map() is not None
    if change == "add":
        engine.add([{"id": "new:1", "abstract": "Robots learn to fold laundry from video."}])
    else:
        engine.remove([engine.search("visual prompting", k=1)[0].paper.id])
    assert engine.corpus_map() is None
    assert MAP_FILE not in generation_files(seed_copy)
    assert SearchEngine.open(seed_copy).corpus_map() is None
    fresh = engine.compute_map()
    assert fresh is not None and len(fresh) == len(engine)


def test_a_map_of_other_data_is_never_current(seed_copy: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    corpus_map = engine.compute_map()
    assert corpus_map is not None
    directory = IndexDirectory(seed_copy)
    manifest = directory.read_manifest()
    other = dataclasses.replace(corpus_map, source={**corpus_map.source,
                                                    "papers.sqlite": "0" * 64})
    assert not other.is_current(manifest.files)
    published = attach_map(directory, manifest, other)  # a map claiming other sources
    assert published is not None
    assert SearchEngine.open(seed_copy).corpus_map() is None


def test_a_map_computed_before_a_write_is_discarded(seed_copy: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    directory = IndexDirectory(seed_copy)
    old = directory.read_manifest()
    keys, vectors, _ = contents(engine)
    stale = compute_map(keys, vectors, ["text"] * len(keys),
                        {n: str(e["sha256"]) for n, e in old.files.items()})
    engine.add([{"id": "new:1", "abstract": "Robots learn to fold laundry from video."}])
    files = snapshot(seed_copy)
    assert attach_map(directory, old, stale) is None  # the index moved on: nothing written
    assert snapshot(seed_copy) == files


def test_the_map_file_is_checked_like_every_index_file(seed_copy: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    assert engine.compute_map() is not None
    target = seed_copy / "g000002" / MAP_FILE
    data = bytearray(target.read_bytes())
    data[-10] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match="checksum"):
        SearchEngine.open(seed_copy)


def test_map_command(seed_copy: Path, cli: Callable[..., CliResult]) -> None:
    result = cli("map", "--index", seed_copy, "-q")
    assert result.code == 0 and "38 papers" in result.out and "clusters (pca)" in result.out
    clusters = cli("map", "--index", seed_copy, "--json").json_lines()
    assert sum(int(str(c["size"])) for c in clusters) == 38 and all(c["label"] for c in clusters)


@needs_dev_data
@pytest.mark.data
@pytest.mark.slow
def test_umap_on_dev_papers_keeps_neighbours_near() -> None:
    from sklearn.manifold import trustworthiness

    count = 2000
    assert count >= UMAP_MIN_PAPERS
    records = dev_records(count)
    vectors = dev_vectors(count)
    texts = [f"{r['title']} {' '.join(map(str, r['keywords']))} {r['abstract']}"  # type: ignore[call-overload]
             for r in records]
    corpus_map = compute_map(np.arange(1, count + 1), vectors, texts, {})
    assert corpus_map.method == "umap" and len(corpus_map.clusters) == 22
    # Trustworthiness: how far the 2D neighbourhoods are true neighbourhoods (1 = all).
    assert trustworthiness(vectors, corpus_map.xy, n_neighbors=10) > 0.9
    assert all(cluster.words for cluster in corpus_map.clusters)
