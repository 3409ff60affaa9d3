"""The full text of a segment's papers: their passages, in a folder of the segment.

    s000005-1/passages/
      passages.sqlite   each passage's text, page, page label and section; each paper's file
      vectors.faiss     the passages' vector index (keys.npy beside it)
      lexical.npz       their BM25 postings

Only a segment with a paper read in full has the folder, so a segment of abstracts is
written exactly as before full text existed. A passage's key is its paper's key shifted
left by `ORDINAL_BITS`, plus its number within the paper: the key says whose passage it
is, so a removed paper's passages are masked by its key alone (the segment's deletions
serve both), and the passages of a paper are one key range.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ...papers import Paper, Passage
from ..records import FullTextRecord
from .lexical import Postings
from .vectors import VectorIndex, load_index

__all__ = ["FULL_TEXT_DIR", "ORDINAL_BITS", "FullText", "PassageBatch", "full_text_problems",
           "load_full_text",
           "merged_batch", "owners", "passage_keys", "passage_lexical_text",
           "write_full_text"]

FULL_TEXT_DIR = "passages"
TEXTS_FILE = "passages.sqlite"
#: Bits of a passage key that number it within its paper: 4,096 passages a paper, above
#: `passages.MAX_PASSAGES`; the paper's key keeps 51 bits.
ORDINAL_BITS = 12
_SCHEMA = """
CREATE TABLE passages (
    key INTEGER PRIMARY KEY,
    page INTEGER,
    page_label TEXT NOT NULL,
    section TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE TABLE files (
    paper INTEGER PRIMARY KEY,
    path TEXT NOT NULL
);
"""
_BATCH = 500


def passage_keys(paper_key: int, count: int) -> NDArray[np.int64]:
    """The keys of a paper's `count` passages, in order."""
    return (np.int64(paper_key) << ORDINAL_BITS) + np.arange(count, dtype=np.int64)


def owners(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """The paper key of each passage key."""
    return np.asarray(keys, dtype=np.int64) >> ORDINAL_BITS


def passage_lexical_text(passage: Passage) -> str:
    """What BM25 reads of a passage: its section heading and its text."""
    return f"{passage.section}. {passage.text}" if passage.section else passage.text


@dataclass(frozen=True)
class PassageBatch:
    """What a segment's full text is written from: passage keys (ascending), the
    passages, their vectors (row i is passage i's), the papers' files by key, and
    their BM25 postings when already made (a merge's, from its segments': None builds
    them from the passages' text)."""

    keys: NDArray[np.int64]
    passages: Sequence[Passage]
    vectors: NDArray[np.float32]
    files: dict[int, str]
    postings: Postings | None = None

    @classmethod
    def of(cls, keys: NDArray[np.int64], papers: Sequence[Paper],
           vectors: NDArray[np.float32] | None, dim: int) -> PassageBatch | None:
        """The batch of `papers` (paper i keyed `keys[i]`; `vectors` their passages' in
        order), or None when none of them was read in full."""
        files = {int(key): paper.file for key, paper in zip(keys, papers) if paper.file}
        count = sum(len(paper.passages) for paper in papers)
        if not files and not count:
            return None
        rows = [passage_keys(int(key), len(paper.passages)) for key, paper in zip(keys, papers)]
        found = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        given = np.zeros((0, dim), np.float32) if vectors is None else vectors
        if len(given) != count:
            raise ValueError(f"{count} passages but {len(given)} passage vectors")
        return cls(found, [p for paper in papers for p in paper.passages],
                   np.asarray(given, np.float32), files)


class PassageStore:
    """One SQLite file of a segment's passages and its papers' files, read-only once
    written."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> PassageStore:
        return cls(sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True,
                                   check_same_thread=False))

    @classmethod
    def write(cls, path: Path, batch: PassageBatch) -> None:
        db = sqlite3.connect(path)
        try:
            db.executescript(_SCHEMA)
            db.executemany("INSERT INTO passages VALUES (?, ?, ?, ?, ?)",
                           ((int(key), p.page, p.page_label, p.section, p.text)
                            for key, p in zip(batch.keys, batch.passages)))
            db.executemany("INSERT INTO files VALUES (?, ?)", sorted(batch.files.items()))
            db.commit()
        finally:
            db.close()

    def passages(self, keys: Iterable[int]) -> dict[int, Passage]:
        """The passages of `keys` (those it holds)."""
        wanted, found = [int(key) for key in keys], {}
        for start in range(0, len(wanted), _BATCH):
            part = wanted[start:start + _BATCH]
            rows = self._db.execute(
                f"SELECT key, text, page, page_label, section FROM passages WHERE key IN "
                f"({', '.join('?' * len(part))})", part)
            found.update({row[0]: Passage(row[1], row[2], row[3], row[4]) for row in rows})
        return found

    def of_paper(self, paper_key: int) -> list[tuple[int, Passage]]:
        """A paper's passages with their keys, in order."""
        low = int(paper_key) << ORDINAL_BITS
        rows = self._db.execute("SELECT key, text, page, page_label, section FROM passages "
                                "WHERE key >= ? AND key < ? ORDER BY key",
                                (low, low + (1 << ORDINAL_BITS)))
        return [(row[0], Passage(row[1], row[2], row[3], row[4])) for row in rows]

    def files(self, paper_keys: Iterable[int] | None = None) -> dict[int, str]:
        """The files of `paper_keys` (all: None) that were read in full."""
        rows = self._db.execute("SELECT paper, path FROM files").fetchall()
        if paper_keys is None:
            return dict(rows)
        wanted = {int(key) for key in paper_keys}
        return {key: path for key, path in rows if key in wanted}

    def integrity(self) -> str:
        return str(self._db.execute("PRAGMA quick_check").fetchone()[0])

    def close(self) -> None:
        self._db.close()


@dataclass
class FullText:
    """A segment's passages open for reading: their vectors, postings and store."""

    vectors: VectorIndex
    lexical: Postings
    store: PassageStore

    def keys(self) -> NDArray[np.int64]:
        """Every passage key written, removed papers' included, ascending."""
        return self.lexical.keys()

    def live(self, deleted: NDArray[np.int64]) -> NDArray[np.bool_] | None:
        """Which passages (in `keys` order) are not of a paper among `deleted`."""
        return np.isin(owners(self.keys()), deleted, invert=True) if len(deleted) else None

    def close(self) -> None:
        self.store.close()


def write_full_text(folder: Path, batch: PassageBatch, index: VectorIndex) -> FullTextRecord:
    """Write `batch` as the full text of the segment in `folder`, its vectors in `index`
    (empty, of the type its size calls for)."""
    where = folder / FULL_TEXT_DIR
    where.mkdir()
    PassageStore.write(where / TEXTS_FILE, batch)
    index.add(batch.keys, batch.vectors)
    index.save(where)
    postings = batch.postings or Postings.build(
        batch.keys, [passage_lexical_text(p) for p in batch.passages])
    postings.save(where)
    return FullTextRecord(len(batch.keys), index.meta())


def load_full_text(folder: Path, record: FullTextRecord, dim: int) -> FullText:
    """The full text `record` of the segment in `folder`."""
    where = folder / FULL_TEXT_DIR
    store = PassageStore.open(where / TEXTS_FILE)
    try:
        return FullText(load_index(where, record.index, dim), Postings.load(where), store)
    except BaseException:
        store.close()
        raise


def full_text_problems(text: FullText | None, record: FullTextRecord | None,
                       papers: NDArray[np.int64], name: str) -> list[str]:
    """What is wrong with a segment's full text: its parts disagree on its passages, a
    passage's paper is not in the segment, the manifest's count is off, its store is
    damaged. `papers`: the segment's paper keys."""
    if text is None or record is None:
        return ([] if text is None and record is None else
                [f"{name}: the manifest and the segment disagree on whether it has passages"])
    problems, keys = [], text.keys()
    if not np.array_equal(np.sort(text.vectors.keys()), keys):
        problems.append(f"{name}: the passages' vector index and postings hold different "
                        f"passages ({len(text.vectors)} and {len(keys)})")
    strays = np.setdiff1d(owners(keys), papers)
    if len(strays):
        problems.append(f"{name}: {len(strays)} papers have passages but are not in the segment")
    if len(keys) != record.count:
        problems.append(f"{name}: the manifest counts {record.count} passages, the segment "
                        f"holds {len(keys)}")
    integrity = text.store.integrity()
    if integrity != "ok":
        problems.append(f"{name}: the passage store is damaged: {integrity}")
    return problems


def merged_batch(parts: Sequence[tuple[FullText | None, NDArray[np.int64]]],
                 dim: int) -> PassageBatch | None:
    """The passages and files of the live papers of `parts` (each a segment's full text
    and its deleted paper keys) as one batch in key order; None when none has any."""
    held = [(text, deleted) for text, deleted in parts if text is not None]
    if not held:
        return None
    keys, vectors, passages, files, masks = [], [], {}, {}, []
    for text, deleted in held:
        mask = text.live(deleted)
        masks.append(mask)
        live = text.keys() if mask is None else text.keys()[mask]
        keys.append(live)
        vectors.append(text.vectors.reconstruct(live) if len(live)
                       else np.zeros((0, dim), np.float32))
        passages.update(text.store.passages(live.tolist()))
        gone = set(deleted.tolist())
        files.update({key: path for key, path in text.store.files().items()
                      if key not in gone})
    order_keys = np.concatenate(keys)
    order = np.argsort(order_keys, kind="stable")
    ordered = order_keys[order]
    if not len(ordered) and not files:
        return None
    # The postings are concatenated, not tokenised again (`Postings.merged`).
    postings = Postings.merged([(text.lexical, mask) for (text, _), mask in zip(held, masks)])
    return PassageBatch(ordered, [passages[int(key)] for key in ordered],
                        np.concatenate(vectors)[order], files, postings)
