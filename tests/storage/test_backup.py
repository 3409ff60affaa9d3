"""Backups taken while the index is written, and restores a running server follows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from embedsearch import SearchEngine
from embedsearch.errors import ConfigurationError
from embedsearch.server.app import create_app
from embedsearch.storage.backup import backup_index
from embedsearch.storage.directory import IndexDirectory
from tests.conftest import SEED_COUNT, ids_on_disk, new_records, run_embedsearch, write_jsonl

_ADDS = """
import json, sys
from embedsearch import SearchEngine
with SearchEngine.open(sys.argv[1]) as engine:
    for batch in json.load(open(sys.argv[2])):
        engine.add(batch)
"""


def test_backups_taken_while_another_process_adds_hold_one_generation_each(
        seed_copy: Path, tmp_path: Path) -> None:
    batches = [new_records(f"b{number}", 3) for number in range(4)]
    plan = tmp_path / "batches.json"
    plan.write_text(json.dumps(batches))
    seed = ids_on_disk(seed_copy)
    generations = [seed | {str(r["id"]) for batch in batches[:n] for r in batch}
                   for n in range(len(batches) + 1)]
    writer = subprocess.Popen([sys.executable, "-c", _ADDS, str(seed_copy), str(plan)])
    copies = []
    while writer.poll() is None or len(copies) < 2:
        target = tmp_path / f"copy{len(copies)}"
        backup_index(seed_copy, target)
        copies.append(target)
        if len(copies) > 40:
            break
    assert writer.wait(300) == 0
    seen = set()
    for copy in copies:
        with SearchEngine.open(copy) as engine:  # every file's sha256 checked on opening
            ids = ids_on_disk(copy)
            assert ids in generations, "a backup mixes two generations"
            assert len(engine) == len(ids) and engine.check().whole
            seen.add(len(ids))
    assert seen <= {SEED_COUNT + 3 * n for n in range(5)}


def test_a_backup_goes_to_a_new_folder(seed_index: Path, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigurationError, match="is not a backup; a backup goes to a new"):
        backup_index(seed_index, tmp_path / "taken")


def test_a_backup_into_an_earlier_one_copies_only_the_segments_it_lacks(
        seed_copy: Path, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    first = backup_index(seed_copy, saved)
    base = IndexDirectory(saved).files_dir(first)
    inodes = {name: (base / name).stat().st_ino for name in first.files}
    with SearchEngine.open(seed_copy) as engine:
        engine.add(new_records("later", 3))
        engine.remove([sorted(ids_on_disk(seed_copy))[0]])
    second = backup_index(seed_copy, saved)
    assert second.generation == first.generation + 1
    folder = IndexDirectory(saved).files_dir(second)
    shared = [name for name in second.files if name in inodes
              and (folder / name).stat().st_ino == inodes[name]]
    segment = first.local.segments[0].name
    # The first segment is shared but for its new deletions file; the new one is copied.
    assert sorted(shared) == sorted(n for n in first.files if n.startswith(segment))
    assert second.files == IndexDirectory(seed_copy).read_manifest().files
    with SearchEngine.open(saved) as restored:  # every file's sha256 checked on opening
        assert ids_on_disk(saved) == ids_on_disk(seed_copy) and restored.check().whole


def test_a_restore_under_a_running_server_is_seen_at_the_next_request(
        seed_copy: Path, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    backup_index(seed_copy, saved)
    with SearchEngine.open(seed_copy) as served:
        client = TestClient(create_app(served, compute_map=False), base_url="http://localhost")
        added = run_embedsearch("add", write_jsonl(tmp_path / "new.jsonl",
                                                   new_records("later", 5)),
                                "--index", seed_copy, "-q")
        assert added.wait(300) == 0
        assert client.get("/health").json()["papers"] == SEED_COUNT + 5
        restored = run_embedsearch("restore", saved, "--index", seed_copy, "-q")
        assert restored.wait(300) == 0, restored.communicate()
        assert client.get("/health").json()["papers"] == SEED_COUNT
        assert client.get("/papers/later:0").status_code == 404
    shutil.rmtree(saved)
