"""An open index follows its writers: several processes add at once while readers
search, a server sees another process's add, a reader keeps its generation until it
moves on. Real writers (the bundled model, real files, real child processes) on a copy
of the seed index."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from embedsearch.storage.directory import IndexDirectory
from tests.conftest import (
    SEED_COUNT,
    assert_clean,
    ids_on_disk,
    index_entries,
    new_records,
    run_embedsearch,
    write_jsonl,
)


# -- several writers, and readers that follow them -------------------------------------------
def test_two_concurrent_adds_both_land_while_a_reader_searches(
        seed_copy: Path, reader: SearchEngine, tmp_path: Path) -> None:
    first, second = new_records("a", 10), new_records("b", 10)
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
    writers = [run_embedsearch("add", write_jsonl(tmp_path / f"{tag}.jsonl", records),
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
    assert expected <= ids_on_disk(seed_copy) and len(ids_on_disk(seed_copy)) == 58


def test_a_server_sees_another_process_add_without_a_restart(
        seed_copy: Path, reader: SearchEngine, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from embedsearch.server import create_app

    client = TestClient(create_app(reader, compute_map=False), base_url="http://localhost")
    assert client.get("/health").json()["papers"] == SEED_COUNT
    writer = run_embedsearch("add", write_jsonl(tmp_path / "new.jsonl", new_records("cron", 5)),
                          "--index", seed_copy, "-q")
    assert writer.wait(timeout=300) == 0
    # The first request after the publish checks the manifest and serves the new generation.
    assert client.get("/health").json()["papers"] == SEED_COUNT + 5
    assert client.get("/papers/cron:0").status_code == 200


def test_a_reader_keeps_its_generation_until_it_moves_on(
        seed_copy: Path, reader: SearchEngine) -> None:
    old = IndexDirectory(seed_copy).files_dir(IndexDirectory(seed_copy).read_manifest())
    assert reader.search("diffusion models", k=3)  # a reader holds what it has read
    with SearchEngine.open(seed_copy) as writer:
        writer.add(new_records("x", 3))
        writer.add(new_records("y", 3))
        # `reader` has not been called since: its generation stays, the one between goes.
        assert old.is_dir()
        assert index_entries(seed_copy) == {".lock", "manifest.json", old.name, "g000003"}
        assert len(reader.search("diffusion models", k=3)) == 3  # moves on to generation 3
        assert len(reader) == SEED_COUNT + 6
        assert not old.exists()
    assert_clean(seed_copy)


def test_an_add_skips_papers_another_process_added_meanwhile(
        seed_copy: Path, reader: SearchEngine) -> None:
    records = new_records("twice", 4)
    with SearchEngine.open(seed_copy) as other:
        assert other.add(records[:2]) == 2
    assert reader.add(records) == 2  # the engine had not seen the other add yet
    assert len(reader) == SEED_COUNT + 4


#: Seconds a held part waits for a query: long enough for any loaded machine to answer
#: one, short enough that a failing test ends.
WAIT = 60.0


def held_until(release: threading.Event, outcomes: list[bool]) -> None:
    """What a slow part does: wait for `release` (bounded, so a query that waits for the
    slow part cannot hang the test) and note whether it came (True) or the wait ran out."""
    outcomes.append(release.wait(WAIT))


def test_queries_go_on_while_a_write_publishes(
        seed_copy: Path, reader: SearchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    from embedsearch.storage import checksums

    checksum = checksums.sha256_file
    publishing, answered = threading.Event(), threading.Event()
    outcomes: list[bool] = []

    def held_checksum(path: Path) -> str:  # a publish as slow as at 80k papers
        if not publishing.is_set():
            publishing.set()
            held_until(answered, outcomes)
        return checksum(path)

    monkeypatch.setattr(checksums, "sha256_file", held_checksum)
    reader.search("warm up", k=1)
    writer = threading.Thread(target=reader.add, args=(new_records("slow", 3),))
    writer.start()
    assert publishing.wait(WAIT)
    assert len(reader.search("graph neural networks", k=3)) == 3
    assert len(reader) == SEED_COUNT  # still the served generation
    answered.set()
    writer.join()
    assert outcomes == [True], "a query waited for the publish"
    assert len(reader) == SEED_COUNT + 3


def test_queries_go_on_while_another_thread_loads_a_newer_generation(
        seed_copy: Path, reader: SearchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    from embedsearch.storage.local import LocalStorage

    reader.search("warm up", k=1)
    with SearchEngine.open(seed_copy) as writer:  # another process, as far as `reader` knows
        writer.add(new_records("elsewhere", 2))
    opening, answered = threading.Event(), threading.Event()
    outcomes: list[bool] = []
    view = LocalStorage.view

    def held_view(self: LocalStorage, *args: object, **kwargs: object) -> object:
        opening.set()
        held_until(answered, outcomes)  # reading a generation of 80k papers from disk
        return view(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(LocalStorage, "view", held_view)
    loader = threading.Thread(target=reader.search, args=("diffusion models",))
    loader.start()
    assert opening.wait(WAIT)
    assert len(reader.search("graph neural networks", k=3)) == 3
    assert len(reader) == SEED_COUNT  # answered from the served generation meanwhile
    answered.set()
    loader.join()
    assert outcomes == [True], "a query waited for another thread's load"
    assert len(reader) == SEED_COUNT + 2


def test_in_the_background_a_call_never_reads_a_generation_itself(
        seed_copy: Path, reader: SearchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    from embedsearch.storage.local import LocalStorage

    reader.follow_in_background()  # as `embedsearch serve` does
    reader.search("warm up", k=1)
    with SearchEngine.open(seed_copy) as writer:
        writer.add(new_records("elsewhere", 2))
    answered = threading.Event()
    outcomes: list[bool] = []
    view = LocalStorage.view

    def held_view(self: LocalStorage, *args: object, **kwargs: object) -> object:
        held_until(answered, outcomes)
        return view(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(LocalStorage, "view", held_view)
    assert len(reader.search("graph neural networks", k=3)) == 3
    assert len(reader) == SEED_COUNT  # the served generation, while the newer loads
    answered.set()
    deadline = time.monotonic() + WAIT
    while len(reader) != SEED_COUNT + 2:
        assert time.monotonic() < deadline, "the newer generation was never served"
        time.sleep(0.05)
    assert outcomes == [True], "a call read the newer generation itself"
