"""Exporting a model once to ONNX (and int8 ONNX) for the fast backends, then reusing it.

The export traces the transformer with its pooling and normalisation into one graph, so
the exported backends need only the graph and the tokenizer: no torch at query time.
It runs on first use and lands in the cache folder, keyed by the model's fingerprint;
the traced graph is checked against sentence-transformers before it is kept.
"""

from __future__ import annotations

import inspect
import json
import logging
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..bundled import sample_abstracts
from ..errors import ModelError
from ..fs import FOREVER, exclusive_lock, replace_file, replace_folder
from .graph import ExportedModel, run_graph
from .models import ModelSpec, offline_hub
from .quantize import quantize_onnx_dynamic, quantize_openvino_static

_log = logging.getLogger("embedsearch")

__all__ = ["ensure_export"]

_EXPORT_VERSION = 1
_CONFIG = "export.json"
_CHECK_TEXTS = (
    "Low-rank visual prompting adapts pre-trained vision models.",
    "A short one.",
    "Graph neural networks on molecules, with attention over bonds and atoms " * 8,
)
_AGREEMENT = 0.9999
def _folder(spec: ModelSpec, cache_root: Path) -> Path:
    slug = spec.name.rstrip("/").rsplit("/", 1)[-1].replace(" ", "_")[:40]
    return cache_root / "models" / f"{slug}-{spec.fingerprint[:16]}"


def _load_config(folder: Path) -> ExportedModel | None:
    path = folder / _CONFIG
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if data.get("version") != _EXPORT_VERSION:
        return None
    return ExportedModel(folder, int(data["dim"]), int(data["max_seq_length"]),
                         bool(data["lowercase"]), tuple(data["inputs"]))


def ensure_export(spec: ModelSpec, cache_root: Path, variant: str = "fp32") -> ExportedModel:
    """The exported model for `spec` with graph `variant` (a `VARIANTS` key), made if absent."""
    reason = spec.layout().supported_for_export()
    if reason:
        raise ModelError(f"model {spec.name} cannot use an exported backend: {reason}; "
                         "use --backend torch")
    folder = _folder(spec, cache_root)
    exported = _load_config(folder)
    if exported and exported.graph(variant).is_file():
        return exported
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Another process may be exporting the same model: one does, the others wait.
    with exclusive_lock(folder.with_suffix(".lock"), FOREVER, f"model export {folder}"):
        exported = _load_config(folder)  # another process may have finished meanwhile
        if exported is None:
            # The first use on a machine: seconds of silence before any bar otherwise.
            _log.info("Loading the model %s (first use: preparing it for this machine, "
                      "~10 s)...", spec.name)
            folder.mkdir(parents=True, exist_ok=True)
            exported = _export(spec, folder)
        if not exported.graph(variant).is_file():
            _quantize(exported, variant)
    return exported


def _quantize(exported: ExportedModel, variant: str) -> None:
    """Make the quantised graph `variant` from the fp32 export."""
    source, target = exported.graph("fp32"), exported.graph(variant)
    if variant == "int8":
        replace_file(exported.folder / target.name,
                     lambda temp: quantize_onnx_dynamic(source, temp))
        return
    name = target.parent.name
    shutil.rmtree(exported.folder / name, ignore_errors=True)  # damaged: its .xml is gone
    replace_folder(exported.folder / name, lambda temp: quantize_openvino_static(
        source, exported.tokens(), sample_abstracts(), temp / target.name))


def _export(spec: ModelSpec, folder: Path) -> ExportedModel:
    offline_hub()
    try:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise ModelError(f"exporting the model needs torch and sentence-transformers: {exc}")
    hf_logging.disable_progress_bar()
    reference = SentenceTransformer(str(spec.path), device="cpu", local_files_only=True)
    layout = spec.layout()
    transformer = reference[0].auto_model
    if hasattr(transformer, "set_attn_implementation"):
        # The fused attention paths skip the mask when a traced example has no padding.
        transformer.set_attn_implementation("eager")
    accepted = inspect.signature(transformer.forward).parameters
    inputs = tuple(name for name in ("input_ids", "attention_mask", "token_type_ids")
                   if name in accepted)
    graph = _pooled_module(torch, transformer, inputs, layout.pooling).eval()
    example = {name: torch.ones(2, 16, dtype=torch.long) for name in inputs}
    example["attention_mask"][1, 9:] = 0
    if "token_type_ids" in example:
        example["token_type_ids"].zero_()

    def write_graph(temp: Path) -> None:
        with torch.no_grad(), warnings.catch_warnings():
            # The tracer warns about every shape-dependent branch; the agreement check
            # below is what tells whether the traced graph is right.
            warnings.simplefilter("ignore")
            torch.onnx.export(
                graph, tuple(example[name] for name in inputs), str(temp),
                input_names=list(inputs), output_names=["embedding"], opset_version=17,
                dynamic_axes={**{name: {0: "batch", 1: "tokens"} for name in inputs},
                              "embedding": {0: "batch"}},
                dynamo=False,
            )

    replace_file(folder / "model.onnx", write_graph)
    replace_file(folder / "tokenizer.json",
                 lambda temp: _save_tokenizer(reference.tokenizer, spec.path, temp))
    dim = int(reference.get_embedding_dimension() if hasattr(reference, "get_embedding_dimension")
              else reference.get_sentence_embedding_dimension())
    exported = ExportedModel(folder, dim, int(reference.max_seq_length), layout.lowercase, inputs)
    _check_agreement(exported, reference)
    config = {"version": _EXPORT_VERSION, "model": spec.name, "fingerprint": spec.fingerprint,
              "dim": dim, "max_seq_length": exported.max_seq_length,
              "lowercase": exported.lowercase, "inputs": list(inputs), "torch": torch.__version__}
    replace_file(folder / _CONFIG, lambda temp: temp.write_text(json.dumps(config, indent=2)))
    return exported


def _save_tokenizer(tokenizer: Any, model_path: Path, temp: Path) -> None:
    source = model_path / "tokenizer.json"
    if source.is_file():
        shutil.copyfile(source, temp)
        return
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ModelError(f"model {model_path} has no fast tokenizer; use --backend torch")
    backend.save(str(temp))


def _pooled_forward(torch: Any, transformer: Any, inputs: tuple[str, ...], pooling: str,
                    tensors: tuple[Any, ...]) -> Any:
    named = dict(zip(inputs, tensors))
    hidden = transformer(**named).last_hidden_state
    if pooling == "cls":
        pooled = hidden[:, 0]
    else:
        mask = named["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)


def _pooled_module(torch: Any, transformer: Any, inputs: tuple[str, ...], pooling: str) -> Any:
    """The transformer plus pooling and normalisation as one torch module to trace."""

    class Pooled(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *tensors: Any) -> Any:
            return _pooled_forward(torch, self.transformer, inputs, pooling, tensors)

    return Pooled()


def _check_agreement(exported: ExportedModel, reference: Any) -> None:
    """Refuse an export whose vectors differ from sentence-transformers' own."""
    # prompt="": the graph sees texts as given (prompts are put before them by the
    # encoder), and a configuration's default prompt must not slip into the reference.
    expected = reference.encode(list(_CHECK_TEXTS), normalize_embeddings=True, prompt="")
    got = run_graph(exported, "fp32", list(_CHECK_TEXTS), threads=1)
    agreement = float(np.min(np.sum(expected * got, axis=1)))
    if agreement < _AGREEMENT:
        raise ModelError(f"the ONNX export of this model disagrees with sentence-transformers "
                         f"(cosine {agreement:.5f}); use --backend torch")
