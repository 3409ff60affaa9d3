"""The folder the documentation's examples run in: the files and ids the pages name.

Made from the bundled ICLR 2025 sample, so that a reader who follows a page on any
machine could make the same files: `papers.jsonl`, `more.csv`, `library.bib` and the
other exports the pages import, a reading list, query files, and `my-model` (the bundled
model under a path of its own), and a Zotero library in `home/Zotero` (the reader's
home is `home`, where Zotero keeps its data by default). Papers are `iclr2025:1` …
`iclr2025:38`, titled by the first words of their abstract. Written by hand here, not
by embedsearch's exporters, so that the examples read files the code under test did not
make.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

from embedsearch.bundled import sample_abstracts
from embedsearch.encoding import resolve_model
from tests.zotero_library import ZoteroWriter

__all__ = ["INDEXED", "make_world", "world_papers"]

#: papers.jsonl holds the first 30 papers, more.csv the other 8.
INDEXED = 30
#: One paper as the files hold it (fields of our JSON lines layout).
Record = dict[str, Any]


def _title(abstract: str) -> str:
    words = abstract.split(".")[0].split()
    return " ".join(words[:10]).rstrip(",;:")


def world_papers() -> list[Record]:
    """The sample's 38 abstracts as records with ids, titles, authors and keywords."""
    areas = ["representation learning", "reinforcement learning", "generative models",
             "language models", "optimization"]
    return [{"id": f"iclr2025:{number}", "title": _title(abstract), "abstract": abstract,
             "authors": [f"Author {number}", "Ada Lovelace"], "year": 2025,
             "venue": "ICLR", "keywords": [areas[number % len(areas)]]}
            for number, abstract in enumerate(sample_abstracts(), start=1)]


def _jsonl(records: list[Record]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def _csv(records: list[Record]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "title", "abstract", "authors", "year", "venue"])
    for r in records:
        writer.writerow([r["id"], r["title"], r["abstract"], "; ".join(r["authors"]),
                         r["year"], r["venue"]])
    return out.getvalue()


def _bibtex(records: list[Record]) -> str:
    entries = []
    for r in records:
        fields = {"title": r["title"], "author": " and ".join(r["authors"]),
                  "booktitle": r["venue"], "year": r["year"]}
        if r.get("abstract"):
            fields["abstract"] = r["abstract"]
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields.items())
        entries.append(f"@inproceedings{{{r['id']},\n{body}\n}}\n")
    return "\n".join(entries)


def _ris(records: list[Record]) -> str:
    lines = []
    for r in records:
        lines += ["TY  - CONF", f"ID  - {r['id']}", f"TI  - {r['title']}",
                  *(f"AU  - {author}" for author in r["authors"]),
                  f"PY  - {r['year']}", f"T2  - {r['venue']}", f"AB  - {r['abstract']}",
                  "ER  - ", ""]
    return "\n".join(lines)


def _csl_json(records: list[Record]) -> str:
    return json.dumps([{"id": r["id"], "type": "paper-conference", "title": r["title"],
                        "abstract": r["abstract"],
                        "author": [{"literal": author} for author in r["authors"]],
                        "issued": {"date-parts": [[r["year"]]]},
                        "container-title": r["venue"]} for r in records], indent=1)


def _arxiv_snapshot(records: list[Record]) -> str:
    return _jsonl([{"id": f"2501.{number:05d}", "title": r["title"], "abstract": r["abstract"],
                    "authors": ", ".join(r["authors"]),
                    "categories": "cs.LG", "update_date": "2025-01-06",
                    "versions": [{"version": "v1", "created": "Mon, 6 Jan 2025 10:00:00 GMT"}]}
                   for number, r in enumerate(records, start=1)])


def _revisited(records: list[Record], tag: str) -> list[Record]:
    """New papers: the same abstracts, changed, under new ids."""
    return [{**r, "id": f"{tag}:{number}", "title": f"{r['title']} ({tag})",
             "abstract": f"{r['abstract']} Revisited in study {tag}."}
            for number, r in enumerate(records, start=1)]


def make_world(folder: Path) -> Path:
    """Write every file the documentation's examples name into `folder`."""
    papers = world_papers()
    indexed, more = papers[:INDEXED], papers[INDEXED:]
    title_only = [{"id": key, "title": title, "authors": [author], "year": year,
                   "venue": "CACM"} for key, title, author, year in
                  [("knuth1984", "Literate programming", "Donald Knuth", 1984),
                   ("lamport1994", "The temporal logic of actions", "Leslie Lamport", 1994)]]
    new = _revisited(papers[:3], "new")
    queries = _jsonl([{"qid": f"q{number}", "task": "title", "query": r["title"],
                       "relevant": [r["id"]]} for number, r in enumerate(papers[::4])])
    texts = {
        "papers.jsonl": _jsonl(indexed),
        "more.csv": _csv(more),
        "library.bib": _bibtex(papers[:20] + title_only + papers[20:]),
        "refs.bib": _bibtex([papers[2], papers[4], *_revisited(papers[6:7], "mine")]),
        "off-topic.bib": _bibtex([papers[13]]),
        "mine.jsonl": _jsonl(_revisited(papers[8:10], "mine")),
        "new-papers.jsonl": _jsonl(new),
        "new-papers.bib": _bibtex(new),
        "new.jsonl": _jsonl(_revisited(papers[3:5], "later")),
        "export.ris": _ris(papers[:5]),
        "zotero.json": _csl_json(papers[5:10]),
        "arxiv-metadata-oai-snapshot.json": _arxiv_snapshot(papers[30:34]),
        "my-papers.jsonl": _jsonl(papers),
        "my-queries.jsonl": queries,
        "queries.jsonl": queries,
        "reading-list.txt": "iclr2025:3\niclr2025:5\n",
        "queries.txt": "low-rank visual prompting\nmachine unlearning\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    with gzip.open(folder / "papers.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(texts["my-papers.jsonl"])
    shutil.copytree(resolve_model().path, folder / "my-model", copy_function=os.symlink)
    (folder / "home").mkdir()
    _zotero(folder / "home" / "Zotero", papers)
    return folder


def _zotero(data_dir: Path, papers: list[Record]) -> None:
    """A Zotero library where Zotero keeps it by default (~/Zotero): papers 1-10 in the
    collection Thesis (9 and 10 in its sub-collection Thesis/Background), 11-12 outside
    it, a book without an abstract, a note and an item in the trash."""
    writer = ZoteroWriter(data_dir)
    thesis = writer.collection("Thesis")
    background = writer.collection("Background", thesis)
    for number, r in enumerate(papers[:12], start=1):
        writer.item("conferencePaper", fields={
            "title": r["title"], "abstractNote": r["abstract"], "date": str(r["year"]),
            "proceedingsTitle": r["venue"]}, creators=[("Ada", "Lovelace")],
            tags=list(r["keywords"]),
            collections=[thesis] if number <= 8 else [background] if number <= 10 else [])
    book, _ = writer.item("book", fields={"title": "Literate programming", "date": "1992"},
                          creators=[("Donald", "Knuth")], collections=[thesis])
    writer.item("note", parent=book)
    trashed, _ = writer.item(fields={"title": "A draft", "abstractNote": "Not yet."})
    writer.trash(trashed)
    writer.close()
