"""Writing an index: papers in, vectors made, a generation written; each write walks
down once (records -> papers -> vectors -> the storage's segment).

Each write encodes what it must before touching the disk, then, holding the writers'
lock (`LiveIndex.write`), has the index's storage stage a complete new generation from
the newest one and publishes it in one rename, so a failure at any point leaves the
previous index as it was, and a change another process published meanwhile is never
lost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._version import __version__
from ..encoding import Encoder, Executor
from ..errors import EmbedSearchError, InputError
from ..papers import TEXT_FIELDS, Paper, embedding_text
from ..passages import passage_texts
from ..storage import DEFAULT_LEXICAL_FIELDS, IndexOptions, Target, parse_target, storage_class
from ..storage.directory import DEFAULT_WAIT, IndexDirectory, Manifest
from ..storage.records import ModelRecord, PromptsRecord, StorageRecord, TextRecord
from .live import LiveIndex

__all__ = ["DEFAULT_LEXICAL_FIELDS", "IndexOptions", "add_papers", "build_index",
           "check_abstracts", "check_fields", "encode_papers", "encode_passages", "new_index"]


def check_fields(fields: Sequence[str], option: str = "--fields") -> tuple[str, ...]:
    """Text fields, validated: a non-empty subset of `TEXT_FIELDS`."""
    chosen = tuple(fields)
    unknown = [name for name in chosen if name not in TEXT_FIELDS]
    if unknown or not chosen:
        raise InputError(f"{option}: expected some of {', '.join(TEXT_FIELDS)}, got "
                         f"{', '.join(chosen) or 'nothing'}")
    return chosen


def check_abstracts(papers: Sequence[Paper], allow_title_only: bool) -> None:
    """Refuse papers without an abstract unless `allow_title_only`: an index is of
    abstracts, and a title says far less of a paper."""
    missing = [paper.id for paper in papers if paper.title_only]
    if missing and not allow_title_only:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5
                                          else "")
        raise InputError(f"{len(missing)} of the papers have no abstract ({shown}); the index "
                         "is of abstracts: --allow-title-only (allow_title_only=True) indexes "
                         "them on their titles")


def _check_unique(papers: Sequence[Paper]) -> None:
    seen: dict[str, int] = {}
    for number, paper in enumerate(papers, 1):
        if paper.id in seen:
            raise InputError(f"duplicate id '{paper.id}' (records {seen[paper.id]} and {number})")
        seen[paper.id] = number


def _encode(encoder: Encoder, papers: Sequence[Paper], fields: Sequence[str],
            progress: bool, executor: Executor | None = None) -> np.ndarray:
    return encoder.encode_documents([embedding_text(paper, fields) for paper in papers],
                                    progress=progress, executor=executor)


def encode_papers(encoder: Encoder, manifest: Manifest, papers: Sequence[Paper], *,
                  progress: bool = False, executor: Executor | None = None) -> np.ndarray:
    """The vectors of `papers` for the index of `manifest` (an add's, a sync's): made
    before the writers' lock is taken, as encoding can take hours and the lock is shared.
    `executor` computes the cache's misses (default: this process; or a Ray cluster)."""
    _check_unique(papers)
    return _encode(encoder, papers, manifest.text.fields, progress, executor)


def encode_passages(encoder: Encoder, papers: Sequence[Paper], *, progress: bool = False,
                    executor: Executor | None = None) -> np.ndarray | None:
    """The vectors of the passages of `papers`, paper after paper (`passage_texts`), as
    documents; None when none of them was read in full."""
    texts = passage_texts(papers)
    if not texts:
        return None
    return encoder.encode_documents(texts, progress=progress, executor=executor)


def add_papers(live: LiveIndex, papers: Sequence[Paper], encoder: Callable[[], Encoder], *,
               allow_title_only: bool = False, progress: bool = False,
               wait: float | None = DEFAULT_WAIT, executor: Executor | None = None) -> int:
    """Encode the papers whose ids `live`'s index lacks, then add them (`LiveIndex.add`):
    `SearchEngine.add`. Nothing is loaded when all are known, `encoder` (made only when
    there is something to encode) included. Returns how many were added."""
    check_abstracts(papers, allow_title_only)
    manifest = live.manifest()  # the index is not loaded: only its records read
    known = live.keys_of([paper.id for paper in papers])
    new = [paper for paper in papers if paper.id not in known]
    if not new:
        return 0
    made = encoder()
    vectors = encode_papers(made, manifest, new, progress=progress, executor=executor)
    passages = encode_passages(made, new, progress=progress, executor=executor)
    return live.add(manifest, new, vectors, wait=wait, passage_vectors=passages)


def new_index(directory: IndexDirectory, papers: Sequence[Paper],
              encoder: Callable[[int, ModelRecord | None], Encoder],
              options: IndexOptions = IndexOptions(), *,
              allow_title_only: bool = False, vectors: np.ndarray | None = None,
              target: Target | None = None, overwrite: bool = False, progress: bool = False,
              wait: float | None = DEFAULT_WAIT, executor: Executor | None = None,
              passage_vectors: np.ndarray | None = None) -> Encoder:
    """`build_index` for `SearchEngine.build`: the papers are checked before `encoder`
    is made, as making one may load a model and time the runtimes. It is given how many
    papers it will encode (0 with `vectors`) and, with `overwrite`, the model record of
    the index replaced (whose backend an `auto` encoder keeps). Returns it, to serve the
    new index's queries."""
    check_abstracts(papers, allow_title_only)
    made = encoder(len(papers) if vectors is None else 0,
                   _built_with(directory) if overwrite else None)
    build_index(directory, papers, made, options, target=target, vectors=vectors,
                overwrite=overwrite, progress=progress, wait=wait, executor=executor,
                passage_vectors=passage_vectors)
    return made


def build_index(
    directory: IndexDirectory,
    papers: Sequence[Paper],
    encoder: Encoder,
    options: IndexOptions = IndexOptions(),
    *,
    target: Target | None = None,
    vectors: np.ndarray | None = None,
    overwrite: bool = False,
    progress: bool = False,
    wait: float | None = DEFAULT_WAIT,
    executor: Executor | None = None,
    passage_vectors: np.ndarray | None = None,
) -> Manifest:
    """Encode `papers` and write them as a new index whose data lives at `target`
    (replacing one if `overwrite`, waiting up to `wait` seconds for another writer of it
    to finish). `executor` computes the vectors the cache lacks (default: this process;
    or a Ray cluster).

    `vectors` skips the encoding: row i must be paper i's embedding by this very
    encoder (a corpus's published embeddings, say); they are normalised here.
    `passage_vectors` does the same for the papers' passages, paper after paper.
    """
    fields = check_fields(options.fields)
    lexical_fields = check_fields(options.lexical_fields, "--lexical-fields")
    if not papers:
        raise InputError("no papers to index")
    _check_unique(papers)
    # Refuse what would fail before encoding, which can take hours.
    directory.ensure_writable(replace=overwrite)
    target = target or parse_target("local")
    storage = storage_class(target.kind)(directory, StorageRecord.from_dict(target.settings()),
                                         target.secrets())
    try:
        storage.check_build(options, len(papers), encoder.dim, overwrite=overwrite)
        vectors = (_encode(encoder, papers, fields, progress, executor) if vectors is None
                   else _given_vectors(vectors, len(papers), encoder.dim))
        count = sum(len(paper.passages) for paper in papers)
        passages = (encode_passages(encoder, papers, progress=progress, executor=executor)
                    if passage_vectors is None else
                    _given_vectors(passage_vectors, count, encoder.dim) if count else None)
        with directory.write(replace=overwrite, wait=wait) as staging:
            manifest = Manifest(model=model_record(encoder),
                                text=TextRecord(fields, lexical_fields), count=len(papers),
                                software=f"embedsearch {__version__}")
            return storage.build(staging, papers, vectors, manifest, options,
                                 progress=progress, passage_vectors=passages)
    finally:
        storage.close()


def model_record(encoder: Encoder) -> ModelRecord:
    """How an index's manifest names `encoder`; a query encoder must match it."""
    prompts = encoder.prompts
    return ModelRecord(encoder.spec.name, encoder.spec.fingerprint, encoder.backend,
                       encoder.dim, encoder.max_seq_length,
                       PromptsRecord(prompts.query, prompts.document, prompts.source))


def _given_vectors(vectors: np.ndarray, count: int, dim: int) -> np.ndarray:
    if vectors.shape != (count, dim):
        raise InputError(f"expected precomputed vectors of shape ({count}, {dim}), got "
                         f"{vectors.shape}")
    result = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(result, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise InputError("precomputed vectors hold zero or non-finite rows")
    normalised: np.ndarray = result / norms
    return normalised


def _built_with(directory: IndexDirectory) -> ModelRecord | None:
    """The model record of the index at `directory` (None when there is none to read)."""
    try:
        return directory.read_manifest().model
    except EmbedSearchError:
        return None
