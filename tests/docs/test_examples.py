"""Every shell and Python block in README.md and docs/ runs on the world of `world.py`,
or says why it cannot run here; a renamed option or function fails here, not on a page."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from embedsearch import SearchEngine

from .examples import (
    REPO,
    RUN_LANGUAGES,
    Block,
    PageRunner,
    blocks,
    docstring_blocks,
    documentation_pages,
    given_indexes,
)
from .world import make_world

#: Fences that are not code to run: output, diagrams, file layouts, data.
NOT_CODE = {"", "text", "json", "yaml", "toml", "csv", "bibtex"}
#: Pages that run in the reader's own world (what the quick start leaves), not in the
#: world of `world.py`: `test_the_tutorial_follows_the_quick_start` runs them.
READERS_WORLD = (REPO / "docs" / "tutorial.md",)
PAGES = [page for page in documentation_pages()
         if any(block.not_run is None for block in blocks(page))
         and page not in READERS_WORLD]
#: An id argument of the commands and calls that take paper ids.
_ID_ARGUMENTS = re.compile(
    r"embedsearch\s+(?:show|similar|remove)\s+((?:[^\s-][^\s]*\s+)*)"
    r"|--(?:positive|not)\s+(\S+)"
    r"|\.(?:similar|get|remove)\(\s*\[?\s*[\"']([^\"']+)[\"']")


@pytest.fixture(scope="session")
def world_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index a page that starts with one finds: papers.jsonl of the world, built once."""
    world = make_world(tmp_path_factory.mktemp("docs-world"))
    SearchEngine.build_from_files(world / "indexes" / "mine", [world / "papers.jsonl"]).close()
    return world / "indexes" / "mine"


def _run_all(examples: list[Block], world: Path) -> int:
    """Run the blocks not marked 'not run', in order; how many ran."""
    runner = PageRunner(world)
    ran = 0
    try:
        for block in examples:
            if block.not_run is None:
                runner.run(block)
                ran += 1
    finally:
        runner.close()
    return ran


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path, world_index: Path) -> None:
    world = make_world(tmp_path / "world")
    for path in given_indexes(page):
        shutil.copytree(world_index, world / path)
    ran = _run_all(blocks(page), world)
    assert ran == sum(block.not_run is None for block in blocks(page))


def test_docstring_examples_run(tmp_path: Path, world_index: Path) -> None:
    # The Python reference shows these; they run with indexes/mine built, as a reader
    # of the tutorial has it.
    examples = docstring_blocks()
    assert len(examples) >= 3, "SearchEngine, Filters.parse and read_papers show examples"
    world = make_world(tmp_path / "world")
    shutil.copytree(world_index, world / "indexes" / "mine")
    assert _run_all(examples, world) == len(examples)


def quick_start_search() -> str:
    """The quick start's search command, as README.md gives it."""
    readme = blocks(REPO / "README.md")
    lines = [line.split("#")[0].strip() for block in readme for line in block.code.splitlines()
             if line.strip().startswith("embedsearch search")]
    assert lines, "README's quick start searches the bundled sample"
    return lines[0]


def test_the_tutorial_follows_the_quick_start(tmp_path: Path) -> None:
    # The reader's world: an empty folder, the quick start's search, then the tutorial.
    world = tmp_path / "reader"
    (world / "home").mkdir(parents=True)
    runner = PageRunner(world)
    try:
        runner.run(Block(REPO / "README.md", 0, "bash", quick_start_search(), None))
        assert sorted(path.name for path in world.iterdir()) == ["home", "indexes"]
        ran = 0
        for block in blocks(READERS_WORLD[0]):
            if block.not_run is None:
                runner.run(block)
                ran += 1
    finally:
        runner.close()
    assert ran >= 10


def test_every_example_id_is_in_the_readers_index() -> None:
    from embedsearch.bundled import sample_papers

    from .world import world_papers

    known = {paper.id for paper in sample_papers()} | {r["id"] for r in world_papers()}
    named = []
    for page in documentation_pages():
        for block in blocks(page):
            for match in _ID_ARGUMENTS.finditer(block.code):
                words = " ".join(group for group in match.groups() if group).split()
                named += [(str(block), word) for word in words
                          if word not in {"\\", "|", ">"} and not word.startswith(("-", "$"))]
    assert len(named) >= 5, named
    unknown = [(where, word) for where, word in named if word not in known]
    assert not unknown, f"ids the reader's index lacks: {unknown}"


def test_every_block_runs_or_says_why() -> None:
    unmarked_languages, no_reason, stray = [], [], []
    fence = re.compile(r"^ *```([\w-]*)", re.M)
    for page in documentation_pages():
        text = page.read_text(encoding="utf-8")
        languages = fence.findall(text)[::2]       # opening fences only
        unmarked_languages += [f"{page.name}: ```{language}" for language in languages
                               if language.lower() not in {*RUN_LANGUAGES, *NOT_CODE}]
        page_blocks = blocks(page)
        no_reason += [str(block) for block in page_blocks if block.not_run == ""]
        markers = len(re.findall(r"^\s*<!-- not run:", text, re.M))
        if markers != sum(block.not_run is not None for block in page_blocks):
            stray.append(f"{page.name}: {markers} 'not run' markers, not each right "
                         "before a bash or python block")
    assert not unmarked_languages, ("blocks in a language the examples test neither runs "
                                    f"nor knows as output: {unmarked_languages}")
    assert not no_reason, f"'not run' without a reason: {no_reason}"
    assert not stray, stray
    counted = [block for page in documentation_pages() for block in blocks(page)]
    assert sum(block.not_run is None for block in counted) > len(counted) / 2, (
        "most examples should run; each 'not run' needs what this machine lacks")
