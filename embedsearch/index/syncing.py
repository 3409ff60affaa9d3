"""Keeping an index in step with a source it mirrors (a Zotero library): what changed.

A source says which of the index's papers are its own (`owns`: a Zotero library's
ids start with `zotero:`), lists its papers as they are now, cheaply, and completes
the ones about to be written with what is costly to read (an abstract from a PDF).
Comparing the two gives the plan: papers to add, papers changed (removed and added in
the same generation, so a reader never misses them), papers gone. A paper is changed
when any field differs; one without an abstract matches a stored one that has one
and is otherwise equal (its abstract came from its PDF), so a sync does not read every
PDF again. Nothing unchanged is written, and a changed paper whose encoded text is
the same (a new tag, a corrected year) keeps its stored vector: only new text is
encoded. A stored paper written without an entry type and bibliographic fields (before
the Zotero reader kept them) is not changed by those alone.

A paper read in full carries the stamp of its file (`Paper.file_stamp`: which
attachment, its size and modification time): a changed stamp is a changed paper, whose
file is read again; a paper changed otherwise (a new tag) whose stamp is the stored one
is not read again at all: its passages and file are taken from the index
(`carry_full_text`), and only its passages' vectors encoded again (they hold its title).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ..encoding import Encoder, Executor
from ..papers import Paper, embedding_text
from ..readers.base import SourceState
from ..storage import View
from ..storage.directory import DEFAULT_WAIT
from .live import LiveIndex
from .writing import encode_papers, encode_passages

__all__ = ["SourceState", "SyncPlan", "SyncReport", "SyncSource", "carry_full_text",
           "plan_sync", "same", "same_file", "stored_vectors", "sync_index"]


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
        verbs = ("would add", "update", "remove") if self.dry_run else \
            ("added", "updated", "removed")
        line = (f"{verbs[0]} {len(self.added)}, {verbs[1]} {len(self.updated)}, "
                f"{verbs[2]} {len(self.removed)}, unchanged {self.unchanged}")
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
    if not stored.entry_type and not stored.bib_fields:
        # Written before the reader kept item types and bibliographic fields: those
        # alone are no change, or the first sync after an upgrade would rewrite every
        # paper (and a digest would list them all as new). They come with its next one.
        incoming = dataclasses.replace(incoming, entry_type="", bib_fields=())
    return incoming == stored


def same_file(incoming: Paper, stored: Paper | None) -> bool:
    """Whether `incoming` is read in full from the very file `stored` was (its stamp)."""
    return stored is not None and bool(incoming.file_stamp) \
        and incoming.file_stamp == stored.file_stamp


def plan_sync(source: SourceState, stored: Mapping[str, Paper], *,
              allow_title_only: bool = False,
              carry: Callable[[Sequence[Paper]], list[Paper]] | None = None) -> SyncPlan:
    """What brings `stored` (the index's papers the source owns, by id) in step with
    the source's papers now; `source.complete` fills in those to write, and `carry`
    (when given) those whose file is the one the index read (`same_file`), from the
    index, so that their files are not read again."""
    now = {paper.id: paper for paper in source.papers}
    unchanged = [pid for pid, paper in now.items()
                 if pid in stored and same(paper, stored[pid])]
    changed = [p for pid, p in now.items() if pid not in stored or not same(p, stored[pid])]
    kept = {p.id for p in changed if carry is not None and same_file(p, stored.get(p.id))}
    filled = {p.id: p for p in source.complete([p for p in changed if p.id not in kept])}
    if kept and carry is not None:
        filled.update((p.id, p) for p in carry([p for p in changed if p.id in kept]))
    written = [filled[p.id] for p in changed]
    title_only = [p.id for p in written if p.title_only and not allow_title_only]
    written = [p for p in written if not p.title_only or allow_title_only]
    gone = [pid for pid in stored if pid not in now or pid in title_only]
    return SyncPlan(add=[p for p in written if p.id not in stored],
                    update=[p for p in written if p.id in stored],
                    remove=gone, unchanged=len(unchanged),
                    title_only=[pid for pid in title_only if pid not in stored])


def carry_full_text(view: View, papers: Sequence[Paper], stored: Mapping[str, Paper]
                    ) -> list[Paper]:
    """`papers` (changed, their files not) completed from the index `view`: each with
    the passages and file stored for it, and the stored abstract when it has none (one
    its file gave)."""
    keys = view.keys_of([paper.id for paper in papers])
    files = view.files(keys.values())
    done = []
    for paper in papers:
        old = stored[paper.id]
        if not paper.abstract and old.abstract:
            paper = dataclasses.replace(paper, abstract=old.abstract,
                                        title_derived=old.title_derived)
        key = keys.get(paper.id)
        if key is not None:
            paper = dataclasses.replace(paper, passages=tuple(view.paper_passages(key)),
                                        file=files.get(key, ""))
        done.append(paper)
    return done


def stored_vectors(view: View, updates: Sequence[Paper], stored: Mapping[str, Paper]
                   ) -> dict[str, NDArray[np.float32]]:
    """The stored vector of each of `updates` whose encoded text is what `view` holds
    for it (its metadata changed, not its text): those need no encoding."""
    fields = view.manifest.text.fields
    same_text = [paper.id for paper in updates
                 if embedding_text(paper, fields) == embedding_text(stored[paper.id], fields)]
    keys = view.keys_of(same_text)
    held = [paper_id for paper_id in same_text if paper_id in keys]
    if not held:
        return {}
    vectors = view.vectors(np.array([keys[paper_id] for paper_id in held], dtype=np.int64))
    return dict(zip(held, vectors))


def sync_index(live: LiveIndex, source: SyncSource, encoder: Callable[[], Encoder], *,
               dry_run: bool = False, allow_title_only: bool = False, progress: bool = False,
               wait: float | None = DEFAULT_WAIT, executor: Executor | None = None
               ) -> SyncReport:
    """`SearchEngine.sync`: plan on the newest generation, encode only the new texts
    (before the writers' lock), then write every change in one generation
    (`LiveIndex.replace`)."""
    state = source.sync_state()
    with live.reading() as view:
        stored = {paper.id: paper for paper in view.papers(view.keys()).values()
                  if state.owns(paper.id)}
        plan = plan_sync(state, stored, allow_title_only=allow_title_only,
                         carry=lambda papers: carry_full_text(view, papers, stored))
        kept = stored_vectors(view, plan.update, stored)
    report = plan.report(dry_run=dry_run)
    if dry_run or not report.changed:
        return report
    manifest, made = live.manifest(), encoder()
    written = plan.add + plan.update
    fresh = [paper for paper in written if paper.id not in kept]
    encoded = iter(encode_papers(made, manifest, fresh, progress=progress, executor=executor)
                   if fresh else [])
    vectors = np.array([kept[p.id] if p.id in kept else next(encoded) for p in written],
                       dtype=np.float32).reshape(len(written), made.dim)
    removed = plan.remove + [paper.id for paper in plan.update]
    passages = encode_passages(made, written, progress=progress, executor=executor)
    live.replace(manifest, removed, written, vectors, wait=wait, passage_vectors=passages)
    return report
