"""The writers' lock and atomic generations: a second writer waits or gives up, a lock
left by a killed process does not block, and kill -9 at every point of a write leaves
the old or the new index, never a mix."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from embedsearch import IndexBusyError, SearchEngine
from embedsearch.storage.directory import IndexDirectory
from tests.conftest import (
    CliResult,
    assert_clean,
    ids_on_disk,
    new_records,
    run_embedsearch,
    snapshot,
    write_jsonl,
)
from tests.docs.world import make_pdf_folder

Cli = Callable[..., CliResult]


CRASHING_WRITER = Path(__file__).parents[1] / "crashing_writer.py"


def test_a_second_writer_waits_for_the_lock_then_gives_up(
        seed_copy: Path, reader: SearchEngine, cli: Cli) -> None:
    paper_id = sorted(ids_on_disk(seed_copy))[0]
    with IndexDirectory(seed_copy).locked(wait=0):
        with pytest.raises(IndexBusyError, match="busy") as busy:
            reader.remove([paper_id], wait=0.3)
        assert busy.value.waited >= 0.3  # it gave up only once its wait was over
        result = cli("remove", paper_id, "--index", seed_copy, "--wait", "0.2")
        assert result.code == 1
        assert result.err.count("\n") == 1 and "busy" in result.err
        assert paper_id in reader  # reads go on while the lock is held
    assert reader.remove([paper_id], wait=0.3) == 1


def test_a_writer_waits_while_another_holds_the_lock(
        seed_copy: Path, reader: SearchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The holder lets go only once the writer has been refused the lock: the add then
    succeeds, so it waited rather than gave up or wrote past the lock."""
    held, refused = threading.Event(), threading.Event()
    lock_file = (seed_copy / ".lock").resolve()
    flock = fcntl.flock

    def watched_flock(fd: int, operation: int) -> None:  # the real flock, watched
        try:
            flock(fd, operation)
        except BlockingIOError:
            if Path(os.readlink(f"/proc/self/fd/{fd}")) == lock_file:
                refused.set()
            raise

    monkeypatch.setattr(fcntl, "flock", watched_flock)
    outcomes: list[bool] = []

    def hold_until_refused() -> None:
        with IndexDirectory(seed_copy).locked(wait=0):
            held.set()
            outcomes.append(refused.wait(60))  # bounded: a writer that never asks ends it

    thread = threading.Thread(target=hold_until_refused)
    thread.start()
    assert held.wait(60)
    assert reader.add(new_records("late", 2), wait=120) == 2
    thread.join()
    assert outcomes == [True], "the add never asked for the held lock"


def test_a_lock_left_by_a_killed_process_does_not_block(
        seed_copy: Path, reader: SearchEngine) -> None:
    code = ("import sys, time; from embedsearch.storage.directory import IndexDirectory\n"
            "with IndexDirectory(sys.argv[1]).locked():\n"
            "    print('locked', flush=True); time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(seed_copy)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    with pytest.raises(IndexBusyError):
        reader.add(new_records("blocked", 1), wait=0.2)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert reader.add(new_records("free", 1), wait=5) == 1


# -- crashes ---------------------------------------------------------------------------------
#: Where a writer is killed, and what the index must hold afterwards.
KILL_POINTS = {
    "before-staging": "old", "while-encoding": "old", "while-writing-segment": "old",
    "while-linking": "old", "while-checksumming": "old", "after-rename": "old",
    "mid-manifest": "old", "before-cleanup": "new",
}
#: Where a remove is killed; it always leaves the old index.
REMOVE_KILL_POINTS = ("while-deleting", "while-checksumming", "after-rename", "mid-manifest")


def _check_after_crash(index: Path, old: set[str], new: set[str]) -> str:
    """The index opens with exactly the old or the new papers (checksums verified),
    answers queries, and its next write succeeds and leaves nothing behind."""
    with SearchEngine.open(index) as engine:
        ids = ids_on_disk(index)
        assert ids in (old, old | new)
        assert len(engine) == len(ids)
        assert {paper_id for paper_id in new if paper_id in engine} == ids - old  # served
        assert len(engine.search("language models", k=3)) == 3
        marker = f"after-crash:{len(ids)}:{time.monotonic_ns()}"
        assert engine.add([{"id": marker, "abstract": "A write after a crash."}]) == 1
        assert engine.remove([marker]) == 1
    assert_clean(index)
    return "old" if ids == old else "new"


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_kill_9_of_an_add_leaves_the_old_or_the_new_index(
        seed_copy: Path, tmp_path: Path, point: str) -> None:
    records = new_records("killed", 3)
    old = ids_on_disk(seed_copy)
    writer = subprocess.run([sys.executable, str(CRASHING_WRITER), point, "add",
                             str(write_jsonl(tmp_path / "add.jsonl", records)), "--index",
                             str(seed_copy), "-q"], capture_output=True, text=True, timeout=300)
    assert writer.returncode == -signal.SIGKILL, writer.stderr
    new = {str(record["id"]) for record in records}
    assert _check_after_crash(seed_copy, old, new) == KILL_POINTS[point]


@pytest.mark.parametrize("point", ["while-writing-passages", "while-checksumming",
                                   "before-cleanup"])
def test_kill_9_of_a_full_text_add_leaves_the_old_or_the_new_index(
        seed_copy: Path, tmp_path: Path, point: str) -> None:
    make_pdf_folder(tmp_path / "papers")
    old = ids_on_disk(seed_copy)
    _crash(point, "add", tmp_path / "papers", "--index", seed_copy)
    new = {"paper1", "paper2", "paper3"}
    outcome = _check_after_crash(seed_copy, old, new)
    assert outcome == ("new" if point == "before-cleanup" else "old")
    with SearchEngine.open(seed_copy) as engine:
        if outcome == "new":  # the bodies are the seed's abstracts: asked for by id
            assert [p.page for p in engine.passages("paper2")][-1] == 2
            assert engine.file_of("paper2").endswith("paper2.pdf")
        assert engine.check().problems == []


def _crash(point: str, *args: object) -> None:
    writer = subprocess.run([sys.executable, str(CRASHING_WRITER), point,
                             *[str(arg) for arg in args], "-q"],
                            capture_output=True, text=True, timeout=300)
    assert writer.returncode == -signal.SIGKILL, writer.stderr


@pytest.mark.parametrize("point", REMOVE_KILL_POINTS)
def test_kill_9_of_a_remove_leaves_the_old_index(seed_copy: Path, point: str) -> None:
    old = ids_on_disk(seed_copy)
    victims = sorted(old)[:2]
    _crash(point, "remove", *victims, "--index", seed_copy)
    assert _check_after_crash(seed_copy, old, set()) == "old"
    with SearchEngine.open(seed_copy) as engine:  # and the remove can be done again
        assert engine.remove(victims) == 2 and ids_on_disk(seed_copy) == old - set(victims)


@pytest.mark.parametrize("point", ["while-merging", "while-checksumming", "mid-manifest"])
def test_kill_9_of_a_merge_leaves_the_old_index(seed_copy: Path, tmp_path: Path,
                                                point: str) -> None:
    with SearchEngine.open(seed_copy) as engine:  # nine segments: the next add merges
        for number in range(8):
            engine.add([{"id": f"single:{number}", "abstract": f"Paper number {number}."}])
    assert len(IndexDirectory(seed_copy).read_manifest().local.segments) == 9
    old = ids_on_disk(seed_copy)
    records = new_records("merged", 2)
    _crash(point, "add", write_jsonl(tmp_path / "add.jsonl", records), "--index", seed_copy)
    assert len(IndexDirectory(seed_copy).read_manifest().local.segments) == 9
    assert _check_after_crash(seed_copy, old, set()) == "old"  # its add merged the nine
    assert len(IndexDirectory(seed_copy).read_manifest().local.segments) == 1
    with SearchEngine.open(seed_copy) as engine:
        assert engine.add(records) == 2
        assert ids_on_disk(seed_copy) == old | {str(r["id"]) for r in records}


def test_kill_9_of_a_rebuild_leaves_the_old_index(seed_copy: Path, tmp_path: Path) -> None:
    before = snapshot(seed_copy)
    source = write_jsonl(tmp_path / "other.jsonl", new_records("rebuilt", 5))
    writer = subprocess.run([sys.executable, str(CRASHING_WRITER), "after-rename", "build",
                             str(source), "--out", str(seed_copy), "--overwrite", "-q"],
                            capture_output=True, text=True, timeout=300)
    assert writer.returncode == -signal.SIGKILL, writer.stderr
    after = snapshot(seed_copy)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing old changed
    _check_after_crash(seed_copy, ids_on_disk(seed_copy), set())


@pytest.mark.slow
def test_twenty_kills_at_spread_out_moments(seed_copy: Path, tmp_path: Path) -> None:
    """kill -9 of `embedsearch add` at 20 moments spread over its whole run, each trial on
    the index the previous ones left."""
    started = time.monotonic()
    timing = run_embedsearch("add", write_jsonl(tmp_path / "t.jsonl", new_records("timing", 3)),
                          "--index", seed_copy, "-q")
    assert timing.wait(timeout=300) == 0
    duration = time.monotonic() - started
    outcomes: list[tuple[int | None, str]] = []
    for trial in range(20):
        records = new_records(f"trial{trial}", 3)
        old, new = ids_on_disk(seed_copy), {str(r["id"]) for r in records}
        writer = run_embedsearch("add", write_jsonl(tmp_path / f"{trial}.jsonl", records),
                              "--index", seed_copy, "-q")
        # From start-up to past the end: most of a small add is start-up, its writes
        # come in the last tenth, and a kill after the end must change nothing.
        time.sleep(duration * (0.3 + 0.9 * trial / 19))
        writer.send_signal(signal.SIGKILL)
        writer.communicate()
        outcomes.append((writer.returncode, _check_after_crash(seed_copy, old, new)))
    print(f"20 kills over {duration:.1f} s runs (exit code, index): {outcomes}")
    # A writer that finished before its kill published its papers; one killed may have.
    assert all(outcome == "new" for code, outcome in outcomes if code == 0), outcomes
    assert {code for code, _ in outcomes} <= {0, -signal.SIGKILL}, outcomes
