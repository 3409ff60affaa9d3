"""Every index an earlier commit of embedsearch wrote opens or is upgraded; a newer
format is refused with the version that wrote it. The fixtures were built by those
commits (scripts/make_index_fixtures.py; each folder's FIXTURE.json names its commit)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from embedsearch.errors import IndexIncompatibleError
from embedsearch.storage.directory import IndexDirectory
from embedsearch.storage.records import PromptsRecord, StorageRecord
from embedsearch.storage.upgrade import upgrade_index
from tests.conftest import REPO, CliResult

FIXTURES = REPO / "tests" / "fixtures" / "indexes"
NAMES = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())


@pytest.fixture(params=NAMES)
def old_index(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    target = tmp_path / request.param
    shutil.copytree(FIXTURES / request.param, target)
    return target


def test_every_fixture_names_the_commit_that_made_it() -> None:
    assert {"v1-lexicalless", "v2-no-storage", "v2-no-prompts", "v2-no-identifiers"} <= \
        set(NAMES)
    for name in NAMES:
        made = json.loads((FIXTURES / name / "FIXTURE.json").read_text())
        assert len(made["commit"]) == 40 and made["made_by"] == "scripts/make_index_fixtures.py"


def test_an_old_index_is_upgraded_in_place_and_then_serves_as_a_new_one(
        old_index: Path) -> None:
    before = json.loads((old_index / "manifest.json").read_text())
    if before["format_version"] < 2:
        with pytest.raises(IndexIncompatibleError, match="embedsearch upgrade --index"):
            SearchEngine.open(old_index)
    changes = upgrade_index(old_index)
    assert changes  # every fixture lacks something the current code writes
    assert upgrade_index(old_index) == []  # and then nothing
    manifest = IndexDirectory(old_index).read_manifest()
    assert manifest.generation == before["generation"] + 1
    assert manifest.storage == StorageRecord("local")
    assert manifest.model.prompts == PromptsRecord("", "", "none")
    with SearchEngine.open(old_index) as engine:
        assert len(engine) == 6 and engine.check(deep=True, sample=0).whole
        assert engine.get("fixture:3").venue == "ICLR"
        for mode in ("hybrid", "lexical", "dense"):
            assert len(engine.search("diffusion models", k=3, mode=mode)) >= 1
        assert engine.add([{"id": "fixture:new", "abstract": "Robots learn to grasp "
                                                             "from tactile feedback."}]) == 1


def test_an_upgrade_to_segments_shares_every_file_it_keeps(tmp_path: Path) -> None:
    index = tmp_path / "index"
    shutil.copytree(FIXTURES / "v2-no-prompts", index)
    before = json.loads((index / "manifest.json").read_text())
    inodes = {name: (index / "g000001" / name).stat().st_ino for name in before["files"]}
    with pytest.raises(IndexIncompatibleError, match="embedsearch upgrade --index"):
        SearchEngine.open(index)
    upgrade_changes = upgrade_index(index)
    manifest = IndexDirectory(index).read_manifest()
    segment = manifest.local.segments[0].name
    assert manifest.local.next_key == 7 and manifest.local.segments[0].count == 6
    copied = {"papers.sqlite"}  # gains the doi and arxiv_id columns: a copy
    assert "the paper store's doi and arxiv_id" in upgrade_changes
    for name, inode in inodes.items():  # the other flat files became the segment: linked
        if name in copied:
            continue
        assert (index / "g000002" / segment / name).stat().st_ino == inode
        assert manifest.files[f"{segment}/{name}"] == before["files"][name]
    with SearchEngine.open(index) as engine:
        assert engine.remove(["fixture:0"]) == 1 and len(engine) == 5
        assert engine.add([{"id": "fixture:0", "abstract": "Back again, under a new key."}])
    assert sorted(p.name for p in index.iterdir() if p.name.startswith("g")) == ["g000004"]


def test_a_newer_format_is_refused_with_the_version_that_wrote_it(
        seed_copy: Path, cli: object) -> None:
    manifest = json.loads((seed_copy / "manifest.json").read_text())
    (seed_copy / "manifest.json").write_text(json.dumps(
        {**manifest, "format_version": 9, "software": "embedsearch 7.1.0"}))
    expected = "format version 9 was written by embedsearch 7.1.0.*install embedsearch 7.1.0"
    with pytest.raises(IndexIncompatibleError, match=expected):
        SearchEngine.open(seed_copy)
    with pytest.raises(IndexIncompatibleError, match=expected):
        upgrade_index(seed_copy)
    result: CliResult = cli("upgrade", "--index", seed_copy)  # type: ignore[operator]
    assert result.code == 1 and "install embedsearch 7.1.0 or newer" in result.err
