"""Taking results away: hits or papers as BibTeX, RIS, CSL-JSON, CSV or JSON lines.

The same writers serve `--format` on the command line, the page's export buttons (POST
/export) and Python callers: `embedsearch.export(engine.search("diffusion"), "ris")`
gives a .ris file's text. Each format is one module here and one `ExportFormat` in
`EXPORT_FORMATS`: BibTeX, RIS and CSL-JSON are bibliographies, each paper once, in the
shapes reference managers import (Zotero, Mendeley, EndNote, citation processors); CSV
and JSON lines are tables, a row per hit, with its rank, score and reasons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from ..errors import QueryError
from ..papers import Paper
from ..search.results import Hit
from .bibtex import to_bibtex
from .common import citation_key
from .csl import to_csl_json
from .ris import to_ris
from .tabular import to_csv, to_jsonl

__all__ = ["EXPORT_FORMATS", "FORMATS", "ExportFormat", "citation_key", "export",
           "to_bibtex", "to_csl_json", "to_csv", "to_jsonl", "to_ris", "write"]

Items = Iterable[Hit | Paper | Mapping[str, Any]]


@dataclass(frozen=True)
class ExportFormat:
    """One format results leave in: its file suffix and media type (what a download is
    named and served as), and whether it is a bibliography (papers, each once) or a
    table (a row per hit, JSON hit records accepted)."""

    name: str
    suffix: str
    media_type: str
    bibliography: bool


EXPORT_FORMATS: dict[str, ExportFormat] = {format.name: format for format in (
    ExportFormat("bibtex", ".bib", "application/x-bibtex", True),
    ExportFormat("ris", ".ris", "application/x-research-info-systems", True),
    ExportFormat("csl-json", ".json", "application/vnd.citationstyles.csl+json", True),
    ExportFormat("csv", ".csv", "text/csv", False),
    ExportFormat("jsonl", ".jsonl", "application/x-ndjson", False),
)}
#: The formats `export` and `--format` know.
FORMATS = tuple(EXPORT_FORMATS)


def _writer(format: str, latex: bool) -> Callable[[list[Any]], str]:
    writers: dict[str, Callable[[list[Any]], str]] = {
        "bibtex": lambda papers: to_bibtex(papers, latex=latex), "ris": to_ris,
        "csl-json": to_csl_json, "csv": to_csv, "jsonl": to_jsonl}
    return writers[format]


def export(items: Items, format: str, *, latex: bool = False) -> str:
    """`items` (hits, papers, or JSON hit records for the tables) as a file's text in
    `format`, one of `FORMATS`: "bibtex", "ris" and "csl-json" hold each paper once, in
    the order first seen; "csv" and "jsonl" each hit. `latex`: BibTeX spelt in LaTeX
    escapes, for classic BibTeX without UTF-8 (see `to_bibtex`).

    Raises QueryError for an unknown format."""
    chosen = EXPORT_FORMATS.get(format)
    if chosen is None:
        raise QueryError(f"format must be one of {', '.join(FORMATS)}, got '{format}'",
                         parameter="format")
    listed = list(items)
    if chosen.bibliography:  # papers, not JSON hit records
        listed = [item for item in listed if not isinstance(item, Mapping)]
    return _writer(format, latex)(listed)


def write(items: Sequence[Hit | Paper | Mapping[str, Any]], format: str, out: IO[str], *,
          latex: bool = False) -> None:
    """Write `items` to `out` in `format` (one of `FORMATS`, see `export`)."""
    out.write(export(items, format, latex=latex))
