"""OpenAlex works: JSON Lines (a snapshot or `--format openalex`), or an API response.

Each work: `id` ("https://openalex.org/W123" -> "W123"), `display_name` or `title`,
`abstract_inverted_index` {word: [positions]} rebuilt into the abstract, `authorships`
[{author: {display_name}}], `publication_year`, `primary_location.source.display_name`
-> venue, `doi` -> url (else the work's OpenAlex page), `keywords` (else `concepts`)
[{display_name}]. A JSON or JSON Lines file is read this way when its first work has
`abstract_inverted_index` or `authorships`, or an OpenAlex id; a JSON object with a
`results` array (what api.openalex.org/works returns) always is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from .base import Located, Skipped, compressed, register_format
from .foreign import collapse, dialect_named, doi_url, optional_text, register_dialect
from .jsonarray import read_json_document
from .jsonl import read_json_lines
from .records import Where, kind

__all__ = ["openalex_record", "read_openalex", "rebuild_abstract"]

_ID_PREFIX = "https://openalex.org/"
_LINE_SUFFIXES = (".jsonl", ".ndjson")


def _looks_like_openalex(raw: Mapping[str, object]) -> bool:
    identifier = raw.get("id")
    return ("abstract_inverted_index" in raw or "authorships" in raw
            or (isinstance(identifier, str) and identifier.startswith(_ID_PREFIX)))


def rebuild_abstract(index: object, where: Where) -> str:
    """The abstract an inverted index {word: [positions]} encodes, words in position order."""
    if index is None:
        return ""
    if not isinstance(index, dict):
        raise where.error(f"expected an object {{word: [positions]}}, got {kind(index)}",
                          "abstract_inverted_index")
    placed: list[tuple[int, str]] = []
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(
                isinstance(p, int) and not isinstance(p, bool) for p in positions):
            raise where.error(f"expected the positions of '{word[:40]}' as a list of integers, "
                              f"got {kind(positions)}", "abstract_inverted_index")
        placed.extend((position, word) for position in positions)
    # Sorted pairs rather than an array by position: an absurd position costs nothing.
    return collapse(" ".join(word for _, word in sorted(placed)))


def _names(items: object, key: str, path: tuple[str, ...], where: Where) -> list[str]:
    """The display names found at `path` inside each object of the list `items`."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise where.error(f"expected a list of objects, got {kind(items)}", key)
    names = []
    for item in items:
        value: object = item
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        if value is not None and not isinstance(value, str):
            raise where.error(f"expected {'.'.join(path)} as text, got {kind(value)}", key)
        if value and value.strip():
            names.append(collapse(value))
    return names


def _venue(raw: Mapping[str, object], where: Where) -> str:
    location = raw.get("primary_location")
    source = location.get("source") if isinstance(location, dict) else None
    name = source.get("display_name") if isinstance(source, dict) else None
    return optional_text({"primary_location": name}, "primary_location", where)


@register_dialect("openalex", _looks_like_openalex)
def openalex_record(raw: Mapping[str, object], where: Where) -> dict[str, object]:
    """One OpenAlex work in our record fields."""
    page = optional_text(raw, "id", where)
    doi = optional_text(raw, "doi", where)
    keywords = _names(raw.get("keywords"), "keywords", ("display_name",), where) or \
        _names(raw.get("concepts"), "concepts", ("display_name",), where)
    return {
        "id": page.removeprefix(_ID_PREFIX),
        "title": optional_text(raw, "display_name", where) or optional_text(raw, "title", where),
        "abstract": rebuild_abstract(raw.get("abstract_inverted_index"), where),
        "authors": _names(raw.get("authorships"), "authorships", ("author", "display_name"),
                          where),
        "year": raw.get("publication_year"),
        "venue": _venue(raw, where),
        "url": doi_url(doi) if doi else page,
        "keywords": keywords,
    }


@register_format("openalex", (), "OpenAlex works (JSON Lines, or an API response)")
def read_openalex(path: Path) -> Iterator[Located | Skipped]:
    inner = path.with_suffix("") if compressed(path) else path
    dialect = dialect_named("openalex")
    if inner.suffix.lower() in _LINE_SUFFIXES:
        return read_json_lines(path, dialect)
    return read_json_document(path, dialect)
