"""What an index records of the encoder that built it, as encoding reads it.

The record itself is the storage's (`storage.records.ModelRecord`, written in the
manifest); encoding imports nothing of storage, so it names here, as protocols, the
few things it reads of one: to pick a query encoder that matches an index
(`index_encoder`) and to keep an index's backend across a rebuild (`kept_backend`).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["BuiltWith", "PromptTexts"]


class PromptTexts(Protocol):
    """Prompts as an index records them (`Prompts` is one)."""

    @property
    def query(self) -> str: ...

    @property
    def document(self) -> str: ...

    @property
    def source(self) -> str: ...


class BuiltWith(Protocol):
    """The encoder an index was built with: model, fingerprint, backend, prompts."""

    @property
    def name(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def prompts(self) -> PromptTexts: ...
