"""Fuzzing every registered reader through `read_papers`, on real files.

The only allowed outcomes are papers fit to index (ids, UTF-8 encodable text, a year
in range) or an `InputError` whose message starts with the file's name; anything else
escaping a reader is a bug. Three generators per format: random bytes, mutations of a
valid file of the format (inserted BOMs, CRLF, NUL, stray quotes and braces, cuts),
and files of the format's own structure whose field values are of every wrong type
and range (absurd years, nested objects, surrogates, duplicate ids). The default run
tries a few hundred cases per reader; `-m exhaustive` runs 10,500 per reader.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embedsearch import InputError, Paper, read_papers
from embedsearch.readers import formats
from tests.readers.test_formats import ARXIV, BIB, CSL, OPENALEX_WORK, RIS

#: Formats of binary files (a database, a PDF): their damaged and hostile files have
#: tests of their own (test_zotero.py, test_pdf.py); these fuzz the text formats.
BINARY = {"zotero", "pdf"}
FORMATS = sorted(set(formats()) - BINARY)
SUFFIX = {"text": ".txt", "jsonl": ".jsonl", "json": ".json", "csv": ".csv", "tsv": ".tsv",
          "bibtex": ".bib", "ris": ".ris", "csl-json": ".json", "arxiv": ".jsonl",
          "openalex": ".jsonl"}
NATIVE = {"id": "p1", "title": "Sparse attention", "abstract": "We study sparse attention.",
          "authors": ["Ada Lovelace"], "keywords": ["attention"], "venue": "ICLR",
          "year": 2025, "url": "https://example.org/p1"}
SAMPLES: dict[str, str] = {
    "text": "ICLR 2025 papers\n\nFirst abstract,\nwrapped.\n\nSecond abstract.\n",
    "jsonl": json.dumps(NATIVE) + "\n" + json.dumps({**NATIVE, "id": "p2"}) + "\n",
    "json": json.dumps([NATIVE, {**NATIVE, "id": "p2"}], indent=1),
    "csv": "id,title,abstract,year\np1,T,\"An abstract, quoted.\",2024\np2,U,Another.,\n",
    "tsv": "id\ttitle\tabstract\tyear\np1\tT\tAn abstract.\t2024\np2\tU\tAnother.\t\n",
    "bibtex": BIB,
    "ris": RIS.replace("\r\n", "\n"),
    "csl-json": json.dumps(CSL, indent=1),
    "arxiv": "\n".join(json.dumps(record) for record in ARXIV) + "\n",
    "openalex": json.dumps(OPENALEX_WORK) + "\n",
}
# Field names each format's structured generator draws from (plus arbitrary ones).
FIELDS = {
    "jsonl": list(NATIVE) + ["author", "site", "tldr", "primary_area"],
    "json": list(NATIVE) + ["author", "site", "tldr", "primary_area"],
    "csl-json": ["id", "title", "abstract", "author", "issued", "container-title", "DOI",
                 "URL", "keyword", "type"],
    "arxiv": ["id", "title", "abstract", "authors", "authors_parsed", "categories",
              "versions", "update_date"],
    "openalex": ["id", "display_name", "title", "abstract_inverted_index", "authorships",
                 "publication_year", "primary_location", "doi", "keywords", "concepts"],
    "csv": ["id", "title", "abstract", "authors", "keywords", "venue", "year", "url"],
    "bibtex": ["title", "abstract", "author", "year", "date", "journal", "booktitle",
               "keywords", "doi", "url", "Title", "ABSTRACT"],
    "ris": ["TY", "TI", "T1", "AB", "N2", "AU", "A1", "PY", "Y1", "DA", "T2", "JO", "BT", "KW",
            "DO", "UR", "ID", "ER", "XX"],
}
FIELDS["tsv"] = FIELDS["csv"]

DEFAULT_CASES = 70   # per generator and format: 210 per reader, seconds in all
SLOW_CASES = 3_500   # per generator and format: 10,500 per reader
BUDGETS = [pytest.param(DEFAULT_CASES, id="default"),
           pytest.param(SLOW_CASES, id="slow",
                        marks=[pytest.mark.slow, pytest.mark.exhaustive])]
TALLY: Counter[tuple[str, str]] = Counter()

ABSURD_YEARS: list[object] = [-1, 0, 999, 10_000, 10**30, -(10**30), "2024abc", "-2024",
                              "²⁰²⁴", "٢٠٢٤", "9" * 5000, 2024.5, float("nan"), float("inf"),
                              True, "", " 2024 ", "2024-05-01", [2024], {"year": 2024}]
NASTY_TEXT = st.sampled_from(["", " ", "\ufeff", "\r\n", "\r", "\x00", "\\", "{", "}", '"', ",",
                              "\t", "@", "$", "%", "~", "\\'e", "{\\\"u}", "\ud800", "\udfff",
                              "TY  - ", "ER  - ", "\n\n", "\u2028", "é", "論文"])
TEXT = st.text(max_size=30) | NASTY_TEXT | st.lists(NASTY_TEXT, max_size=6).map("".join)
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | TEXT
           | st.sampled_from(ABSURD_YEARS))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8)
IDS = st.sampled_from(["a", "b", "c", "1", "", " "]) | TEXT  # small pool: duplicate ids
INSERTS = st.binary(max_size=8) | st.sampled_from([
    b"\xef\xbb\xbf", b"\xff\xfe", b"\r\n", b"\r", b"\x00", b"\xff", b"\xc3", b"{", b"}", b"[",
    b"]", b'"', b",", b"\t", b"\\", b"@", b"@string{x=", b"TY  - JOUR\n", b"ER  - \n", b"\n\n",
    b"99999999999", b"-1", b'"year": "2024abc"', b"\\u0000", b"\\ud800"])


def cases(budget: int) -> settings:
    return settings(max_examples=budget, deadline=None, database=None,
                    derandomize=budget == DEFAULT_CASES,
                    suppress_health_check=list(HealthCheck))


def check_paper(paper: Paper) -> None:
    assert isinstance(paper, Paper) and paper.id.strip() and paper.abstract.strip()
    for value in (paper.id, paper.title, paper.abstract, paper.venue, paper.url, paper.tldr,
                  *paper.authors, *paper.keywords):
        assert isinstance(value, str)
        value.encode("utf-8")  # an unpaired surrogate would fail every store
    assert all(name.strip() for name in paper.authors + paper.keywords)
    assert paper.year is None or (type(paper.year) is int and 1000 <= paper.year <= 9999)


def outcome(path: Path, data: bytes, format: str) -> str:
    """'papers' or 'error' for `data` read as `format`; raises on anything else."""
    path.write_bytes(data)
    TALLY[(format, "cases")] += 1
    try:
        papers = read_papers([path], format)
    except InputError as error:
        assert str(error).startswith(str(path)), str(error)
        TALLY[(format, "errors")] += 1
        return "error"
    assert papers
    for paper in papers:
        check_paper(paper)
    TALLY[(format, "papers")] += 1
    return "papers"


def report(format: str) -> None:
    print(f"\n{format}: {TALLY[(format, 'cases')]} cases, {TALLY[(format, 'papers')]} read, "
          f"{TALLY[(format, 'errors')]} InputError, 0 other exceptions")


# -- generators ------------------------------------------------------------------------------
@st.composite
def mutated(draw: st.DrawFn, sample: bytes) -> bytes:
    data = bytearray(sample)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["insert", "delete", "cut", "repeat"]))
        if action == "insert":
            data[at:at] = draw(INSERTS)
        elif action == "delete":
            del data[at:at + draw(st.integers(1, 40))]
        elif action == "cut":
            del data[at:]
        else:
            data[at:at] = data[at:at + draw(st.integers(1, 80))]
    if draw(st.booleans()):
        data = bytearray(bytes(data).replace(b"\n", b"\r\n"))
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + bytes(data)


def _dumps(value: object) -> str:
    return json.dumps(value)  # ensure_ascii: a lone surrogate becomes a "\ud800" escape


@st.composite
def json_file(draw: st.DrawFn, format: str) -> bytes:
    keys = st.sampled_from(FIELDS[format]) | TEXT
    record = st.dictionaries(keys, JSON_VALUES, max_size=8)
    records = draw(st.lists(st.tuples(record, IDS, st.booleans()), max_size=4))
    items: list[Any] = []
    for fields, identifier, with_id in records:
        items.append({"abstract": "An abstract.", **fields, **({"id": identifier} if with_id
                                                               else {})})
    if draw(st.booleans()) and items:
        items.append(draw(JSON_VALUES))  # a line or item that is no object
    if format in ("json", "csl-json") or (format == "openalex" and draw(st.booleans())):
        document = {"results": items} if format == "openalex" else items
        return _dumps(document).encode()
    return "\n".join(_dumps(item) for item in items).encode()


@st.composite
def table_file(draw: st.DrawFn, format: str) -> bytes:
    header = draw(st.lists(st.sampled_from(FIELDS[format]) | TEXT, min_size=1, max_size=6))
    rows = draw(st.lists(st.lists(TEXT | st.sampled_from([str(y) for y in ABSURD_YEARS]),
                                  max_size=7), max_size=4))
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t" if format == "tsv" else ",")
    if draw(st.booleans()):
        writer.writerows([header, *rows])
    else:  # unquoted: stray quotes and delimiters stay as they are
        out.write("\n".join(",".join(cells) for cells in [header, *rows]))
    return out.getvalue().encode("utf-8", "surrogatepass")


@st.composite
def bibtex_file(draw: st.DrawFn) -> bytes:
    entries = []
    for key in draw(st.lists(IDS, max_size=4)):
        fields = draw(st.lists(st.tuples(st.sampled_from(FIELDS["bibtex"]), TEXT,
                                         st.sampled_from(["{}", '""', ""])), max_size=6))
        body = ",\n".join(f"  {name} = {wrap[:1]}{value}{wrap[1:]}"
                          for name, value, wrap in fields)
        kind = draw(st.sampled_from(["article", "inproceedings", "string", "comment", "misc"]))
        entries.append(f"@{kind}{{{key},\n{body}\n}}")
    return "\n\n".join(entries).encode("utf-8", "surrogatepass")


@st.composite
def ris_file(draw: st.DrawFn) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 3))):
        lines.append("TY  - JOUR")
        for tag, value in draw(st.lists(st.tuples(st.sampled_from(FIELDS["ris"]), TEXT),
                                        max_size=8)):
            lines.append(f"{tag}  - {value}" if tag != "XX" else value)  # XX: a bare line
        if draw(st.booleans()):
            lines.append("ER  - ")
    return "\n".join(lines).encode("utf-8", "surrogatepass")


@st.composite
def text_file(draw: st.DrawFn) -> bytes:
    paragraphs = draw(st.lists(TEXT, max_size=5))
    return "\n\n".join(paragraphs).encode("utf-8", "surrogatepass")


def structured(format: str) -> st.SearchStrategy[bytes]:
    if format in ("csv", "tsv"):
        return table_file(format)
    if format == "bibtex":
        return bibtex_file()
    if format == "ris":
        return ris_file()
    if format == "text":
        return text_file()
    return json_file(format)


GENERATORS: dict[str, Callable[[str], st.SearchStrategy[bytes]]] = {
    "bytes": lambda format: st.binary(max_size=600),
    "mutated": lambda format: mutated(SAMPLES[format].encode()),
    "structured": structured,
}


# -- the fuzz tests ----------------------------------------------------------------------------
@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("format", FORMATS)
def test_every_reader_takes_any_input(tmp_path: Path, format: str, budget: int) -> None:
    path = tmp_path / f"case{SUFFIX[format]}"
    for name, generator in GENERATORS.items():

        @cases(budget)
        @given(data=generator(format))
        def read(data: bytes) -> None:
            outcome(path, data, format)

        read()
        TALLY[(format, name)] += 1
    report(format)


def test_every_format_has_a_sample_and_a_suffix() -> None:
    assert set(SAMPLES) == set(SUFFIX) == set(FORMATS)
    assert set(FIELDS) | {"text"} == set(FORMATS)


# -- properties that hold for every format -------------------------------------------------
@pytest.mark.parametrize("format", FORMATS)
def test_a_bom_and_crlf_line_ends_change_nothing(tmp_path: Path, format: str) -> None:
    plain = tmp_path / f"plain{SUFFIX[format]}"
    plain.write_text(SAMPLES[format], encoding="utf-8", newline="\n")
    windows = tmp_path / f"plain-crlf{SUFFIX[format]}"
    windows.write_bytes(b"\xef\xbb\xbf" + SAMPLES[format].replace("\n", "\r\n").encode())
    expected = read_papers([plain], format)
    assert expected
    got = read_papers([windows], format)
    assert [p.to_dict() | {"id": ""} for p in got] == \
        [p.to_dict() | {"id": ""} for p in expected]  # derived ids follow the file name


PATHOLOGICAL = {
    "empty": b"",
    "only a BOM": b"\xef\xbb\xbf",
    "blank lines": b"\n\r\n  \n",
    "deep JSON": b"[" * 100_000 + b"]" * 100_000,
    "deep JSON object": b'{"abstract": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "deep braces": b"@article{a, abstract = " + b"{" * 5_000 + b"x" + b"}" * 5_000 + b"}",
    "huge number": b'{"abstract": "a", "year": ' + b"9" * 5_000 + b"}",
    "NUL byte": b"An abstract\x00 with a NUL.\n",
    "UTF-16": "\ufeffid,abstract\n1,An abstract.\n".encode("utf-16"),
    "invalid UTF-8": b"An abstract \xc3\x28 broken.\n",
    "lone CR line ends": b"id,abstract\r1,One.\r2,Two.\r",
    "surrogate escape": b'{"abstract": "bad \\ud800 text"}\n',
    "duplicate ids": b'{"id": "x", "abstract": "a"}\n{"id": "x", "abstract": "b"}\n',
}


@pytest.mark.parametrize("case", PATHOLOGICAL)
@pytest.mark.parametrize("format", FORMATS)
def test_pathological_files(tmp_path: Path, format: str, case: str) -> None:
    result = outcome(tmp_path / f"odd{SUFFIX[format]}", PATHOLOGICAL[case], format)
    if case in ("empty", "NUL byte", "UTF-16", "invalid UTF-8", "surrogate escape"):
        assert result == "error"


def test_a_50_mb_line(tmp_path: Path) -> None:
    """One line of 50 MB (a record with a huge abstract), through every reader."""
    abstract = "word " * 10_000_000
    data = json.dumps({"id": "big", "title": "Big", "abstract": abstract, "categories": "cs.LG",
                       "update_date": "2020-01-01"}).encode()
    assert len(data) > 50_000_000
    results = {format: outcome(tmp_path / f"big{SUFFIX[format]}", data, format)
               for format in FORMATS}
    assert results["jsonl"] == results["arxiv"] == results["text"] == "papers"
