"""FAISS as this package uses it: typed as Any, plus the ID selector both backends need.

faiss ships stubs that lack most of its SWIG API (search parameters, selectors,
DirectMap); typing it as Any is more honest than a page of ignores.
"""

from __future__ import annotations

from typing import Any

import faiss as _faiss
import numpy as np
from numpy.typing import NDArray

__all__ = ["faiss", "id_selector"]

faiss: Any = _faiss


def id_selector(allowed: NDArray[np.int64] | None, exclude: NDArray[np.int64] | None) -> Any:
    """A FAISS IDSelector for the restriction, or None; it keeps its arrays alive."""
    if allowed is not None:
        selector = faiss.IDSelectorBatch(allowed)
        selector.keep = allowed
        return selector
    if exclude is not None and len(exclude):
        inner = faiss.IDSelectorBatch(exclude)
        selector = faiss.IDSelectorNot(inner)
        selector.keep = (inner, exclude)
        return selector
    return None
