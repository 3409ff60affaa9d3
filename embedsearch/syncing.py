"""Keeping an index in step with a source it mirrors (a Zotero library): what changed.

A source says which of the index's papers are its own (`owns`: a Zotero library's
ids start with `zotero:`), lists its papers as they are now, cheaply, and completes
the ones about to be written with what is costly to read (an abstract from a PDF).
Comparing the two gives the plan: papers to add, papers changed (removed and added in
the same generation, so a reader never misses them), papers gone. A paper is changed
when any field differs; one without an abstract matches a stored one that has one
and is otherwise equal (its abstract came from its PDF), so a sync does not read every
PDF again. Nothing unchanged is written, and the embedding cache keeps what is written
with unchanged text from being encoded again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .papers import Paper

__all__ = ["SourceState", "SyncPlan", "SyncReport", "SyncSource", "plan_sync", "same"]


@dataclass(frozen=True)
class SourceState:
    """A source as it is now: its papers without what is costly to read, which of the
    index's papers are its own, and how to complete papers about to be written."""

    papers: list[Paper]
    owns: Callable[[str], bool]
    complete: Callable[[Sequence[Paper]], list[Paper]] = list


class SyncSource(Protocol):
    """What an index can be kept in step with (`SearchEngine.sync`)."""

    def sync_state(self) -> SourceState:
        """The source as it is now (one consistent snapshot of it)."""
        ...


@dataclass(frozen=True)
class SyncReport:
    """What a sync did, or would do (`dry_run`): ids added, updated and removed, how
    many were unchanged, and the title-only ones left out (`allow_title_only` off)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    title_only: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)

    def summary(self) -> str:
        """One line: "added 3, updated 1, removed 2, unchanged 812"."""
        verb = "would add" if self.dry_run else "added"
        line = (f"{verb} {len(self.added)}, updated {len(self.updated)}, removed "
                f"{len(self.removed)}, unchanged {self.unchanged}")
        if self.title_only:
            line += (f"; {len(self.title_only)} without an abstract left out "
                     "(--allow-title-only indexes them on their titles)")
        return line


@dataclass(frozen=True)
class SyncPlan:
    """The papers to write (new ones, then changed ones) and the ids to remove first."""

    add: list[Paper]
    update: list[Paper]
    remove: list[str]
    unchanged: int
    title_only: list[str]

    def report(self, *, dry_run: bool) -> SyncReport:
        return SyncReport([p.id for p in self.add], [p.id for p in self.update],
                          list(self.remove), self.unchanged, list(self.title_only), dry_run)


def same(incoming: Paper, stored: Paper) -> bool:
    """Whether `stored` is `incoming` as it was written; an incoming paper without an
    abstract matches a stored one whose abstract came from elsewhere (its PDF)."""
    if not incoming.abstract and stored.abstract:
        incoming = dataclasses.replace(incoming, abstract=stored.abstract,
                                       title_derived=stored.title_derived)
    return incoming == stored


def plan_sync(source: SourceState, stored: Mapping[str, Paper], *,
              allow_title_only: bool = False) -> SyncPlan:
    """What brings `stored` (the index's papers the source owns, by id) in step with
    the source's papers now; `source.complete` fills in those to write."""
    now = {paper.id: paper for paper in source.papers}
    unchanged = [pid for pid, paper in now.items()
                 if pid in stored and same(paper, stored[pid])]
    written = source.complete([p for pid, p in now.items()
                               if pid not in stored or not same(p, stored[pid])])
    title_only = [p.id for p in written if p.title_only and not allow_title_only]
    written = [p for p in written if not p.title_only or allow_title_only]
    gone = [pid for pid in stored if pid not in now or pid in title_only]
    return SyncPlan(add=[p for p in written if p.id not in stored],
                    update=[p for p in written if p.id in stored],
                    remove=gone, unchanged=len(unchanged),
                    title_only=[pid for pid in title_only if pid not in stored])
