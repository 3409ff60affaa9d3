"""Example papers that may lie outside the index: `SearchEngine.similar_to_papers`.

A reference list, a .bib file or a colleague's JSON lines name papers the index may or
may not hold. Each given paper is matched to the index by id, else by its normalised
title (case folded, punctuation and spaces collapsed, so "Attention Is All You Need."
and "attention is all you need" are one paper); a matched paper uses its stored vector
(no encoding, and it is never returned), and the others are encoded together in one
batch, as the index embedded its own papers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .papers import Paper, embedding_text, normalise_title
from .storage import View

__all__ = ["NEGATIVE_WEIGHT", "Examples", "example_text", "example_vector", "match_keys",
           "resolve_examples"]

#: How much the negative examples of `similar` pull away (Rocchio's gamma over beta).
NEGATIVE_WEIGHT = 0.5


def example_vector(positives: NDArray[np.float32],
                   negatives: NDArray[np.float32]) -> NDArray[np.float32]:
    """The direction of "like these, unlike those": the mean of the positive vectors
    minus NEGATIVE_WEIGHT times the mean of the negative ones (none: nothing taken)."""
    vector: NDArray[np.float32] = positives.mean(0)
    if len(negatives):
        vector = vector - NEGATIVE_WEIGHT * negatives.mean(0)
    return vector


def example_text(papers: Sequence[Paper]) -> str:
    """What the example papers say, for evidence: their titles and abstracts."""
    return " ".join(f"{paper.title} {paper.abstract}" for paper in papers)


@dataclass(frozen=True)
class Examples:
    """Given papers as vectors: one row per paper, and the index keys of those matched."""

    vectors: NDArray[np.float32]
    matched: NDArray[np.int64]


def match_keys(papers: Sequence[Paper], view: View) -> list[int | None]:
    """The index key of each paper (by id, else by normalised title), or None."""
    by_id = view.keys_of(paper.id for paper in papers)
    found: list[int | None] = [by_id.get(paper.id) for paper in papers]
    missing = [normalise_title(paper.title) for paper, key in zip(papers, found)
               if key is None]
    if missing:
        titles = view.keys_by_title(title for title in missing if title)
        found = [key if key is not None else titles.get(normalise_title(paper.title))
                 for paper, key in zip(papers, found)]
    return found


def resolve_examples(papers: Sequence[Paper], view: View,
                     encode: Callable[[list[str]], NDArray[np.float32]],
                     fields: Sequence[str]) -> Examples:
    """The vectors of `papers`: stored ones for papers the index holds, the rest encoded
    in one call of `encode` on their embedded text (`fields`, the index's own)."""
    keys = match_keys(papers, view)
    out = np.zeros((len(papers), int(view.manifest.model["dim"])), dtype=np.float32)
    known = [i for i, key in enumerate(keys) if key is not None]
    if known:
        out[known] = view.vectors(np.array([keys[i] for i in known], dtype=np.int64))
    new = [i for i, key in enumerate(keys) if key is None]
    if new:
        out[new] = encode([embedding_text(papers[i], fields) for i in new])
    matched = np.array(sorted({key for key in keys if key is not None}), dtype=np.int64)
    return Examples(out, matched)
