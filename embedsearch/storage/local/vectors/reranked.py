"""Compressed indexes: codes in memory find candidates, re-ranked exactly from the file.

Two kinds. `hnsw-sq8`: an HNSW graph over 8-bit scalar-quantised vectors (one byte a
dimension). `ivfpq`: IVF lists of product-quantised codes (48 bytes a vector at m=48),
for corpora whose graph would not fit either. The full float32 vectors stay in a file,
mapped only while a search re-ranks its candidates, so a serving process holds the
codes and the graph, and the page cache (which the kernel may take back) the rest.

Measured on 300k dev-derived vectors (one thread, AMD EPYC, dev query texts): HNSW32
over SQ8 at efSearch 200, re-ranking the best 50, gave recall@10 0.992 against exact
in 0.44 ms, where HNSW32 over float32 gave 0.993 in 0.70 ms; 197 MB in memory against
542 MB. On 1M vectors plain IVF-PQ tops out near recall@10 0.62, and re-ranking 200
candidates reaches 0.96.
"""

from __future__ import annotations

import mmap
import shutil
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from ....errors import InputError
from ...exact import Ranked
from ...keys import find_keys
from .base import Allowed, VectorIndex, register_vector_index
from .faisslib import faiss, id_selector, label_selector, set_threads, training_sample, write_index
from .tuning import filtered_ef, hnsw_params, ivfpq_params, rerank_depth

__all__ = ["COMPRESSED_TYPES", "RerankedIndex"]

#: The index types this module makes.
COMPRESSED_TYPES = ("hnsw-sq8", "ivfpq")

_CODES_FILE = "codes.faiss"
_VECTORS_FILE = "vectors.npy"
_KEYS_FILE = "keys.npy"
#: 256 centroids per sub-quantiser, 39 training points each: FAISS's own minimum.
_MIN_TRAIN = 256 * 39


def _factory(kind: str, dim: int, count: int,
             overrides: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """(FAISS factory string, parameters) of a compressed index of `kind`."""
    if kind == "hnsw-sq8":
        params = {**hnsw_params(count), **(overrides or {})}
        return f"HNSW{params['M']},SQ8", params
    if count < _MIN_TRAIN:
        raise InputError(f"--index-type ivfpq: its codebooks need at least {_MIN_TRAIN} "
                         f"papers to train, this corpus has {count}; use flat or hnsw")
    params = {**ivfpq_params(count, dim), **(overrides or {})}
    # "np": no polysemous training, which FAISS's factory does by default for PQ. It
    # reorders codebooks so that Hamming distances between codes mean something, for
    # polysemous search, which we never run: it only made training 6x slower (44 s
    # against 7 s for 12,000 papers), the distances and hits are the same.
    return f"IVF{params['nlist']},PQ{params['m']}np", params


class _VectorFile:
    """A saved `.npy` of float32 rows, open for reading rows, each read mapped for its own
    call: a long-lived map would keep every page a search ever read in this process's
    resident memory. The file stays open, so a generation's removal (once a newer one
    is leased) does not take it from a reader still holding this segment."""

    def __init__(self, path: Path) -> None:
        self._file: BinaryIO = open(path, "rb")  # noqa: SIM115 - held for the index's life
        header = (np.lib.format.read_array_header_1_0
                  if np.lib.format.read_magic(self._file) == (1, 0)
                  else np.lib.format.read_array_header_2_0)
        shape, _, dtype = header(self._file)
        self._offset, self._shape, self._dtype = self._file.tell(), shape, dtype

    def rows(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        if not len(rows) or not self._shape[0]:
            return np.zeros((len(rows), self._shape[1]), np.float32)
        with mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = np.frombuffer(mapped, self._dtype, self._shape[0] * self._shape[1],
                                 self._offset).reshape(self._shape)
            found = np.array(view[rows], dtype=np.float32)
            del view  # the map closes only once nothing views it
        return found

    def copy(self, path: Path) -> None:
        """Write the file's bytes to `path` (a segment saved again: an upgrade's copy)."""
        self._file.seek(0)
        with open(path, "wb") as out:
            shutil.copyfileobj(self._file, out)


#: Codes scored at once by an exhaustive search of a subset (16,384 rows: 6 MB of codes).
_DECODE_BLOCK = 16_384


#: The widest filtered graph search before scoring every admitted code instead.
_MAX_EF = 4096


@register_vector_index("faiss-reranked")
class RerankedIndex(VectorIndex):
    """Compressed candidates re-ranked exactly; full vectors in a file, rows in key order.

    An HNSW graph labels vectors by row; IVF lists hold keys (as written before HNSW
    joined them here)."""

    FILES = (_CODES_FILE, _VECTORS_FILE, _KEYS_FILE)

    def __init__(self, dim: int, kind: str, params: dict[str, Any], index: Any,
                 vectors: NDArray[np.float32] | _VectorFile, keys: NDArray[np.int64]) -> None:
        super().__init__(dim, kind, params)
        self._index = index
        self._vectors = vectors  # held while it is made; loaded, read from its file
        self._keys = keys
        self._by_row = kind != "ivfpq"

    @classmethod
    def create(cls, dim: int, count: int, overrides: dict[str, Any] | None = None,
               kind: str = "ivfpq") -> RerankedIndex:
        """An empty index of `kind` (`COMPRESSED_TYPES`) sized for `count` vectors."""
        factory, params = _factory(kind, dim, count, overrides)
        index = faiss.index_factory(dim, factory, faiss.METRIC_INNER_PRODUCT)
        if kind == "hnsw-sq8":
            index.hnsw.efConstruction = int(params["efConstruction"])
        else:
            faiss.extract_index_ivf(index).set_direct_map_type(faiss.DirectMap.Hashtable)
        return cls(dim, kind, {"factory": factory, **params}, index,
                   np.zeros((0, dim), np.float32), np.zeros(0, np.int64))

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> NDArray[np.int64]:
        return self._keys

    def _rows(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        return np.searchsorted(self._keys, keys)

    def _held_rows(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        """The rows of those of `keys` this index holds."""
        at, hit = find_keys(self._keys, keys)
        return at[hit].astype(np.int64)

    def add(self, keys: NDArray[np.int64], vectors: NDArray[np.float32]) -> None:
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(self._keys) and len(keys) and keys.min() <= self._keys[-1]:
            raise ValueError("keys must grow: a new key is larger than every stored one")
        if isinstance(self._vectors, _VectorFile):
            raise ValueError("a saved compressed index is written once: merge to add")
        set_threads()
        if not self._index.is_trained:
            self._index.train(training_sample(vectors))
        if self._by_row:
            self._index.add(vectors)
        else:
            self._index.add_with_ids(vectors, keys)
        # A merge adds its million vectors at once: held as given, not copied again.
        self._vectors = (vectors if not len(self._vectors) else
                         np.concatenate([self._vectors, vectors]))
        self._keys = np.concatenate([self._keys, keys])

    def reconstruct(self, keys: NDArray[np.int64]) -> NDArray[np.float32]:
        rows = self._rows(np.asarray(keys, dtype=np.int64))
        if isinstance(self._vectors, _VectorFile):
            return self._vectors.rows(rows)
        return np.asarray(self._vectors[rows], dtype=np.float32)

    def _search(self, queries: NDArray[np.float32], k: int, allowed: Allowed | None,
                exclude: NDArray[np.int64] | None) -> Ranked:
        depth = rerank_depth(self.kind, k, self.params)
        set_threads(len(queries))
        labels = self._search_codes(queries, depth, allowed, exclude)
        return self._reranked(queries, k, [found[found >= 0] for found in labels])

    def _reranked(self, queries: NDArray[np.float32], k: int,
                  labels: list[NDArray[np.int64]]) -> Ranked:
        """Each query's best `k` of its candidate `labels`, by exact inner product."""
        scores_out = np.full((len(queries), k), -np.inf, dtype=np.float32)
        keys_out = np.full((len(queries), k), -1, dtype=np.int64)
        for row, found in enumerate(labels):
            found = self._keys[found] if self._by_row else found
            exact = self.reconstruct(found) @ queries[row]
            order = np.argsort(-exact, kind="stable")[:k]
            scores_out[row, : len(order)] = exact[order]
            keys_out[row, : len(order)] = found[order]
        return scores_out, keys_out

    def _subset(self, queries: NDArray[np.float32], k: int, keys: NDArray[np.int64]) -> Ranked:
        """Top-k among `keys`: every one scored by its code (about 0.5 us each), the best
        re-ranked exactly, as a search of the graph is (reading each one's full vector
        instead cost 18 ms a query at 1M papers, for a filter admitting 20,000 in a
        segment). A graph walk misses the best of a filter far from the query (a venue
        of another field), so a subset as large as `exact_subset_limit` is scored so."""
        if not self._by_row or not len(keys):
            return super()._subset(queries, k, keys)
        rows = self._held_rows(keys)
        codes, scale, offset = self._codes()
        depth = rerank_depth(self.kind, k, self.params)
        scores, chosen = [], []
        for start in range(0, len(rows), _DECODE_BLOCK):
            block = rows[start:start + _DECODE_BLOCK]
            # A code decodes to offset + code x scale per dimension, so its inner
            # product with q is code . (scale q) + offset . q.
            approximate = np.einsum("ij,jk->ik", codes[block], (scale * queries).T,
                                    dtype=np.float32) + offset @ queries.T
            best = np.argpartition(-approximate, min(depth, len(block)) - 1, axis=0)[:depth]
            scores.append(np.take_along_axis(approximate, best, axis=0))
            chosen.append(block[best])
        approximate, candidates = np.concatenate(scores), np.concatenate(chosen)
        best = np.argpartition(-approximate, min(depth, len(approximate)) - 1, axis=0)[:depth]
        return self._reranked(queries, k, list(np.take_along_axis(candidates, best, axis=0).T))

    def _codes(self) -> tuple[NDArray[np.uint8], NDArray[np.float32], NDArray[np.float32]]:
        """The graph's 8-bit codes (a view, one row a vector) and how they decode: FAISS's
        QT_8bit, x = vmin + (code + 0.5) / 255 x vdiff per dimension."""
        storage = faiss.downcast_index(self._index.storage)
        codes = faiss.rev_swig_ptr(storage.codes.data(), storage.codes.size()).reshape(
            -1, storage.code_size)
        trained = faiss.vector_to_array(storage.sq.trained)
        vmin, vdiff = trained[:self.dim], trained[self.dim:]
        scale = (vdiff / 255).astype(np.float32)
        return codes, scale, (vmin + 0.5 * scale).astype(np.float32)

    def _search_codes(self, queries: NDArray[np.float32], depth: int,
                      allowed: Allowed | None,
                      exclude: NDArray[np.int64] | None) -> NDArray[np.int64]:
        """The `depth` best labels (rows, or keys for IVF) of each query by the codes."""
        admitted = None if allowed is None else allowed.derived(
            ("faiss", id(self)), lambda: label_selector(
                self._held_rows(allowed.keys) if self._by_row else allowed.keys))
        if not self._by_row:
            params = faiss.SearchParametersIVF(sel=id_selector(admitted, exclude),
                                               nprobe=int(self.params.get("nprobe", 64)))
            labels: NDArray[np.int64] = self._index.search(queries, depth, params=params)[1]
            return labels
        exclude = None if exclude is None else self._held_rows(exclude)
        selector = id_selector(admitted, exclude)
        ef = max(depth, int(self.params["efSearch"]))
        if allowed is not None:
            ef = filtered_ef(depth, len(self), len(allowed), ef)
        wanted = min(depth, len(self) if allowed is None else len(allowed))
        while True:
            params = faiss.SearchParametersHNSW(sel=selector, efSearch=ef)
            labels = self._index.search(queries, depth, params=params)[1]
            # A query whose neighbourhood the filter thins out walks further.
            if allowed is None or ef >= _MAX_EF or (labels[:, :wanted] >= 0).all():
                return labels
            ef = min(_MAX_EF, 4 * ef)

    def save(self, directory: Path) -> list[str]:
        write_index(self._index, directory / _CODES_FILE)
        if isinstance(self._vectors, _VectorFile):
            self._vectors.copy(directory / _VECTORS_FILE)
        else:
            np.save(directory / _VECTORS_FILE, self._vectors)
        np.save(directory / _KEYS_FILE, self._keys)
        return [_CODES_FILE, _VECTORS_FILE, _KEYS_FILE]

    @classmethod
    def load(cls, directory: Path, dim: int, kind: str, params: dict[str, Any]) -> RerankedIndex:
        index = faiss.read_index(str(directory / _CODES_FILE))
        keys = np.load(directory / _KEYS_FILE, allow_pickle=False)
        return cls(dim, kind, params, index, _VectorFile(directory / _VECTORS_FILE), keys)

    def memory_bytes(self) -> int:
        """Bytes held in memory: the codes, graph or lists, and keys (not the vectors)."""
        writer = faiss.VectorIOWriter()
        faiss.write_index(self._index, writer)
        return int(writer.data.size()) + self._keys.nbytes
