"""`--backend auto`: the fastest backend whose vectors agree with the torch reference.

A CUDA GPU, when torch sees one, wins outright. On a CPU the fastest backends need
preparing once per model and machine (int8 calibration, timed rounds: about 30 s),
which only a large job repays (`worth_preparing`). A smaller job runs on the model's
float32 ONNX export (`quick_backend`), which needs only the export; once the fast
backends are prepared every job uses them.

Each candidate encodes the bundled sample abstracts, in turns with the others, three
times; one that agrees with torch float32 (mean cosine >= 0.99, none below 0.97) and is
fastest in its best round wins; of backends within 10% of each other's speed, the one
closer to torch. The verdict is kept in the cache folder per model, machine and library
versions, so it is measured once.

Only the backends whose runtimes are installed take part (`available_backends`): without
the `fast` extra (onnxruntime, OpenVINO, NNCF) that is torch alone, which `auto` then
uses with no measuring and no error.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..bundled import sample_abstracts
from ..fs import write_atomic
from .base import Backend, available_backends, backend_class, backend_names, missing_runtimes
from .built import BuiltWith
from .cuda_backend import cuda_devices
from .models import ModelSpec
from .onnx_export import ensure_export

__all__ = ["MIN_COSINE", "MIN_MEAN_COSINE", "PREPARE_AT", "choose_backend", "cpu_backend",
           "kept_backend", "pick_backend", "quick_backend", "worth_preparing"]

MIN_MEAN_COSINE = 0.99
MIN_COSINE = 0.97
#: Timed rounds per backend; the fastest counts (see `_measure`).
ROUNDS = 3
#: Backends at least this share of the fastest one's speed count as equally fast.
SPEED_TIE = 0.9
_FILE = "backends.json"
#: Texts a job must encode before `auto` prepares the fast backends; see `worth_preparing`.
PREPARE_AT = 1500
_log = logging.getLogger("embedsearch")


def _machine() -> str:
    """What decides the verdict besides the model: CPU, cores, libraries, backends offered."""
    flags = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as info:
            flags = next((line for line in info if line.startswith("flags")), "")
    versions = []
    for package in ("torch", "onnxruntime", "openvino", "nncf"):
        try:
            versions.append(f"{package}={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package}=none")
    # The CPU backends on offer (cuda is never a CPU verdict: leaving it out keeps the
    # verdicts measured before it existed); installing the fast extra offers more.
    offered = [name for name in available_backends() if name != "cuda"]
    text = (f"{platform.machine()}|{os.cpu_count()}|{flags}|{'|'.join(versions)}|"
            f"{','.join(offered)}")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _encode(backend: Backend, texts: Sequence[str]) -> tuple[np.ndarray, float]:
    """The vectors of `texts` and the seconds they took, in batches of 16."""
    start = time.perf_counter()
    vectors = np.concatenate([backend.encode_batch(texts[i : i + 16])
                              for i in range(0, len(texts), 16)])
    return vectors, time.perf_counter() - start


def _load(spec: ModelSpec, cache_root: Path, threads: int,
          texts: Sequence[str]) -> tuple[dict[str, Backend], dict[str, Any]]:
    """Every CPU backend that loads (warmed up: compiled, first batch run), and why others
    failed (cuda is not a CPU backend: on a CPU it is torch under another name)."""
    loaded: dict[str, Backend] = {}
    failed: dict[str, Any] = {}
    for name in [name for name in available_backends() if name != "cuda"]:
        try:
            backend = backend_class(name)(spec, cache_root=cache_root, threads=threads)
            backend.encode_batch(texts[:4])
        except Exception as exc:  # a missing runtime or a failed export rules it out
            if name == "torch":
                raise  # the reference itself must work
            failed[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        loaded[name] = backend
    return loaded, failed


def _measure(spec: ModelSpec, cache_root: Path, threads: int) -> dict[str, Any]:
    """Speed and agreement with torch of each backend.

    The backends take turns for ROUNDS rounds and each keeps its fastest round: measured
    once each, one after the other, a burst of other work on the machine during one
    backend's turn made `auto` pick int8 ONNX (cosine 0.995) over OpenVINO bf16 (0.99998),
    which is faster here when the machine is quiet.
    """
    texts = sample_abstracts()
    loaded, results = _load(spec, cache_root, threads, texts)
    vectors: dict[str, np.ndarray] = {}
    best = dict.fromkeys(loaded, float("inf"))
    for _ in range(ROUNDS):
        for name, backend in loaded.items():
            vectors[name], seconds = _encode(backend, texts)
            best[name] = min(best[name], seconds)
    for name in loaded:
        cosines = np.sum(vectors[name] * vectors["torch"], axis=1)
        results[name] = {
            "per_second": round(len(texts) / best[name], 1),
            "mean_cosine": round(float(cosines.mean()), 5),
            "min_cosine": round(float(cosines.min()), 5),
            "agrees": bool(cosines.mean() >= MIN_MEAN_COSINE and cosines.min() >= MIN_COSINE),
        }
    return results


def worth_preparing(texts: int | None, prepare_at: int = PREPARE_AT) -> bool:
    """Whether a job of `texts` texts repays preparing the fast backends (None: unknown,
    as for an `Encoder` made without a job size, which prepares as it always did).

    The break-even, measured here (2 cores, bundled MiniLM): preparing takes 30.3 s
    beyond the float32 export a small job uses anyway (`quick_backend`); that export
    (onnx) encodes 29.9 dev papers/s and openvino-bf16, the verdict here, 94.8
    (`embedsearch bench --sections encoding`), so each text saves 23 ms and the
    preparation pays for itself after ~1,320 texts. PREPARE_AT rounds that up: a job
    just past it gains nothing yet, but every later one gains, once prepared.
    """
    return texts is None or texts >= prepare_at


def quick_backend(spec: ModelSpec, cache_root: Path) -> str:
    """What a small job runs on before the fast backends are prepared: onnx, the float32
    export (checked against torch when it is made, cosine >= 0.9999), else torch.

    Not torch itself, although torch needs no export: importing torch and
    sentence-transformers and loading the model takes ~5 s in every process, so each
    later search of a torch-built index took 5.5 s here; the export costs those 5 s
    once (6.5 s), and a search of the index then takes 0.6 s.
    """
    if missing_runtimes("onnx"):  # a core install, without the fast extra
        return "torch"
    try:
        ensure_export(spec, cache_root, "fp32")
    except Exception as exc:  # an unusual model the exporter does not handle
        _log.debug("no float32 export of %s (%s); using torch", spec.name, exc)
        return "torch"
    return "onnx"


def pick_backend(results: dict[str, Any]) -> str:
    """The most faithful agreeing backend among those within SPEED_TIE of the fastest.

    Speeds within 10% are a tie on a shared machine (int8 ONNX measured 47.6 texts/s
    against 50.3 for OpenVINO bf16 here, and swapped places between runs), and a tie
    should not cost fidelity: cosine 0.994 against 0.99998 to torch. A backend whose
    vectors depend on their batch (`Backend.batch_invariant`) is never picked, however
    fast: the server batches concurrent searches, and each must be answered as alone.
    """
    agreeing = {name: r for name, r in results.items()
                if r.get("agrees") and _batch_invariant(name)}
    fastest = max(r["per_second"] for r in agreeing.values())
    close = [name for name, r in agreeing.items() if r["per_second"] >= SPEED_TIE * fastest]
    return max(close, key=lambda name: (agreeing[name]["mean_cosine"],
                                        agreeing[name]["per_second"]))


def _batch_invariant(name: str) -> bool:
    """Whether backend `name` gives a text the same vector alone and in a batch (a name
    not registered, as in a verdict of another version, counts as such)."""
    return name not in backend_names() or backend_class(name).batch_invariant


def kept_backend(spec: ModelSpec, replaced: BuiltWith | None) -> str | None:
    """What `auto` means for a build that replaces an index whose manifest's model record
    is `replaced`: that index's backend, when the same model built it and the backend
    still runs here (cuda only with a GPU), so a rebuild scores the same papers as the
    index did; None to choose afresh.

    Chosen afresh, a rebuild switched without a word: a small build ran on onnx (the
    quick backend), a larger job later measured the backends and kept onnx-int8 as the
    verdict, and the rebuilt index scored one query 0.637 where it had said 0.634 (as
    reported in issue 40).
    """
    if replaced is None or replaced.fingerprint != spec.fingerprint:
        return None
    name = replaced.backend
    if name not in backend_names() or (name == "cuda" and not cuda_devices()):
        return None
    _log.info("Encoder backend %s, the one the index being replaced was built with, so its "
              "scores stay as they were (--backend NAME chooses another)", name)
    return name


def choose_backend(spec: ModelSpec, cache_root: Path, threads: int,
                   texts: int | None = None) -> str:
    """The backend `auto` means for `spec` on this machine and a job of `texts` texts:
    cuda with a GPU, else `cpu_backend`."""
    if cuda_devices():
        return "cuda"
    return cpu_backend(spec, cache_root, threads, texts)


def cpu_backend(spec: ModelSpec, cache_root: Path, threads: int,
                texts: int | None = None) -> str:
    """The CPU backend for a job of `texts` texts: the measured verdict once measured;
    else `quick_backend` for a job too small to repay measuring (`worth_preparing`), or
    measure now and keep the verdict; torch, unmeasured, when it is the only one."""
    if [name for name in available_backends() if name != "cuda"] == ["torch"]:
        return "torch"  # the core install: nothing to measure torch against
    path = cache_root / _FILE
    key = f"{spec.fingerprint[:16]}:{_machine()}:{threads}"
    verdicts: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    if key not in verdicts and not worth_preparing(texts):
        return quick_backend(spec, cache_root)
    if key not in verdicts:
        _log.info("Measuring which encoder backend is fastest on this machine (once)...")
        results = _measure(spec, cache_root, threads)
        verdicts[key] = {"choice": pick_backend(results), "model": spec.name,
                         "measured": results}
        cache_root.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(verdicts, indent=2))
        _log.info("Encoder backend for %s: %s", spec.name, verdicts[key]["choice"])
    # Picked again from what was measured: a verdict kept from before a rule of
    # `pick_backend` (onnx-int8's batch dependence) follows that rule too, and the file
    # then says what is used.
    choice = pick_backend(verdicts[key]["measured"])
    if choice != verdicts[key]["choice"]:
        verdicts[key]["choice"] = choice
        write_atomic(path, json.dumps(verdicts, indent=2))
    return choice
