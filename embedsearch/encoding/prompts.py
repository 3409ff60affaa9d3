"""Query and document prompts: the text a model's authors put before what it encodes.

Asymmetric retrieval models were trained with one prefix before queries and another
before documents (e5: "query: " / "passage: "); used without them, their vectors lose
several points of nDCG@10 and nothing says so. The prompts come, in order, from what the
user says (`--query-prompt` / `--document-prompt`), from the model's own
sentence-transformers configuration (read as `encode_query` / `encode_document` read
it), and from a short table of well-known families whose published configurations lack
them. A model with none, like the bundled all-MiniLM-L6-v2, encodes texts as they are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .built import PromptTexts

__all__ = ["KNOWN_FAMILIES", "Prompts", "Role", "model_prompts", "resolve_prompts"]

#: What a text is to the model: a query, or a document of the index.
Role = Literal["query", "document"]

#: sentence-transformers' `encode_document` looks for these prompt names, in this order.
_DOCUMENT_NAMES = ("document", "passage", "corpus")
_CONFIG = "config_sentence_transformers.json"
_BGE_QUERY = "Represent this sentence for searching relevant passages: "

#: Families whose published configurations do not carry the prompts their authors
#: prescribe: (pattern on the model's name, query prompt, document prompt, family).
#: Applied only when the configuration names neither prompt and the user gave none.
KNOWN_FAMILIES: tuple[tuple[str, str, str, str], ...] = (
    # https://huggingface.co/intfloat/e5-base-v2 ("Each input text should start with
    # 'query: ' or 'passage: '"); the same card text for e5-small/large(-v2) and the
    # non-instruct multilingual-e5 models.
    (r"(^|/)(multilingual-)?e5-(small|base|large)(-v2)?$", "query: ", "passage: ", "e5"),
    # https://huggingface.co/BAAI/bge-base-en-v1.5 (FAQ: "the instruction is ... for
    # short query to long passage retrieval"; passages take none).
    (r"(^|/)bge-(small|base|large)-en-v1\.5$", _BGE_QUERY, "", "bge-en-v1.5"),
    # https://huggingface.co/nomic-ai/nomic-embed-text-v1.5 ("search_query: " and
    # "search_document: "); its configuration names them search_query/search_document,
    # which encode_query and encode_document do not look for.
    (r"(^|/)nomic-embed-text-v1(\.5)?$", "search_query: ", "search_document: ",
     "nomic-embed-text"),
)


@dataclass(frozen=True)
class Prompts:
    """The prefixes put before queries and before documents, and where they came from.

    `source` is "none", "given" (by the user), "model configuration" or "known family:
    NAME"; it is reported by `info` and does not decide whether two indexes agree.
    """

    query: str = ""
    document: str = ""
    source: str = "none"

    def record(self) -> dict[str, str]:
        """How an index manifest stores them."""
        return {"query": self.query, "document": self.document, "source": self.source}

    @classmethod
    def from_record(cls, record: PromptTexts) -> Prompts:
        """The prompts an index was built with, as its manifest records them."""
        return cls(record.query, record.document, record.source)

    def same_as(self, other: Prompts) -> bool:
        """Whether vectors made under both are comparable (the texts, not the source)."""
        return (self.query, self.document) == (other.query, other.document)



def _configured(path: Path) -> tuple[str | None, str | None]:
    """The query and document prompts `encode_query` / `encode_document` would apply."""
    file = path / _CONFIG
    try:
        config = json.loads(file.read_text()) if file.is_file() else {}
    except (OSError, json.JSONDecodeError):
        return None, None
    prompts = config.get("prompts") or {}
    if not isinstance(prompts, dict):
        return None, None
    default = prompts.get(config.get("default_prompt_name") or "")
    query = prompts.get("query", default)
    document = next((prompts[name] for name in _DOCUMENT_NAMES if name in prompts), default)
    return (query if isinstance(query, str) else None,
            document if isinstance(document, str) else None)


def _family(name: str) -> tuple[str, str, str] | None:
    text = name.rstrip("/").lower()
    for pattern, query, document, family in KNOWN_FAMILIES:
        if re.search(pattern, text):
            return query, document, family
    return None


def model_prompts(name: str, path: Path) -> Prompts:
    """The prompts of the model `name` at `path`: its configuration's, else its family's."""
    query, document = _configured(path)
    if query or document:
        return Prompts(query or "", document or "", "model configuration")
    family = _family(name) or _family(path.name)
    if family:
        return Prompts(family[0], family[1], f"known family: {family[2]}")
    return Prompts()


def resolve_prompts(name: str, path: Path, *, query: str | None = None,
                    document: str | None = None) -> Prompts:
    """The prompts to use: each one the user gave (even ""), else the model's own."""
    if query is None and document is None:
        return model_prompts(name, path)
    own = model_prompts(name, path)
    return Prompts(own.query if query is None else query,
                   own.document if document is None else document, "given")
