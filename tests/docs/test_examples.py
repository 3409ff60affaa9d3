"""Every shell and Python block in README.md and docs/ runs in the reader's folder, as
the quick start (or the tutorial) left it, or says why it cannot run here; a renamed
option or function fails here, not on a page."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from .examples import (
    REPO,
    RUN_LANGUAGES,
    Block,
    PageRunner,
    blocks,
    docstring_blocks,
    documentation_pages,
    start,
)
from .world import PDF_IDS, make_pdf_folder, make_zotero_library

#: Fences that are not code to run: output, diagrams, file layouts, data.
NOT_CODE = {"", "text", "json", "yaml", "toml", "csv", "bibtex"}
#: Run by the `after_tutorial` fixture, after the quick start, as a reader runs it.
TUTORIAL = REPO / "docs" / "tutorial.md"
PAGES = [page for page in documentation_pages()
         if any(block.not_run is None for block in blocks(page)) and page != TUTORIAL]
#: An id argument of the commands and calls that take paper ids.
_ID_ARGUMENTS = re.compile(
    r"embedsearch\s+(?:show|similar|remove)\s+((?:[^\s-][^\s]*\s+)*)"
    r"|--(?:positive|not)\s+(\S+)"
    r"|\.(?:similar|get|remove)\(\s*\[?\s*[\"']([^\"']+)[\"']")


def quick_start_search() -> str:
    """The quick start's search command, as README.md gives it."""
    readme = blocks(REPO / "README.md")
    lines = [line.split("#")[0].strip() for block in readme for line in block.code.splitlines()
             if line.strip().startswith("embedsearch search")]
    assert lines, "README's quick start searches the bundled sample"
    return lines[0]


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


@pytest.fixture(scope="session")
def quick_start(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reader's folder after the README's quick start: an empty folder (and home),
    then its first search, which builds the bundled index."""
    world = tmp_path_factory.mktemp("quick-start")
    (world / "home").mkdir()
    _run_all([Block(REPO / "README.md", 0, "bash", quick_start_search(), None)], world)
    return world


@pytest.fixture(scope="session")
def after_tutorial(quick_start: Path, tmp_path_factory: pytest.TempPathFactory
                   ) -> tuple[Path, int]:
    """The reader's folder after the quick start and then every tutorial block; how
    many blocks ran."""
    world = tmp_path_factory.mktemp("tutorial") / "reader"
    shutil.copytree(quick_start, world)
    return world, _run_all(blocks(TUTORIAL), world)


def readers_folder(page: Path, into: Path, quick_start: Path,
                   after_tutorial: tuple[Path, int]) -> Path:
    """A copy of the folder the page's examples start from, at `into`."""
    begins = start(page)
    shutil.copytree(after_tutorial[0] if begins.after_tutorial else quick_start, into)
    if begins.zotero:
        make_zotero_library(into / "home" / "Zotero")
    if begins.pdfs:
        make_pdf_folder(into / "papers")
    return into


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path, quick_start: Path,
                           after_tutorial: tuple[Path, int]) -> None:
    missing = start(page).missing_extra()
    if missing:
        pytest.skip(missing)
    world = readers_folder(page, tmp_path / "reader", quick_start, after_tutorial)
    ran = _run_all(blocks(page), world)
    assert ran == sum(block.not_run is None for block in blocks(page))


def test_docstring_examples_run(tmp_path: Path, after_tutorial: tuple[Path, int]) -> None:
    # The Python reference shows these; they run with indexes/mine built, as a reader
    # of the tutorial has it, and ZoteroLibrary's reads the reader's Zotero library.
    examples = docstring_blocks()
    assert len(examples) >= 3, "SearchEngine, Filters.parse and read_papers show examples"
    world = tmp_path / "reader"
    shutil.copytree(after_tutorial[0], world)
    make_zotero_library(world / "home" / "Zotero")
    assert _run_all(examples, world) == len(examples)


def test_the_tutorial_follows_the_quick_start(quick_start: Path,
                                              after_tutorial: tuple[Path, int]) -> None:
    # The reader's world: an empty folder, the quick start's search, then the tutorial.
    # The bundled index is in the reader's data folder, not in the folder they stand in.
    assert sorted(path.name for path in quick_start.iterdir()) == ["home"]
    data = quick_start / "home" / ".local" / "share" / "embedsearch"
    assert (data / "indexes" / "iclr2025" / "manifest.json").is_file()
    assert after_tutorial[1] >= 10
    assert (after_tutorial[0] / "indexes" / "mine").is_dir()


def test_pages_that_start_after_the_tutorial_say_so() -> None:
    # A reader who lands on such a page learns where its index and files come from.
    silent = [str(page.relative_to(REPO)) for page in documentation_pages()
              if start(page).after_tutorial and "tutorial.md" not in page.read_text("utf-8")]
    assert not silent, f"pages that start after the tutorial without a link to it: {silent}"


def test_every_example_id_is_in_the_readers_index() -> None:
    from embedsearch.bundled import sample_papers

    sample = {paper.id for paper in sample_papers()}
    named = []
    for page in documentation_pages():
        # A page about the reader's PDFs names those too (`world.make_pdf_folder`).
        known = sample | set(PDF_IDS) if start(page).pdfs else sample
        for block in blocks(page):
            for match in _ID_ARGUMENTS.finditer(block.code):
                words = " ".join(group for group in match.groups() if group).split()
                named += [(str(block), word, known) for word in words
                          if word not in {"\\", "|", ">"} and not word.startswith(("-", "$"))]
    assert len(named) >= 5, named
    unknown = [(where, word) for where, word, known in named if word not in known]
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
