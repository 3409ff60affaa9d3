"""`sync` of a Zotero library read in full: an attachment whose file or Zotero text
changed is read again, and only it; an item changed otherwise keeps the passages the
index holds without its file being read."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedsearch import SearchEngine
from embedsearch.readers import ZoteroLibrary, read_papers
from embedsearch.storage.directory import IndexDirectory
from tests.readers.test_pdf import one_column
from tests.readers.test_zotero_fulltext import ABSTRACT, zotero7_cache
from tests.zotero_library import ZoteroWriter

FIRST = [["1 Introduction", "Message passing reads molecular graphs bond by bond."],
         ["2 Results", "Zero-padding shortcuts lost two points against projection ones."]]
SECOND = [["1 Introduction", "Label smoothing hurt perplexity on every language pair."],
          ["2 Results", "The smoothed models translated better all the same."]]


@pytest.fixture
def library(tmp_path: Path) -> Iterator[tuple[ZoteroWriter, dict[str, int]]]:
    """Two items with a PDF each and Zotero's text of it, and one without a file; by
    paper id, the attachment of each (the item for the one without)."""
    writer = ZoteroWriter(tmp_path / "Zotero")
    pdf = one_column(tmp_path / "paper.pdf").read_bytes()
    held: dict[str, int] = {}
    for name, body in (("graphs", FIRST), ("smoothing", SECOND)):
        item, key = writer.item(fields={"title": f"A paper on {name}",
                                        "abstractNote": ABSTRACT})
        held[f"zotero:{key}"] = attachment = writer.pdf(item, pdf)
        writer.ft_cache(attachment, zotero7_cache(body), pages=(2, 2))
    item, key = writer.item(fields={"title": "No attachment", "abstractNote": ABSTRACT})
    held[f"zotero:{key}"] = item
    yield writer, held
    writer.close()


def _texts(engine: SearchEngine, paper_id: str) -> str:
    return " ".join(passage.text for passage in engine.passages(paper_id))


def _cache(writer: ZoteroWriter, attachment: int) -> Path:
    return writer.folder / "storage" / writer.key_of(attachment) / ".zotero-ft-cache"


def _generation(index: Path) -> int:
    return IndexDirectory(index).read_manifest().generation


def test_sync_reads_again_only_the_attachment_that_changed(
        library: tuple[ZoteroWriter, dict[str, int]], tmp_path: Path) -> None:
    writer, held = library
    graphs, smoothing, bare = list(held)
    index = tmp_path / "index"
    source = ZoteroLibrary(writer.folder)
    SearchEngine.build(index, read_papers([source])).close()
    with SearchEngine.open(index) as engine:
        assert "bond by bond" in _texts(engine, graphs)
        assert engine.file_of(graphs).endswith("paper.pdf")
        report = engine.sync(source)
        assert (report.changed, report.unchanged) == (False, 3)

        # The cache rewritten in place, its size and time kept: the same stamp, so the
        # file is the one the index read, and nothing is read or written.
        cache = _cache(writer, held[smoothing])
        before = cache.stat()
        original = cache.read_text("utf-8")
        cache.write_text("".join("x" if c.isalpha() else c for c in original), "utf-8")
        os.utime(cache, ns=(before.st_atime_ns, before.st_mtime_ns))
        generation = _generation(index)
        assert not engine.sync(source).changed and _generation(index) == generation

        # A new tag: the item is written again, its passages taken from the index (the
        # file, now holding x's, is not read).
        writer.db.execute("INSERT INTO tags (name) VALUES ('read')")
        writer.db.execute("INSERT INTO itemTags SELECT itemID, tagID, 0 FROM items, tags "
                          "WHERE key = ? AND name = 'read'", (smoothing.split(":")[1],))
        report = engine.sync(source)
        assert (report.updated, report.unchanged) == ([smoothing], 2)
        engine.refresh()
        assert engine.get(smoothing).keywords == ("read",)
        assert "Label smoothing hurt perplexity" in _texts(engine, smoothing)
        assert engine.file_of(smoothing).endswith("paper.pdf")

        # Zotero's text of the other PDF changed: read again, that one only.
        writer.ft_cache(held[graphs], zotero7_cache(SECOND[::-1]), pages=(2, 2))
        os.utime(_cache(writer, held[graphs]), ns=(before.st_mtime_ns + 10**9,) * 2)
        report = engine.sync(source, dry_run=True)
        assert (report.updated, report.unchanged) == ([graphs], 2)
        assert engine.sync(source).updated == [graphs]
        engine.refresh()
        assert "bond by bond" not in _texts(engine, graphs)
        assert "The smoothed models translated better" in _texts(engine, graphs)
        assert "Label smoothing" in _texts(engine, smoothing)  # untouched
        assert engine.passages(bare) == []


def test_abstract_only_syncs_as_before_and_full_text_upgrades_once(
        library: tuple[ZoteroWriter, dict[str, int]], tmp_path: Path) -> None:
    writer, held = library
    index = tmp_path / "index"
    plain = ZoteroLibrary(writer.folder, full_text=False)
    SearchEngine.build(index, read_papers([plain])).close()
    with SearchEngine.open(index) as engine:
        assert all(engine.passages(paper_id) == [] for paper_id in held)
        assert engine.sync(plain).unchanged == 3  # without full text: as before it
        # Read in full for the first time: the two items with a file, once.
        first = engine.sync(ZoteroLibrary(writer.folder))
        assert sorted(first.updated) == sorted(list(held)[:2]) and first.unchanged == 1
        engine.refresh()
        assert "bond by bond" in _texts(engine, list(held)[0])
        assert not engine.sync(ZoteroLibrary(writer.folder)).changed
