"""Encoder backends against the torch reference, the automatic choice, the embedding cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from embedsearch import IndexIncompatibleError, SearchEngine, read_papers
from embedsearch.encoding import EmbeddingCache, Encoder, default_cache_dir
from embedsearch.encoding.calibrate import pick_backend
from embedsearch.encoding.exported import ExportedBackend
from embedsearch.encoding.torch_backend import TorchBackend
from embedsearch.papers import embedding_text
from tests.conftest import (
    REPO,
    CliResult,
    backend_param,
    contents,
    dev_records,
    dev_vectors,
    model_copy,
    needs_dev_data,
    needs_fast,
)

EXPORTED = ["onnx", "onnx-int8", "openvino", "openvino-bf16", "openvino-int8"]
#: As parameters: each skips, saying why, where the fast extra is not installed.
EXPORTED_PARAMS = [backend_param(name) for name in EXPORTED]
# Agreement each backend must keep with torch float32, as cosine of the same text's vectors.
MEAN_COSINE = {"onnx": 0.9999, "openvino": 0.9999, "openvino-bf16": 0.999, "onnx-int8": 0.99,
               "openvino-int8": 0.99}


@pytest.fixture(scope="module")
def seed_texts(seed_files: list[Path]) -> list[str]:
    return [embedding_text(paper) for paper in read_papers(seed_files)]


@pytest.fixture(scope="module")
def reference(seed_texts: list[str]) -> np.ndarray:
    return Encoder(backend="torch", cache=False).encode_documents(seed_texts)


@pytest.mark.parametrize("backend", EXPORTED_PARAMS)
def test_backends_agree_with_torch(backend: str, seed_texts: list[str],
                                   reference: np.ndarray) -> None:
    vectors = Encoder(backend=backend, cache=False).encode_documents(seed_texts)
    assert vectors.shape == reference.shape and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(vectors * reference, axis=1)
    assert cosines.mean() >= MEAN_COSINE[backend] and cosines.min() >= 0.97


@needs_dev_data
@pytest.mark.parametrize("backend", [backend_param("onnx"), backend_param("openvino")])
def test_one_encoder_answers_threads_at_once(backend: str, seed_texts: list[str]) -> None:
    # A server's searches and an add's encoding share one encoder: an OpenVINO infer
    # request answered "Infer Request is busy" to the second thread before it took turns.
    encoder = Encoder(backend=backend, cache=False)
    texts = seed_texts[:8]  # calls short enough to run the suite quickly, still overlapping
    alone = encoder.encode_documents(texts)
    found: list[np.ndarray] = []
    errors: list[str] = []

    def encode() -> None:
        try:
            for _ in range(3):
                found.append(encoder.encode_documents(texts))
                encoder.encode_queries(["bandits"])
        except Exception as exc:  # noqa: BLE001 - the test reports what any thread met
            errors.append(repr(exc))

    threads = [threading.Thread(target=encode) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(found) == 12
    assert all(np.allclose(vectors, alone, atol=1e-5) for vectors in found)


@pytest.mark.data
@pytest.mark.parametrize("backend", ["torch", *EXPORTED_PARAMS])
def test_backends_agree_with_the_reference_embeddings(backend: str) -> None:
    # The dev folder's vectors are torch float32 (stored as float16) of title. abstract.
    records = dev_records(96)
    texts = [f"{r['title']}. {r['abstract']}" for r in records]
    vectors = Encoder(backend=backend, cache=False).encode_documents(texts)
    cosines = np.sum(vectors * dev_vectors(96), axis=1)
    assert cosines.mean() >= min(MEAN_COSINE.get(backend, 0.9999), 0.999) - 0.0005
    assert cosines.min() >= 0.97


def test_the_command_line_offers_every_registered_backend() -> None:
    from embedsearch.cli.options import BACKEND_CHOICES
    from embedsearch.encoding import backend_names

    assert set(BACKEND_CHOICES) == {*backend_names(), "auto"}


@pytest.mark.parametrize("backend", ["torch", *EXPORTED_PARAMS])
def test_queries_and_batches_give_the_same_vectors(backend: str, seed_texts: list[str]) -> None:
    # Each backend by name: `auto` picks by what this run measured before, so a test of
    # it alone would check whichever backend earlier tests left chosen (onnx-int8 after
    # a calibration, and that one failed here only in the full suite).
    encoder = Encoder(backend=backend, cache=False)
    batch = encoder.encode_documents(seed_texts[:8])
    one_by_one = np.concatenate([encoder.encode_queries([text]) for text in seed_texts[:8]])
    cosines = np.sum(batch * one_by_one, axis=1)
    # Padding changes bf16 rounding only; onnx-int8 quantises each call's activations by
    # their own range (dynamic), so a text alone and in a batch round apart (0.994 here).
    assert cosines.min() >= MEAN_COSINE.get(backend, 0.9999)
    if backend != "onnx-int8":
        assert np.allclose(batch, one_by_one, atol=2e-3)



@pytest.mark.parametrize("backend", [backend_param("openvino"), backend_param("openvino-int8")])
def test_openvino_pads_to_a_few_widths_and_masks_the_padding(backend: str,
                                                             seed_texts: list[str]) -> None:
    # OpenVINO keeps buffers for every input shape it has run (4.3 MB a query length):
    # its batches are padded to a few widths, which must not move a text's vector.
    encoder = Encoder(backend=backend, cache=False)
    runtime = encoder.runtime
    assert isinstance(runtime, ExportedBackend)
    shapes = {runtime.shape(rows, n, 512) for rows in range(1, 65) for n in range(1, 513)}
    assert len({w for _, w in shapes}) <= 20 and len({r for r, _ in shapes}) <= 10
    assert all(r >= rows and n <= w <= 512 for rows in (1, 3, 9, 33, 64) for n in (1, 65, 500)
               for r, w in [runtime.shape(rows, n, 512)])
    short = "Sparse attention for long documents, tested on retrieval."
    feeds = runtime.tokens([short] * 3)
    real = int(feeds["attention_mask"][0].sum())
    assert feeds["input_ids"].shape == runtime.shape(3, real, runtime.max_seq_length)
    assert feeds["input_ids"].shape[1] > real and len(feeds["input_ids"]) == 4
    alone = encoder.encode_queries([short])
    beside_a_long_text = encoder.encode_document_batch([short, *seed_texts[:2]])
    assert len(beside_a_long_text) == 3
    assert float(np.sum(alone * beside_a_long_text[:1])) >= 0.9995

@needs_fast
def test_auto_picks_an_agreeing_backend_and_records_why() -> None:
    encoder = Encoder()
    verdicts = json.loads((default_cache_dir() / "backends.json").read_text())
    (verdict,) = [v for v in verdicts.values() if v["model"] == encoder.spec.name]
    chosen = verdict["measured"][encoder.backend]
    assert verdict["choice"] == encoder.backend != "auto"
    assert chosen["agrees"] and chosen["mean_cosine"] >= 0.99
    assert pick_backend(verdict["measured"]) == encoder.backend


def test_auto_prefers_fidelity_only_between_equally_fast_backends() -> None:
    def measured(**speeds: tuple[float, float, bool]) -> dict[str, dict[str, object]]:
        return {name: {"per_second": speed, "mean_cosine": cosine, "agrees": agrees}
                for name, (speed, cosine, agrees) in speeds.items()}

    tie = measured(torch=(20.0, 1.0, True), fast=(50.0, 0.994, True), exact=(47.0, 0.9999, True))
    assert pick_backend(tie) == "exact"
    clear = measured(torch=(20.0, 1.0, True), fast=(60.0, 0.994, True), exact=(47.0, 0.9999, True))
    assert pick_backend(clear) == "fast"
    wrong = measured(torch=(20.0, 1.0, True), fast=(90.0, 0.95, False))
    assert pick_backend(wrong) == "torch"


def test_without_the_fast_extra_auto_is_torch_and_a_named_one_says_what_to_install(
        seed_files: list[Path], tmp_path: Path) -> None:
    # A process as a core install runs it: the fast extra's modules cannot be found.
    script = ("import sys; sys.modules.update(dict.fromkeys(('onnx', 'onnxruntime', "
              "'openvino', 'nncf'))); from embedsearch.cli import main; "
              f"files = {[str(path) for path in seed_files]!r}; "
              f"named = main(['build', *files, '--out', {str(tmp_path / 'named')!r}, "
              "'--backend', 'onnx', '-q']); "
              f"auto = main(['build', *files, '--out', {str(tmp_path / 'auto')!r}, '-q']); "
              "print(named, auto)")
    env = {**os.environ, "EMBEDSEARCH_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=REPO, env=env, timeout=300)
    assert result.stdout.split() == ["1", "0"], result.stderr
    assert result.stderr.strip().splitlines() == [
        'embedsearch: error: --backend: the onnx backend needs onnx and onnxruntime, which '
        'are not installed: pip install "embedsearch[fast]"']
    assert not (tmp_path / "named").exists()
    manifest = json.loads((tmp_path / "auto" / "manifest.json").read_text())
    assert manifest["model"]["backend"] == "torch"
    assert not (tmp_path / "cache" / "backends.json").exists()  # nothing was measured


@needs_fast
def test_auto_never_picks_a_backend_whose_vectors_depend_on_their_batch(
        seed_texts: list[str]) -> None:
    # onnx-int8 measured fastest on a loaded machine, and the server's batched searches
    # then answered otherwise than single ones: however fast, it is not picked.
    fastest = {name: {"per_second": speed, "mean_cosine": cosine, "agrees": True}
               for name, speed, cosine in (("torch", 20.0, 1.0), ("onnx", 30.0, 1.0),
                                           ("onnx-int8", 90.0, 0.994))}
    assert pick_backend(fastest) == "onnx"
    # Named, its queries are encoded one per call: each as it is alone.
    encoder = Encoder(backend="onnx-int8", cache=False)
    together = encoder.encode_queries(seed_texts[:6])
    alone = np.concatenate([encoder.encode_queries([text]) for text in seed_texts[:6]])
    assert np.array_equal(together, alone)


def test_index_records_the_concrete_backend_and_refuses_another(seed_index: Path) -> None:
    manifest = json.loads((seed_index / "manifest.json").read_text())
    built = manifest["model"]["backend"]
    assert built in EXPORTED + ["torch"]
    other = "torch" if built != "torch" else "onnx"
    with pytest.raises(IndexIncompatibleError, match=f"on backend {other}"):
        SearchEngine.open(seed_index, backend=other)


@needs_fast  # two backends to switch between
def test_a_rebuild_keeps_the_backend_its_index_was_built_with(cli: Callable[..., CliResult],
                                                              seed_files: list[Path],
                                                              tmp_path: Path) -> None:
    # The first build ran on another backend than `auto` picks now, as one did before a
    # verdict measured meanwhile changed the choice (the scores then moved, unsaid).
    now = Encoder(job_size=len(read_papers(seed_files))).backend
    first = "torch" if now != "torch" else "onnx"
    out = tmp_path / "index"
    assert cli("build", *seed_files, "--out", out, "--backend", first, "-q").code == 0
    query = ["search", "low-rank visual prompting", "--index", out, "-k", "5", "--json"]
    before = cli(*query).json_lines()
    rebuilt = cli("build", *seed_files, "--out", out, "--overwrite")
    assert rebuilt.code == 0
    assert (f"Encoder backend {first}, the one the index being replaced was built with"
            in rebuilt.err) and f"backend {first})." in rebuilt.err
    assert cli(*query).json_lines() == before  # the same papers with the same scores
    assert cli("info", "--index", out, "--json").json_lines()[0]["encoder_backend"] == first
    assert f"(backend {first}, 384-d" in cli("info", "--index", out).out
    # Named, another backend replaces it, and the build says which it used.
    switched = cli("build", *seed_files, "--out", out, "--overwrite", "--backend", now)
    assert f"backend {now})." in switched.err and "being replaced" not in switched.err
    assert cli("info", "--index", out, "--json").json_lines()[0]["encoder_backend"] == now


def test_cache_hits_misses_and_model_change(tmp_path: Path, seed_texts: list[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    encoder = Encoder(backend="torch", cache_dir=tmp_path)
    calls: list[int] = []
    real = encoder.runtime.encode_batch
    monkeypatch.setattr(encoder.runtime, "encode_batch",
                        lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw))
    first = encoder.encode_documents(seed_texts[:10])
    assert sum(calls) == 10
    again = encoder.encode_documents(seed_texts[:12])  # 10 hits, 2 misses
    assert sum(calls) == 12 and np.array_equal(again[:10], first)
    assert EmbeddingCache(tmp_path).stats().vectors == 12
    # A different model (here: the bundled one reading 128 tokens) shares nothing.
    other_model = model_copy(tmp_path / "model", sentence_bert_config={"max_seq_length": 128})
    other = Encoder(other_model, backend="torch", cache_dir=tmp_path)
    assert other.spec.fingerprint != encoder.spec.fingerprint
    assert other.embedding_cache().get(other.cache_namespace(), seed_texts[:10], other.dim) == {}


@needs_fast
def test_another_backend_of_the_same_model_shares_no_cached_vectors(
        tmp_path: Path, seed_texts: list[str]) -> None:
    encoder = Encoder(backend="torch", cache_dir=tmp_path)
    encoder.encode_documents(seed_texts[:10])
    onnx = Encoder(backend="onnx", cache_dir=tmp_path).cache_namespace()
    assert onnx != encoder.cache_namespace()
    assert EmbeddingCache(tmp_path).get(onnx, seed_texts[:10], 384) == {}


def test_cache_is_bounded_least_recently_used_first(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, max_bytes=10**9)
    rng = np.random.default_rng(0)
    for batch in range(4):
        texts = [f"batch {batch} text {i}" for i in range(500)]
        cache.put("ns", texts, rng.standard_normal((500, 384)).astype(np.float32))
    assert cache.stats().vectors == 2000
    cache.get("ns", [f"batch 0 text {i}" for i in range(500)], 384)  # batch 0 used again
    removed = cache.prune(cache.stats().bytes // 2)
    assert removed >= 900 and cache.stats().bytes <= 10**9
    kept = cache.get("ns", [f"batch 0 text {i}" for i in range(500)], 384)
    assert len(kept) == 500  # recently used survives; the oldest (batch 1) went first
    assert cache.get("ns", ["batch 1 text 0"], 384) == {}


def test_cache_survives_an_interrupted_write(tmp_path: Path) -> None:
    script = f"""
import os, signal, numpy as np
from embedsearch.encoding.cache import EmbeddingCache
cache = EmbeddingCache({str(tmp_path)!r})
cache.put("ns", ["kept"], np.ones((1, 4), np.float32))
cache._db.execute("BEGIN")
cache._db.executemany("INSERT INTO vectors VALUES (?, ?, ?, 0)",
                      [(os.urandom(20), os.urandom(16), os.urandom(8)) for _ in range(10000)])
os.kill(os.getpid(), signal.SIGKILL)  # dies inside the transaction
"""
    result = subprocess.run([sys.executable, "-c", script],
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == -9
    cache = EmbeddingCache(tmp_path)
    assert cache.integrity() == "ok"
    assert cache.stats().vectors == 1
    assert np.array_equal(cache.get("ns", ["kept"], 4)[0], np.ones(4, np.float32))


def _counting(method: Callable[..., np.ndarray], calls: list[int]) -> Callable[..., np.ndarray]:
    def counted(self: object, texts: list[str], **options: str) -> np.ndarray:
        calls.append(len(texts))
        return method(self, texts, **options)

    return counted


def test_rebuild_and_add_reuse_cached_vectors(tmp_path: Path, seed_files: list[Path],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    first = SearchEngine.build_from_files(tmp_path / "a", seed_files)
    calls: list[int] = []
    for cls in (TorchBackend, ExportedBackend):  # every backend encodes through one of these
        monkeypatch.setattr(cls, "encode_batch", _counting(cls.encode_batch, calls))
    second = SearchEngine.build_from_files(tmp_path / "b", seed_files)
    assert np.array_equal(contents(first)[1], contents(second)[1])
    assert calls == []  # every vector came from the cache
    added = second.add([{"id": "n", "abstract": "A new abstract about sparse attention."}])
    assert added == 1 and calls == [1]  # only the new paper is encoded
