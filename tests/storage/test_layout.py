"""The index directory: manifest checks, encoder checks, and atomic writes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from embedsearch import (
    IndexCorruptError,
    IndexIncompatibleError,
    IndexNotFoundError,
    InputError,
    SearchEngine,
)
from embedsearch.encoding import resolve_model
from embedsearch.storage.local import storage as local_storage
from embedsearch.storage.local.vectors.faiss_index import FaissIndex
from tests.conftest import snapshot


def manifest_of(index: Path) -> dict[str, object]:
    return json.loads((index / "manifest.json").read_text())


def current_file(index: Path, name: str) -> Path:
    """The file `name` of the current generation: "FILE" in its first segment, or
    "SEGMENT/FILE"."""
    manifest = manifest_of(index)
    generation = index / f"g{manifest['generation']:06d}"
    if "/" in name:
        return generation / name
    segments = manifest["segments"]
    assert isinstance(segments, list)
    return generation / segments[0]["name"] / name


def test_manifest_records_what_is_needed_to_check(seed_index: Path) -> None:
    manifest = manifest_of(seed_index)
    assert manifest["format_version"] == 3
    assert manifest["count"] == 38 and manifest["metric"] == "inner_product"
    model = manifest["model"]
    assert isinstance(model, dict)
    assert model["name"] == "sentence-transformers/all-MiniLM-L6-v2" and model["dim"] == 384
    assert model["fingerprint"] == resolve_model().fingerprint
    files, segments = manifest["files"], manifest["segments"]
    assert isinstance(segments, list) and len(segments) == 1 and manifest["next_key"] == 39
    assert segments[0]["count"] == 38 and segments[0]["deleted"] == 0
    name = segments[0]["name"]
    assert isinstance(files, dict) and set(files) == {f"{name}/papers.sqlite",
                                                      f"{name}/vectors.faiss",
                                                      f"{name}/keys.npy", f"{name}/lexical.npz"}
    for name, entry in files.items():
        assert entry["bytes"] == current_file(seed_index, name).stat().st_size
        assert len(entry["sha256"]) == 64


@pytest.mark.parametrize("name", ["vectors.faiss", "papers.sqlite", "keys.npy", "lexical.npz"])
def test_a_corrupted_file_is_refused(seed_copy: Path, name: str) -> None:
    target = current_file(seed_copy, name)
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match="does not match its checksum"):
        SearchEngine.open(seed_copy)


def test_a_truncated_or_missing_file_is_refused(seed_copy: Path) -> None:
    target = current_file(seed_copy, "vectors.faiss")
    target.write_bytes(target.read_bytes()[:-100])
    with pytest.raises(IndexCorruptError, match="truncated"):
        SearchEngine.open(seed_copy)
    target.unlink()
    with pytest.raises(IndexCorruptError, match="is missing"):
        SearchEngine.open(seed_copy)


def test_unknown_format_version_is_refused(seed_copy: Path) -> None:
    manifest = manifest_of(seed_copy)
    manifest["format_version"] = 99
    (seed_copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexIncompatibleError, match="format version 99"):
        SearchEngine.open(seed_copy)
    (seed_copy / "manifest.json").write_text("{broken")
    with pytest.raises(IndexCorruptError, match="not valid JSON"):
        SearchEngine.open(seed_copy)


def test_missing_index_directory(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError, match="does not exist"):
        SearchEngine.open(tmp_path / "nowhere")
    with pytest.raises(IndexNotFoundError, match="holds no embedsearch index"):
        SearchEngine.open(tmp_path)


def test_index_built_by_another_model_is_not_queried(seed_copy: Path) -> None:
    manifest = manifest_of(seed_copy)
    assert isinstance(manifest["model"], dict)
    manifest["model"]["fingerprint"] = "0" * 64
    (seed_copy / "manifest.json").write_text(json.dumps(manifest))
    engine = SearchEngine.open(seed_copy)
    assert engine.similar("000_ae22c05437d8edef:1", k=1)  # stored vectors need no encoder
    with pytest.raises(IndexIncompatibleError, match="not comparable"):
        engine.search("visual prompting")


def test_a_different_query_encoder_is_refused(seed_index: Path, tmp_path: Path) -> None:
    # A copy of the bundled model that reads 128 tokens instead of 256: other vectors.
    source = resolve_model().path
    other = tmp_path / "model"
    shutil.copytree(source, other, copy_function=os.symlink)
    config = other / "sentence_bert_config.json"
    settings = json.loads(config.read_text())
    config.unlink()
    config.write_text(json.dumps({**settings, "max_seq_length": 128}))
    with pytest.raises(IndexIncompatibleError, match="query encoder is"):
        SearchEngine.open(seed_index, model=str(other))
    assert SearchEngine.open(seed_index, model="all-MiniLM-L6-v2").search("graphs", k=1)


def test_failed_build_leaves_nothing_behind(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(self: FaissIndex, directory: Path) -> list[str]:
        raise OSError("No space left on device")

    monkeypatch.setattr(FaissIndex, "save", fail)
    with pytest.raises(OSError, match="No space left"):
        SearchEngine.build(tmp_path / "new", [{"abstract": "A paper."}])
    assert list(tmp_path.iterdir()) == []


def test_failed_update_leaves_the_index_byte_for_byte(
        seed_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = SearchEngine.open(seed_copy)
    before = snapshot(seed_copy)
    original_save = FaissIndex.save

    def fail(self: FaissIndex, directory: Path) -> list[str]:
        original_save(self, directory)  # files half written, then the disk fills up
        raise OSError("No space left on device")

    def fail_deleting(folder: Path, keys: object) -> None:
        (folder / "deletions.npy").write_bytes(b"half")
        raise OSError("No space left on device")

    monkeypatch.setattr(FaissIndex, "save", fail)
    monkeypatch.setattr(local_storage, "write_deletions", fail_deleting)
    with pytest.raises(OSError):
        engine.add([{"id": "n", "abstract": "Brand new abstract about graphs."}])
    with pytest.raises(OSError):
        engine.remove(["000_ae22c05437d8edef:1"])
    with pytest.raises(OSError):
        SearchEngine.build(seed_copy, [{"abstract": "x"}], overwrite=True)
    assert snapshot(seed_copy) == before
    # The engine reloaded what is on disk: the failed add and remove did not stick.
    assert len(engine) == 38 and "n" not in engine
    assert "000_ae22c05437d8edef:1" in engine
    assert engine.similar("000_ae22c05437d8edef:1", k=37)[-1].paper.id != "n"


def test_bad_input_leaves_the_index_byte_for_byte(seed_copy: Path, tmp_path: Path) -> None:
    engine = SearchEngine.open(seed_copy)
    before = snapshot(seed_copy)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "abstract": "fine"}\n{"id": "b", "year": "soon"}\n')
    with pytest.raises(InputError, match="bad.jsonl:2"):
        engine.add_files([bad])
    with pytest.raises(InputError):
        SearchEngine.build_from_files(seed_copy, [bad], overwrite=True)
    assert snapshot(seed_copy) == before


def test_staging_left_by_a_crash_is_cleaned_by_the_next_write(seed_copy: Path) -> None:
    leftover = seed_copy / ".g000002.tmp-crashed"
    leftover.mkdir()
    (leftover / "vectors.faiss").write_bytes(b"partial")
    engine = SearchEngine.open(seed_copy)
    assert len(engine) == 38  # a reader ignores it
    engine.add([{"id": "n", "abstract": "Another abstract."}])
    assert not leftover.exists()
    assert sorted(p.name for p in seed_copy.iterdir()) == [".lock", "g000002", "manifest.json"]
