"""Saved searches ("watches"): a query or a library of papers kept with an index, for
digests of what the index received since.

    INDEX/watches.json   {"format": "embedsearch-watches", "format_version": 1,
                          "watches": [Watch.to_dict(), ...]}

The file lives beside the index's manifest, so every face that opens the index (the
command line, Python, the server and its page) sees the same watches. It is replaced
in one rename under a lock of its own (`.watches.lock`): editing a watch never waits for
a long `add`, and a reader sees the old list or the new one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import IndexCorruptError, IndexIncompatibleError, QueryError
from ..filters import Filters
from ..fs import exclusive_lock, write_atomic
from ..papers import Paper
from ..readers.records import papers_from_records
from ..search.retrieval import check_query
from ..storage.directory import SIDE_FILES
from ..text.dates import now

__all__ = ["DESCRIBED_CHARS", "WATCHES_FILE", "WATCH_K", "Watch", "WatchList"]

WATCHES_FILE = SIDE_FILES[0]
#: The most characters of a watch's query its one-line description quotes.
DESCRIBED_CHARS = 80
_FORMAT = "embedsearch-watches"
_VERSION = 1
_LOCK = ".watches.lock"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: How long an edit waits for another one (edits take milliseconds).
_WAIT = 30.0
#: The most papers a watch lists per digest, unless it says otherwise: a ceiling for a
#: busy week rather than the usual length, which the similarity floor sets (about two
#: a week per watch at the default floors, see `digests`). The command line, the
#: watches file and docs/how-to/digest.md say the same.
WATCH_K = 20


@dataclass(frozen=True)
class Watch:
    """A saved search: the papers like `query` (a text), or like `papers` (a library:
    a recommendation profile), that pass `filters`.

    A digest lists, for each watch, at most `k` papers the index received since a time,
    those scoring at least `min_similarity` (`Hit.score`, on the cosine scale; None: the
    digest's rule, see `digests`).
    `last_digest` is the instant of the last digest that was marked read (`--since-last`
    starts there); `source` says where a profile's papers came from (a file name).
    """

    name: str
    query: str = ""
    papers: tuple[Paper, ...] = ()
    filters: Filters = field(default_factory=Filters)
    k: int = WATCH_K
    min_similarity: float | None = None
    source: str = ""
    created: str = ""
    last_digest: str = ""

    @property
    def kind(self) -> str:
        """"query" or "library"."""
        return "library" if self.papers else "query"

    def describe(self) -> str:
        """One line saying what the watch looks for."""
        if self.query:  # a pasted abstract is cut at a word: a digest's line, a feed's
            line = " ".join(self.query.split())
            if len(line) > DESCRIBED_CHARS:
                line = line[:DESCRIBED_CHARS - 1].rsplit(" ", 1)[0] + "…"
            return f'"{line}"'
        return f"like the {len(self.papers)} papers of {self.source or 'a library'}"

    def to_dict(self) -> dict[str, Any]:
        """The watch as JSON-ready data (as stored, and as the API returns it)."""
        return {"name": self.name, "kind": self.kind, "query": self.query,
                "papers": [paper.to_dict() for paper in self.papers],
                "filters": self.filters.to_dict(), "k": self.k,
                "min_similarity": self.min_similarity, "source": self.source,
                "created": self.created, "last_digest": self.last_digest}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Watch:
        """The watch `to_dict` gave."""
        filters = dict(data.get("filters") or {})
        return cls(
            name=str(data["name"]), query=str(data.get("query", "")),
            papers=tuple(papers_from_records(data.get("papers") or (), title_only=True)),
            filters=Filters(
                year_min=filters.get("year_min"), year_max=filters.get("year_max"),
                venues=tuple(filters.get("venues") or ()),
                keywords=tuple(filters.get("keywords") or ()),
                collections=tuple(filters.get("collections") or ()),
                added_after=filters.get("added_after"),
                libraries=tuple(filters.get("libraries") or ())),
            k=int(data.get("k", WATCH_K)), min_similarity=data.get("min_similarity"),
            source=str(data.get("source", "")), created=str(data.get("created", "")),
            last_digest=str(data.get("last_digest", "")))


def check_watch(watch: Watch) -> Watch:
    """`watch` if it can be kept; QueryError naming the field at fault otherwise."""
    if not _NAME.match(watch.name):
        raise QueryError(f"a watch's name is 1 to 64 letters, digits, '-', '_' or '.', "
                         f"starting with a letter or digit (it names its feed, "
                         f"/feeds/NAME.atom); got '{watch.name}'", parameter="name")
    if bool(watch.query.strip()) == bool(watch.papers):
        raise QueryError("a watch follows either a query or a library of papers, "
                         "exactly one", parameter="query")
    if watch.query:
        check_query(watch.query)  # the search's own limit, refused when saved
    if not 1 <= watch.k <= 200:
        raise QueryError(f"k must be between 1 and 200, got {watch.k}", parameter="k")
    if watch.min_similarity is not None and not -1 <= watch.min_similarity <= 1:
        raise QueryError("min_similarity is a score on the cosine scale, between -1 and 1",
                         parameter="min_similarity")
    return watch


class WatchList:
    """The watches kept with the index at `index` (a folder)."""

    def __init__(self, index: str | Path) -> None:
        self.path = Path(index) / WATCHES_FILE
        self._lock = Path(index) / _LOCK

    def all(self) -> list[Watch]:
        """Every watch, in the order they were added."""
        if not self.path.is_file():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise IndexCorruptError(f"{self.path}: cannot read the saved searches ({exc}); "
                                    "remove the file to start again") from None
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise IndexCorruptError(f"{self.path}: not a file of saved searches")
        if int(data.get("format_version", 0)) > _VERSION:
            raise IndexIncompatibleError(f"{self.path}: written by a newer embedsearch "
                                         "(pip install -U embedsearch)")
        return [Watch.from_dict(item) for item in data.get("watches", [])]

    def get(self, name: str) -> Watch:
        """The watch called `name`; QueryError listing the names there are."""
        for watch in self.all():
            if watch.name == name:
                return watch
        names = ", ".join(watch.name for watch in self.all()) or "none yet"
        raise QueryError(f"no watch called '{name}' (watches: {names}; add one with "
                         "`embedsearch watch add NAME \"QUERY\"`)", parameter="name")

    def add(self, watch: Watch, *, replace_existing: bool = False) -> Watch:
        """Keep `watch` (checked first); QueryError if its name is taken, unless
        `replace_existing`. Returns it as kept (with its creation time)."""
        kept = replace(check_watch(watch), created=watch.created or now())
        with self._editing() as watches:
            taken = [at for at, other in enumerate(watches) if other.name == watch.name]
            if taken and not replace_existing:
                raise QueryError(f"a watch called '{watch.name}' exists; remove it first or "
                                 "choose another name", parameter="name")
            if taken:
                watches[taken[0]] = kept
            else:
                watches.append(kept)
        return kept

    def remove(self, name: str) -> Watch:
        """Forget the watch `name`; returns it. QueryError if there is none."""
        gone = self.get(name)
        with self._editing() as watches:
            watches[:] = [watch for watch in watches if watch.name != name]
        return gone

    def mark_read(self, names: Iterable[str], until: str) -> None:
        """Record that the digest of the watches `names` was read up to the instant
        `until` (where `--since-last` starts next time)."""
        wanted = set(names)
        with self._editing() as watches:
            watches[:] = [replace(watch, last_digest=until) if watch.name in wanted
                          else watch for watch in watches]

    @contextmanager
    def _editing(self) -> Iterator[list[Watch]]:
        """The watches under the lock, to change in place: written back in one rename
        when the block ends cleanly, left as they were otherwise."""
        with exclusive_lock(self._lock, _WAIT, "the saved searches"):
            watches = self.all()
            yield watches
            data = {"format": _FORMAT, "format_version": _VERSION,
                    "watches": [watch.to_dict() for watch in watches]}
            write_atomic(self.path, json.dumps(data, indent=1) + "\n")
