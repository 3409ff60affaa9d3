"""`embedsearch check`: is this index whole, and do its vectors still match the model?

The check reads one snapshot of the index and reports, one line each: files of the
current generation missing, cut short or not matching their sha256; parts that
disagree on which papers the index holds (vector index, lexical index, paper store, the
manifest's count; for Milvus the collection and the word counts); a damaged SQLite
store; what dead writers left (staging folders, unpublished or unheld old generations).

`deep` also re-encodes a sample of stored papers with the model and runtime installed
now, bypassing the embedding cache, and compares each with its stored vector: the
fingerprint covers a model's weights, not the runtime that computes with them, so an
upgrade of sentence-transformers, onnxruntime or OpenVINO can move vectors without any
file changing. `repair` removes the strays under the writers' lock and writes the
re-encoded vectors of drifted papers in place of the stored ones, through the same
safe path as any write.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..encoding import index_encoder
from ..errors import EmbedSearchError
from ..papers import embedding_text
from ..storage import Storage, Update, View
from ..storage.directory import DEFAULT_WAIT, IndexDirectory, Manifest, Staging

__all__ = ["DRIFT_COSINE", "DRIFT_SAMPLE", "CheckReport", "Drift", "check_index",
           "drift_threshold"]

#: Stored papers re-encoded by a deep check unless told otherwise (0: all of them).
DRIFT_SAMPLE = 200
#: See `drift_threshold`.
DRIFT_COSINE = 0.99


def drift_threshold() -> float:
    """The cosine below which a stored vector has drifted from the one the model makes
    now. The same model, backend and runtime give the same vector to float precision
    (cosine 0.99999+ here), and `auto` accepts a backend only at a mean cosine of 0.99
    to torch: a vector further off than that ranks as if made by another backend, which
    the index would have refused."""
    return DRIFT_COSINE


@dataclass(frozen=True)
class Drift:
    """Stored vectors against the same papers encoded now."""

    sampled: int
    mean_cosine: float
    min_cosine: float
    drifted: tuple[str, ...]  # ids of the sampled papers below the threshold
    threshold: float


@dataclass
class CheckReport:
    """What `check_index` found: `problems` (one line each; [] when whole), the `drift`
    of a deep check, and with `repair` what was fixed and what `remains` after it."""

    problems: list[str] = field(default_factory=list)
    drift: Drift | None = None
    repaired: list[str] = field(default_factory=list)
    remains: list[str] | None = None

    @property
    def whole(self) -> bool:
        """No problem, or none left after the repair."""
        return not (self.problems if self.remains is None else self.remains)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (`check --json`), `whole` first."""
        return {"whole": self.whole, **asdict(self)}


Writer = Callable[[Update], int]


def check_index(directory: IndexDirectory, snapshot: Callable[[], AbstractContextManager[View]],
                write: Writer, *, deep: bool = False, sample: int = DRIFT_SAMPLE,
                repair: bool = False, wait: float | None = DEFAULT_WAIT,
                cache_dir: str | os.PathLike[str] | None = None) -> CheckReport:
    """Check the index at `directory` through a `snapshot` of it; `write` publishes a
    repair (`LiveIndex.write` with `wait`). See the module for what is checked."""
    report = CheckReport()
    with snapshot() as view:
        report.problems += directory.problems(view.manifest)
        report.problems += view.check()
        if deep:
            encoder = index_encoder(view.manifest.model, directory.path, cache=False,
                                    cache_dir=cache_dir)
            report.drift, keys, fresh = _drift(view, encoder.encode_documents, sample)
            if report.drift.drifted:
                report.problems.append(
                    f"{len(report.drift.drifted)} of {report.drift.sampled} sampled papers "
                    f"drifted (cosine below {report.drift.threshold} to the vector the "
                    f"model makes now; lowest {report.drift.min_cosine:.4f}): the runtime "
                    "that computes vectors changed; `check --deep --repair` re-encodes them")
    if repair and report.problems:
        try:
            report.repaired = _repair(directory, view.manifest, write, wait,
                                      keys if deep else None, fresh if deep else None)
        except EmbedSearchError as exc:
            report.repaired.append(f"not repaired: {exc}")
        with snapshot() as view:
            report.remains = directory.problems(view.manifest) + view.check()
    return report


def _drift(view: View, encode: Callable[[list[str]], NDArray[np.float32]], sample: int
           ) -> tuple[Drift, NDArray[np.int64], NDArray[np.float32]]:
    """The drift of `sample` stored papers (0: all), with the keys and fresh vectors of
    those that drifted."""
    keys = view.keys()
    if 0 < sample < len(keys):
        keys = np.sort(np.random.default_rng(0).choice(keys, sample, replace=False))
    papers = view.papers(keys)
    fields = view.manifest.text.fields
    fresh = encode([embedding_text(papers[int(key)], fields) for key in keys])
    cosines = np.sum(fresh * view.vectors(keys), axis=1) if len(keys) else np.ones(0)
    low = cosines < drift_threshold()
    drift = Drift(len(keys), float(cosines.mean()) if len(keys) else 1.0,
                  float(cosines.min()) if len(keys) else 1.0,
                  tuple(papers[int(key)].id for key in keys[low]), drift_threshold())
    return drift, keys[low], fresh[low]


def _repair(directory: IndexDirectory, manifest: Manifest, write: Writer,
            wait: float | None, keys: NDArray[np.int64] | None,
            vectors: NDArray[np.float32] | None) -> list[str]:
    repaired = []
    strays = directory.strays(manifest)
    if strays:
        with directory.locked(wait):
            directory.collect_garbage(staging=True)
        repaired.append(f"removed {len(strays)} stray folder(s)")
    if keys is not None and vectors is not None and len(keys):

        def replace(storage: Storage, staging: Staging, newest: Manifest) -> Manifest:
            if newest.generation != manifest.generation:
                raise EmbedSearchError("the index changed while it was checked; check again")
            return storage.replace_vectors(staging, newest, keys, vectors)

        write(replace)
        repaired.append(f"re-encoded {len(keys)} drifted paper(s)")
    return repaired
