"""A view of one local generation: its segments, each with the keys removed from it.

Every search runs per segment and the results are merged: dense top-k per segment,
merged by score (ties by key), as one index of the same papers would rank them; BM25
with statistics summed over all segments (`LexicalSearch`). Deleted papers are never
returned: their keys are excluded from every segment's search.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from ...filters import Filters
from ...papers import Paper, Passage, normalise_title
from ..base import PassageRanked, Ranked, View, WordStatistics
from ..directory import Lease, Manifest
from ..keys import find_keys
from ..records import SegmentRecord
from .additions import added_at, first_key_after
from .fulltext import full_text_problems, owners
from .lexical_search import LexicalSearch
from .passage_search import PassageSearch
from .segment import Segment
from .vectors.base import Allowed

__all__ = ["LocalView"]


#: Filters whose admitted keys a view keeps (about 11 MB each for a filter admitting
#: 1M of 2.5M papers).
_SELECTIONS = 4


class _Selection:
    """What one filter admits in a view: each segment's live keys (`Allowed`, which keeps
    what the vector indexes derive from them) and, made at the first lexical query,
    their rows in the view's lexical search."""

    def __init__(self, keys: list[Allowed]) -> None:
        self.keys = keys
        self._rows: NDArray[np.bool_] | None = None

    def rows(self, search: LexicalSearch) -> NDArray[np.bool_]:
        if self._rows is None:
            keys = [subset.keys for subset in self.keys]
            self._rows = search.mask(np.concatenate(keys) if keys else np.zeros(0, np.int64))
        return self._rows


class LocalView(View):
    """One generation's segments (shared with other views of the same index), each with
    its deleted keys; `release` hands each segment back when the view is closed."""

    def __init__(self, manifest: Manifest, segments: Sequence[tuple[Segment, NDArray[np.int64]]],
                 lease: Lease, release: Callable[[Segment], None]) -> None:
        self.manifest, self.lease, self._release = manifest, lease, release
        self.segments = [segment for segment, _ in segments]
        self._deleted = [deleted for _, deleted in segments]
        self._live = [segment.live(deleted) for segment, deleted in segments]
        #: BM25 over every segment, the statistics those of the live papers.
        self.lexical_search = LexicalSearch([(s.lexical, live)
                                            for s, live in zip(self.segments, self._live)])
        # Passages only where a paper was read in full: an index of abstracts alone
        # ranks exactly as before full text existed.
        self._passages = (PassageSearch(self.segments, self._deleted, self.lexical_search)
                          if any(s.full_text is not None for s in self.segments) else None)
        self._count = sum(len(s.vectors) - len(d) for s, d in segments)
        self._keys: NDArray[np.int64] | None = None
        self._selections: dict[Filters, _Selection] = {}
        self._selecting = threading.Lock()
        self._titles: dict[str, int] | None = None

    def __len__(self) -> int:
        return self._count

    def _live_keys(self, at: int) -> NDArray[np.int64]:
        live = self._live[at]
        keys = self.segments[at].keys()
        return keys if live is None else keys[live]

    def keys(self) -> NDArray[np.int64]:
        if self._keys is None:
            parts = [self._live_keys(at) for at in range(len(self.segments))]
            self._keys = np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
        return self._keys

    def _held(self, at: int, keys: Iterable[int]) -> list[int]:
        """Those of `keys` (of segment `at`) that it has not deleted."""
        wanted = np.fromiter(keys, dtype=np.int64)
        deleted = self._deleted[at]
        held: list[int] = (wanted[np.isin(wanted, deleted, invert=True)] if len(deleted)
                           else wanted).tolist()
        return held

    def keys_of(self, ids: Iterable[str]) -> dict[str, int]:
        wanted, found = list(ids), {}
        for at, segment in enumerate(self.segments):
            pairs = segment.store.keys_of(wanted)
            live = set(self._held(at, pairs.values()))
            found.update({paper_id: key for paper_id, key in pairs.items() if key in live})
        return found

    def keys_by_title(self, titles: Iterable[str]) -> dict[str, int]:
        # All titles normalised once per generation: 0.6 s at 79.5k papers, then a dict.
        if self._titles is None:
            pairs = []
            for at, segment in enumerate(self.segments):
                titled = dict(segment.store.titles())
                pairs += [(key, titled[key]) for key in self._held(at, titled)]
            found: dict[str, int] = {}
            for key, title in sorted(pairs):
                found.setdefault(normalise_title(title), key)  # a shared title: the oldest
            found.pop("", None)
            self._titles = found
        return {title: self._titles[title] for title in titles if title in self._titles}

    def keys_by_identifier(self, kind: str, values: Iterable[str]) -> dict[str, int]:
        wanted, pairs = list(values), []
        for at, segment in enumerate(self.segments):
            found = segment.store.keys_by_identifier(kind, wanted)
            live = set(self._held(at, [key for _, key in found]))
            pairs += [(key, value) for value, key in found if key in live]
        oldest: dict[str, int] = {}
        for key, value in sorted(pairs):
            oldest.setdefault(value, key)
        return oldest

    def _where(self, keys: NDArray[np.int64]) -> list[NDArray[np.intp]]:
        """For each segment, the positions in `keys` of the keys it holds."""
        found = []
        for segment in self.segments:
            found.append(np.flatnonzero(find_keys(segment.keys(), keys)[1]))
        return found

    def papers(self, keys: Iterable[int]) -> dict[int, Paper]:
        wanted = np.array(list(keys), dtype=np.int64)
        found: dict[int, Paper] = {}
        for at, positions in enumerate(self._where(wanted)):
            held = self._held(at, (int(key) for key in wanted[positions]))
            found.update(self.segments[at].store.papers(held))
        return found

    def vectors(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        keys = np.asarray(keys, dtype=np.int64)
        out = np.zeros((len(keys), self.manifest.model.dim), np.float32)
        for segment, positions in zip(self.segments, self._where(keys)):
            if len(positions):
                out[positions] = segment.vectors.reconstruct(keys[positions])
        return out

    def count(self, filters: Filters) -> int:
        allowed = self._allowed_keys(filters)
        return len(self) if allowed is None else sum(len(keys) for keys in allowed)

    def added(self, keys: Iterable[int]) -> dict[int, str]:
        wanted = np.asarray(list(keys), dtype=np.int64)
        held = [int(key) for key in wanted[np.isin(wanted, self.keys())]]
        return dict(zip(held, added_at(self.manifest.local.additions, held)))

    def _allowed_keys(self, filters: Filters | None) -> list[Allowed] | None:
        """Per segment, the live keys `filters` admits; remembered for the last few
        filters, as a batch of queries or a server's users share them."""
        selection = self._selection(filters)
        return None if selection is None else selection.keys

    def _selection(self, filters: Filters | None) -> _Selection | None:
        if not filters:
            return None
        with self._selecting:  # a server's threads share the view
            return self._selected(filters)

    def _selected(self, filters: Filters) -> _Selection:
        if filters not in self._selections:
            since = self._first_key(filters)
            allowed = [Allowed(np.zeros(0, np.int64) if since is not None and
                               segment.keys()[-1:].max(initial=0) < since  # all of it older
                               else np.setdiff1d(segment.store.filter_keys(filters,
                                                                           min_key=since),
                                                 deleted))
                       for segment, deleted in zip(self.segments, self._deleted)]
            while len(self._selections) >= _SELECTIONS:
                del self._selections[next(iter(self._selections))]
            self._selections[filters] = _Selection(allowed)
        return self._selections[filters]

    def _first_key(self, filters: Filters) -> int | None:
        """The first key `filters.added_after` admits (keys are dated by the write that
        handed them out); past every key when nothing was added since."""
        if filters.added_after is None:
            return None
        first = first_key_after(self.manifest.local.additions, filters.added_after)
        return self.manifest.local.next_key if first is None else first

    def dense(self, vector: NDArray[np.float32], depth: int, filters: Filters | None,
              exclude: NDArray[np.int64]) -> Ranked:
        allowed = self._allowed_keys(filters)
        scores, keys = [], []
        for at, segment in enumerate(self.segments):
            subset = None if allowed is None else allowed[at]
            if subset is not None and not len(subset):
                continue
            excluded = (np.union1d(exclude, self._deleted[at]) if len(self._deleted[at])
                        else exclude)
            found, held = segment.vectors.search(vector[None, :], depth, allowed=subset,
                                                 exclude=excluded)
            valid = held[0] >= 0
            scores.append(found[0][valid])
            keys.append(held[0][valid])
        if not keys:
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        merged_scores, merged_keys = np.concatenate(scores), np.concatenate(keys)
        order = np.lexsort((merged_keys, -merged_scores))[:depth]
        return merged_scores[order], merged_keys[order]

    def lexical(self, text: str, depth: int, filters: Filters | None,
                exclude: NDArray[np.int64]) -> Ranked:
        selection = self._selection(filters)
        search = self.lexical_search
        admitted = None if selection is None else selection.rows(search)
        return search.best(text, depth, admitted, exclude)

    def lexical_scores(self, text: str, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        return self.lexical_search.scores_at(text, keys)

    @property
    def words(self) -> WordStatistics:
        return self.lexical_search

    @property
    def has_passages(self) -> bool:
        return bool(self._passages)

    def passage_dense(self, vector: NDArray[np.float32], depth: int, filters: Filters | None,
                      exclude: NDArray[np.int64]) -> PassageRanked:
        if not self._passages:
            return super().passage_dense(vector, depth, filters, exclude)
        allowed = self._allowed_keys(filters)
        keys = None if allowed is None else [subset.keys for subset in allowed]
        return self._passages.dense(vector, depth, keys, exclude)

    def passage_lexical(self, text: str, depth: int, filters: Filters | None,
                        exclude: NDArray[np.int64]) -> PassageRanked:
        if not self._passages:
            return super().passage_lexical(text, depth, filters, exclude)
        allowed = self._allowed_keys(filters)
        admitted = None if allowed is None else np.concatenate([a.keys for a in allowed])
        return self._passages.lexical_ranked(text, depth, admitted, exclude)

    def passages(self, keys: Iterable[int]) -> dict[int, Passage]:
        wanted = np.fromiter(keys, dtype=np.int64)
        found: dict[int, Passage] = {}
        for at, positions in enumerate(self._where(owners(wanted))):
            text = self.segments[at].full_text
            if text is not None and len(positions):
                held = self._held(at, owners(wanted[positions]).tolist())
                chosen = wanted[positions][np.isin(owners(wanted[positions]), held)]
                found.update(text.store.passages(chosen.tolist()))
        return found

    def paper_passages(self, key: int) -> list[Passage]:
        for at, positions in enumerate(self._where(np.array([key], np.int64))):
            text = self.segments[at].full_text
            if len(positions) and text is not None and self._held(at, [key]):
                return [passage for _, passage in text.store.of_paper(key)]
        return []

    def files(self, keys: Iterable[int]) -> dict[int, str]:
        wanted = np.fromiter(keys, dtype=np.int64)
        found: dict[int, str] = {}
        for at, positions in enumerate(self._where(wanted)):
            text = self.segments[at].full_text
            if text is not None and len(positions):
                found.update(text.store.files(self._held(at, wanted[positions].tolist())))
        return found

    def check(self) -> list[str]:
        problems = []
        for segment, deleted, record in zip(self.segments, self._deleted,
                                            self.manifest.local.segments):
            problems += _segment_problems(segment, deleted, record)
        if len(self) != self.manifest.count:
            problems.append(f"the manifest counts {self.manifest.count} papers, the segments "
                            f"hold {len(self)}")
        return problems

    def close(self) -> None:
        for segment in self.segments:
            self._release(segment)
        self.segments = []
        self.lease.release()


def _segment_problems(segment: Segment, deleted: NDArray[np.int64],
                      record: SegmentRecord) -> list[str]:
    """What is wrong inside one segment: its parts disagree on its papers, its deletions
    name papers it lacks, the manifest's counts are off, its store is damaged."""
    problems = []
    stored, name = segment.store.keys(), f"segment {segment.name}"
    held = {"vector index": segment.vectors.keys(), "lexical index": segment.lexical.keys()}
    for part, keys in held.items():
        if not np.array_equal(np.sort(keys), stored):
            only, lacks = np.setdiff1d(keys, stored), np.setdiff1d(stored, keys)
            problems.append(f"{name}: the {part} holds {len(keys)} papers, the paper store "
                            f"{len(stored)}: {len(only)} only in the {part}, {len(lacks)} "
                            f"missing from it")
    strays = np.setdiff1d(deleted, stored)
    if len(strays):
        problems.append(f"{name}: {len(strays)} deleted keys are not in the segment")
    if (len(stored), len(deleted)) != (record.count, record.deleted):
        problems.append(f"{name}: the manifest counts {record.count} papers and "
                        f"{record.deleted} deleted, the segment holds {len(stored)} "
                        f"and {len(deleted)}")
    integrity = segment.store.integrity()
    if integrity != "ok":
        problems.append(f"{name}: the paper store is damaged: {integrity}")
    return problems + full_text_problems(segment.full_text, record.full_text, stored, name)
