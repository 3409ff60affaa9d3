"""`--backend auto`: the fastest backend whose vectors agree with the torch reference.

Each candidate encodes the bundled sample abstracts; one that agrees with torch float32
(mean cosine >= 0.99, none below 0.97) and is fastest wins. The verdict is kept in the
cache folder per model, machine and library versions, so it is measured once.
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

from ..bundled import corpus_files
from .base import Backend, backend_class, backend_names
from .models import ModelSpec

__all__ = ["MIN_COSINE", "MIN_MEAN_COSINE", "choose_backend"]

MIN_MEAN_COSINE = 0.99
MIN_COSINE = 0.97
_FILE = "backends.json"
_log = logging.getLogger("embedsearch")


def _probe_texts() -> list[str]:
    """The bundled sample's abstracts (each file: a header line, then paragraphs)."""
    texts: list[str] = []
    for path in corpus_files():
        paragraphs = path.read_text(encoding="utf-8").split("\n\n")[1:]
        texts.extend(" ".join(p.split()) for p in paragraphs if p.strip())
    return texts


def _machine() -> str:
    """What decides the verdict besides the model: CPU, cores and library versions."""
    flags = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as info:
            flags = next((line for line in info if line.startswith("flags")), "")
    versions = []
    for package in ("torch", "onnxruntime", "openvino"):
        try:
            versions.append(f"{package}={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package}=none")
    text = f"{platform.machine()}|{os.cpu_count()}|{flags}|{'|'.join(versions)}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _timed(backend: Backend, texts: Sequence[str]) -> tuple[np.ndarray, float]:
    backend.encode_batch(texts[:4])  # loads, compiles and warms up
    start = time.perf_counter()
    vectors = np.concatenate([backend.encode_batch(texts[i : i + 16])
                              for i in range(0, len(texts), 16)])
    return vectors, len(texts) / (time.perf_counter() - start)


def _measure(spec: ModelSpec, cache_root: Path, threads: int) -> dict[str, Any]:
    texts = _probe_texts()
    reference, torch_speed = _timed(backend_class("torch")(spec, cache_root=cache_root,
                                                           threads=threads), texts)
    results: dict[str, Any] = {"torch": {"per_second": round(torch_speed, 1), "mean_cosine": 1.0,
                                         "min_cosine": 1.0, "agrees": True}}
    for name in backend_names():
        if name == "torch":
            continue
        try:
            vectors, speed = _timed(backend_class(name)(spec, cache_root=cache_root,
                                                        threads=threads), texts)
        except Exception as exc:  # a missing runtime or a failed export rules it out
            results[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        cosines = np.sum(vectors * reference, axis=1)
        results[name] = {
            "per_second": round(speed, 1),
            "mean_cosine": round(float(cosines.mean()), 5),
            "min_cosine": round(float(cosines.min()), 5),
            "agrees": bool(cosines.mean() >= MIN_MEAN_COSINE and cosines.min() >= MIN_COSINE),
        }
    return results


def choose_backend(spec: ModelSpec, cache_root: Path, threads: int) -> str:
    """The backend `auto` means for `spec` on this machine (measured once, then read)."""
    path = cache_root / _FILE
    key = f"{spec.fingerprint[:16]}:{_machine()}:{threads}"
    verdicts: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    if key not in verdicts:
        _log.info("Measuring which encoder backend is fastest on this machine (once)...")
        results = _measure(spec, cache_root, threads)
        agreeing = {name: r["per_second"] for name, r in results.items() if r.get("agrees")}
        verdicts[key] = {"choice": max(agreeing, key=agreeing.__getitem__), "model": spec.name,
                         "measured": results}
        cache_root.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".{os.getpid()}.tmp")
        temp.write_text(json.dumps(verdicts, indent=2))
        os.replace(temp, path)
        _log.info("Encoder backend for %s: %s", spec.name, verdicts[key]["choice"])
    return str(verdicts[key]["choice"])
