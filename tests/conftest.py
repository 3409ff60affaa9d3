"""Shared fixtures: the real bundled model, the seed corpus, the dev corpus when present."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# Exported models, backend verdicts and cached vectors go to a folder of this test run,
# never to the user's cache (EMBEDSEARCH_TEST_CACHE_DIR reuses one across runs).
os.environ["EMBEDSEARCH_CACHE_DIR"] = (os.environ.get("EMBEDSEARCH_TEST_CACHE_DIR")
                                       or tempfile.mkdtemp(prefix="embedsearch-test-cache-"))

from embedsearch import SearchEngine
from embedsearch.bundled import corpus_files
from embedsearch.cli import main
from embedsearch.encoding import missing_runtimes
from embedsearch.papers import Paper
from embedsearch.readers import read_papers
from embedsearch.storage.directory import IndexDirectory
from embedsearch.storage.local.paper_store import STORE_FILE, PaperStore
from embedsearch.storage.local.segment import deletions_of

REPO = Path(__file__).resolve().parent.parent
DEV_DATA = Path(os.environ.get("EMBEDSEARCH_DEV_DATA", REPO.parent / "shared" / "data" / "papers"))
DEV_PAPERS = DEV_DATA / "papers.jsonl.gz"
DEV_VECTORS = DEV_DATA / "minilm_title_abstract_f16.npy"
DEV_QUERIES = DEV_DATA / "queries.jsonl"

_NO_DEV_DATA = (f"needs the dev corpus, not found at {DEV_DATA} (set EMBEDSEARCH_DEV_DATA "
                "to its folder)")
needs_dev_data = pytest.mark.skipif(not DEV_PAPERS.is_file(), reason=_NO_DEV_DATA)


def _needs_runtimes(backend: str) -> pytest.MarkDecorator:
    missing = missing_runtimes(backend)
    return pytest.mark.skipif(bool(missing), reason=(
        f"the {backend} backend needs the fast extra ({', '.join(missing)} not installed): "
        "pip install -e '.[dev]'"))


#: For a test that runs the exported backends (openvino-int8 needs every runtime of the
#: fast extra); it skips, saying so, in a core install without them.
needs_fast = _needs_runtimes("openvino-int8")


def backend_param(name: str) -> Any:
    """Backend `name` as a test parameter, skipped with the reason where its runtimes
    (the fast extra) are not installed."""
    return pytest.param(name, marks=_needs_runtimes(name))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked `data` reads the dev corpus: without it, it skips and says so (a
    fresh clone has no ../shared), whether or not it also carries `needs_dev_data`."""
    if DEV_PAPERS.is_file():
        return
    for item in items:
        if item.get_closest_marker("data") is not None:
            item.add_marker(pytest.mark.skip(reason=_NO_DEV_DATA))


def contents(engine: SearchEngine) -> tuple[np.ndarray, np.ndarray, dict[int, Paper]]:
    """Every key of the engine's current generation, with its stored vector and paper,
    read from one snapshot."""
    with engine.snapshot() as view:
        keys = view.keys()
        return keys, view.vectors(keys), view.papers(keys)


def snapshot(directory: Path) -> dict[str, str]:
    """sha256 of every file below `directory`, by relative path: 'byte for byte' checks."""
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="session")
def seed_files() -> list[Path]:
    return corpus_files()


@pytest.fixture(scope="session")
def seed_index(tmp_path_factory: pytest.TempPathFactory, seed_files: list[Path]) -> Path:
    """An index of the bundled seed corpus, built once with the real model; do not modify."""
    out = tmp_path_factory.mktemp("seed") / "index"
    SearchEngine.build_from_files(out, seed_files).close()
    return out


@pytest.fixture
def seed_copy(seed_index: Path, tmp_path: Path) -> Path:
    """A private copy of the seed index, for tests that change it."""
    target = tmp_path / "index"
    shutil.copytree(seed_index, target)
    return target


@pytest.fixture(scope="session")
def seed_engine(seed_index: Path) -> Iterator[SearchEngine]:
    engine = SearchEngine.open(seed_index)
    yield engine
    engine.close()


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def json_lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run the embedsearch command in-process; returns exit code, stdout and stderr."""

    def run(*args: str | Path) -> CliResult:
        code = main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def dev_records(count: int) -> list[dict[str, object]]:
    """The first `count` records of the dev corpus."""
    records = []
    with gzip.open(DEV_PAPERS, "rt", encoding="utf-8") as handle:
        for line in handle:
            records.append(json.loads(line))
            if len(records) == count:
                break
    return records


def dev_vectors(count: int | None = None) -> np.ndarray:
    """The precomputed float32 (upcast from float16) dev embeddings, renormalised."""
    vectors = np.load(DEV_VECTORS, mmap_mode="r")
    chosen = np.asarray(vectors[:count] if count else vectors, dtype=np.float32)
    return chosen / np.linalg.norm(chosen, axis=1, keepdims=True)


@pytest.fixture
def warned() -> Iterator[list[str]]:
    """The messages the readers log (the CLI prints them on stderr)."""
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    handler = Collect(logging.WARNING)
    logger = logging.getLogger("embedsearch.readers")
    # An in-process CLI run with --quiet leaves the package's logger at ERROR: the
    # readers' own level is set, so what they warn is seen whatever ran before.
    level = logger.level
    logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    yield messages
    logger.removeHandler(handler)
    logger.setLevel(level)


def model_copy(target: Path, **changes: dict[str, object] | None) -> Path:
    """The bundled model's files linked into `target`, with each JSON file named in
    `changes` (by its stem: sentence_bert_config=...) given those settings over its own
    (None: the file left out): another model, or the same one configured otherwise."""
    from embedsearch.encoding import resolve_model

    shutil.copytree(resolve_model().path, target, copy_function=os.symlink)
    for stem, settings in changes.items():
        config = target / f"{stem}.json"
        own = json.loads(config.read_text()) if config.exists() else {}
        config.unlink(missing_ok=True)
        if settings is not None:
            config.write_text(json.dumps({**own, **settings}))
    return target


# -- writers and readers on a copy of the seed index (live, crash and disk tests) -----
SEED_COUNT = 38


def new_records(tag: str, count: int) -> list[dict[str, object]]:
    """`count` new papers: seed abstracts with a new id and a changed text."""
    papers = read_papers(corpus_files())[:count]
    return [{"id": f"{tag}:{number}", "title": f"{paper.title} ({tag})",
             "abstract": f"{paper.abstract} Revisited in study {tag}."}
            for number, paper in enumerate(papers)]


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def ids_on_disk(index: Path) -> set[str]:
    """The ids of the newest generation's live papers, read from its segments' files."""
    directory = IndexDirectory(index)
    manifest = directory.read_manifest()
    found = set()
    for record in manifest.local.segments:
        folder = directory.files_dir(manifest) / record.name
        deleted = set(deletions_of(folder).tolist())
        store = PaperStore.open(folder / STORE_FILE)
        try:
            found |= {paper.id for key, paper in store.iter_papers() if key not in deleted}
        finally:
            store.close()
    return found


def data_file(index: Path, name: str) -> Path:
    """The file `name` (papers.sqlite, vectors.faiss, ...) of the newest generation's
    first segment."""
    directory = IndexDirectory(index)
    manifest = directory.read_manifest()
    return directory.files_dir(manifest) / manifest.local.segments[0].name / name


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for a server a test starts."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_embedsearch(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "embedsearch.cli", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def index_entries(index: Path) -> set[str]:
    return {entry.name for entry in index.iterdir()}


def assert_clean(index: Path) -> None:
    """Nothing but the lock, the manifest and the current generation is left."""
    generation = IndexDirectory(index).read_manifest().generation
    assert index_entries(index) == {".lock", "manifest.json", f"g{generation:06d}"}


@pytest.fixture
def reader(seed_copy: Path) -> Iterator[SearchEngine]:
    engine = SearchEngine.open(seed_copy)
    yield engine
    engine.close()
