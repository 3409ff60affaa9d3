"""Finding values in an ascending array: where each of a few keys (or rows) sits among a
segment's, and whether it is there. One binary search each; the idiom every lookup of
keys in a segment, of rows in a term's postings and of deleted keys uses."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["find_keys"]


def find_keys(held: NDArray[np.integer[Any]], keys: NDArray[np.integer[Any]]
              ) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """For each of `keys`, its position in `held` (ascending) and whether it is there (a
    binary search each: sorting `held` with them, as intersecting does, cost 23 ms a
    query at 100k keys)."""
    if not len(held):
        return np.zeros(len(keys), np.intp), np.zeros(len(keys), bool)
    at = np.searchsorted(held, keys).clip(0, len(held) - 1)
    return at, held[at] == keys
