"""The typed manifest writes exactly the bytes the code before it wrote: each fixture in
tests/fixtures/manifests/ was written by an earlier commit (FIXTURE.json names it;
scripts/make_manifest_fixtures.py), and reads back into records that write it again
byte for byte. Older formats are upgraded by tests/storage/test_upgrade.py."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from embedsearch.errors import IndexCorruptError
from embedsearch.storage.directory import IndexDirectory
from embedsearch.storage.manifest import Manifest
from embedsearch.storage.records import (
    IndexRules,
    LocalRecord,
    ModelRecord,
    SegmentRecord,
    StorageRecord,
    TextRecord,
    VectorIndexRecord,
)
from embedsearch.storage.upgrade import upgrade_index
from tests.conftest import REPO

MANIFESTS = REPO / "tests" / "fixtures" / "manifests"
NAMES = sorted(path.name for path in MANIFESTS.glob("v3-*.json"))
INDEXES = REPO / "tests" / "fixtures" / "indexes"


def test_the_fixtures_were_written_by_the_code_before_the_typed_manifest() -> None:
    made = json.loads((MANIFESTS / "FIXTURE.json").read_text())
    assert len(made["commit"]) == 40 and made["made_by"] == "scripts/make_manifest_fixtures.py"
    assert {"v3-local.json", "v3-local-hnsw.json", "v3-milvus.json"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_manifest_reads_into_records_and_writes_the_same_bytes(name: str) -> None:
    text = (MANIFESTS / name).read_text(encoding="utf-8")
    manifest = Manifest.from_json(text, MANIFESTS / name)
    assert manifest.to_json() == text
    assert isinstance(manifest.model, ModelRecord) and manifest.model.dim == 384
    assert isinstance(manifest.text, TextRecord) and isinstance(manifest.index, VectorIndexRecord)
    assert isinstance(manifest.storage, StorageRecord)
    assert all(isinstance(s, SegmentRecord) for s in manifest.local.segments)


def test_the_local_record_holds_what_only_the_local_storage_reads() -> None:
    local = Manifest.from_json((MANIFESTS / "v3-local-hnsw.json").read_text(), MANIFESTS)
    # Built of five, one added, one removed: two segments, the first with a deletion.
    assert [(s.count, s.deleted, s.index.type) for s in local.local.segments] == \
        [(5, 1, "hnsw"), (1, 0, "flat")]
    assert local.local.next_key == 7 and [key for key, _ in local.local.additions] == [1, 6]
    assert local.local.rules == IndexRules(False, "hnsw", {}, 50_000, None)
    assert local.index == local.local.segments[0].index  # the largest segment's
    milvus = Manifest.from_json((MANIFESTS / "v3-milvus.json").read_text(), MANIFESTS)
    assert milvus.local == LocalRecord() and milvus.index.lexical == "BM25"
    assert milvus.storage.kind == "milvus" and milvus.storage.settings["physical"] == \
        "papers_g000001"


def test_a_record_changed_is_written_as_the_format_has_it() -> None:
    text = (MANIFESTS / "v3-local.json").read_text()
    manifest = Manifest.from_json(text, MANIFESTS)
    first = dataclasses.replace(manifest.local.segments[0], deleted=3)
    changed = dataclasses.replace(manifest, local=dataclasses.replace(
        manifest.local, segments=(first, *manifest.local.segments[1:])))
    written = json.loads(changed.to_json())
    assert written["segments"][0]["deleted"] == 3
    assert {**written, "segments": json.loads(text)["segments"]} == json.loads(text)


def test_a_manifest_missing_a_record_is_refused_as_damaged(tmp_path: Path) -> None:
    data = json.loads((MANIFESTS / "v3-local.json").read_text())
    del data["model"]["dim"]
    with pytest.raises(IndexCorruptError, match="missing or unexpected fields.*rebuild"):
        Manifest.from_json(json.dumps(data), tmp_path / "manifest.json")


def test_an_old_index_upgraded_and_written_again_keeps_its_bytes(tmp_path: Path) -> None:
    """An upgrade of a format-2 index writes a format-3 manifest that, read and written,
    does not change; the next write changes only what it writes."""
    index = tmp_path / "index"
    shutil.copytree(INDEXES / "v2-no-storage", index)
    assert upgrade_index(index)
    text = (index / "manifest.json").read_text()
    assert IndexDirectory(index).read_manifest().to_json() == text
    with SearchEngine.open(index) as engine:
        assert engine.remove(["fixture:2"]) == 1
    after = json.loads((index / "manifest.json").read_text())
    assert after["index"] == json.loads(text)["index"]
    assert after["segments"][0]["deleted"] == 1 and after["next_key"] == 7
