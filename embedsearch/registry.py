"""Named implementations of a replaceable part: a class decorator fills the registry.

Two parts keep one: the vector index implementations a local segment loads by the name
its manifest records (`storage/local/vectors/`: `faiss`, `faiss-reranked`) and the encoder
backends `--backend` names (`encoding/`: torch, CUDA, ONNX, OpenVINO). A new
implementation is one module whose class carries `@registry.register("name")`. (Storage
kinds and input formats are kept by their own tables: `storage.STORAGE_KINDS`,
`readers.base.register_format`.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["ClassRegistry"]

_T = TypeVar("_T")


class ClassRegistry(Generic[_T]):
    """Classes by name; each registered class is told its name in `attribute`."""

    def __init__(self, what: str, attribute: str) -> None:
        self.what, self.attribute = what, attribute
        self._classes: dict[str, type[_T]] = {}

    def register(self, name: str) -> Callable[[type[_T]], type[_T]]:
        """Class decorator: make the class known as `name`."""

        def decorate(cls: type[_T]) -> type[_T]:
            setattr(cls, self.attribute, name)
            self._classes[name] = cls
            return cls

        return decorate

    def names(self) -> tuple[str, ...]:
        return tuple(self._classes)

    def get(self, name: str) -> type[_T]:
        """The class registered as `name`; LookupError names the known ones."""
        try:
            return self._classes[name]
        except KeyError:
            known = ", ".join(self._classes)
            raise LookupError(f"unknown {self.what} '{name}' (known: {known})") from None
