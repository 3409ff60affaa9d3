"""`embedsearch check`: every kind of damage is found and named, drift is measured
against the model as installed, and --repair fixes what it can through the lock."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from embedsearch import SearchEngine
from embedsearch.storage.directory import IndexDirectory
from embedsearch.storage.local.lexical import Postings
from embedsearch.storage.local.paper_store import STORE_FILE
from embedsearch.storage.local.vectors import create_index, load_index
from embedsearch.storage.records import SegmentRecord
from tests.conftest import CliResult, contents, data_file

Cli = Callable[..., CliResult]
FILES = ("vectors.faiss", "keys.npy", "lexical.npz", STORE_FILE)


def _rewrite(index: Path, change: Callable[[SegmentRecord, Path], None]) -> None:
    """Publish the index's data with `change` applied to a copy of its first segment's
    files (given its manifest record), as a new generation with matching checksums:
    damage no checksum would catch."""
    directory = IndexDirectory(index)
    with directory.write(replace=True) as staging:
        assert staging.previous is not None
        directory.link_files(staging.previous, staging, sorted(staging.previous.files))
        segment = staging.previous.local.segments[0]
        change(segment, staging.dir / segment.name)
        staging.carried.clear()
        directory.commit(staging, staging.previous)


def _replace_file(folder: Path, name: str, save: Callable[[Path], object]) -> None:
    (folder / name).unlink()  # a hard link to the published file: never write through it
    save(folder)


@pytest.mark.parametrize("name", FILES)
def test_a_flipped_byte_in_each_file_is_found(seed_copy: Path, cli: Cli, name: str) -> None:
    target = data_file(seed_copy, name)
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    result = cli("check", "--index", seed_copy)
    assert result.code == 1
    assert result.out.splitlines() == [f"{target} does not match its checksum: the file "
                                       "is damaged"]


def test_a_paper_missing_from_the_lexical_index_is_found(seed_copy: Path, cli: Cli) -> None:
    def drop_one(segment: SegmentRecord, folder: Path) -> None:
        lexical = Postings.load(folder)
        kept = Postings.merged([(lexical, np.arange(len(lexical)) > 0)])
        _replace_file(folder, "lexical.npz", kept.save)

    _rewrite(seed_copy, drop_one)
    result = cli("check", "--index", seed_copy)
    assert result.code == 1
    name = IndexDirectory(seed_copy).read_manifest().local.segments[0].name
    assert result.out.splitlines() == [f"segment {name}: the lexical index holds 37 papers, "
                                       "the paper store 38: 0 only in the lexical index, 1 "
                                       "missing from it"]


def test_a_stray_generation_is_found_and_repaired(seed_copy: Path, cli: Cli) -> None:
    (seed_copy / "g000007").mkdir()  # renamed into place by a writer that died
    (seed_copy / ".g000008.tmp-x").mkdir()  # a staging folder of one
    result = cli("check", "--index", seed_copy)
    assert result.code == 1 and len(result.out.splitlines()) == 2
    assert "g000007 was never published" in result.out
    assert ".g000008.tmp-x was left by a writer that died" in result.out
    repaired = cli("check", "--index", seed_copy, "--repair")
    assert repaired.code == 0, repaired.err
    assert "Repaired: removed 2 stray folder(s)" in repaired.err
    assert sorted(p.name for p in seed_copy.iterdir()) == [".lock", "g000001",
                                                           "manifest.json"]


def test_a_drifted_vector_is_found_by_a_deep_check_and_repaired(
        seed_copy: Path, cli: Cli) -> None:
    with SearchEngine.open(seed_copy) as engine:
        keys, vectors, papers = contents(engine)
    victim = papers[int(keys[1])].id

    def alter(segment: SegmentRecord, folder: Path) -> None:
        # The segment's vector index written anew, one vector turned: indexes are never
        # changed in place, so a drifted file is a whole new one.
        stored = load_index(folder, segment.index, vectors.shape[1])
        held = stored.keys()
        altered = stored.reconstruct(held)
        turned = int(np.flatnonzero(held == int(keys[1]))[0])
        altered[turned, :40] = -altered[turned, :40]  # a different direction, unit length
        index = create_index(segment.index.type, vectors.shape[1], len(held),
                             dict(segment.index.params))
        index.add(held, altered)
        (folder / "new").mkdir()
        for name in index.save(folder / "new"):
            _replace_file(folder, name, lambda f, n=name: (f / "new" / n).rename(f / n))
        (folder / "new").rmdir()

    _rewrite(seed_copy, alter)
    assert cli("check", "--index", seed_copy).code == 0  # files and parts agree
    deep = cli("check", "--index", seed_copy, "--deep", "--sample", "0", "--json")
    assert deep.code == 1
    report = json.loads(deep.out)
    assert report["drift"]["drifted"] == [victim] and report["drift"]["sampled"] == 38
    assert report["drift"]["min_cosine"] < 0.99 < report["drift"]["mean_cosine"]
    assert "1 of 38 sampled papers drifted" in report["problems"][0]
    repaired = cli("check", "--index", seed_copy, "--deep", "--sample", "0", "--repair")
    assert repaired.code == 0 and "re-encoded 1 drifted paper(s)" in repaired.err
    again = json.loads(cli("check", "--index", seed_copy, "--deep", "--sample", "0",
                           "--json").out)
    assert again["whole"] and again["drift"]["min_cosine"] > 0.999


def test_a_healthy_index_passes_and_says_so(seed_copy: Path, cli: Cli) -> None:
    result = cli("check", "--index", seed_copy, "--deep", "--sample", "5")
    assert result.code == 0 and result.out == ""
    assert "Re-encoded 5 stored papers" in result.err and "The index is whole." in result.err
