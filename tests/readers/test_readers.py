"""Reading corpora: every format, the public paper-list layout, and every bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from embedsearch import InputError, Paper, read_papers
from embedsearch.papers import derive_title, embedding_text

RECORD = {
    "id": "p1",
    "title": "Sparse Attention at Scale",
    "abstract": "We study sparse attention. It scales.",
    "authors": ["Ada Lovelace", "Alan Turing"],
    "keywords": ["attention", "sparsity"],
    "venue": "ICLR",
    "year": 2025,
    "url": "https://example.org/p1",
    "tldr": "Sparse attention scales.",
}


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, **kwargs: object) -> str:
    with pytest.raises(InputError) as caught:
        read_papers([path], **kwargs)  # type: ignore[arg-type]
    return str(caught.value)


# -- formats ---------------------------------------------------------------------------------
def test_seed_text_layout(seed_files: list[Path]) -> None:
    papers = read_papers(seed_files)
    assert len(papers) == 38  # 2 files x 19 paragraphs after the header line
    first = papers[0]
    assert first.id == f"{seed_files[0].name.removesuffix('.txt')}:1"
    assert first.abstract.startswith("Visual prompting has gained popularity")
    assert first.title_derived and first.title == derive_title(first.abstract)
    # The header "ICLR 2025 论文列表" names venue and year for the whole file.
    assert {(p.venue, p.year) for p in papers} == {("ICLR", 2025)}
    assert len({p.id for p in papers}) == 38


def test_text_without_header_and_wrapped_paragraphs(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", "First abstract line one\ncontinues here.\n\n\nSecond one.\n")
    papers = read_papers([path])
    assert [p.abstract for p in papers] == ["First abstract line one continues here.",
                                            "Second one."]
    assert [p.id for p in papers] == ["a:1", "a:2"]
    assert papers[0].venue == "" and papers[0].year is None


def test_jsonl_json_csv_tsv_and_gzip_agree(tmp_path: Path) -> None:
    jsonl = write(tmp_path / "r.jsonl", json.dumps(RECORD) + "\n")
    array = write(tmp_path / "r.json", json.dumps([RECORD]))
    header = "id,title,abstract,authors,keywords,venue,year,url,tldr\n"
    row = ('p1,Sparse Attention at Scale,"We study sparse attention. It scales.",'
           '"Ada Lovelace; Alan Turing",attention;sparsity,ICLR,2025,https://example.org/p1,'
           "Sparse attention scales.\n")
    csv_path = write(tmp_path / "r.csv", header + row)
    tsv_path = write(tmp_path / "r.tsv", "\t".join(header.strip().split(",")) + "\n" +
                     "\t".join(["p1", "Sparse Attention at Scale",
                                "We study sparse attention. It scales.",
                                "Ada Lovelace; Alan Turing", "attention;sparsity", "ICLR",
                                "2025", "https://example.org/p1",
                                "Sparse attention scales."]) + "\n")
    gz = tmp_path / "r.jsonl.gz"
    gz.write_bytes(gzip.compress(jsonl.read_bytes()))
    papers = [read_papers([path])[0] for path in (jsonl, array, csv_path, tsv_path, gz)]
    assert all(paper == papers[0] for paper in papers)
    paper = papers[0]
    assert paper.authors == ("Ada Lovelace", "Alan Turing")
    assert paper.keywords == ("attention", "sparsity")
    assert paper.year == 2025 and not paper.title_derived


def test_public_paper_list_layout(tmp_path: Path) -> None:
    record = {"title": "T", "abstract": "A b c.", "author": "X Y; Z W",
              "keywords": "graphs; ; diffusion", "site": "https://openreview.net/forum?id=1"}
    paper = read_papers([write(tmp_path / "list.json", json.dumps([record]))])[0]
    assert paper.authors == ("X Y", "Z W")
    assert paper.keywords == ("graphs", "diffusion")
    assert paper.url == "https://openreview.net/forum?id=1"
    assert paper.id == "list:1"  # derived from file and position


def test_derived_ids_and_titles(tmp_path: Path) -> None:
    lines = [json.dumps({"abstract": "Graph networks learn. More text."}),
             json.dumps({"abstract": "x " * 200, "title": "  "})]
    papers = read_papers([write(tmp_path / "c.jsonl", "\n".join(lines) + "\n")])
    assert [p.id for p in papers] == ["c:1", "c:2"]
    assert papers[0].title == "Graph networks learn" and papers[0].title_derived
    assert len(papers[1].title) <= 121 and papers[1].title.endswith("…")


def test_format_override(tmp_path: Path) -> None:
    path = write(tmp_path / "records.data", json.dumps(RECORD) + "\n")
    assert read_papers([path], format="jsonl")[0].id == "p1"
    assert "cannot tell the format" in error_of(path)


def test_embedding_text_skips_derived_titles() -> None:
    paper = Paper(id="x", abstract="Abstract.", title="Title")
    assert embedding_text(paper) == "Title. Abstract."
    derived = Paper(id="y", abstract="Abstract.", title="Abstract", title_derived=True)
    assert embedding_text(derived) == "Abstract."
    assert embedding_text(paper, ["abstract"]) == "Abstract."


# -- bad input: each names the file, the line or record, and the field ---------------------
def test_missing_file(tmp_path: Path) -> None:
    assert error_of(tmp_path / "nope.jsonl") == f"{tmp_path / 'nope.jsonl'}: no such file"


def test_directory_given_as_file(tmp_path: Path) -> None:
    assert "is a directory" in error_of(tmp_path)


def test_empty_file(tmp_path: Path) -> None:
    assert error_of(write(tmp_path / "e.jsonl", "")).endswith("e.jsonl: the file is empty")
    assert "no papers found" in error_of(write(tmp_path / "blank.txt", "\n\n  \n"))


def test_malformed_json_line(tmp_path: Path) -> None:
    path = write(tmp_path / "m.jsonl", json.dumps(RECORD) + "\n{not json}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:2: malformed JSON")


def test_record_without_abstract(tmp_path: Path) -> None:
    # One with a title is an entry known by its title: --allow-title-only keeps it.
    path = write(tmp_path / "n.jsonl", json.dumps({"id": "a", "title": "t"}) + "\n")
    assert error_of(path) == (f"{path}: none of its 1 entries has an abstract (a (line 1)); "
                              "the index is of abstracts: --allow-title-only indexes them on "
                              "their titles (as examples, `similar --from` uses them as they "
                              "are)")
    (paper,) = read_papers([path], title_only=True)
    assert paper.title_only and paper.title == "t" and not paper.title_derived
    path = write(tmp_path / "e.json", json.dumps([RECORD, {"abstract": "  "}]))
    assert error_of(path) == (f"{path}: record 2: field 'abstract': needs an abstract or, for "
                              "an entry known by its title, a title")


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("year", "abc", "field 'year': expected a year such as 2025, got 'abc'"),
        ("year", 2025.5, "field 'year': expected a year"),
        ("title", 7, "field 'title': expected text, got a number"),
        ("abstract", ["a"], "field 'abstract': expected text, got a list"),
        ("authors", [1, 2], "field 'authors': expected a list of text, found a number"),
        ("keywords", {"a": 1}, "field 'keywords': expected a list or a ';'-separated text"),
        ("id", True, "field 'id': expected text or an integer, got a boolean"),
    ],
)
def test_fields_of_the_wrong_type(tmp_path: Path, field: str, value: object,
                                  expected: str) -> None:
    path = write(tmp_path / "t.jsonl", json.dumps(RECORD) + "\n" +
                 json.dumps({**RECORD, "id": "p2", field: value}) + "\n")
    assert error_of(path).startswith(f"{path}:2: {expected}")


def test_undecodable_bytes(tmp_path: Path) -> None:
    path = write(tmp_path / "u.txt", b"Header\n\nGood abstract.\n\nBad \xff abstract.\n")
    assert error_of(path) == (f"{path}:5: not valid UTF-8 (byte 0xff at column 5); save the "
                              "file as UTF-8")
    path = write(tmp_path / "u.json", b'[{"abstract": "ok"},\n {"abstract": "\xc3("}]')
    assert error_of(path).startswith(f"{path}:2: not valid UTF-8")


def test_duplicate_ids_name_the_id(tmp_path: Path) -> None:
    first = write(tmp_path / "a.jsonl", json.dumps(RECORD) + "\n")
    second = write(tmp_path / "b.jsonl", "\n" + json.dumps(RECORD) + "\n")
    with pytest.raises(InputError) as caught:
        read_papers([first, second])
    assert str(caught.value) == f"{second}:2: duplicate id 'p1' (first at {first}:1)"


def test_unclosed_csv_quote(tmp_path: Path) -> None:
    path = write(tmp_path / "q.csv", 'id,abstract\n1,"fine"\n2,"never closed\n3,more\n')
    assert error_of(path) == (f"{path}:3: malformed CSV: a quoted cell is never closed "
                              "(unmatched '\"')")


def test_csv_without_abstract_column_and_ragged_rows(tmp_path: Path) -> None:
    path = write(tmp_path / "h.csv", "id,name\n1,t\n")
    assert error_of(path) == (f"{path}:1: the header row has no 'abstract' column (it has: "
                              "id, name); name the abstracts' column 'abstract', or the titles' "
                              "'title' to index the papers on their titles with "
                              "--allow-title-only")
    path = write(tmp_path / "r.csv", "id,abstract\n1,a,extra\n")
    assert error_of(path) == f"{path}:2: expected 2 cells as in the header, found 3"


def test_json_that_is_not_an_array(tmp_path: Path) -> None:
    assert "expected a JSON array" in error_of(write(tmp_path / "o.json", json.dumps(RECORD)))
    # JSON Lines named .json (as arXiv's dump is) is read as JSON Lines, line numbers
    # and all.
    lines = write(tmp_path / "l.json", json.dumps(RECORD) + "\n" + json.dumps(RECORD) + "\n")
    assert error_of(lines).startswith(f"{lines}:2: duplicate id")
    other = {**RECORD, "id": "other"}
    lines = write(tmp_path / "m.json", json.dumps(RECORD) + "\n" + json.dumps(other) + "\n")
    assert [paper.id for paper in read_papers([lines])] == [RECORD["id"], "other"]
    # A first line that is not one whole object is read as a document, whose error says
    # it looks like JSON Lines.
    split = write(tmp_path / "n.json", '{"id": "a",\n"abstract": "x"}\n{"id": "b"}\n')
    assert "looks like JSON Lines" in error_of(split)
    assert "expected a JSON object" in error_of(write(tmp_path / "s.jsonl", '"text"\n'))


def test_broken_gzip(tmp_path: Path) -> None:
    assert "not a readable gzip file" in error_of(write(tmp_path / "b.jsonl.gz", b"plain"))


# -- streaming: the line formats hold one record at a time, not the file -------------------
def _stream_file(path: Path, count: int) -> Path:
    abstract = "Sparse attention scales to long inputs without quadratic cost. " * 15
    suffix = path.suffix if path.suffix != ".gz" else path.with_suffix("").suffix
    if suffix == ".jsonl":
        body = "".join(json.dumps({"id": f"p{i}", "abstract": abstract}) + "\n"
                       for i in range(count))
    elif suffix == ".csv":
        body = "id,abstract\n" + "".join(f'p{i},"{abstract}"\n' for i in range(count))
    elif suffix == ".ris":
        body = "".join(f"TY  - JOUR\nID  - p{i}\nAB  - {abstract}\nER  - \n\n"
                       for i in range(count))
    else:
        body = "".join(f"{abstract} Paper {i}.\n\n" for i in range(count))
    data = body.encode()
    path.write_bytes(gzip.compress(data, 1) if path.suffix == ".gz" else data)
    return path


@pytest.mark.parametrize("name", ["s.jsonl", "s.csv", "s.txt", "s.ris", "s.jsonl.gz"])
def test_line_formats_stream(tmp_path: Path, name: str) -> None:
    import tracemalloc

    from embedsearch.readers import iter_papers

    path = _stream_file(tmp_path / name, 1_000)  # about 1 MB of text
    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_papers([path]))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = len(gzip.decompress(path.read_bytes())) if path.suffix == ".gz" else \
        path.stat().st_size
    assert count == 1_000
    assert peak < size / 4, f"reading held {peak:,} bytes of a {size:,}-byte file at once"
