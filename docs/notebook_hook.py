"""MkDocs hook: a notebook shown on the site as it runs, with its outputs.

A page holds `<!-- embedsearch:notebook NAME.ipynb -->` on a line of its own (NAME
relative to the page). `on_page_markdown` runs that notebook top to bottom in a fresh
kernel, in an empty temporary folder, and puts its cells in the marker's place:
markdown cells as written (their headings one level down, under the page's own `#`
title), code cells as Python blocks, each followed by what it showed: text as a text
block, HTML (hit tables, DataFrames) as is, images inline.

Why at build time, not an executed copy committed beside the source: the outputs on the
site are then those of the code the site documents, never of an older version that a
committed copy would keep showing until someone re-ran it; and the notebook stays
committed without outputs, so its diffs are its code. A cell that raises fails the build.

`mkdocs serve` runs a notebook again only when the notebook itself changed (its outputs
are kept per content hash for the life of the process), so editing other pages stays fast.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["notebook_markdown", "on_page_markdown"]

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- embedsearch:notebook (?P<name>\S+\.ipynb) -->$", re.M)
#: Seconds one cell may take: the first builds an index, loading the model on a cold cache.
CELL_TIMEOUT_S = 300
#: The class of every output on the page (assets/stylesheets/embedsearch.css styles it).
OUTPUT_CLASS = "notebook-output"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_HEADING = re.compile(r"^(#{1,5}) ")
_FENCE = re.compile(r"^\s*(```|~~~)")

_executed: dict[str, str] = {}  # markdown by the notebook's content hash (see above)


def _demoted(source: str) -> str:
    """Markdown with each heading one level down, fenced code left alone."""
    lines, fenced = [], False
    for line in source.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        lines.append(line if fenced else _HEADING.sub(r"#\1 ", line))
    return "\n".join(lines)


def _fenced(text: str, language: str, *classes: str) -> str:
    """`text` in a fenced block, the fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    opening = f"{fence} {{ .{' .'.join([language, *classes])} }}" if classes else fence + language
    return f"{opening}\n{text.rstrip()}\n{fence}"


def _text_output(text: str) -> str:
    """Printed text as a text block marked as output (styled apart from the code)."""
    return _fenced(_printed(text), "text", OUTPUT_CLASS)


def _printed(text: str) -> str:
    """Text as a terminal would leave it: no colour codes, a line redrawn after `\\r`
    (a progress bar) shown as last drawn."""
    text = _ANSI.sub("", text)
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _output(output: dict[str, Any], number: int) -> str:
    """One output of a code cell as markdown (raw HTML where it is HTML or an image)."""
    kind = output.get("output_type")
    if kind == "stream":
        return _text_output(_joined(output.get("text", "")))
    if kind not in ("execute_result", "display_data"):
        raise ValueError(f"cell {number}: an output of type {kind!r} cannot be shown")
    data = output.get("data", {})
    plain = _joined(data.get("text/plain", ""))
    if "image/png" in data:
        encoded = "".join(_joined(data["image/png"]).split())
        alt = html.escape(plain or f"the plot of cell {number}", quote=True)
        return (f'<div class="{OUTPUT_CLASS}"><img alt="{alt}" '
                f'src="data:image/png;base64,{encoded}"></div>')
    if "text/html" in data:
        # A block of raw HTML: Python-Markdown passes it through to the matching </div>.
        return f'<div class="{OUTPUT_CLASS}">\n{_joined(data["text/html"]).strip()}\n</div>'
    if plain:
        return _text_output(plain)
    return ""  # nothing this page can show (a widget, say): shown as in a plain console


def _cells_markdown(cells: list[dict[str, Any]]) -> str:
    parts = []
    for cell in cells:
        source = _joined(cell.get("source", "")).strip()
        if cell.get("cell_type") == "markdown":
            parts.append(_demoted(source))
        elif cell.get("cell_type") == "code" and source:
            number = cell.get("execution_count") or 0
            parts.append(_fenced(source, "python"))
            parts += [shown for output in cell.get("outputs", [])
                      if (shown := _output(output, number))]
    return "\n\n".join(parts) + "\n"


def notebook_markdown(path: Path) -> str:
    """The notebook at `path`, run top to bottom in a fresh kernel, as markdown."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    # The kernel imports embedsearch from this checkout, as the build hooks do.
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="embedsearch-notebook-") as folder:
        client = NotebookClient(
            notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=False,
            resources={"metadata": {"path": folder}})
        try:
            client.execute(env={**os.environ, "PYTHONPATH": pythonpath})
        except CellExecutionError as exc:
            raise RuntimeError(f"{path.name} failed when the site was built:\n{exc}") from exc
    return _cells_markdown(notebook.cells)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    def replace(match: re.Match[str]) -> str:
        path = Path(page.file.abs_src_path).parent / match["name"]
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in _executed:
            _executed[digest] = notebook_markdown(path)
        return _executed[digest]

    return MARKER.sub(replace, markdown)
