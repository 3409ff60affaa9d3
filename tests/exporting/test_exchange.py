"""RIS and CSL-JSON export: BibTeX read, indexed, exported as RIS or CSL-JSON and read
again keeps every field both formats carry (compared field by field); the CSL-JSON is
valid by the published schema and renders with a citation processor; the BibTeX of a
300-entry real-world-like bibliography passes biber's data-model check."""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from embedsearch.exporting import FORMATS, export
from embedsearch.papers import Paper
from embedsearch.readers import read_papers
from embedsearch.text.bibentry import bib_fields

HERE = Path(__file__).parent.parent
BIBLIOGRAPHIES = HERE / "data" / "bibliographies"
#: Verbatim from github.com/citation-style-language/schema (MIT), see its README there.
CSL_SCHEMA = HERE / "data" / "schemas" / "csl-data.json"
SUFFIX = {"ris": ".ris", "csl-json": ".json"}
#: Kept fields neither RIS nor CSL-JSON has a place for: a booktitle besides the journal,
#: the organization, howpublished; RIS has no chapter number either.
NOT_CARRIED = {"ris": {"booktitle", "organization", "howpublished", "chapter"},
               "csl-json": {"booktitle", "organization", "howpublished"}}


def comparable(paper: Paper, format: str) -> Paper:
    """`paper` as much as `format` can carry: its kept fields less those it has no
    place for, its month as a month (RIS and CSL write its number: "January" comes back
    as BibTeX's "jan"), an inbook a chapter (both formats have one kind of chapter), a
    master's thesis saying so (it is what tells it from a PhD thesis there)."""
    fields = {name: value for name, value in paper.bib_fields
              if name not in NOT_CARRIED[format]}
    if "month" in fields:
        fields["month"] = fields["month"][:3].lower()
    kind = "incollection" if paper.entry_type == "inbook" else paper.entry_type
    if kind == "mastersthesis":
        fields.setdefault("type", "Master's thesis")
    return dataclasses.replace(paper, entry_type=kind, bib_fields=bib_fields(fields))


def assert_same_fields(papers: list[Paper], back: list[Paper], format: str) -> None:
    assert [paper.id for paper in back] == [paper.id for paper in papers]
    for original, again in zip(papers, back):
        expected = comparable(original, format)
        for field in dataclasses.fields(Paper):
            assert getattr(again, field.name) == getattr(expected, field.name), \
                (format, original.id, field.name)


def exported(papers: list[Paper], format: str, tmp_path: Path) -> list[Paper]:
    path = tmp_path / f"export{SUFFIX[format]}"
    path.write_text(export(papers, format), encoding="utf-8")
    return read_papers([path], format, title_only=True)


# -- a real-world-like bibliography, made the same way every time ----------------------------
_GIVEN = ["Jörg", "José", "Zoë", "Ann", "Yann A.", "Łukasz", "Ayşe", "Hiroshi", "Chen",
          "Marie-Claire", "Ludwig", "Priya", "Olusegun", "Søren", "Ana María"]
_FAMILY = ["Müller", "Núñez", "van der Berg", "Smith", "LeCun", "Kaiser", "Çelik", "Tanaka",
           "Wang", "de la Cruz", "von Neumann", "Patel", "Adeyemi", "Kierkegaard", "García"]
_WORDS = ["graph", "attention", "sparse", "diffusion", "transformers", "protein", "folding",
          "retrieval", "causal", "bandits", "kernels", "few-shot", "LoRA", "robust", "spiking"]
_JOURNALS = ["Journal of Machine Learning Research", "Nature", "IEEE Transactions on "
             "Pattern Analysis and Machine Intelligence", "Neural Computation"]
_BOOKTITLES = ["Advances in Neural Information Processing Systems", "Proceedings of the "
               "International Conference on Machine Learning", "Proceedings of ACL"]
_KINDS = ["article", "inproceedings", "book", "incollection", "phdthesis", "mastersthesis",
          "techreport", "misc", "unpublished"]


def realistic_bibliography(count: int = 300, seed: int = 34) -> str:
    """`count` entries as reference managers export them: every entry type we map, names
    with particles and accents, months, page ranges, DOIs, arXiv ids, keywords, LaTeX
    specials in abstracts; the mandatory fields of biblatex's data model present."""
    draw = random.Random(seed)
    entries = []
    for number in range(count):
        kind = _KINDS[number % len(_KINDS)]
        people = [f"{draw.choice(_FAMILY)}, {draw.choice(_GIVEN)}"
                  for _ in range(draw.randint(1, 4))]
        words = draw.sample(_WORDS, 4)
        year = 1995 + number % 30
        fields = {"title": f"{words[0].capitalize()} {words[1]} for {words[2]} {words[3]}",
                  "author": " and ".join(people), "year": str(year)}
        if number % 3:
            fields["abstract"] = (f"We study {words[0]} {words[1]} & show a {number % 90}\\% "
                                  f"gain on {words[2]} -- with $O(n^2)$ cost.")
        if number % 4 == 0:
            fields["keywords"] = ", ".join(words[:2])
        if number % 2 == 0:
            fields["month"] = ["jan", "mar", "jul", "oct"][number % 4]
        if kind == "article":
            fields.update(journal=draw.choice(_JOURNALS), volume=str(number % 40 + 1),
                          number=str(number % 12 + 1), pages=f"{number}--{number + 17}",
                          doi=f"10.{1000 + number}/jour.{number}")
        elif kind == "inproceedings":
            fields.update(booktitle=draw.choice(_BOOKTITLES), pages=f"{number + 1}--{number + 9}",
                          address="Vancouver, Canada", publisher="Curran Associates, Inc.")
        elif kind == "book":
            fields.update(publisher="MIT Press", address="Cambridge, MA", edition="2",
                          isbn="978-0-262-03561-3", series="Adaptive Computation")
        elif kind == "incollection":
            fields.update(booktitle="Neural Networks: Tricks of the Trade",
                          editor="Montavon, Grégoire and Müller, Klaus-Robert",
                          publisher="Springer", pages=f"{number}--{number + 30}",
                          doi=f"10.1007/978-3-642-{number}")
        elif kind in ("phdthesis", "mastersthesis"):
            fields.update(school=draw.choice(["ETH Zürich", "University of Toronto"]))
        elif kind == "techreport":
            fields.update(institution="University of Toronto", number=f"TR {year}-{number}",
                          type="Technical Report")
        elif kind == "misc":
            fields.update(eprint=f"{year % 100:02d}{number % 12 + 1:02d}.{10000 + number}",
                          archiveprefix="arXiv", note="Preprint")
        else:
            fields.update(note="Manuscript under review")
        if number % 5 == 0:
            fields["url"] = f"https://example.org/papers/{number}"
        body = ",\n".join(f"  {name} = {{{value}}}" if name != "month" else f"  {name} = {value}"
                          for name, value in fields.items())
        entries.append(f"@{kind}{{ref{number:03d},\n{body}\n}}\n")
    return "\n".join(entries)


@pytest.fixture(scope="module")
def realistic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("realistic") / "thesis.bib"
    path.write_text(realistic_bibliography(), encoding="utf-8")
    return path


# -- round trips --------------------------------------------------------------------------------
@pytest.mark.parametrize("format", ["ris", "csl-json"])
def test_bibtex_index_export_read_keeps_every_field_both_carry(format: str,
                                                                tmp_path: Path) -> None:
    sources = [BIBLIOGRAPHIES / "zotero-better-bibtex.bib", BIBLIOGRAPHIES / "google-scholar.bib"]
    papers = read_papers(sources, title_only=True)
    with SearchEngine.build_from_files(tmp_path / "index", sources,
                                       allow_title_only=True) as engine:
        indexed = [engine.get(paper.id) for paper in papers]
    assert indexed == papers  # the index keeps them as read
    assert_same_fields(indexed, exported(indexed, format, tmp_path), format)


@pytest.mark.parametrize("format", ["ris", "csl-json"])
def test_a_300_entry_bibliography_round_trips(format: str, realistic: Path,
                                              tmp_path: Path) -> None:
    papers = read_papers([realistic], title_only=True)
    assert len(papers) == 300 and len({paper.entry_type for paper in papers}) == len(_KINDS)
    assert sum(bool(paper.arxiv_id) for paper in papers) >= 30
    assert_same_fields(papers, exported(papers, format, tmp_path), format)


def test_types_authors_dates_and_identifiers_as_zotero_reads_them() -> None:
    papers = {paper.id: paper for paper in read_papers(
        [BIBLIOGRAPHIES / "zotero-better-bibtex.bib"], title_only=True)}
    ris = export(list(papers.values()), "ris")
    for line in ("TY  - JOUR", "TY  - CONF", "TY  - CHAP", "TY  - BOOK", "TY  - THES",
                 "TY  - RPRT", "TY  - UNPB", "TY  - GEN", "AU  - van der Berg, Zoë",
                 "DA  - 2021/03//", "DO  - 10.5555/3546258.3546362", "AN  - arXiv:1412.6980",
                 "T2  - Journal of Machine Learning Research", "KW  - message passing"):
        assert line in ris
    assert not ris.startswith("1.")  # rispy's numbering is no RIS
    items = {item["id"]: item for item in json.loads(export(list(papers.values()), "csl-json"))}
    assert items["mueller2021graphs"]["type"] == "article-journal"
    assert items["mueller2021graphs"]["issued"] == {"date-parts": [[2021, 3]]}
    assert {"family": "van der Berg", "given": "Zoë"} in items["mueller2021graphs"]["author"]
    assert items["kingma2014adam"]["type"] == "article"  # CSL's preprint
    assert items["pytorch"]["type"] == "document"  # CSL's generic type
    assert [items[key]["type"] for key in ("vaswani2017attention", "lecun2012efficient",
                                          "sutskever2013training", "hinton2012improving")] \
        == ["paper-conference", "chapter", "thesis", "report"]
    assert items["hinton2012improving"]["number"] == "UTML TR 2012-001"


# -- CSL-JSON is valid and renders --------------------------------------------------------------
def test_csl_json_is_valid_by_the_published_schema(realistic: Path,
                                                  seed_files: list[Path]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(CSL_SCHEMA.read_text(encoding="utf-8"))
    papers = [*read_papers([realistic], title_only=True), *read_papers(seed_files),
              *read_papers(sorted(BIBLIOGRAPHIES.glob("*")), title_only=True)]
    jsonschema.Draft7Validator(schema).validate(json.loads(export(papers, "csl-json")))


@pytest.mark.filterwarnings("ignore:The following arguments for Reference are unsupported")
def test_csl_json_renders_with_a_citation_processor(realistic: Path) -> None:
    citeproc = pytest.importorskip("citeproc", reason="citeproc-py is in the dev extra")
    from citeproc.source.json import CiteProcJSON

    papers = read_papers([realistic, *sorted(BIBLIOGRAPHIES.glob("*"))], title_only=True)
    source = CiteProcJSON(json.loads(export(papers, "csl-json")))
    style = citeproc.CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = citeproc.CitationStylesBibliography(style, source, citeproc.formatter.plain)
    bibliography.register(citeproc.Citation([citeproc.CitationItem(paper.id)
                                             for paper in papers]))
    rendered = [str(entry) for entry in bibliography.bibliography()]
    assert len(rendered) == len(papers)
    assert any("Müller" in entry and "2021" in entry for entry in rendered)


# -- BibTeX passes biber's data-model check -----------------------------------------------------
def biber_datamodel_errors(text: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "export.bib"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run(["biber", "--tool", "--validate-datamodel", path.name],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines()
            if "Datamodel:" in line or line.startswith("ERROR")]


@pytest.mark.skipif(shutil.which("biber") is None,
                    reason="biber is not installed (apt-get install biber; .ci/run does)")
def test_bibtex_export_of_300_entries_passes_biber(realistic: Path, tmp_path: Path) -> None:
    papers = read_papers([realistic], title_only=True)
    assert biber_datamodel_errors(export(papers, "bibtex"), tmp_path) == []


@pytest.mark.skipif(shutil.which("biber") is None,
                    reason="biber is not installed (apt-get install biber; .ci/run does)")
def test_bibtex_export_of_the_bundled_sample_passes_biber(tmp_path: Path) -> None:
    # Its papers have no authors (the source gives none): biblatex requires an author of
    # an @inproceedings, so they are written as @misc, the venue as howpublished.
    from embedsearch.bundled import sample_papers

    papers = sample_papers()
    text = export(papers, "bibtex")
    assert biber_datamodel_errors(text, tmp_path) == []
    path = tmp_path / "sample.bib"
    path.write_text(text, encoding="utf-8")
    again = read_papers([path])
    assert [(p.title, p.venue, p.year) for p in again] == [
        (p.title, p.venue, p.year) for p in papers]


# -- command line and Python API ----------------------------------------------------------------
def test_ris_and_csl_json_from_search_and_similar(seed_index: Path, tmp_path: Path) -> None:
    def run(*args: str | Path) -> str:
        return subprocess.run([sys.executable, "-m", "embedsearch.cli", *map(str, args)],
                              capture_output=True, text=True, check=True,
                              env={"PYTHONPATH": str(HERE.parent), "PATH": ""}).stdout

    query = ["search", "visual prompting", "--index", seed_index, "-k", "3"]
    ids = [json.loads(line)["id"] for line in run(*query, "--json").splitlines()]
    for format in ("ris", "csl-json"):
        path = tmp_path / f"hits{SUFFIX[format]}"
        path.write_text(run(*query, "--format", format), encoding="utf-8")
        assert [paper.id for paper in read_papers([path], format)] == ids
    similar = run("similar", ids[0], "--index", seed_index, "-k", "2", "--format", "csl-json")
    assert len(json.loads(similar)) == 2


def test_export_takes_hits_in_every_format(seed_engine: SearchEngine) -> None:
    hits = seed_engine.search("visual prompting", 3)
    assert [item["id"] for item in json.loads(export(hits, "csl-json"))] == [h.id for h in hits]
    assert export(hits, "ris").count("TY  - CONF") == 3  # ICLR: a conference paper
    for format in FORMATS:
        assert export(hits, format)
