"""`--ray`: encoding on a local Ray instance gives the index a local build gives.

One Ray instance (2 CPUs, so 2 actors of 1 thread) serves the whole module; the
executor finds it running and uses it rather than starting its own.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from embedsearch import SearchEngine
from embedsearch.encoding import Encoder, ModelSpec, RayExecutor, resolve_model
from embedsearch.errors import ModelError
from embedsearch.index.writing import build_index
from embedsearch.papers import embedding_text
from embedsearch.readers import read_papers
from embedsearch.storage.directory import IndexDirectory
from tests.conftest import REPO, CliResult, contents, snapshot

try:
    import ray
except ImportError:
    ray = None

needs_ray = pytest.mark.skipif(ray is None, reason='Ray is not installed: pip install -e '
                                                   '".[ray]" (CI installs it)')


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    assert ray is not None
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _vectors(index: Path) -> dict[str, np.ndarray]:
    """Each paper's stored vector, by id."""
    with SearchEngine.open(index) as engine:
        keys, vectors, papers = contents(engine)
        return {papers[int(key)].id: vector for key, vector in zip(keys, vectors)}


def _assert_same_vectors(index: Path, reference: Path) -> None:
    got, want = _vectors(index), _vectors(reference)
    assert sorted(got) == sorted(want)
    cosines = [float(got[paper_id] @ want[paper_id]) for paper_id in want]
    assert min(cosines) >= 0.9999


def _backend(index: Path) -> str:
    """The backend an index was built with: `auto` may choose another once the fast
    backends are prepared by an earlier test, so builds compared with it name it."""
    return str(json.loads((index / "manifest.json").read_text())["model"]["backend"])


def _manifest(index: Path) -> dict[str, object]:
    """The manifest less its times and file digests (float noise changes the vectors'):
    of `additions`, the first keys (when each write was made differs)."""
    loaded = json.loads((index / "manifest.json").read_text())
    kept = {key: value for key, value in loaded.items()
            if key not in ("created", "updated", "files")}
    kept["additions"] = [first for first, _ in loaded.get("additions", [])]
    return kept


@needs_ray
def test_a_ray_build_is_the_local_build(ray_instance: None, seed_index: Path,
                                        seed_files: list[Path], tmp_path: Path,
                                        cli: Callable[..., CliResult]) -> None:
    result = cli("build", *seed_files, "--out", tmp_path / "ray", "--ray", "--no-cache",
                 "--backend", _backend(seed_index))
    assert result.code == 0, result.err
    assert "Ray: 38 texts encoded by" in result.err
    _assert_same_vectors(tmp_path / "ray", seed_index)
    assert _manifest(tmp_path / "ray") == _manifest(seed_index)


@needs_ray
def test_ray_workers_encode_with_the_index_prompts(ray_instance: None, seed_files: list[Path],
                                                   tmp_path: Path,
                                                   cli: Callable[..., CliResult]) -> None:
    prompts = ["--document-prompt", "passage: ", "--query-prompt", "query: ",
               "--backend", "torch", "--no-cache"]
    assert cli("build", *seed_files, "--out", tmp_path / "local", *prompts).code == 0
    result = cli("build", *seed_files, "--out", tmp_path / "ray", "--ray", *prompts)
    assert result.code == 0, result.err
    _assert_same_vectors(tmp_path / "ray", tmp_path / "local")
    assert _manifest(tmp_path / "ray") == _manifest(tmp_path / "local")
    # ...and the prompt reached the workers: without it the vectors differ.
    first = read_papers(seed_files)[0]
    plain = Encoder(backend="torch", cache=False).encode_documents([embedding_text(first)])[0]
    assert float(_vectors(tmp_path / "ray")[first.id] @ plain) < 0.9999


@needs_ray
def test_a_ray_add_is_the_local_add(ray_instance: None, seed_index: Path,
                                    seed_files: list[Path], tmp_path: Path,
                                    cli: Callable[..., CliResult]) -> None:
    first, second = seed_files
    SearchEngine.build_from_files(tmp_path / "index", [first],
                                  backend=_backend(seed_index)).close()
    result = cli("add", second, "--index", tmp_path / "index", "--ray", "--no-cache")
    assert result.code == 0, result.err
    assert "Added 19 papers" in result.err and "Ray: 19 texts" in result.err
    _assert_same_vectors(tmp_path / "index", seed_index)


@needs_ray
def test_the_driver_asks_the_cache_first(ray_instance: None, seed_index: Path,
                                         seed_files: list[Path], tmp_path: Path) -> None:
    nonce = uuid.uuid4().hex  # texts no earlier test has cached
    papers = [dataclasses.replace(paper, abstract=f"{paper.abstract} ({nonce})")
              for paper in read_papers(seed_files)]
    with RayExecutor(actors=2) as executor:
        SearchEngine.build(tmp_path / "a", papers, executor=executor).close()
        assert executor.stats.sent == len(papers) == sum(executor.stats.rows_by_worker.values())
        SearchEngine.build(tmp_path / "b", papers, executor=executor).close()
        assert (executor.stats.sent, executor.stats.jobs) == (len(papers), 1)
    assert executor.stats.summary().startswith("Ray: 38 texts encoded by")
    first, second = _vectors(tmp_path / "a"), _vectors(tmp_path / "b")
    assert all(np.array_equal(first[key], second[key]) for key in first)


@needs_ray
@pytest.mark.slow
def test_a_failed_job_changes_no_index(ray_instance: None, seed_copy: Path,
                                       seed_files: list[Path]) -> None:
    """A worker that cannot hold the driver's model (another fingerprint) fails the job
    with the worker's own error, before anything is written."""
    before = snapshot(seed_copy)
    real = resolve_model()
    # A named backend: `auto` would time every backend anew for this unknown fingerprint
    # (a minute), which is not what this test is about.
    encoder = Encoder(ModelSpec(real.name, real.path, "0" * 64), backend="torch", cache=False)
    with RayExecutor(actors=1) as executor, pytest.raises(ModelError, match="not the driver"):
        build_index(IndexDirectory(seed_copy), read_papers(seed_files), encoder,
                    overwrite=True, executor=executor)
    assert snapshot(seed_copy) == before


@needs_ray
def test_an_address_that_is_not_one_is_refused(seed_files: list[Path], tmp_path: Path,
                                               cli: Callable[..., CliResult]) -> None:
    result = cli("build", seed_files[0], "--out", tmp_path / "x", "--ray", str(seed_files[1]))
    assert result.code == 1
    assert "is not a Ray address" in result.err and len(result.err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


@needs_ray
def test_ray_gpus_are_checked_before_anything_runs(ray_instance: None, seed_files: list[Path],
                                                   tmp_path: Path,
                                                   cli: Callable[..., CliResult]) -> None:
    out = tmp_path / "x"
    cases = [
        (["--ray-gpus", "1"], "give --ray too"),
        (["--ray", "--ray-gpus", "1", "--backend", "onnx"], "encodes with the cuda backend"),
        (["--ray", "--ray-gpus", "9"], "between 0 and 8"),
        # The module's Ray instance has CPUs only: no actor could be placed.
        (["--ray", "--ray-gpus", "1", "--no-cache"], "the Ray cluster has 0 GPUs"),
    ]
    for options, message in cases:
        result = cli("build", seed_files[0], "--out", out, *options)
        assert result.code == 1 and message in result.err, (options, result.err)
        assert len(result.err.strip().splitlines()) == 1 and not out.exists()


def test_without_ray_the_option_says_how_to_install_it(seed_files: list[Path],
                                                       tmp_path: Path) -> None:
    script = ("import sys; sys.modules['ray'] = None; from embedsearch.cli import main; "
              f"sys.exit(main(['build', {str(seed_files[0])!r}, '--out', "
              f"{str(tmp_path / 'x')!r}, '--ray']))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=REPO, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        'embedsearch: error: --ray needs Ray Data, which is not installed: pip install '
        '"embedsearch[ray]"']
    assert not (tmp_path / "x").exists()
