"""The quick-start notebook runs top to bottom in a fresh kernel and shows what it says:
hits as tables, a DataFrame, similar papers and the map as a plot."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest

from .examples import REPO

NOTEBOOK = REPO / "docs" / "notebooks" / "quickstart.ipynb"
LORVP = "000_ae22c05437d8edef:1"  # the LoR-VP (low-rank visual prompting) abstract


def _outputs(cell: Any) -> dict[str, str]:
    """A code cell's outputs by MIME type (streams as text/plain), joined."""
    found: dict[str, str] = {}
    for output in cell.outputs:
        items = ({"text/plain": output.text} if output.output_type == "stream"
                 else output.get("data", {}))
        for kind, value in items.items():
            found[kind] = found.get(kind, "") + "".join(value)
    return found


@pytest.mark.skipif(any(importlib.util.find_spec(name) is None
                        for name in ("nbclient", "ipykernel", "matplotlib")),
                    reason="nbclient, ipykernel or matplotlib is not installed "
                           "(pip install -e \".[docs]\")")
def test_the_quickstart_notebook_runs(tmp_path: Path) -> None:
    import nbclient
    import nbformat

    shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name)
    notebook = nbformat.read(tmp_path / NOTEBOOK.name, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "the notebook is kept without outputs: clear them before committing")
    # Raises CellExecutionError, with the cell and its traceback, if any cell fails.
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    cells = [_outputs(cell) for cell in notebook.cells if cell.cell_type == "code"]
    assert (tmp_path / "indexes" / "quickstart" / "manifest.json").is_file()
    tables = [cell["text/html"] for cell in cells if "<table" in cell.get("text/html", "")]
    assert len(tables) >= 5, "hits, the DataFrame, filtered hits and two similar lists"
    assert LORVP in tables[0] and LORVP in tables[1]   # the hits, then the DataFrame
    assert "evidence" in tables[1]
    assert any("image/png" in cell for cell in cells), "the map is drawn as a plot"
