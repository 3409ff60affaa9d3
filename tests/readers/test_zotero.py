"""Reading a Zotero library in place: items to papers, choosing, and reading safely while
Zotero holds the database (its write-ahead log, its exclusive lock, a pending write)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedsearch.errors import InputError
from embedsearch.readers import ZoteroLibrary, read_bibliography, read_papers
from tests.zotero_library import ZoteroWriter

ABSTRACT = "We study message passing on molecular graphs and predict their properties."


@pytest.fixture
def zotero(tmp_path: Path) -> Iterator[ZoteroWriter]:
    writer = ZoteroWriter(tmp_path / "Zotero")
    yield writer
    writer.close()


def _library(writer: ZoteroWriter) -> dict[str, object]:
    """A small library of every kind of item; the keys of what each should become."""
    thesis = writer.collection("Thesis")
    methods = writer.collection("Methods", thesis)
    article, article_key = writer.item(
        "journalArticle", fields={"title": "Graph  networks for molecules",
                                  "abstractNote": ABSTRACT, "date": "2021-03-00 March 2021",
                                  "publicationTitle": "Journal of Chemical Learning",
                                  "DOI": "10.1234/JCL.2021.7", "url": "https://example.org/gn",
                                  "extra": "Citation Key: gn2021"},
        creators=[("Ada", "Lovelace"), ("", "The Graph Consortium")],
        editors=[("Ed", "Itor")], tags=["graphs", "chemistry"], collections=[methods])
    _, paper_key = writer.item(
        "conferencePaper", fields={"title": "Attention for proteins", "abstractNote": ABSTRACT,
                                   "date": "2019", "proceedingsTitle": "Proceedings of ICML",
                                   "extra": "DOI: 10.5555/icml.2019.1"},
        creators=[("Alan", "Turing")], collections=[thesis])
    _, preprint_key = writer.item(
        "preprint", fields={"title": "A preprint without abstract", "repository": "arXiv",
                            "archiveID": "arXiv:2401.01234", "date": "2024-01-02"},
        tags=["graphs"])
    writer.item("note", parent=article)
    writer.item("annotation")
    writer.pdf(article, b"%PDF-1.7 an attachment")
    _, trashed_key = writer.item("journalArticle", fields={"title": "Thrown away",
                                                           "abstractNote": ABSTRACT})
    writer.trash(writer.db.execute("SELECT itemID FROM items WHERE key = ?",
                                   (trashed_key,)).fetchone()[0])
    writer.item("journalArticle", fields={"date": "2020"})  # neither title nor abstract
    group = writer.group("Reading Club", 4711)
    _, group_key = writer.item(fields={"title": "Group paper", "abstractNote": ABSTRACT},
                               library=group)
    feed = writer.feed("arxiv-cs")
    writer.item(fields={"title": "A feed item", "abstractNote": ABSTRACT}, library=feed)
    return {"article": article_key, "paper": paper_key, "preprint": preprint_key,
            "trashed": trashed_key, "group": group_key}


def test_items_become_papers_with_their_fields(zotero: ZoteroWriter) -> None:
    keys = _library(zotero)
    papers = {p.id: p for p in read_papers([ZoteroLibrary(zotero.folder)], title_only=True)}
    article = papers[f"zotero:{keys['article']}"]
    assert article.title == "Graph networks for molecules" and article.abstract == ABSTRACT
    assert article.authors == ("Ada Lovelace", "The Graph Consortium")  # editors are not
    assert (article.year, article.venue) == (2021, "Journal of Chemical Learning")
    assert (article.doi, article.url) == ("10.1234/jcl.2021.7", "https://example.org/gn")
    assert set(article.keywords) == {"graphs", "chemistry"}
    assert article.collections == ("Thesis/Methods",)
    paper = papers[f"zotero:{keys['paper']}"]
    assert (paper.venue, paper.year, paper.doi) == ("Proceedings of ICML", 2019,
                                                     "10.5555/icml.2019.1")
    preprint = papers[f"zotero:{keys['preprint']}"]
    assert preprint.title_only and preprint.arxiv_id == "2401.01234"
    assert (preprint.venue, preprint.year) == ("arXiv", 2024)
    # The trash, notes, group and feed items are not papers of My Library.
    assert len(papers) == 3


def test_item_types_and_bibliographic_fields_travel_to_the_exports(
        zotero: ZoteroWriter, tmp_path: Path) -> None:
    from embedsearch import export

    _, chapter = zotero.item(
        "bookSection", fields={"title": "Graphs in chemistry", "abstractNote": ABSTRACT,
                               "bookTitle": "Handbook of Molecules", "date": "2020",
                               "pages": "12-20", "publisher": "MIT Press",
                               "place": "Cambridge, MA", "ISBN": "978-0-262-03384-8"},
        creators=[("Ada", "Lovelace")], editors=[("Grace", "Hopper")])
    _, thesis = zotero.item(
        "thesis", fields={"title": "Message passing", "abstractNote": ABSTRACT, "date": "2022",
                          "thesisType": "Master's thesis", "university": "ETH Zurich"},
        creators=[("Alan", "Turing")])
    _, page = zotero.item("webpage", fields={"title": "A blog post", "abstractNote": ABSTRACT})
    papers = {p.id: p for p in read_papers([ZoteroLibrary(zotero.folder)])}
    book = papers[f"zotero:{chapter}"]
    assert book.entry_type == "incollection" and dict(book.bib_fields) == {
        "editor": "Grace Hopper", "pages": "12--20", "publisher": "MIT Press",
        "address": "Cambridge, MA", "isbn": "978-0-262-03384-8"}
    assert papers[f"zotero:{thesis}"].entry_type == "mastersthesis"
    assert papers[f"zotero:{page}"].entry_type == "misc"
    # What Zotero said comes back from a BibTeX file of the index's papers.
    (tmp_path / "back.bib").write_text(export(list(papers.values()), "bibtex"), "utf-8")
    back = {p.id: p for p in read_papers([tmp_path / "back.bib"])}
    assert [(p.entry_type, p.bib_fields) for p in back.values()] == [
        (p.entry_type, p.bib_fields) for p in papers.values()]


def test_every_item_is_accounted_for(zotero: ZoteroWriter, tmp_path: Path) -> None:
    keys = _library(zotero)
    found = read_bibliography([ZoteroLibrary(zotero.folder)])
    # An entry is named by its key, or by its title and "(item KEY)"; a paper's own notes
    # (how its attachment was read) are not entries passed over.
    ids = {paper.id for paper in found.papers}
    report = {str(entry["entry"]).rstrip(")").split()[-1] if "(item " in str(entry["entry"])
              else str(entry["entry"]).split()[0]: entry["reason"] for entry in found.report()
              if entry["entry"] not in ids}
    papers = {paper.id.removeprefix("zotero:") for paper in found.papers}
    library = {row[0] for row in zotero.db.execute("SELECT key FROM items WHERE libraryID = 1")}
    assert papers | set(report) == library and not papers & set(report)
    assert report[keys["trashed"]] == "in the trash"
    assert report[keys["preprint"]] == "no abstract (title only)"
    for reason in ("a note", "an annotation", "an attachment"):
        assert list(report.values()).count(f"{reason}, not a paper") == 1
    assert "no abstract and no title" in report.values()


def test_a_collection_a_tag_and_a_group_choose_the_items(zotero: ZoteroWriter) -> None:
    keys = _library(zotero)

    def chosen(**selection: str) -> set[str]:
        library = ZoteroLibrary(zotero.folder, **selection)  # type: ignore[arg-type]
        return {p.id for p in read_papers([library], title_only=True)}

    assert chosen(collection="thesis") == {f"zotero:{keys['article']}",
                                           f"zotero:{keys['paper']}"}  # with Methods
    assert chosen(collection="Methods") == chosen(collection="Thesis/Methods") == {
        f"zotero:{keys['article']}"}
    assert chosen(tag="GRAPHS") == {f"zotero:{keys['article']}", f"zotero:{keys['preprint']}"}
    assert chosen(group="reading club") == {f"zotero:groups/4711/{keys['group']}"}
    assert chosen() == {p.id for p in read_papers([f"zotero:{zotero.folder}"],
                                                  title_only=True)}
    spec = f"zotero:{zotero.folder}?collection=Thesis&tag=graphs"
    assert {p.id for p in read_papers([spec])} == {f"zotero:{keys['article']}"}
    for selection, named in (({"collection": "Nope"}, "Thesis, Thesis/Methods"),
                             ({"tag": "nope"}, "chemistry, graphs"),
                             ({"group": "Nope"}, "Reading Club")):
        with pytest.raises(InputError, match=f"there are: {named}"):
            chosen(**selection)


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def _files(writer: ZoteroWriter) -> dict[str, str]:
    return {suffix: _hash(Path(f"{writer.database}{suffix}")) for suffix in ("", "-wal")}


def test_the_write_ahead_log_is_read_and_a_pending_write_is_not(zotero: ZoteroWriter) -> None:
    zotero.item(fields={"title": "Old", "abstractNote": ABSTRACT})
    zotero.checkpoint()
    zotero.item(fields={"title": "In the log only", "abstractNote": ABSTRACT})
    # What immutable=1 (a common mistake) reads: the main file alone, without the log.
    naive = sqlite3.connect(f"file:{zotero.database}?mode=ro&immutable=1", uri=True)
    assert naive.execute("SELECT count(*) FROM items").fetchone()[0] == 1
    naive.close()
    pending = sqlite3.connect(zotero.database, isolation_level=None)
    pending.execute("BEGIN IMMEDIATE")  # Zotero midway through a write
    pending.execute("UPDATE items SET key = 'CHANGED1' WHERE itemID = 1")
    before = _files(zotero)
    titles = {p.title for p in read_papers([ZoteroLibrary(zotero.folder)])}
    assert titles == {"Old", "In the log only"}
    assert _files(zotero) == before  # nothing of the library written
    pending.execute("ROLLBACK")
    pending.close()


def test_a_library_zotero_locks_exclusively_is_read_from_a_copy(zotero: ZoteroWriter) -> None:
    zotero.item(fields={"title": "Held", "abstractNote": ABSTRACT})
    zotero.db.execute("PRAGMA locking_mode = EXCLUSIVE")
    zotero.item(fields={"title": "Written under the lock", "abstractNote": ABSTRACT})
    blocked = sqlite3.connect(f"file:{zotero.database}?mode=ro", uri=True, timeout=0.1)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        blocked.execute("SELECT count(*) FROM items").fetchone()
    blocked.close()
    before = _files(zotero)
    titles = {p.title for p in read_papers([ZoteroLibrary(zotero.folder)])}
    assert titles == {"Held", "Written under the lock"}
    assert _files(zotero) == before


def test_a_damaged_or_missing_library_is_one_line_that_says_what_to_do(
        zotero: ZoteroWriter, tmp_path: Path) -> None:
    zotero.item(fields={"title": "One", "abstractNote": ABSTRACT})
    zotero.checkpoint()
    zotero.close()
    cut = tmp_path / "cut"
    cut.mkdir()
    data = zotero.database.read_bytes()
    (cut / "zotero.sqlite").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError) as damaged:
        read_papers([ZoteroLibrary(cut)])
    assert "\n" not in str(damaged.value) and "zotero.sqlite" in str(damaged.value)
    with pytest.raises(InputError, match="no Zotero library here.*Data Directory|Settings"):
        read_papers([ZoteroLibrary(tmp_path / "nowhere")])
    (cut / "zotero.sqlite").write_text("not a database")
    with pytest.raises(InputError, match="not an SQLite database"):
        read_papers([ZoteroLibrary(cut)])


def test_the_default_library_is_where_zotero_says(zotero: ZoteroWriter, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    zotero.item(fields={"title": "Mine", "abstractNote": ABSTRACT})
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(InputError, match=str(home / "Zotero" / "zotero.sqlite")):
        read_papers(["zotero:"])
    profile = home / ".zotero" / "zotero" / "abcd.default"
    profile.mkdir(parents=True)
    (profile / "prefs.js").write_text(
        'user_pref("extensions.zotero.useDataDir", true);\n'
        f'user_pref("extensions.zotero.dataDir", "{zotero.folder}");\n')
    assert [p.title for p in read_papers(["zotero:"])] == ["Mine"]
    # The database file itself is an input too, read as its library.
    assert [p.title for p in read_papers([zotero.database])] == ["Mine"]


def test_an_item_without_an_abstract_takes_its_pdfs(zotero: ZoteroWriter,
                                                    tmp_path: Path) -> None:
    from tests.readers.test_pdf import ABSTRACT as PDF_ABSTRACT
    from tests.readers.test_pdf import one_column

    pdf = one_column(tmp_path / "paper.pdf").read_bytes()
    stored, stored_key = zotero.item(fields={"title": "Stored in storage/"})
    zotero.pdf(stored, pdf)
    (tmp_path / "papers").mkdir()
    linked, linked_key = zotero.item(fields={"title": "Linked where I keep it"})
    zotero.pdf(linked, pdf, linked=tmp_path / "papers" / "linked.pdf")
    broken, broken_key = zotero.item(fields={"title": "A broken PDF"})
    zotero.pdf(broken, b"%PDF-1.7 not really")
    found = read_bibliography([ZoteroLibrary(zotero.folder)], title_only=True)
    papers = {paper.id: paper for paper in found.papers}
    start = " ".join(PDF_ABSTRACT.split())[:80]
    assert papers[f"zotero:{stored_key}"].abstract.startswith(start)
    assert papers[f"zotero:{linked_key}"].abstract.startswith(start)
    assert papers[f"zotero:{broken_key}"].title_only  # its PDF gave nothing: title only
    assert papers[f"zotero:{stored_key}"].title == "Stored in storage/"  # Zotero's wins
    noted = {str(note["entry"]): str(note["reason"]) for note in found.notes}
    assert set(noted) == {f"zotero:{stored_key}", f"zotero:{linked_key}",
                          f"zotero:{broken_key}"}
    assert "abstract: block after the Abstract heading" in noted[f"zotero:{stored_key}"]
    assert noted[f"zotero:{broken_key}"].startswith("not read in full (the PDF): damaged")
    unread = read_papers([ZoteroLibrary(zotero.folder, pdf_abstracts=False)],
                         title_only=True)
    assert all(paper.title_only for paper in unread)


def test_every_library_in_one_reading(zotero: ZoteroWriter) -> None:
    keys = _library(zotero)
    club = 2  # the "Reading Club" group's libraryID (_library made it second)
    # Zotero's keys are unique within a library: the same key in another one is
    # another item, and stays another paper.
    _, twin = zotero.item(fields={"title": "Twin in the club", "abstractNote": ABSTRACT},
                          library=club, key=keys["article"])
    lab = zotero.group("Lab", 99)
    methods = zotero.collection("Methods", library=lab)
    zotero.item(fields={"title": "Lab methods", "abstractNote": ABSTRACT}, library=lab,
                collections=[methods])
    every = {p.id: p for p in read_papers([ZoteroLibrary(zotero.folder, every_library=True)],
                                          title_only=True)}
    mine = {p.id for p in read_papers([ZoteroLibrary(zotero.folder)], title_only=True)}
    assert mine < set(every) and all(every[pid].library == "" for pid in mine)
    assert every[f"zotero:groups/4711/{twin}"].title == "Twin in the club"
    assert every[f"zotero:{keys['article']}"].title == "Graph networks for molecules"
    assert {p.library for p in every.values()} == {"", "Reading Club", "Lab"}
    assert "A feed item" not in {p.title for p in every.values()}  # feeds are no library
    # A collection of several libraries: any library's of that name.
    spec = f"zotero:{zotero.folder}?libraries=all&collection=Methods"
    assert {p.title for p in read_papers([spec])} == {"Graph networks for molecules",
                                                      "Lab methods"}
    with pytest.raises(InputError, match="libraries=all"):
        ZoteroLibrary.parse(f"zotero:{zotero.folder}?libraries=mine")
    with pytest.raises(InputError, match="choose one"):
        ZoteroLibrary(zotero.folder, group="Lab", every_library=True)
    # A group's paper read alone knows its library as well.
    alone = read_papers([ZoteroLibrary(zotero.folder, group="Lab")])
    assert [p.library for p in alone] == ["Lab"]
