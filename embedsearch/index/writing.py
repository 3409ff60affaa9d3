"""Writing an index: papers in, vectors made, a generation written; each write walks
down once (records -> papers -> vectors -> the storage's segment).

Each write encodes what it must before touching the disk, then, holding the writers'
lock (`LiveIndex.write`), has the index's storage stage a complete new generation from
the newest one and publishes it in one rename, so a failure at any point leaves the
previous index as it was, and a change another process published meanwhile is never
lost.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized

import numpy as np

from .._version import __version__
from ..encoding import Encoder, Executor
from ..errors import EmbedSearchError, InputError
from ..papers import TEXT_FIELDS, Paper, embedding_text
from ..passages import passage_texts
from ..storage import (
    DEFAULT_LEXICAL_FIELDS,
    IndexOptions,
    PaperBatch,
    Target,
    parse_target,
    storage_class,
)
from ..storage.directory import DEFAULT_WAIT, IndexDirectory, Manifest
from ..storage.records import ModelRecord, PromptsRecord, StorageRecord, TextRecord
from .live import LiveIndex

__all__ = ["BUFFER_PAPERS", "BUFFER_PASSAGES", "DEFAULT_LEXICAL_FIELDS", "IndexOptions",
           "add_papers", "buffer_full", "build_index", "check_abstracts", "check_fields",
           "encode_papers", "encode_passages", "new_index"]


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


def _check_unique(papers: Sequence[Paper], seen: dict[str, int] | None = None) -> None:
    """Refuse an id given twice; `seen` (id -> record number) carries the ids of earlier
    buffers of one stream, and learns these."""
    seen = {} if seen is None else seen
    first = len(seen)
    for number, paper in enumerate(papers, first + 1):
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


#: A build writes a segment each time it holds this many papers...
BUFFER_PAPERS = 100_000
#: ...or this many passages of papers read in full, whichever comes first. What a build
#: holds is one buffer, encoded, whatever the corpus: a passage costs it about 5 KB (text,
#: vector, postings; 0.4 MB a PDF of 74 passages was measured building everything at
#: once), so 16k passages are ~90 MB, about 220 PDFs; a paper of abstract alone about
#: 9 KB (12 GB were measured building 1M at once), so 100k papers ~0.9 GB. A segment of
#: 16k passages is still large enough for its own HNSW graph (`passage_index_rule`).
BUFFER_PASSAGES = 16_384
#: The count the checks made before a stream of papers is read assume: large enough that
#: no rule refuses it for being too small to train on.
_UNKNOWN_COUNT = 1_000_000


def buffer_full(papers: int, passages: int, *, max_papers: int = BUFFER_PAPERS,
                max_passages: int = BUFFER_PASSAGES) -> bool:
    """Whether a build holding `papers` papers with `passages` passages writes them as a
    segment now (see `BUFFER_PAPERS`, `BUFFER_PASSAGES`)."""
    return papers >= max_papers or passages >= max_passages


def new_index(directory: IndexDirectory, papers: Iterable[Paper],
              encoder: Callable[[int | None, ModelRecord | None], Encoder],
              options: IndexOptions = IndexOptions(), *,
              allow_title_only: bool = False, vectors: np.ndarray | None = None,
              target: Target | None = None, overwrite: bool = False, progress: bool = False,
              wait: float | None = DEFAULT_WAIT, executor: Executor | None = None,
              passage_vectors: np.ndarray | None = None) -> Encoder:
    """`build_index` for `SearchEngine.build`: the papers are checked before `encoder`
    is made, as making one may load a model and time the runtimes (a sequence whole, a
    stream its first buffer, read ahead). It is given how many texts it will encode (0
    with `vectors`; None for a stream longer than one buffer) and, with `overwrite`, the
    model record of the index replaced (whose backend an `auto` encoder keeps). Returns
    it, to serve the new index's queries."""
    if not isinstance(papers, Sequence):
        first, rest, ended = _first_buffer(papers, buffer_full)
        check_abstracts(first, allow_title_only)
        papers = itertools.chain(first, rest)
        texts = _texts(first) if ended else None
    else:
        check_abstracts(papers, allow_title_only)
        texts = _texts(papers)
    made = encoder(0 if vectors is not None else texts,
                   _built_with(directory) if overwrite else None)
    build_index(directory, papers, made, options, target=target, vectors=vectors,
                overwrite=overwrite, progress=progress, wait=wait, executor=executor,
                passage_vectors=passage_vectors, allow_title_only=allow_title_only)
    return made


def _texts(papers: Sequence[Paper]) -> int:
    """How many texts encoding `papers` is: each paper's, and each of its passages."""
    return len(papers) + sum(len(paper.passages) for paper in papers)


def _first_buffer(papers: Iterable[Paper], flush: Callable[[int, int], bool]
                  ) -> tuple[list[Paper], Iterator[Paper], bool]:
    """The first buffer of `papers`, the papers after it, and whether there are none."""
    rest = iter(papers)
    first = next(_buffers(rest, flush), [])
    following = next(rest, None)
    if following is None:
        return first, iter(()), True
    return first, itertools.chain([following], rest), False


def build_index(
    directory: IndexDirectory,
    papers: Iterable[Paper],
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
    allow_title_only: bool = True,
    flush: Callable[[int, int], bool] = buffer_full,
) -> Manifest:
    """Encode `papers` and write them as a new index whose data lives at `target`
    (replacing one if `overwrite`, waiting up to `wait` seconds for another writer of it
    to finish). `executor` computes the vectors the cache lacks (default: this process;
    or a Ray cluster).

    The papers are read, encoded and written a buffer at a time (`flush` says when one
    is full: `buffer_full`), so that a build holds one buffer whatever the corpus, and
    `papers` may be a stream (a folder of PDFs read as it goes). Nothing is published
    before the last paper is written: a failure leaves no index, or the one replaced.

    `vectors` skips the encoding: row i must be paper i's embedding by this very
    encoder (a corpus's published embeddings, say; a memory map is read a buffer at a
    time); they are normalised here. `passage_vectors` does the same for the papers'
    passages, paper after paper.
    """
    fields = check_fields(options.fields)
    lexical_fields = check_fields(options.lexical_fields, "--lexical-fields")
    if isinstance(papers, Sized) and not len(papers):
        raise InputError("no papers to index")
    if isinstance(papers, Sequence):
        _check_unique(papers)
        _check_given(papers, vectors, passage_vectors, encoder.dim)
    # Refuse what would fail before encoding, which can take hours.
    directory.ensure_writable(replace=overwrite)
    target = target or parse_target("local")
    storage = storage_class(target.kind)(directory, StorageRecord.from_dict(target.settings()),
                                         target.secrets())
    try:
        storage.check_build(options, len(papers) if isinstance(papers, Sized)
                            else _UNKNOWN_COUNT, encoder.dim, overwrite=overwrite)
        batches = _batches(papers, encoder, fields, vectors, passage_vectors,
                           allow_title_only=allow_title_only, flush=flush, progress=progress,
                           executor=executor)
        with directory.write(replace=overwrite, wait=wait) as staging:
            manifest = Manifest(model=model_record(encoder),
                                text=TextRecord(fields, lexical_fields), count=0,
                                software=f"embedsearch {__version__}")
            return storage.build(staging, batches, manifest, options, progress=progress)
    finally:
        storage.close()


def _batches(papers: Iterable[Paper], encoder: Encoder, fields: Sequence[str],
             vectors: np.ndarray | None, passage_vectors: np.ndarray | None, *,
             allow_title_only: bool, flush: Callable[[int, int], bool], progress: bool,
             executor: Executor | None) -> Iterator[PaperBatch]:
    """`papers` a buffer at a time, checked and encoded (or their rows of `vectors` and
    `passage_vectors` taken), as the storage asks for them."""
    seen: dict[str, int] = {}
    row = passage_row = 0
    for chunk in _buffers(papers, flush):
        check_abstracts(chunk, allow_title_only)
        _check_unique(chunk, seen)
        count = sum(len(paper.passages) for paper in chunk)
        own = (_encode(encoder, chunk, fields, progress, executor) if vectors is None else
               _given_vectors(vectors[row:row + len(chunk)], len(chunk), encoder.dim))
        passages = (encode_passages(encoder, chunk, progress=progress, executor=executor)
                    if passage_vectors is None else None if not count else
                    _given_vectors(passage_vectors[passage_row:passage_row + count], count,
                                   encoder.dim))
        row, passage_row = row + len(chunk), passage_row + count
        yield PaperBatch(chunk, own, passages)
        del chunk, own, passages  # the storage wrote them: hold nothing while reading on
    _check_used(vectors, row, "vectors")
    _check_used(passage_vectors, passage_row, "passage vectors")


def _buffers(papers: Iterable[Paper], flush: Callable[[int, int], bool]
             ) -> Iterator[list[Paper]]:
    """`papers` in lists, each ended when `flush` says the buffer is full."""
    held: list[Paper] = []
    passages = 0
    for paper in papers:
        held.append(paper)
        passages += len(paper.passages)
        if flush(len(held), passages):
            yield held
            held, passages = [], 0
    if held:
        yield held


def _check_given(papers: Sequence[Paper], vectors: np.ndarray | None,
                 passage_vectors: np.ndarray | None, dim: int) -> None:
    """Refuse precomputed vectors of the wrong shape before anything is written."""
    if vectors is not None and tuple(vectors.shape) != (len(papers), dim):
        raise InputError(f"expected precomputed vectors of shape ({len(papers)}, {dim}), got "
                         f"{vectors.shape}")
    count = sum(len(paper.passages) for paper in papers)
    if passage_vectors is not None and tuple(passage_vectors.shape) != (count, dim):
        raise InputError(f"expected precomputed passage vectors of shape ({count}, {dim}), "
                         f"got {passage_vectors.shape}")


def _check_used(given: np.ndarray | None, used: int, what: str) -> None:
    """Refuse precomputed rows left over once a stream of papers ended."""
    if given is not None and len(given) != used:
        raise InputError(f"expected precomputed {what} of {used} rows (one a paper, in "
                         f"order), got {len(given)}")


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
