"""Hits or papers as CSL-JSON, the data citation processors (citeproc-js in Zotero,
Mendeley, pandoc's citeproc) read, and Zotero imports.

Plain JSON as the CSL-JSON schema (csl-data.json, version 1.0) defines it: an array of
items with `id` (the paper id) and `citation-key` (its BibTeX key, `common.citation_key`,
so that pandoc and Better BibTeX cite it as the .bib export does), `type`
(`bibentry.csl_type`: article-journal, paper-conference, chapter, book, thesis, report,
manuscript, `article` for a preprint, `document` for any other), `title`, `author` and
`editor` as [{family, given}], `issued` as {date-parts: [[year, month]]},
`container-title` the venue, `abstract`, `keyword` (the keywords joined by ", "), `DOI`,
`URL`, the arXiv id where Zotero keeps a preprint's (`archive` arXiv,
`archive_location` arXiv:ID), and the standard fields the paper keeps under their CSL
names (`CSL_FIELDS`). Our CSL-JSON reader (`readers.csljson`) reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..papers import Paper, cited_title
from ..search.results import Hit
from ..text.bibentry import csl_type, family_given, guessed_type, month_number, people
from .common import citation_key, papers_of

__all__ = ["CSL_FIELDS", "csl_item", "to_csl_json"]

#: Kept fields (BibTeX names) -> the CSL variable that carries them. A report's number
#: is its `number`; any other entry's is its issue.
CSL_FIELDS = {"volume": "volume", "number": "issue", "pages": "page", "edition": "edition",
              "address": "publisher-place", "series": "collection-title", "isbn": "ISBN",
              "issn": "ISSN", "type": "genre", "note": "note", "chapter": "chapter-number",
              "publisher": "publisher", "school": "publisher", "institution": "publisher"}
#: What a master's thesis says of itself, so that it is not read as a PhD thesis.
MASTERS = "Master's thesis"


def _text(value: str) -> str:
    return " ".join(value.split())


def _person(name: str) -> dict[str, str]:
    family, given, suffix = family_given(_text(name))
    person = {"family": family, "given": given, "suffix": suffix}
    return {key: value for key, value in person.items() if value}


def csl_item(paper: Paper) -> dict[str, Any]:
    """One paper as a CSL-JSON item."""
    kind = guessed_type(paper.entry_type, paper.venue)
    kept = dict(paper.bib_fields)
    item: dict[str, Any] = {"id": paper.id, "citation-key": citation_key(paper.id),
                            "type": csl_type(kind, preprint=bool(paper.arxiv_id)),
                            "title": _text(cited_title(paper))}
    if paper.authors:
        item["author"] = [_person(name) for name in paper.authors]
    if "editor" in kept:
        item["editor"] = [_person(name) for name in people(kept["editor"])]
    if paper.year:
        month = month_number(kept.get("month", ""))
        item["issued"] = {"date-parts": [[paper.year, month] if month else [paper.year]]}
    if paper.venue:
        item["container-title"] = _text(paper.venue)
    for name, variable in CSL_FIELDS.items():
        if name in kept:
            if name == "number" and kind == "techreport":
                variable = "number"
            item.setdefault(variable, kept[name])
    if kind == "mastersthesis":
        item.setdefault("genre", MASTERS)
    if "page" in item:  # CSL writes a range with one hyphen; "--" is BibTeX's
        item["page"] = item["page"].replace("--", "-")
    if paper.abstract:
        item["abstract"] = _text(paper.abstract)
    if paper.keywords:
        item["keyword"] = ", ".join(_text(word) for word in paper.keywords)
    if paper.doi:
        item["DOI"] = paper.doi
    if paper.url:
        item["URL"] = paper.url
    if paper.arxiv_id:
        item["archive"] = "arXiv"
        item["archive_location"] = f"arXiv:{paper.arxiv_id}"
    return item


def to_csl_json(items: Iterable[Hit | Paper]) -> str:
    """A CSL-JSON file's text: an array of one item per paper of `items` (hits or
    papers), in order, each paper once."""
    return json.dumps([csl_item(paper) for paper in papers_of(items)], ensure_ascii=False,
                      indent=2) + "\n"
