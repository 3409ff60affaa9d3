"""Merges: which segments a write merges (the tiered policy), and writing the merge.

Every `add` writes a segment of its own, so without merges their number would grow with
every write and each query would search them all. After each write the policy may pick
segments to merge into one; the merge is part of the same commit, so a crash leaves the
generation before it whole, and readers keep the segments they hold until their lease
ends.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..records import SegmentRecord
from .fulltext import merged_batch
from .lexical import Postings
from .paper_store import STORE_FILE, PaperStore
from .segment import Segment, write_segment
from .vectors import VectorIndex

__all__ = ["MergePolicy", "merge_disk_shortfall", "merge_segments", "plan_merge", "tier_of"]


@dataclass(frozen=True)
class MergePolicy:
    """Tiered merging, as Lucene's TieredMergePolicy: segments of similar size merge.

    A segment's tier is 0 below `floor` live papers, then one more for each factor of
    `segments_per_tier` above it: tier 1 is [floor, 10 x floor), tier 2 [10 x floor,
    100 x floor), ... When a tier holds `segments_per_tier` segments, its smallest ones
    merge, and the result lands in the tier above (it is at least ten times the tier's
    lower bound). So a paper is rewritten at most once per tier it climbs: about
    log10(N / floor) + 1 times over its life (4 at 80k papers, 6 at 10M), while an index
    holds at most segments_per_tier - 1 segments a tier: fewer than 10 x tiers (36 at
    80k papers, 54 at 10M; a few in practice), each searched per query.

    Segments below the floor all count as one tier, as Lucene's floorSegmentMB makes
    them: without it every single-paper add would make a tier climb of its own. The
    price is paid in tier 0 only: a segment growing there is rewritten with each ten
    small writes until it reaches the floor, at most `floor` papers (about 400 KB) a
    time, so single-paper adds cost about floor / 9 rewritten papers each.

    A segment with more than `max_deleted_share` of its papers removed is rewritten
    alone (Lucene's deletesPctAllowed): removed papers would otherwise cost memory and
    search time for ever; rewriting only then costs each removed paper at most
    1 / share rewrites.
    """

    segments_per_tier: int = 10
    floor: int = 100
    max_deleted_share: float = 0.25
    #: Bytes a merge leaves free on the index's disk beyond the segment it writes.
    disk_reserve: int = 64 * 2**20


def merge_disk_shortfall(folders: Sequence[Path], policy: MergePolicy) -> tuple[int, int]:
    """(bytes needed, bytes free) on the disk of `folders` (the segments to merge) when a
    merge of them lacks room, else (0, 0). A merge writes one new segment no larger than
    the merged ones together (removed papers are dropped), and the merged ones are
    deleted only once it is written: it needs their size again, plus the reserve."""
    needed = sum(file.stat().st_size for folder in folders for file in folder.rglob("*")
                 if file.is_file()) + policy.disk_reserve
    free = shutil.disk_usage(folders[0]).free if folders else needed
    return (needed, free) if free < needed else (0, 0)


def tier_of(live: int, policy: MergePolicy) -> int:
    """The tier of a segment of `live` papers (see `MergePolicy`)."""
    if live < policy.floor:
        return 0
    return 1 + int(math.floor(math.log(live / policy.floor, policy.segments_per_tier) + 1e-9))


def plan_merge(records: Sequence[SegmentRecord], policy: MergePolicy) -> list[str] | None:
    """The names of the segments to merge next into one, or None when none need to."""
    for record in records:
        if record.deleted and record.deleted > policy.max_deleted_share * record.count:
            return [record.name]
    tiers: dict[int, list[SegmentRecord]] = {}
    for record in records:
        tiers.setdefault(tier_of(record.live, policy), []).append(record)
    for _, members in sorted(tiers.items()):
        if len(members) >= policy.segments_per_tier:
            smallest = sorted(members, key=lambda record: record.live)
            return [record.name for record in smallest[:policy.segments_per_tier]]
    return None


def merge_segments(folder: Path, name: str,
                   parts: Sequence[tuple[Segment, NDArray[np.int64]]],
                   index_for: Callable[[int], VectorIndex],
                   passage_index_for: Callable[[int], VectorIndex],
                   replaced: tuple[NDArray[np.int64], NDArray[np.float32]] | None = None
                   ) -> SegmentRecord:
    """Write the live papers of `parts` (each a segment and its deleted keys) as the new
    segment `name` in `folder`, in key order, its vector index `index_for(count)` (and
    its passages' `passage_index_for(count)`); with `replaced` (keys, vectors), those
    keys' vectors are stored in place of theirs."""
    parts = sorted(parts, key=lambda part: int(part[0].keys()[0]) if len(part[0].keys()) else 0)
    masks = [segment.live(deleted) for segment, deleted in parts]
    live = [segment.keys() if mask is None else segment.keys()[mask]
            for (segment, _), mask in zip(parts, masks)]
    keys = np.concatenate(live) if live else np.zeros(0, np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = np.array_equal(order, np.arange(len(order)))  # parts whose keys interleave not
    keys = keys if ordered else keys[order]
    vectors = np.concatenate([segment.vectors.reconstruct(held)
                              for (segment, _), held in zip(parts, live)])
    vectors = vectors if ordered else vectors[order]
    if replaced is not None:
        at = np.searchsorted(keys, replaced[0])
        vectors[at] = replaced[1]

    def papers(store: PaperStore) -> None:
        for segment, deleted in parts:
            store.copy_papers(folder / segment.name / STORE_FILE, deleted)

    lexical = Postings.merged([(segment.lexical, mask)
                                   for (segment, _), mask in zip(parts, masks)])
    dim = vectors.shape[1]
    batch = merged_batch([(segment.full_text, deleted) for segment, deleted in parts], dim)
    full_text = (batch, passage_index_for(len(batch.keys))) if batch else None
    return write_segment(folder / name, name, keys, papers, vectors, lexical,
                         index_for(len(keys)), full_text)
