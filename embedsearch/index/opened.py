"""`OpenIndex`: one index directory open in this process, and its life: following its
newest generation, papers by id, writes, the stored map, checks and backups.

`SearchEngine` is an `OpenIndex` that also searches and finds similar papers; this
class holds what needs no ranking. An open index follows its directory (`LiveIndex`):
each call reads the newest generation (or, while another thread reads a newer one
from disk, the one served until then), and never two. A write's papers are encoded
before the writers' lock is taken (`writing`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Self

from ..corpus_map.attached import MapShelf
from ..corpus_map.projection import CorpusMap
from ..encoding import Encoder, Executor, ModelSpec, index_encoder
from ..filters import Filters
from ..papers import Paper, Passage
from ..readers import read_papers
from ..readers.records import papers_from_records
from ..storage import View
from ..storage.backup import backup_index
from ..storage.directory import DEFAULT_WAIT, IndexDirectory
from ..watches.saved import WatchList
from .checking import DRIFT_SAMPLE, CheckReport, check_index
from .info import IndexInfo, describe
from .live import LiveIndex, known_keys
from .syncing import SyncReport, SyncSource, sync_index
from .writing import add_papers

__all__ = ["OpenIndex"]


class OpenIndex:
    """An index open for reading and writing by id (`SearchEngine` is one, and adds
    search): papers, counts, writes, the map, checks and backups."""

    def __init__(self, directory: IndexDirectory, *, model: str | ModelSpec | None = None,
                 backend: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
                 cache: bool = True, verify: bool = True, query_prompt: str | None = None,
                 secrets: Mapping[str, str] | None = None,
                 encoder: Encoder | None = None) -> None:
        self._directory = directory
        self._requested = (model, backend, query_prompt)
        self._cache_dir = cache_dir
        self._cache = cache
        self._live = LiveIndex(directory, verify=verify, secrets=secrets)
        # (for model, encoder): a build's encoder serves its index's queries, loaded once.
        self._encoder = None if encoder is None else (self._live.manifest().model, encoder)
        self._maps = MapShelf()
        if model is not None or backend is not None or query_prompt is not None:
            self.encoder  # refuse a mismatched encoder now, not at the first query

    def refresh(self) -> bool:
        """Switch to a newer generation if another process published one; True if it did.
        Every call of the engine does this first: one stat when nothing changed. Files of
        a new generation are checked by size (their writer checksummed them)."""
        return self._live.refresh()

    def follow_in_background(self) -> None:
        """From now on a call that finds a newer generation answers from the served one
        while a thread of its own reads the newer from disk (a server: no query waits
        the second that takes at 85k papers); by default each call reads it first."""
        self._live.background = True

    def close(self) -> None:
        """Let go of the index (its lease, files and connections); twice is harmless."""
        self._live.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def encoder(self) -> Encoder:
        """The encoder of the served generation's queries (resolved anew after a rebuild
        with another model); `encoder.encode_queries` gives the vectors `search` ranks by."""
        model = self._live.manifest().model
        if self._encoder is None or self._encoder[0] != model:
            requested, backend, query_prompt = self._requested
            self._encoder = (model, index_encoder(model, self._directory.path,
                                                  model=requested, backend=backend,
                                                  query_prompt=query_prompt,
                                                  cache_dir=self._cache_dir, cache=self._cache))
        return self._encoder[1]

    def snapshot(self) -> AbstractContextManager[View]:
        """The newest generation, held for a `with` block: one consistent state to read
        (`keys`, `vectors`, `papers`, `words`, ...). Every method of the engine reads one."""
        return self._live.reading()

    def __len__(self) -> int:
        return self._live.manifest().count

    def __contains__(self, paper_id: object) -> bool:
        return isinstance(paper_id, str) and bool(self._live.keys_of([paper_id]))

    @property
    def path(self) -> Path:
        """The index directory."""
        return self._directory.path

    def info(self) -> IndexInfo:
        """What this index holds and how it was built."""
        return describe(self._directory, self._live.manifest())

    def get(self, paper_id: str) -> Paper:
        """The paper with id `paper_id`.

        Raises:
            PaperNotFoundError: the index has no such paper.
        """
        with self.snapshot() as view:  # a write swaps the store; never read a closed one
            key = int(known_keys(view, [paper_id], self.path)[0])
            return view.papers([key])[key]

    def passages(self, paper_id: str) -> list[Passage]:
        """The passages of the paper `paper_id`, in order, each with its page and
        section: what an assistant quotes and cites. [] for a paper known by its abstract.

        Raises:
            PaperNotFoundError: the index has no such paper.
        """
        with self.snapshot() as view:
            return view.paper_passages(int(known_keys(view, [paper_id], self.path)[0]))

    def file_of(self, paper_id: str) -> str:
        """The file the paper `paper_id` was read in full from (a PDF's path), "" when
        it was not; what the server opens at a passage's page.

        Raises:
            PaperNotFoundError: the index has no such paper.
        """
        with self.snapshot() as view:
            key = int(known_keys(view, [paper_id], self.path)[0])
            return view.files([key]).get(key, "")

    def get_many(self, paper_ids: Iterable[str]) -> dict[str, Paper]:
        """The papers of `paper_ids` that the index holds, by id (one read, however many;
        an id it lacks is simply absent)."""
        with self.snapshot() as view:
            keys = view.keys_of(paper_ids)
            found = view.papers(list(keys.values()))
            return {paper_id: found[key] for paper_id, key in keys.items() if key in found}

    def get_papers(self, paper_ids: Iterable[str]) -> dict[str, Paper]:
        """Deprecated: `get_many`, its new name."""
        warnings.warn("SearchEngine.get_papers is now get_many", DeprecationWarning, 2)
        return self.get_many(paper_ids)

    def count(self, filters: Filters | None = None) -> int:
        """How many papers the index holds that `filters` admit (all, without)."""
        with self.snapshot() as view:
            return view.count(filters) if filters else len(view)

    def added(self, paper_ids: Iterable[str]) -> dict[str, str]:
        """When the index received each of `paper_ids` it holds: an instant (UTC, ISO
        8601, see `dates`), or '' for a paper written before indexes kept dates."""
        with self.snapshot() as view:
            keys = view.keys_of(paper_ids)
            when = view.added(keys.values())
            return {paper_id: when.get(key, "") for paper_id, key in keys.items()}

    @property
    def watches(self) -> WatchList:
        """The saved searches kept with this index (`watching`), for digests."""
        return WatchList(self._directory.path)

    def corpus_map(self) -> CorpusMap | None:
        """The 2D map stored with the index as it is now, or None if there is none yet; a
        map computed from other data (before an add or remove) is never returned."""
        with self.snapshot() as view:
            return self._maps.current(self._directory, view.manifest)

    def compute_map(self, *, wait: float | None = DEFAULT_WAIT) -> CorpusMap | None:
        """Compute the map and store it with the index (a new generation sharing the data
        files); None, storing nothing, if the index changed meanwhile. Minutes for large
        indexes; only the snapshot and the commit hold the lock, so queries go on."""
        return self._maps.compute(self._directory, self.snapshot, wait=wait)

    def map_papers(self, corpus_map: CorpusMap) -> list[Paper]:
        """The papers of `corpus_map`'s points, in point order (it must be current)."""
        with self._live.reading(follow=False) as view:  # the generation the map was of
            papers = view.papers(corpus_map.keys)
        return [papers[int(key)] for key in corpus_map.keys]

    def check(self, *, deep: bool = False, sample: int = DRIFT_SAMPLE, repair: bool = False,
              wait: float | None = DEFAULT_WAIT) -> CheckReport:
        """Whether the index is whole (`checking`): every file's checksum, its parts
        agreeing on its papers, nothing left by a dead writer. `deep` also re-encodes
        `sample` stored papers (0: all) with the model and runtime installed now and
        reports their drift; `repair` fixes what it can through the writers' lock."""
        return check_index(self._directory, self.snapshot,
                           lambda update: self._live.write(update, wait=wait), deep=deep,
                           sample=sample, repair=repair, wait=wait, cache_dir=self._cache_dir)

    def backup(self, dest: str | os.PathLike[str]) -> IndexInfo:
        """A verified copy of the current generation in the new folder `dest`, an index
        that opens as it is; taken under a reader's lease, so writes go on meanwhile."""
        return describe(IndexDirectory(dest), backup_index(self._directory.path, dest))

    def add(self, papers: Iterable[Paper | Mapping[str, Any]], *, progress: bool = False,
            wait: float | None = DEFAULT_WAIT, executor: Executor | None = None,
            allow_title_only: bool = False) -> int:
        """Encode and add the papers whose ids are new.

        Papers already in the index (by id) are left as they are and not re-encoded, so
        adding a grown export again adds only its new papers. They are encoded before
        the writers' lock is taken, then added to the newest generation (skipping any
        that another process added meanwhile); readers see all of them or none.

        Args:
            papers: as for `build`.
            progress: show progress bars on stderr.
            wait: seconds to wait for another writer (None: no limit).
            executor: as for `build`.
            allow_title_only: as for `build`.

        Returns:
            How many papers were added.

        Raises:
            InputError: as for `build`.
            IndexBusyError: another process kept writing for longer than `wait`.
        """
        return add_papers(self._live, papers_from_records(papers), lambda: self.encoder,
                          allow_title_only=allow_title_only, progress=progress, wait=wait,
                          executor=executor)

    def add_files(self, paths: Iterable[str | os.PathLike[str]], *, format: str | None = None,
                  progress: bool = False, wait: float | None = DEFAULT_WAIT,
                  executor: Executor | None = None, allow_title_only: bool = False) -> int:
        """`add` the papers of `paths` (any input format; `format` forces one).

        Raises:
            InputError: a file cannot be read; the message names the file, line and
                field. Nothing is added then.
        """
        papers = read_papers([Path(p) for p in paths], format, title_only=allow_title_only)
        return self.add(papers, progress=progress, wait=wait, executor=executor,
                        allow_title_only=allow_title_only)

    def remove(self, paper_ids: Iterable[str], *, wait: float | None = DEFAULT_WAIT) -> int:
        """Remove papers by id: all of them, or none if one is unknown.

        Args:
            paper_ids: ids of papers in the index.
            wait: seconds to wait for another writer (None: no limit).

        Returns:
            How many papers were removed.

        Raises:
            PaperNotFoundError: an id the index lacks (nothing is removed).
            IndexBusyError: another process kept writing for longer than `wait`.
        """
        return self._live.remove(list(paper_ids), wait=wait)

    def sync(self, source: SyncSource, *, dry_run: bool = False,
             allow_title_only: bool = False, progress: bool = False,
             wait: float | None = DEFAULT_WAIT, executor: Executor | None = None
             ) -> SyncReport:
        """Bring the index's papers from `source` (a `ZoteroLibrary`) in step with it:
        add its new papers, re-write its changed ones, remove those it no longer has.

        Papers of other sources are left alone; unchanged ones are not written, and a
        changed one is encoded again only if its encoded text changed (otherwise its
        stored vector is kept).
        Changes are written in one generation, so readers see the index before or
        after, never between; running it again at once changes nothing.

        Args:
            source: what to mirror, e.g. `ZoteroLibrary(collection="Thesis")`.
            dry_run: say what would change, changing nothing.
            allow_title_only: index papers without an abstract on their titles.
            progress: show progress bars on stderr.
            wait: seconds to wait for another writer (None: no limit).
            executor: as for `build`.

        Returns:
            The ids added, updated and removed, and how many were unchanged.

        Raises:
            InputError: the source cannot be read (nothing changed then).
            IndexBusyError: another process kept writing for longer than `wait`.
        """
        return sync_index(self._live, source, lambda: self.encoder, dry_run=dry_run,
                          allow_title_only=allow_title_only, progress=progress, wait=wait,
                          executor=executor)

    def compact(self, *, wait: float | None = DEFAULT_WAIT) -> bool:
        """Merge the index's segments into one, dropping removed papers for good.

        Writes merge segments as they go (see the architecture page), so this is never
        needed for correctness; it gives the fastest queries and the smallest files,
        before a backup or after removing many papers, at the cost of rewriting the
        whole index once. Readers go on meanwhile and switch when it is published.

        Args:
            wait: seconds to wait for another writer (None: no limit).

        Returns:
            Whether anything was rewritten (False: one segment already, nothing removed,
            or a storage that compacts itself, such as Milvus).

        Raises:
            IndexBusyError: another process kept writing for longer than `wait`.
        """
        return self._live.compact(wait=wait)
