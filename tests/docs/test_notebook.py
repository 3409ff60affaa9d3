"""The quick-start notebook is committed without outputs, and the site shows it run top
to bottom in a fresh kernel (the build runs it: docs/notebook_hook.py) with what it
says: hits as tables, a DataFrame, similar papers and the map as a plot."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from .conftest import needs_mkdocs
from .examples import REPO

NOTEBOOK = REPO / "docs" / "notebooks" / "quickstart.ipynb"
LORVP = "iclr2025:1"  # the LoR-VP (low-rank visual prompting) abstract, as the sample names it


def _code_cells() -> list[str]:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]).strip() for cell in cells if cell["cell_type"] == "code"]


def test_the_notebook_is_committed_without_outputs() -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    assert code, "the notebook has no code"
    assert all(not cell.get("outputs") and cell.get("execution_count") is None
               for cell in code), (
        "the notebook is kept without outputs (the site shows them from its own run): "
        "clear them before committing")


@dataclass
class _Output:
    """One output on the page: its text, how many tables it holds, its images' sources."""

    text: str = ""
    tables: int = 0
    images: list[str] = field(default_factory=list)


class _NotebookPage(HTMLParser):
    """A built notebook page's code blocks, outside the outputs, as text; and each
    output (`div.notebook-output`) as its text, its tables' count and its images."""

    VOID = {"br", "hr", "img", "input", "link", "meta", "source", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.code: list[str] = []
        self.outputs: list[_Output] = []
        self._open: list[str] = []        # the tags open inside the page's article
        self._output_depth: int | None = None
        self._pre: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag not in self.VOID:
            self._open.append(tag)
        if self._output_depth is None and "notebook-output" in classes:
            self._output_depth = len(self._open)
            self.outputs.append(_Output())
        elif self._output_depth is not None:
            if tag == "table":
                self.outputs[-1].tables += 1
            elif tag == "img":
                self.outputs[-1].images.append(attributes.get("src") or "")
        elif tag == "pre":
            self._pre = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self._pre is not None:
            self.code.append("".join(self._pre).strip())
            self._pre = None
        if self._output_depth is not None and len(self._open) == self._output_depth:
            self._output_depth = None
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._output_depth is not None:
            self.outputs[-1].text += data
        elif self._pre is not None:
            self._pre.append(data)


@needs_mkdocs
def test_the_site_shows_the_notebook_run(site: Path) -> None:
    page = _NotebookPage()
    page.feed((site / "notebooks" / "quickstart.html").read_text(encoding="utf-8"))
    page.close()
    # The page shows the source's cells, all of them, in order: not an older copy.
    cells = _code_cells()
    assert page.code[:len(cells)] == cells
    tables = [output.text for output in page.outputs if output.tables]
    assert len(tables) >= 5, "hits, the DataFrame, filtered hits and two similar lists"
    assert LORVP in tables[0] and LORVP in tables[1]   # the hits, then the DataFrame
    assert "evidence" in tables[1]
    images = [src for output in page.outputs for src in output.images]
    assert any(src.startswith("data:image/png;base64,") for src in images), (
        "the map is drawn as a plot")
    # The page says how to open the notebook yourself, and the file is there to download.
    assert any('pip install -e ".[notebook]"' in block and "jupyter lab" in block
               for block in page.code[len(cells):])
    assert (site / "notebooks" / "quickstart.ipynb").is_file()
