"""Segments: an index grown by adds and removes ranks as one fresh build of the same
papers; a write costs what it adds; readers share segments and keep what they hold
through merges; the merge policy bounds segments and rewrites."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from embedsearch import DiskSpaceError, Filters, Paper, SearchEngine
from embedsearch.storage.directory import IndexDirectory
from embedsearch.storage.local import LocalStorage, LocalView, MergePolicy
from embedsearch.storage.local.merging import plan_merge, tier_of
from embedsearch.storage.records import SegmentRecord, VectorIndexRecord
from tests.conftest import assert_clean, ids_on_disk, new_records, run_embedsearch, write_jsonl

#: A vector index record for segments the merge policy plans over (it reads sizes only).
FLAT = VectorIndexRecord("faiss", "flat", {"factory": "Flat"})
QUERIES = ["offline preference-based reinforcement learning", "graph neural networks",
           "diffusion models for images", "language model alignment", "visual prompting"]


def _segments(index: Path) -> list[SegmentRecord]:
    return list(IndexDirectory(index).read_manifest().local.segments)


def test_rankings_across_segments_equal_one_build(seed_engine: SearchEngine,
                                                  tmp_path: Path) -> None:
    with seed_engine.snapshot() as view:
        papers = [view.papers([int(k)])[int(k)] for k in view.keys()]
    grown = SearchEngine.build(tmp_path / "grown", papers[:20])
    grown.add(papers[20:30])
    grown.add(papers[30:])
    gone = [papers[3].id, papers[25].id, papers[33].id]  # one from each segment
    grown.remove(gone)
    assert len(_segments(tmp_path / "grown")) == 3
    live = [paper for paper in papers if paper.id not in gone]
    fresh = SearchEngine.build(tmp_path / "fresh", live)
    filters = Filters.parse(year="2025")
    for query in QUERIES:
        for mode in ("hybrid", "dense", "lexical"):
            ours, theirs = grown.search(query, k=10, mode=mode), fresh.search(query, k=10,
                                                                               mode=mode)
            assert [h.paper.id for h in ours] == [h.paper.id for h in theirs], (query, mode)
            assert np.allclose([h.score for h in ours], [h.score for h in theirs], atol=1e-5)
            assert [h.evidence for h in ours] == [h.evidence for h in theirs]
        assert [h.paper.id for h in grown.search(query, k=5, filters=filters)] == \
            [h.paper.id for h in fresh.search(query, k=5, filters=filters)]
        assert [h.paper.id for h in grown.search(query, k=8, diverse=True)] == \
            [h.paper.id for h in fresh.search(query, k=8, diverse=True)]
    assert [h.paper.id for h in grown.similar(papers[31].id, k=10)] == \
        [h.paper.id for h in fresh.similar(papers[31].id, k=10)]
    assert [h.paper.id for h in grown.similar_to_papers(papers[:3], k=10)] == \
        [h.paper.id for h in fresh.similar_to_papers(papers[:3], k=10)]
    assert not any(paper_id in grown for paper_id in gone) and len(grown) == len(fresh)
    assert grown.check().whole
    assert grown.compact() and len(_segments(tmp_path / "grown")) == 1
    assert [h.paper.id for h in grown.search(QUERIES[0], k=10)] == \
        [h.paper.id for h in fresh.search(QUERIES[0], k=10)]


def _bulk(count: int, tag: str) -> tuple[list[Paper], np.ndarray]:
    rng = np.random.default_rng(count)
    words = [f"word{i}" for i in range(2000)]
    papers = [Paper(id=f"{tag}:{i}", title=f"Paper {i}",
                    abstract=" ".join(rng.choice(words, 40)), year=2020 + i % 5)
              for i in range(count)]
    vectors = rng.normal(size=(count, 384)).astype(np.float32)
    return papers, vectors


def _written_by(write: object) -> int:
    """Bytes this process handed to write calls while `write()` ran (/proc/self/io)."""
    def wchar() -> int:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
        raise AssertionError("no wchar in /proc/self/io")

    before = wchar()
    write()  # type: ignore[operator]
    return wchar() - before


def test_an_add_writes_what_it_adds_not_what_the_index_holds(tmp_path: Path) -> None:
    # 20,000 papers hold about 60 MB; the old format rewrote all of it for every add.
    written = {}
    for count in (500, 20_000):
        papers, vectors = _bulk(count, f"bulk{count}")
        index = tmp_path / f"i{count}"
        SearchEngine.build(index, papers, vectors=vectors, cache=False).close()
        with SearchEngine.open(index, verify=False, cache=False) as engine:
            extra = [{"id": f"new{count}:{i}", "abstract": f"A new paper number {i}."}
                     for i in range(5)]
            written[count] = _written_by(lambda e=engine, x=extra: e.add(x))
            removed = _written_by(lambda e=engine, c=count: e.remove([f"bulk{c}:7"]))
        assert removed < 200_000  # a deletions file and a manifest
    assert written[20_000] < 1_000_000
    assert written[20_000] < 2 * written[500] + 100_000


def test_a_reader_loads_only_new_segments_and_keeps_what_it_holds(seed_copy: Path) -> None:
    reader = SearchEngine.open(seed_copy)
    with reader.snapshot() as view:
        assert isinstance(view, LocalView)
        first = view.segments[0]
        held = IndexDirectory(seed_copy).files_dir(view.manifest)
        with SearchEngine.open(seed_copy) as writer:  # nine adds, then a merge of ten
            for number in range(9):
                writer.add(new_records(f"w{number}", 1))
        assert len(_segments(seed_copy)) == 1  # merged
        assert held.is_dir()  # the generation the snapshot reads stays, whole
        assert len(view) == 38 and len(view.keys_of(["w0:0"])) == 0  # still its own state
        assert len(view.lexical("visual prompting", 5, None, np.zeros(0, np.int64))[1]) == 5
    with reader.snapshot() as view:  # moves on: the merged generation
        assert isinstance(view, LocalView) and len(view) == 47
    assert not held.exists()
    with SearchEngine.open(seed_copy) as writer:
        writer.add(new_records("later", 1))
    with reader.snapshot() as view:
        assert isinstance(view, LocalView) and len(view.segments) == 2
        merged = view.segments[0]
    with reader.snapshot() as view:  # nothing changed: the same segments, not reloaded
        assert isinstance(view, LocalView) and view.segments[0] is merged
    assert merged is not first
    reader.close()
    assert_clean(seed_copy)


def test_two_writers_at_once_lose_nothing(seed_copy: Path, tmp_path: Path) -> None:
    batches = [new_records(f"writer{n}", 3) for n in range(2)]
    processes = [run_embedsearch("add", write_jsonl(tmp_path / f"{n}.jsonl", batch),
                                 "--index", seed_copy, "-q") for n, batch in enumerate(batches)]
    with SearchEngine.open(seed_copy) as engine:  # and a third, in this process
        engine.add(new_records("inprocess", 2))
    for process in processes:
        assert process.wait(timeout=300) == 0, process.stderr.read() if process.stderr else ""
    expected = {str(r["id"]) for batch in batches for r in batch}
    assert expected | {"inprocess:0", "inprocess:1"} <= ids_on_disk(seed_copy)
    with SearchEngine.open(seed_copy) as engine:
        assert len(engine) == 38 + 8 and engine.check().whole
    assert_clean(seed_copy)


def test_merges_cascade_within_one_write(seed_copy: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Two segments a tier from two papers up: one add can merge twice in one commit.
    monkeypatch.setattr(LocalStorage, "merge_policy", MergePolicy(segments_per_tier=2,
                                                                   floor=2))
    with SearchEngine.open(seed_copy) as engine:
        for number in range(6):
            engine.add([{"id": f"c{number}", "abstract": f"A cascading paper {number}."}])
            assert engine.check().whole and len(engine) == 39 + number
        assert all(f"c{number}" in engine for number in range(6))
    sizes = [s.count for s in _segments(seed_copy)]
    assert sum(sizes) == 44 and len(sizes) <= 4, sizes


def test_a_merge_the_disk_has_no_room_for_is_left_and_compact_refuses(
        seed_copy: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        cli: Callable[..., Any]) -> None:
    # A reserve past the disk's real free space: no merge has room for itself.
    free = shutil.disk_usage(seed_copy).free
    monkeypatch.setattr(LocalStorage, "merge_policy", MergePolicy(
        segments_per_tier=2, floor=1, disk_reserve=free + 2**30))
    with SearchEngine.open(seed_copy) as engine, caplog.at_level(logging.WARNING,
                                                                  "embedsearch.storage"):
        for number in range(2):
            engine.add([{"id": f"d{number}", "abstract": f"A paper on a full disk {number}."}])
        # The writes are kept, their segments searched unmerged.
        assert engine.check().whole and "d0" in engine and "d1" in engine
        # The policy merges two one-paper segments; the disk had no room for it.
        assert sorted(s.count for s in _segments(seed_copy)) == [1, 1, 38]
        assert any("left unmerged" in line and "free on its disk" in line
                   for line in caplog.messages)
        before = sorted(p.name for p in seed_copy.iterdir())
        with pytest.raises(DiskSpaceError, match="compacting needs") as refused:
            engine.compact()
        assert refused.value.needed > refused.value.free == pytest.approx(free, rel=0.05)
        assert sorted(p.name for p in seed_copy.iterdir()) == before
    result = cli("compact", "--index", seed_copy)
    assert result.code != 0 and "compacting needs" in result.err and "Traceback" not in result.err
    # With room again, the next write merges.
    monkeypatch.setattr(LocalStorage, "merge_policy", MergePolicy(segments_per_tier=2, floor=1))
    with SearchEngine.open(seed_copy) as engine:
        engine.add([{"id": "d2", "abstract": "A paper once the disk has room."}])
        assert engine.check().whole and len(engine) == 41
    assert sorted(s.count for s in _segments(seed_copy)) == [1, 2, 38]
    assert_clean(seed_copy)


def test_the_policy_bounds_segments_and_rewrites() -> None:
    policy = MergePolicy()
    assert [tier_of(n, policy) for n in (1, 99, 100, 999, 1000, 9999, 10_000)] == \
        [0, 0, 1, 1, 2, 2, 3]
    for add in (1, 100, 5000):  # papers a write adds
        segments: list[SegmentRecord] = []
        written = added = 0
        for number in range(2000 if add < 5000 else 200):
            segments.append(SegmentRecord(f"a{number}", add, 0, FLAT))
            added += add
            written += add
            while (names := plan_merge(segments, policy)) is not None:
                merged = [s for s in segments if s.name in names]
                size = sum(s.count for s in merged)
                segments = [s for s in segments if s.name not in names]
                segments.append(SegmentRecord(f"m{number}-{len(segments)}", size, 0, FLAT))
                written += size
            assert len(segments) < 10 * (tier_of(added, policy) + 1)
        # Each paper is rewritten about once per tier it climbs (see MergePolicy), and
        # below the floor about floor / 9 papers are rewritten for each small write.
        churn = policy.floor / (policy.segments_per_tier - 1) / add if add < policy.floor \
            else 0
        assert written / added < tier_of(added, policy) + 2 + churn, (add, written / added)
    heavy = [SegmentRecord("a", 100, 30, FLAT), SegmentRecord("b", 10, 0, FLAT)]
    assert plan_merge(heavy, policy) == ["a"]  # over a quarter removed: rewritten alone
