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
from embedsearch.storage.layout import IndexDirectory
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
    assert manifest.storage == {"kind": "local"} and "prompts" in manifest.model
    with SearchEngine.open(old_index) as engine:
        assert len(engine) == 6 and engine.check(deep=True, sample=0).whole
        assert engine.get("fixture:3").venue == "ICLR"
        for mode in ("hybrid", "lexical", "dense"):
            assert len(engine.search("diffusion models", k=3, mode=mode)) >= 1
        assert engine.add([{"id": "fixture:new", "abstract": "Robots learn to grasp "
                                                             "from tactile feedback."}]) == 1


def test_a_reader_of_the_old_generation_keeps_it_until_it_moves_on(tmp_path: Path) -> None:
    index = tmp_path / "index"
    shutil.copytree(FIXTURES / "v2-no-prompts", index)
    with SearchEngine.open(index) as reader:
        assert len(reader) == 6
        upgrade_index(index)
        assert (index / "g000001").is_dir()  # held by `reader`
        assert len(reader.search("diffusion", k=2)) == 2  # moves on to generation 2
        assert reader.info().format_version == 2
    with SearchEngine.open(index) as writer:  # no reader holds it now: the next write
        writer.remove(["fixture:0"])            # removes the old generation
    assert sorted(p.name for p in index.iterdir() if p.name.startswith("g")) == ["g000003"]


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
