"""`RayExecutor`: the texts an encoder's cache lacks, encoded on a pool of Ray Data actors.

Each actor holds an `Encoder` of the same model (checked by fingerprint on the worker)
and the same concrete backend the driver resolved, its cache off: the driver's cache is
the one that counts (see `executors`).
"""

from __future__ import annotations

import logging
import math
import os
import re
import resource
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import errors
from ..errors import ConfigurationError, DependencyError, EmbedSearchError, ModelError
from .encoder import Encoder
from .executors import DocumentEncoder, Executor, Piece
from .models import ModelSpec, fingerprint, resolve_model

__all__ = ["RayExecutor", "RayStats"]

_INSTALL = 'pip install "embedsearch[ray]"'
#: What `--ray ADDRESS` accepts besides nothing (a local instance): Ray's own spellings.
_ADDRESS = re.compile(r"^(auto|local|ray://\S+|[\w.\-]+:\d+)$")
#: "embedsearch.errors.ModelError: message" in a worker's traceback text.
_OURS = re.compile(r"embedsearch\.errors\.(\w+): (.+)")


@dataclass
class RayStats:
    """What a `RayExecutor` did: texts sent to Ray, by worker, and the cost of Ray itself."""

    sent: int = 0
    jobs: int = 0
    startup_seconds: float = 0.0
    rows_by_worker: dict[str, int] = field(default_factory=dict)
    peak_rss_by_worker: dict[str, int] = field(default_factory=dict)

    def shares(self) -> dict[str, float]:
        """Each worker's share of the texts encoded so far."""
        total = sum(self.rows_by_worker.values()) or 1
        return {worker: rows / total for worker, rows in self.rows_by_worker.items()}

    def summary(self) -> str:
        """One line for the command line: what went to Ray and who did it."""
        if not self.sent:
            return "Ray: nothing to encode (the embedding cache held every text)."
        shares = ", ".join(f"{share:.0%}" for share in sorted(self.shares().values(),
                                                              reverse=True))
        started = (f"; Ray started in {self.startup_seconds:.1f} s" if self.startup_seconds
                   else "")
        return (f"Ray: {self.sent} texts encoded by {len(self.rows_by_worker)} worker(s) "
                f"({shares}){started}.")


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise DependencyError(f"--ray needs Ray Data, which is not installed: {_INSTALL}"
                              ) from None
    return ray


def _check_address(address: str | None) -> str | None:
    """None for a new local instance, else the address as Ray takes it."""
    if address is None or address in ("", "local"):
        return None
    if not _ADDRESS.match(address):
        raise ConfigurationError(
            f"--ray: '{address}' is not a Ray address; give auto (the cluster this machine "
            "belongs to), ray://HOST:10001 or HOST:6379, or nothing for a local instance "
            "(a file name here? put --ray after the input files, or write --ray=ADDRESS)")
    return address


class RayExecutor(Executor):
    """Encodes on a pool of Ray Data actors; Ray retries a worker that fails.

    `address`: None (or "local") starts a Ray instance on this machine, unless this
    process is already connected to one, which is then used; "auto", "ray://host:port"
    or "host:port" join a running cluster. `actors` defaults to the cluster's CPUs over
    `threads_per_actor`, each actor reserving that many CPUs and running its backend on
    that many threads (Ray sets OMP_NUM_THREADS to match): one each keeps thread pools
    from fighting over cores. `gpus_per_actor` > 0 reserves that share of a GPU for
    each actor (Ray places them on the cluster's GPU nodes), and `actors` then defaults
    to the cluster's GPUs over it; the encoder's backend should then be cuda. Ray
    starts on the first texts to encode, so a build the cache answers whole never
    starts it. Close the executor (or use it in a `with`) to stop what it started.
    """

    def __init__(self, address: str | None = None, *, actors: int | None = None,
                 threads_per_actor: int = 1, gpus_per_actor: float = 0.0,
                 init_options: Mapping[str, Any] | None = None) -> None:
        self._ray = _import_ray()
        self.address = _check_address(address)
        if actors is not None and actors < 1 or threads_per_actor < 1:
            raise ConfigurationError("--ray: actors and threads per actor must be at least 1")
        if not 0 <= gpus_per_actor <= 8:
            raise ConfigurationError("--ray-gpus: GPUs per actor must be between 0 and 8 "
                                     "(a fraction such as 0.5 shares a GPU)")
        self.actors = actors
        self.threads_per_actor = threads_per_actor
        self.gpus_per_actor = gpus_per_actor
        self._init_options = dict(init_options or {})
        self._owned = False
        self.stats = RayStats()

    def start(self) -> None:
        """Connect to Ray (starting a local instance if so asked); idempotent."""
        ray = self._ray
        if ray.is_initialized():
            return
        began = time.perf_counter()
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                   **self._init_options}
        try:
            ray.init(address=self.address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"--ray {self.address}" if self.address else "--ray"
            raise ConfigurationError(
                f"{where}: cannot start or reach Ray ({exc}); start a cluster with `ray "
                "start --head` and run this on one of its nodes with --ray auto") from None
        self._owned = True
        self.stats.startup_seconds = time.perf_counter() - began
        data_log = logging.getLogger("ray.data")
        if data_log.level in (logging.NOTSET, logging.INFO, logging.DEBUG):
            # Each job's plan and timing, at INFO: the encoder's bar and summary say more.
            data_log.setLevel(logging.ERROR)

    def close(self) -> None:
        """Stop the Ray instance this executor started or joined (not one found running)."""
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
        self._owned = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check_gpus(self) -> None:
        """With `gpus_per_actor`, connect and refuse a cluster without that many GPUs, so
        a build fails before reading and loading anything rather than at encoding."""
        if self.gpus_per_actor:
            self.start()
            self._gpus()

    def _gpus(self) -> float:
        gpus = float(self._ray.cluster_resources().get("GPU", 0))
        if gpus < self.gpus_per_actor:
            raise ConfigurationError(
                f"--ray-gpus {self.gpus_per_actor:g}: the Ray cluster has {gpus:g} GPUs; "
                "start its GPU nodes with `ray start ... --num-gpus N`, or drop --ray-gpus")
        return gpus

    def _pool_size(self) -> int:
        if self.actors:
            return self.actors
        if self.gpus_per_actor:
            return max(1, int(self._gpus() // self.gpus_per_actor))
        cpus = float(self._ray.cluster_resources().get("CPU", 1))
        return max(1, int(cpus // self.threads_per_actor))

    def run(self, encoder: DocumentEncoder, texts: Sequence[str]) -> Iterator[Piece]:
        if not texts:
            return
        self.start()
        wanted = self._pool_size()
        dataset, blocks = self._dataset(texts, wanted, encoder.batch_size)
        actors = min(wanted, blocks)  # an actor without a block would only load the model
        encoded = dataset.map_batches(
            _EncodeActor, batch_size=encoder.batch_size, batch_format="numpy",
            compute=self._ray.data.ActorPoolStrategy(size=actors),
            num_cpus=self.threads_per_actor, num_gpus=self.gpus_per_actor or None,
            fn_constructor_kwargs=self._actor_arguments(encoder))
        self.stats.sent += len(texts)
        self.stats.jobs += 1
        try:
            for batch in encoded.iter_batches(batch_size=None, batch_format="numpy"):
                self._count(batch)
                yield (np.asarray(batch["row"], dtype=np.int64),
                       np.asarray(batch["vector"], dtype=np.float32))
        except self._ray.exceptions.RayError as exc:
            raise _job_error(exc) from None

    def _dataset(self, texts: Sequence[str], actors: int, batch_size: int) -> tuple[Any, int]:
        """The texts in contiguous blocks (they come sorted longest first, so each block
        pads little), enough blocks for every actor to take several and finish together;
        and how many blocks."""
        import pyarrow as pa

        per_block = max(batch_size, min(1024, math.ceil(len(texts) / (actors * 8))))
        table = pa.table({"row": np.arange(len(texts), dtype=np.int64),
                          "text": pa.array(list(texts), type=pa.large_string())})
        blocks = [table.slice(start, per_block) for start in range(0, len(texts), per_block)]
        dataset = self._ray.data.from_arrow(blocks)
        dataset.context.enable_progress_bars = False  # the encoder's own bar counts pieces
        return dataset, len(blocks)

    def _actor_arguments(self, encoder: DocumentEncoder) -> dict[str, Any]:
        local = self.address is None  # a cluster's workers use their own cache folders
        return {"name": encoder.spec.name, "path": str(encoder.spec.path),
                "fingerprint": encoder.spec.fingerprint, "backend": encoder.backend,
                "threads": self.threads_per_actor,
                "cache_dir": str(encoder.cache_root) if local else None,
                "prompts": encoder.prompts.record()}

    def _count(self, batch: Mapping[str, Any]) -> None:
        workers, counts = np.unique(batch["worker"], return_counts=True)
        for worker, count in zip(workers.tolist(), counts.tolist()):
            self.stats.rows_by_worker[worker] = self.stats.rows_by_worker.get(worker, 0) + count
        for worker, rss in zip(batch["worker"].tolist(), batch["peak_rss"].tolist()):
            peak = self.stats.peak_rss_by_worker.get(worker, 0)
            self.stats.peak_rss_by_worker[worker] = max(peak, int(rss))


def _job_error(exc: BaseException) -> EmbedSearchError:
    """Our own error a worker raised, or one line saying the job failed and nothing changed.

    A task's error carries the worker's exception as its cause; an actor that died in its
    constructor carries only the text of the worker's traceback, whose last line of ours
    is the error, so that line is raised again as its class.
    """
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, EmbedSearchError):
            return cause
        cause = getattr(cause, "cause", None) or cause.__cause__
    ours = _OURS.findall(str(exc))
    if ours:
        name, message = ours[-1]
        kind = getattr(errors, name, EmbedSearchError)
        if isinstance(kind, type) and issubclass(kind, EmbedSearchError):
            try:
                return kind(message.strip())
            except TypeError:  # a class with other arguments: keep the message
                return EmbedSearchError(message.strip())
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return EmbedSearchError(f"the Ray encoding job failed ({type(exc).__name__}: {first}); "
                            "no index was changed")


def _worker_spec(name: str, path: str, expected: str) -> ModelSpec:
    """The driver's model on this worker: the same directory if it is here, else by name;
    refused unless its fingerprint is the driver's, as other weights give other vectors."""
    here = Path(path)
    spec = (ModelSpec(name, here, fingerprint(here)) if here.is_dir()
            else resolve_model(name))
    if spec.fingerprint != expected:
        raise ModelError(
            f"Ray worker {socket.gethostname()} has model {spec.short()}, not the driver's "
            f"{name} (fingerprint {expected[:12]}); install the same model on every node")
    return spec


class _EncodeActor:
    """One Ray Data actor: an `Encoder` without a cache, batch in, vectors out."""

    def __init__(self, name: str, path: str, fingerprint: str, backend: str, threads: int,
                 cache_dir: str | None, prompts: dict[str, str]) -> None:
        spec = _worker_spec(name, path, fingerprint)
        self._encoder = Encoder(spec, backend=backend, threads=threads, cache=False,
                                cache_dir=cache_dir, query_prompt=prompts["query"],
                                document_prompt=prompts["document"])
        self._worker = f"{socket.gethostname()}:{os.getpid()}"

    def __call__(self, batch: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
        vectors = self._encoder.encode_document_batch([str(text) for text in batch["text"]])
        count = len(vectors)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
        return {"row": batch["row"], "vector": vectors,
                "worker": np.array([self._worker] * count),
                "peak_rss": np.full(count, peak, dtype=np.int64)}
