"""An index is a small database: several processes at once, kill -9, full disks, a
damaged embedding cache. Every test runs real writers (the bundled model, real files,
real child processes) on a copy of the seed index."""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from embedsearch import IndexBusyError, SearchEngine
from embedsearch.bundled import corpus_files
from embedsearch.encoding import Encoder
from embedsearch.readers import read_papers
from embedsearch.storage.layout import IndexDirectory
from embedsearch.storage.local.store import STORE_FILE, PaperStore

from .conftest import CliResult, snapshot

Cli = Callable[..., CliResult]

CRASHING_WRITER = Path(__file__).with_name("crashing_writer.py")
SEED_COUNT = 38


def _records(tag: str, count: int) -> list[dict[str, object]]:
    """`count` new papers: seed abstracts with a new id and a changed text."""
    papers = read_papers(corpus_files())[:count]
    return [{"id": f"{tag}:{number}", "title": f"{paper.title} ({tag})",
             "abstract": f"{paper.abstract} Revisited in study {tag}."}
            for number, paper in enumerate(papers)]


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def _ids_on_disk(index: Path) -> set[str]:
    directory = IndexDirectory(index)
    store = PaperStore.open(directory.files_dir(directory.read_manifest()) / STORE_FILE)
    try:
        return {paper.id for _, paper in store.iter_papers()}
    finally:
        store.close()


def _embedsearch(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "embedsearch.cli", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _entries(index: Path) -> set[str]:
    return {entry.name for entry in index.iterdir()}


def _assert_clean(index: Path) -> None:
    """Nothing but the lock, the manifest and the current generation is left."""
    generation = IndexDirectory(index).read_manifest().generation
    assert _entries(index) == {".lock", "manifest.json", f"g{generation:06d}"}


@pytest.fixture
def reader(seed_copy: Path) -> Iterator[SearchEngine]:
    engine = SearchEngine.open(seed_copy)
    yield engine
    engine.close()


# -- several writers, and readers that follow them -------------------------------------------
def test_two_concurrent_adds_both_land_while_a_reader_searches(
        seed_copy: Path, reader: SearchEngine, tmp_path: Path) -> None:
    first, second = _records("a", 10), _records("b", 10)
    errors: list[BaseException] = []
    counts: list[int] = []
    stop = threading.Event()

    def search_meanwhile() -> None:
        while not stop.is_set():
            try:
                hits = reader.search("parameter-efficient fine-tuning", k=5)
                assert len(hits) == 5
                counts.append(len(reader))
            except BaseException as exc:  # noqa: BLE001 - any failure is the finding
                errors.append(exc)
                return

    thread = threading.Thread(target=search_meanwhile)
    thread.start()
    writers = [_embedsearch("add", _jsonl(tmp_path / f"{tag}.jsonl", records),
                            "--index", seed_copy, "-q")
               for tag, records in (("a", first), ("b", second))]
    outcomes = [writer.communicate(timeout=300) for writer in writers]
    time.sleep(0.2)
    stop.set()
    thread.join()
    assert [writer.returncode for writer in writers] == [0, 0], outcomes
    assert errors == []
    assert counts == sorted(counts) and set(counts) <= {38, 48, 58}
    assert len(reader) == SEED_COUNT + 20
    expected = {str(r["id"]) for r in first + second}
    assert expected <= _ids_on_disk(seed_copy) and len(_ids_on_disk(seed_copy)) == 58


def test_a_server_sees_another_process_add_without_a_restart(
        seed_copy: Path, reader: SearchEngine, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from embedsearch.server import create_app

    client = TestClient(create_app(reader, compute_map=False), base_url="http://localhost")
    assert client.get("/health").json()["papers"] == SEED_COUNT
    writer = _embedsearch("add", _jsonl(tmp_path / "new.jsonl", _records("cron", 5)),
                          "--index", seed_copy, "-q")
    assert writer.wait(timeout=300) == 0
    published = time.monotonic()
    while client.get("/health").json()["papers"] != SEED_COUNT + 5:
        assert time.monotonic() - published < 2.0, "the server did not follow within 2 s"
        time.sleep(0.05)
    assert client.get("/papers/cron:0").status_code == 200


def test_a_reader_keeps_its_generation_until_it_moves_on(
        seed_copy: Path, reader: SearchEngine) -> None:
    old = IndexDirectory(seed_copy).files_dir(IndexDirectory(seed_copy).read_manifest())
    with SearchEngine.open(seed_copy) as writer:
        writer.add(_records("x", 3))
        writer.add(_records("y", 3))
        # `reader` has not been called since: its generation stays, the one between goes.
        assert old.is_dir()
        assert _entries(seed_copy) == {".lock", "manifest.json", old.name, "g000003"}
        assert len(reader.search("diffusion models", k=3)) == 3  # moves on to generation 3
        assert len(reader) == SEED_COUNT + 6
        assert not old.exists()
    _assert_clean(seed_copy)


def test_an_add_skips_papers_another_process_added_meanwhile(
        seed_copy: Path, reader: SearchEngine) -> None:
    records = _records("twice", 4)
    with SearchEngine.open(seed_copy) as other:
        assert other.add(records[:2]) == 2
    assert reader.add(records) == 2  # the engine had not seen the other add yet
    assert len(reader) == SEED_COUNT + 4


def test_queries_go_on_while_a_write_publishes(
        seed_copy: Path, reader: SearchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    from embedsearch.storage import layout

    checksum = layout.sha256_file
    publishing = threading.Event()

    def slow_checksum(path: Path) -> str:  # a publish as slow as at 80k papers
        publishing.set()
        time.sleep(0.3)
        return checksum(path)

    monkeypatch.setattr(layout, "sha256_file", slow_checksum)
    reader.search("warm up", k=1)
    writer = threading.Thread(target=reader.add, args=(_records("slow", 3),))
    writer.start()
    assert publishing.wait(60)
    started = time.monotonic()
    assert len(reader.search("graph neural networks", k=3)) == 3
    assert time.monotonic() - started < 0.5, "a query waited for the publish"
    assert len(reader) == SEED_COUNT  # still the served generation
    writer.join()
    assert len(reader) == SEED_COUNT + 3


def test_a_second_writer_waits_for_the_lock_then_gives_up(
        seed_copy: Path, reader: SearchEngine, cli: Cli) -> None:
    paper_id = sorted(_ids_on_disk(seed_copy))[0]
    with IndexDirectory(seed_copy).locked(wait=0):
        started = time.monotonic()
        with pytest.raises(IndexBusyError, match="busy"):
            reader.remove([paper_id], wait=0.3)
        assert 0.3 <= time.monotonic() - started < 5
        result = cli("remove", paper_id, "--index", seed_copy, "--wait", "0.2")
        assert result.code == 1
        assert result.err.count("\n") == 1 and "busy" in result.err
        assert paper_id in reader  # reads go on while the lock is held
    assert reader.remove([paper_id], wait=0.3) == 1


def test_a_writer_waits_while_another_holds_the_lock(
        seed_copy: Path, reader: SearchEngine) -> None:
    held = threading.Event()

    def hold_briefly() -> None:
        with IndexDirectory(seed_copy).locked(wait=0):
            held.set()
            time.sleep(0.5)

    thread = threading.Thread(target=hold_briefly)
    thread.start()
    held.wait()
    started = time.monotonic()
    assert reader.add(_records("late", 2), wait=30) == 2
    assert time.monotonic() - started >= 0.4
    thread.join()


def test_a_lock_left_by_a_killed_process_does_not_block(
        seed_copy: Path, reader: SearchEngine) -> None:
    code = ("import sys, time; from embedsearch.storage.layout import IndexDirectory\n"
            "with IndexDirectory(sys.argv[1]).locked():\n"
            "    print('locked', flush=True); time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(seed_copy)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    with pytest.raises(IndexBusyError):
        reader.add(_records("blocked", 1), wait=0.2)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert reader.add(_records("free", 1), wait=5) == 1


# -- crashes ---------------------------------------------------------------------------------
#: Where a writer is killed, and what the index must hold afterwards.
KILL_POINTS = {
    "before-staging": "old", "while-encoding": "old", "while-copying": "old",
    "while-checksumming": "old", "after-rename": "old", "mid-manifest": "old",
    "before-cleanup": "new",
}


def _check_after_crash(index: Path, old: set[str], new: set[str]) -> str:
    """The index opens with exactly the old or the new papers (checksums verified),
    answers queries, and its next write succeeds and leaves nothing behind."""
    with SearchEngine.open(index) as engine:
        ids = _ids_on_disk(index)
        assert ids in (old, old | new)
        assert len(engine) == len(ids)
        assert len(engine.search("language models", k=3)) == 3
        marker = f"after-crash:{len(ids)}:{time.monotonic_ns()}"
        assert engine.add([{"id": marker, "abstract": "A write after a crash."}]) == 1
        assert engine.remove([marker]) == 1
    _assert_clean(index)
    return "old" if ids == old else "new"


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_kill_9_of_an_add_leaves_the_old_or_the_new_index(
        seed_copy: Path, tmp_path: Path, point: str) -> None:
    records = _records("killed", 3)
    old = _ids_on_disk(seed_copy)
    writer = subprocess.run([sys.executable, str(CRASHING_WRITER), point, "add",
                             str(_jsonl(tmp_path / "add.jsonl", records)), "--index",
                             str(seed_copy), "-q"], capture_output=True, text=True, timeout=300)
    assert writer.returncode == -signal.SIGKILL, writer.stderr
    new = {str(record["id"]) for record in records}
    assert _check_after_crash(seed_copy, old, new) == KILL_POINTS[point]


def test_kill_9_of_a_rebuild_leaves_the_old_index(seed_copy: Path, tmp_path: Path) -> None:
    before = snapshot(seed_copy)
    source = _jsonl(tmp_path / "other.jsonl", _records("rebuilt", 5))
    writer = subprocess.run([sys.executable, str(CRASHING_WRITER), "after-rename", "build",
                             str(source), "--out", str(seed_copy), "--overwrite", "-q"],
                            capture_output=True, text=True, timeout=300)
    assert writer.returncode == -signal.SIGKILL, writer.stderr
    after = snapshot(seed_copy)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing old changed
    _check_after_crash(seed_copy, _ids_on_disk(seed_copy), set())


@pytest.mark.slow
def test_twenty_kills_at_spread_out_moments(seed_copy: Path, tmp_path: Path) -> None:
    """kill -9 of `embedsearch add` at 20 moments spread over its whole run, each trial on
    the index the previous ones left."""
    started = time.monotonic()
    timing = _embedsearch("add", _jsonl(tmp_path / "t.jsonl", _records("timing", 3)),
                          "--index", seed_copy, "-q")
    assert timing.wait(timeout=300) == 0
    duration = time.monotonic() - started
    outcomes: dict[str, int] = {}
    for trial in range(20):
        records = _records(f"trial{trial}", 3)
        old = _ids_on_disk(seed_copy)
        writer = _embedsearch("add", _jsonl(tmp_path / f"{trial}.jsonl", records),
                              "--index", seed_copy, "-q")
        # From start-up to past the end: most of a small add is start-up, its writes
        # come in the last tenth, and a kill after the end must change nothing.
        time.sleep(duration * (0.3 + 0.9 * trial / 19))
        writer.send_signal(signal.SIGKILL)
        writer.communicate()
        outcome = _check_after_crash(seed_copy, old, {str(r["id"]) for r in records})
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(f"20 kills over {duration:.1f} s runs: {outcomes}")
    assert sum(outcomes.values()) == 20


# -- failed disk writes ----------------------------------------------------------------------
def test_a_failed_disk_write_leaves_the_index_byte_identical(
        seed_copy: Path, reader: SearchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    from embedsearch.storage import layout

    before = snapshot(seed_copy)

    def full_disk(path: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(layout, "fsync_file", full_disk)
    with pytest.raises(OSError, match="No space left"):
        reader.add(_records("nospace", 3))
    assert snapshot(seed_copy) == before
    assert len(reader) == SEED_COUNT and "nospace:0" not in reader
    assert len(reader.search("reinforcement learning", k=3)) == 3
    monkeypatch.undo()
    assert reader.add(_records("space", 3)) == 3


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 600 KiB: room for the seed index (about 360 KiB), not for two."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_enospc_on_a_full_tmpfs_leaves_the_index_byte_identical(
        seed_index: Path, small_disk: Path, tmp_path: Path, cli: Cli) -> None:
    index = small_disk / "index"
    shutil.copytree(seed_index, index)
    before = snapshot(index)
    source = _jsonl(tmp_path / "many.jsonl", _records("full", 38))
    result = cli("add", source, "--index", index)
    assert result.code == 1
    assert result.err.startswith("embedsearch: error:") and "No space left" in result.err
    assert result.err.count("\n") == 1
    assert snapshot(index) == before
    assert _entries(index) == _entries(seed_index)
    found = cli("search", "graph neural networks", "--index", index)
    assert found.code == 0, found.err


# -- the embedding cache ---------------------------------------------------------------------
TEXTS = ["Sparse autoencoders find interpretable features.",
         "Diffusion models for protein design.", "A benchmark of long-context reasoning."]


def _reference() -> np.ndarray:
    encoder = Encoder(backend="torch", cache=False)
    try:
        return encoder.encode_documents(TEXTS)
    finally:
        encoder.close()


def _cached_encode(cache_dir: Path) -> np.ndarray:
    encoder = Encoder(backend="torch", cache_dir=cache_dir)
    try:
        return encoder.encode_documents(TEXTS)
    finally:
        encoder.close()


def test_a_damaged_cache_file_is_set_aside_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    expected = _reference()
    np.testing.assert_allclose(_cached_encode(tmp_path), expected, atol=1e-6)
    cache_file = tmp_path / "embeddings.sqlite"
    for leftover in tmp_path.glob("embeddings.sqlite-*"):
        leftover.unlink()
    data = bytearray(cache_file.read_bytes())
    data[0:4096] = os.urandom(4096)  # the header page: SQLite no longer reads the file
    cache_file.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="embedsearch"):
        np.testing.assert_allclose(_cached_encode(tmp_path), expected, atol=1e-6)
    assert "damaged" in caplog.text
    assert list(tmp_path.glob("embeddings.sqlite.damaged-*"))


def test_a_damaged_cached_vector_is_never_returned(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    expected = _reference()
    _cached_encode(tmp_path)
    db = sqlite3.connect(tmp_path / "embeddings.sqlite")
    with db:  # flip one float of one stored vector, as a bad sector would
        key, blob = db.execute("SELECT key, vector FROM vectors LIMIT 1").fetchone()
        vector = np.frombuffer(blob, dtype=np.float32).copy()
        vector[7] += 0.5
        db.execute("UPDATE vectors SET vector = ? WHERE key = ?", (vector.tobytes(), key))
    db.close()
    with caplog.at_level(logging.WARNING, logger="embedsearch"):
        np.testing.assert_allclose(_cached_encode(tmp_path), expected, atol=1e-6)
    assert "damaged vector" in caplog.text
