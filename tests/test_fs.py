"""Writes that fail on the disk (fsync refused, a full tmpfs) leave the index byte for
byte as it was."""

from __future__ import annotations

import errno
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from tests.conftest import SEED_COUNT, CliResult, index_entries, new_records, snapshot, write_jsonl

Cli = Callable[..., CliResult]


# -- failed disk writes ----------------------------------------------------------------------
def test_a_failed_disk_write_leaves_the_index_byte_identical(
        seed_copy: Path, reader: SearchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    from embedsearch.storage import checksums

    before = snapshot(seed_copy)

    def full_disk(path: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(checksums, "fsync_file", full_disk)
    with pytest.raises(OSError, match="No space left"):
        reader.add(new_records("nospace", 3))
    assert snapshot(seed_copy) == before
    assert len(reader) == SEED_COUNT and "nospace:0" not in reader
    assert len(reader.search("reinforcement learning", k=3)) == 3
    monkeypatch.undo()
    assert reader.add(new_records("space", 3)) == 3


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
    source = write_jsonl(tmp_path / "many.jsonl", new_records("full", 38))
    result = cli("add", source, "--index", index)
    assert result.code == 1
    assert result.err.startswith("embedsearch: error:") and "No space left" in result.err
    assert result.err.count("\n") == 1
    assert snapshot(index) == before
    assert index_entries(index) == index_entries(seed_index)
    found = cli("search", "graph neural networks", "--index", index)
    assert found.code == 0, found.err
