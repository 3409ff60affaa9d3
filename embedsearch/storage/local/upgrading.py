"""Bringing a local generation written before segments (format 1 or 2: one flat set of
files) into the segmented format, without rewriting what it can keep.

The flat files become the first segment as they are (hard links, checksums carried
over). The paper store is copied only when it lacks the doi and arxiv_id columns, and
a lexical index is built only for a format-1 index, which had none. Keys continue from
the highest the store ever handed out, so a removed paper's key is never reused.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..base import lexical_texts
from ..directory import IndexDirectory, Manifest, Staging
from ..records import SegmentRecord
from .lexical import LEXICAL_FILE, Postings
from .paper_store import STORE_FILE, PaperStore
from .segment import segment_name
from .vectors import index_files

__all__ = ["upgrade_flat"]


def upgrade_flat(directory: IndexDirectory, staging: Staging,
                 previous: Manifest) -> tuple[Manifest, list[str]]:
    """Stage `previous`'s flat files as the first segment of the generation `staging`;
    `previous` with that segment and the next key, and what it changed. (The rules of
    new segments were read from the flat index's entry: see `IndexRules.from_dict`.)"""
    files = directory.files_dir(previous)
    name = segment_name(staging.generation, 1)
    folder = staging.dir / name
    folder.mkdir()
    data = [STORE_FILE, *index_files(previous.index)]
    changes = ["the index's files as its first segment (format 3: segments)"]
    store = PaperStore.open(files / STORE_FILE)
    try:
        identifiers, keys, used = store.has_identifiers, store.keys(), store.used_keys()
    finally:
        store.close()
    if identifiers:
        directory.link_files(previous, staging, [STORE_FILE])
    else:  # opened for writing, the copy gains the columns
        changes.append("the paper store's doi and arxiv_id")
        (staging.dir / STORE_FILE).write_bytes((files / STORE_FILE).read_bytes())
        PaperStore.open(staging.dir / STORE_FILE, writable=True).close()
    if (files / LEXICAL_FILE).is_file():
        data.append(LEXICAL_FILE)
    else:
        changes.append("a lexical index (BM25) of the stored papers")
        _lexical(staging, previous, keys)
    directory.link_files(previous, staging, [n for n in data[1:] if n in previous.files])
    for moved in [*data, LEXICAL_FILE]:
        _move(staging, moved, f"{name}/{moved}")
    rest = [n for n in previous.files if n not in data and n != LEXICAL_FILE]
    directory.link_files(previous, staging, rest)  # beside the segment, as they were
    own = dataclasses.replace(previous.local, next_key=used + 1, segments=(
        SegmentRecord(name, len(keys), 0, previous.index),))
    return dataclasses.replace(previous, local=own), changes


def _lexical(staging: Staging, previous: Manifest, keys: np.ndarray) -> None:
    """Build the lexical index a format-1 index lacks, from its staged paper store."""
    store = PaperStore.open(staging.dir / STORE_FILE)
    try:
        papers = dict(store.iter_papers())
    finally:
        store.close()
    Postings.build(keys, lexical_texts([papers[int(k)] for k in keys], previous)
                       ).save(staging.dir)


def _move(staging: Staging, name: str, to: str) -> None:
    """Move the staged file `name` to `to`, its carried checksum with it."""
    if not (staging.dir / name).exists() or (staging.dir / to).exists():
        return
    (staging.dir / name).rename(staging.dir / to)
    if name in staging.carried:
        staging.carried[to] = staging.carried.pop(name)

