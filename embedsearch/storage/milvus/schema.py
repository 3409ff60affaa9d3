"""How papers are laid out in a Milvus collection: the schema, its rows, filter expressions.

One row per paper: the whole `Paper` as JSON (`record`, with the names a collection
filter matches), the fields filters and lookups read as scalars of their own
(`paper_id`, `title_key`, `year`, `venue_key`, `keyword_keys`), the lexical text that
Milvus's BM25 function turns into `sparse`, and the unit vector `dense`. Milvus hands
out the int64 `key`s (auto_id) and never reuses one, which is the rule `View` keys
follow.

Milvus counts a VARCHAR's or JSON's length in UTF-8 bytes and refuses an insert that
exceeds one with an error naming neither paper nor field; rows are checked here first,
so a build fails with an `InputError` that names the paper.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import ConfigurationError, InputError, QueryError
from ...filters import Filters, collection_names
from ...papers import Paper, embedding_text, normalise_title
from ...text.bibentry import bib_fields
from ...text.words import Tokenizer

__all__ = ["ADDED", "ANALYZER", "HNSW_DEFAULTS", "MAX_KEYWORDS", "MAX_RECORD_BYTES",
           "MAX_TEXT_BYTES",
           "check_index_params", "create_collection", "filter_expression", "in_list",
           "match_key", "paper_of", "paper_rows", "quote", "stems", "truncate_text"]

#: The longest VARCHAR Milvus accepts by default, in UTF-8 bytes.
MAX_TEXT_BYTES = 65_535
#: The largest JSON value Milvus accepts (its documented limit), in bytes.
MAX_RECORD_BYTES = 65_536
MAX_KEYWORDS = 1_024
#: The record's key for the names a collection filter matches (`collection_names`).
COLLECTION_KEYS = "collection_keys"
#: The record's JSON key for the instant the index received the paper (`dates`): a JSON
#: key, so collections written before dates were kept need no schema change.
ADDED = "added"
#: The HNSW graph's degree and build breadth, and the search breadth of an unfiltered
#: search (the local HNSW index's efSearch); `--index-params` may change each.
HNSW_DEFAULTS: dict[str, int] = {"M": 16, "efConstruction": 200, "efSearch": 64}
#: The BM25 analyzer splits on spaces only, in effect: `text` holds the stems that
#: `lexical.Tokenizer` makes (lower case, Lucene's English stop words out, Snowball
#: stemmed), and queries are stemmed the same way (`stems`). Milvus's own stop and
#: stemmer filters would do on a server, but Milvus Lite 3.2.2 accepts and ignores them
#: (its analyzer is a `\w+` regex, and it takes "_english_" for a stop word), so Lite
#: and a server would rank differently; stemming here makes them, the evidence counts
#: and a local index agree on what a word is.
ANALYZER: dict[str, Any] = {"tokenizer": "standard", "filter": ["lowercase"]}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def match_key(value: str) -> str:
    """How a venue or keyword is stored and matched: case folded (filters ignore case),
    without control characters (which Milvus's expression parser cannot quote)."""
    return _CONTROL.sub("", value.casefold())


def quote(value: str) -> str:
    """`value` as a string literal of a Milvus filter expression (`match_key` it first)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def in_list(values: Iterable[str | int]) -> str:
    """A list literal of a filter expression: ints as they are, strings quoted."""
    return "[" + ", ".join(str(int(v)) if isinstance(v, (int, np.integer)) else quote(v)
                           for v in values) + "]"


def filter_expression(filters: Filters | None, exclude: NDArray[np.int64] | None) -> str:
    """The Milvus filter admitting what `filters` admits, minus the `exclude` keys
    (the empty string admits every row)."""
    clauses: list[str] = []
    if filters is not None and filters.libraries:
        raise QueryError("a library filter needs an index in local files; a Milvus "
                         "collection does not filter by library yet", parameter="libraries")
    if filters is not None:
        if filters.year_min is not None:
            clauses.append(f"year >= {int(filters.year_min)}")
        if filters.year_max is not None:
            clauses.append(f"year <= {int(filters.year_max)}")
        if filters.venues:
            clauses.append(f"venue_key in {in_list(match_key(v) for v in filters.venues)}")
        if filters.keywords:
            keywords = in_list(match_key(k) for k in filters.keywords)
            clauses.append(f"ARRAY_CONTAINS_ANY(keyword_keys, {keywords})")
        if filters.collections:
            # In the record's JSON, not a field of its own: collections written before
            # it have no such field, and a JSON key needs no schema change.
            names = in_list(match_key(name) for name in filters.collections)
            clauses.append(f'JSON_CONTAINS_ANY(record["{COLLECTION_KEYS}"], {names})')
        if filters.added_after is not None:  # instants compare as strings, in time order
            clauses.append(f'record["{ADDED}"] > {quote(filters.added_after)}')
    if exclude is not None and len(exclude):
        clauses.append(f"key not in {in_list(int(k) for k in np.unique(exclude))}")
    return " and ".join(clauses)


def check_index_params(params: dict[str, Any] | None) -> dict[str, int]:
    """The HNSW build parameters: the defaults updated by `params` (M, efConstruction)."""
    chosen = dict(HNSW_DEFAULTS)
    for name, value in (params or {}).items():
        if name not in HNSW_DEFAULTS:
            raise ConfigurationError(f"--index-params: a Milvus index is HNSW, which takes "
                                     f"M, efConstruction and efSearch, not {name!r}")
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigurationError(f"--index-params: {name} must be a positive integer, "
                                     f"got {value!r}")
        chosen[name] = value
    return chosen


def create_collection(client: Any, name: str, dim: int, hnsw: dict[str, int]) -> None:
    """Create the collection `name` of papers with `dim`-dimensional vectors."""
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    schema = MilvusClient.create_schema(auto_id=True, enable_dynamic_field=False)
    schema.add_field("key", DataType.INT64, is_primary=True)
    schema.add_field("paper_id", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
    schema.add_field("title_key", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
    schema.add_field("record", DataType.JSON)
    schema.add_field("year", DataType.INT64, nullable=True)
    schema.add_field("venue_key", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
    schema.add_field("keyword_keys", DataType.ARRAY, element_type=DataType.VARCHAR,
                     max_capacity=MAX_KEYWORDS, max_length=MAX_TEXT_BYTES)
    schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES,
                     enable_analyzer=True, analyzer_params=ANALYZER)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="text_bm25", function_type=FunctionType.BM25,
                                 input_field_names=["text"], output_field_names=["sparse"]))
    index = client.prepare_index_params()
    index.add_index("dense", index_type="HNSW", metric_type="IP",
                    params={"M": hnsw["M"], "efConstruction": hnsw["efConstruction"]})
    index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection(name, schema=schema, index_params=index,
                             consistency_level="Strong")


def stems(tokenizer: Tokenizer, text: str) -> str:
    """What Milvus's BM25 sees of `text`: its stems, space-separated (see `ANALYZER`)."""
    return " ".join(tokenizer.words(text))


def truncate_text(text: str, limit: int = MAX_TEXT_BYTES) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, at a character boundary."""
    encoded = text.encode("utf-8")
    return text if len(encoded) <= limit else encoded[:limit].decode("utf-8", errors="ignore")


def _check(paper: Paper, field: str, value: str) -> str:
    size = len(value.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        raise InputError(f"paper '{paper.id[:200]}': {size:,} bytes, more than the "
                         f"{MAX_TEXT_BYTES:,} a Milvus text field holds", field=field)
    return value


def paper_rows(papers: Sequence[Paper], vectors: NDArray[np.float32],
               lexical_fields: Sequence[str], added: str,
               tokenizer: Tokenizer | None = None) -> list[dict[str, Any]]:
    """The collection's rows of `papers` (row i of `vectors` is paper i's), received by
    the index at the instant `added`; InputError, naming the paper, for one that Milvus
    could not store."""
    tokenizer = tokenizer or Tokenizer()
    rows = []
    for paper, vector in zip(papers, vectors):
        record = paper.to_dict()
        record[COLLECTION_KEYS] = [match_key(name) for name in
                                   collection_names(paper.collections)]
        record[ADDED] = added
        if paper.file_stamp:  # what a sync compares (not data of the paper: not to_dict's)
            record["file_stamp"] = paper.file_stamp
        size = len(json.dumps(record, ensure_ascii=False).encode("utf-8"))
        if size > MAX_RECORD_BYTES:
            raise InputError(f"paper '{paper.id[:200]}' is {size:,} bytes as JSON, more than "
                             f"the {MAX_RECORD_BYTES:,} a Milvus JSON field holds; shorten "
                             "its abstract or keep this index in local files")
        if len(paper.keywords) > MAX_KEYWORDS:
            raise InputError(f"paper '{paper.id[:200]}' has {len(paper.keywords):,} keywords, "
                             f"more than the {MAX_KEYWORDS:,} the Milvus index holds",
                             field="keywords")
        rows.append({
            "paper_id": _check(paper, "id", paper.id),
            "title_key": _check(paper, "title", normalise_title(paper.title)),
            "record": record,
            "year": paper.year,
            "venue_key": _check(paper, "venue", match_key(paper.venue)),
            "keyword_keys": [_check(paper, "keywords", match_key(k)) for k in paper.keywords],
            "text": truncate_text(stems(tokenizer, embedding_text(paper, lexical_fields))),
            "dense": np.asarray(vector, dtype=np.float32).tolist(),
        })
    return rows


def paper_of(record: dict[str, Any]) -> Paper:
    """The `Paper` a row's `record` holds."""
    return Paper(
        id=str(record["id"]),
        abstract=str(record.get("abstract", "")),
        title=str(record.get("title", "")),
        title_derived=bool(record.get("title_derived", False)),
        authors=tuple(record.get("authors") or ()),
        keywords=tuple(record.get("keywords") or ()),
        venue=str(record.get("venue", "")),
        year=None if record.get("year") is None else int(record["year"]),
        url=str(record.get("url", "")),
        tldr=str(record.get("tldr", "")),
        primary_area=str(record.get("primary_area", "")),
        doi=str(record.get("doi", "")),
        arxiv_id=str(record.get("arxiv_id", "")),
        collections=tuple(record.get("collections") or ()),
        # Records written before entry types and bibliographic fields were kept lack them.
        entry_type=str(record.get("entry_type", "")),
        bib_fields=bib_fields(record.get("bib_fields") or {}),
        library=str(record.get("library", "")),
        file_stamp=str(record.get("file_stamp", "")),
    )
