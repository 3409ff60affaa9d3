"""`SearchEngine`: one index opened for search, similar-paper lookup and updates.

It composes the parts (encoder, the index's storage, retrieval) and owns the rules that
span them: a query encoder must match the index's, a filter narrows the search rather
than its results, a paper is never its own neighbour, a write's papers are encoded
before the writers' lock is taken. An open engine follows its index (`live.LiveIndex`):
each call reads the newest generation (or, while another thread reads a newer one from
disk, the one served until then), and never two.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from .bundled import default_index, sample_papers
from .corpus_map.attached import MapShelf
from .corpus_map.projection import CorpusMap
from .encoding import DEFAULT_BACKEND, Encoder, Executor, ModelSpec, index_encoder
from .errors import EmbedSearchError, PaperNotFoundError, QueryError
from .filters import Filters
from .index.checking import DRIFT_SAMPLE, CheckReport, check_index
from .index.info import IndexInfo, describe
from .index.live import LiveIndex
from .index.syncing import SyncReport, SyncSource, plan_sync, stored_vectors
from .index.writing import (
    DEFAULT_LEXICAL_FIELDS,
    IndexOptions,
    adding,
    build_index,
    check_abstracts,
    encode_papers,
    replacing,
)
from .papers import DEFAULT_FIELDS, Paper
from .readers import read_papers
from .readers.records import papers_from_records
from .search.results import Hits
from .search.retrieval import Request, Retriever, check_k, check_mode, check_query
from .similar.examples import like_keys, like_papers, match_keys, pull_towards
from .similar.recommending import DEFAULT_METHOD
from .storage import Storage, Target, View
from .storage.backup import backup_index
from .storage.layout import DEFAULT_WAIT, IndexDirectory, Manifest, Staging
from .storage.records import ModelRecord
from .watches.saved import WatchList

__all__ = ["SearchEngine"]


class SearchEngine:
    """An open index: search it, find papers like others, add and remove papers.

    Make one with `build` or `build_from_files` (encode papers into a new index), or
    `open` (an index built before, by any process). One engine may serve many threads;
    several processes may open the same index while one of them writes: each call
    reads the newest state the index had when it began. Close it (or use `with`) to
    let go of its files.

    Example:
        ```python
        from embedsearch import Filters, SearchEngine

        with SearchEngine.open("indexes/mine") as engine:
            for hit in engine.search("graph neural networks for molecules", k=3,
                                     filters=Filters.parse(year="2023-")):
                print(hit.rank, round(hit.score, 3), hit.paper.id, hit.evidence)
            like = engine.similar(hit.paper.id, k=3)     # papers like the last hit
        ```
    """

    def __init__(self, directory: IndexDirectory, *, model: str | ModelSpec | None = None,
                 backend: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
                 cache: bool = True, verify: bool = True, query_prompt: str | None = None,
                 secrets: Mapping[str, str] | None = None) -> None:
        self._directory = directory
        self._requested = (model, backend, query_prompt)
        self._cache_dir = cache_dir
        self._cache = cache
        self._live = LiveIndex(directory, verify=verify, secrets=secrets)
        self._encoder: tuple[ModelRecord, Encoder] | None = None  # (for model, encoder)
        self._maps = MapShelf()
        if model is not None or backend is not None or query_prompt is not None:
            self.encoder  # refuse a mismatched encoder now, not at the first query

    # -- opening and building ------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], *, model: str | None = None,
             backend: str | None = None, cache_dir: str | os.PathLike[str] | None = None,
             cache: bool = True, verify: bool = True, query_prompt: str | None = None,
             secrets: Mapping[str, str] | None = None) -> SearchEngine:
        """Open the index at `path`, checking its files first.

        Args:
            path: the index directory (what `build` wrote).
            model: the query encoder's model; by default the one that built the index.
                Another model is refused: its vectors are not comparable.
            backend: the query encoder's runtime (torch, onnx, openvino, ...); by default
                the index's.
            cache_dir: exported models and the embedding cache `add` uses (default
                `$EMBEDSEARCH_CACHE_DIR` or `~/.cache/embedsearch`).
            cache: False to neither read nor store cached vectors.
            verify: False to skip the sha256 of every file (size is still checked).
            query_prompt: text put before queries; by default the index's, and another
                is refused.
            secrets: what the index's storage needs and must never be written to disk,
                such as `{"token": ...}` for a Milvus server (default there:
                `$MILVUS_TOKEN`).

        Raises:
            IndexNotFoundError: no index at `path`.
            IndexCorruptError: a file is missing, cut short or fails its checksum.
            IndexIncompatibleError: a format this version cannot read (the message says
                to run `embedsearch upgrade`, or which version to install), or a
                `model` or `query_prompt` other than the index's.
            ModelError: the model cannot be found or loaded.
        """
        return cls(IndexDirectory(path), model=model, backend=backend, cache_dir=cache_dir,
                   cache=cache, verify=verify, secrets=secrets,
                   query_prompt=query_prompt)

    @classmethod
    def build(cls, out: str | os.PathLike[str], papers: Iterable[Paper | Mapping[str, Any]], *,
              model: str | None = None, index_type: str = "auto",
              index_params: dict[str, Any] | None = None,
              fields: Sequence[str] = DEFAULT_FIELDS,
              lexical_fields: Sequence[str] = DEFAULT_LEXICAL_FIELDS,
              exact_max: int | None = None, memory_budget: int | None = None,
              overwrite: bool = False, progress: bool = False,
              backend: str = DEFAULT_BACKEND, batch_size: int | None = None,
              cache_dir: str | os.PathLike[str] | None = None, cache: bool = True,
              vectors: np.ndarray | None = None, wait: float | None = DEFAULT_WAIT,
              executor: Executor | None = None, storage: Target | None = None,
              query_prompt: str | None = None, document_prompt: str | None = None,
              allow_title_only: bool = False) -> SearchEngine:
        """Encode `papers` into a new index at `out` and open it.

        Args:
            out: the index directory to create.
            papers: `Paper` objects, or mappings with at least an `abstract` (the fields
                of [input formats](input-formats.md)); ids must be unique.
            model: a sentence-transformers model name or folder (default: the bundled
                all-MiniLM-L6-v2).
            index_type: `auto`, `flat`, `hnsw`, `ivf`, `ivfpq` or a FAISS factory string.
                `auto` is exact search up to `exact_max` papers (default 50,000), then
                HNSW, or ivfpq when HNSW would not fit `memory_budget`.
            index_params: the index type's parameters (`{"efSearch": 128}`).
            fields: the paper fields the vectors are made from.
            lexical_fields: the paper fields BM25 indexes.
            exact_max: the most papers `auto` searches exactly.
            memory_budget: bytes the vector index may take in memory.
            overwrite: replace an index already at `out`.
            progress: show progress bars on stderr.
            backend: the encoder runtime; `auto` takes the fastest that agrees with
                torch on this machine, or, replacing an index built by the same model,
                that index's backend (its scores stay as they were).
            batch_size: texts encoded at once (default: the backend's).
            cache_dir: exported models and the embedding cache.
            cache: False to neither read nor store cached vectors.
            vectors: the papers' embeddings, already made by this model and backend, in
                the order of `papers`: nothing is encoded.
            wait: seconds to wait for another writer of `out` (None: no limit).
            executor: what computes the vectors the cache lacks: this process by
                default, or a Ray cluster (`embedsearch.encoding.RayExecutor`).
            storage: where vectors, words and papers live: files in `out` (`None` or
                `Local()`) or a Milvus collection (`Milvus(uri, collection)`).
            query_prompt: text put before queries; by default the model's own, `""` for
                none. The index keeps it, and its queries use it.
            document_prompt: text put before papers' texts, likewise.
            allow_title_only: index papers without an abstract on their titles
                (`Paper.title_only`) instead of refusing them.

        Returns:
            The new index, open.

        Raises:
            IndexExistsError: `out` holds an index (or other files) and not `overwrite`.
            InputError: a paper lacks an abstract (without `allow_title_only`), or ids
                repeat.
            IndexBusyError: another process kept writing `out` for longer than `wait`.
            ModelError: the model cannot be found or loaded.
        """
        records = papers_from_records(papers)
        check_abstracts(records, allow_title_only)
        directory = IndexDirectory(out)
        encoder = Encoder(model, backend=backend, batch_size=batch_size, cache_dir=cache_dir,
                          cache=cache, query_prompt=query_prompt,
                          document_prompt=document_prompt,
                          job_size=len(records) if vectors is None else 0,
                          replacing=_built_with(directory) if overwrite else None)
        options = IndexOptions(index_type, index_params, tuple(fields), exact_max, memory_budget,
                               tuple(lexical_fields))
        build_index(directory, records, encoder, options, target=storage,
                    vectors=vectors, overwrite=overwrite, progress=progress, wait=wait,
                    executor=executor)
        engine = cls(directory, verify=False, cache_dir=cache_dir,
                     secrets=storage.secrets() if storage else None)
        engine._encoder = (engine._live.manifest().model, encoder)
        return engine

    @classmethod
    def build_from_files(cls, out: str | os.PathLike[str], paths: Iterable[str | os.PathLike[str]],
                         *, format: str | None = None, **options: Any) -> SearchEngine:
        """Read the papers of `paths` and `build` an index of them.

        Args:
            out: the index directory to create.
            paths: files in any [input format](input-formats.md) (JSON
                lines, CSV, BibTeX, RIS, CSL-JSON, arXiv, OpenAlex, ...), chosen by
                extension or content.
            format: read every file as this format instead.
            **options: as for `build`.

        Raises:
            InputError: a file cannot be read; the message names the file, line and
                field.
            IndexExistsError: as for `build`, and the other errors of `build`.
        """
        title_only = bool(options.get("allow_title_only", False))
        return cls.build(out, read_papers([Path(p) for p in paths], format,
                                          title_only=title_only), **options)

    @classmethod
    def open_default(cls, path: str | os.PathLike[str] | None = None, *,
                     progress: bool = False,
                     cache_dir: str | os.PathLike[str] | None = None) -> SearchEngine:
        """The index of the bundled ICLR 2025 sample (`bundled.sample_papers`: ids
        iclr2025:1 ... iclr2025:38) at `path`, built there if absent. By default it lives
        in the user's data folder, `~/.local/share/embedsearch/indexes/iclr2025` (or
        below `$XDG_DATA_HOME`), and in `indexes/iclr2025` of a checkout of embedsearch
        (`bundled.default_index`)."""
        path = default_index() if path is None else path
        if not IndexDirectory(path).exists():
            return cls.build(path, sample_papers(), progress=progress, cache_dir=cache_dir)
        return cls.open(path, cache_dir=cache_dir)

    def refresh(self) -> bool:
        """Switch to a newer generation if another process published one; True if it did.
        Every call of the engine does this first: one stat when nothing changed. Files of
        a new generation are checked by size (their writer checksummed them)."""
        return self._live.refresh()

    def follow_in_background(self) -> None:
        """From now on a call that finds a newer generation answers from the served one
        while a thread of its own reads the newer from disk (a server: no query waits
        the second that takes at 85k papers); by default each call reads it first."""
        self._live.background = True

    def close(self) -> None:
        """Let go of the index (its lease, files and connections); twice is harmless."""
        self._live.close()

    def __enter__(self) -> SearchEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the encoder -----------------------------------------------------------------------
    @property
    def encoder(self) -> Encoder:
        """The encoder of the served generation's queries (resolved anew after a rebuild
        with another model); `encoder.encode_queries` gives the vectors `search` ranks by."""
        model = self._live.manifest().model
        if self._encoder is None or self._encoder[0] != model:
            requested, backend, query_prompt = self._requested
            self._encoder = (model, index_encoder(model, self._directory.path,
                                                  model=requested, backend=backend,
                                                  query_prompt=query_prompt,
                                                  cache_dir=self._cache_dir, cache=self._cache))
        return self._encoder[1]

    # -- reading ---------------------------------------------------------------------------
    def snapshot(self) -> AbstractContextManager[View]:
        """The newest generation, held for a `with` block: one consistent state to read
        (`keys`, `vectors`, `papers`, `words`, ...). Every method of the engine reads one."""
        return self._live.reading()

    def __len__(self) -> int:
        return self._live.manifest().count

    def __contains__(self, paper_id: object) -> bool:
        return isinstance(paper_id, str) and bool(self._live.keys_of([paper_id]))

    @property
    def path(self) -> Path:
        """The index directory."""
        return self._directory.path

    def info(self) -> IndexInfo:
        """What this index holds and how it was built."""
        return describe(self._directory, self._live.manifest())

    def get(self, paper_id: str) -> Paper:
        """The paper with id `paper_id`.

        Raises:
            PaperNotFoundError: the index has no such paper.
        """
        with self.snapshot() as view:  # a write swaps the store; never read a closed one
            key = self._key(view, paper_id)
            return view.papers([key])[key]

    def get_papers(self, paper_ids: Iterable[str]) -> dict[str, Paper]:
        """The papers of `paper_ids` that the index holds, by id (one read, however many;
        an id it lacks is simply absent)."""
        with self.snapshot() as view:
            keys = view.keys_of(paper_ids)
            found = view.papers(list(keys.values()))
            return {paper_id: found[key] for paper_id, key in keys.items() if key in found}

    def count(self, filters: Filters | None = None) -> int:
        """How many papers the index holds that `filters` admit (all, without)."""
        with self.snapshot() as view:
            return view.count(filters) if filters else len(view)

    def added(self, paper_ids: Iterable[str]) -> dict[str, str]:
        """When the index received each of `paper_ids` it holds: an instant (UTC, ISO
        8601, see `dates`), or '' for a paper written before indexes kept dates."""
        with self.snapshot() as view:
            keys = view.keys_of(paper_ids)
            when = view.added(keys.values())
            return {paper_id: when.get(key, "") for paper_id, key in keys.items()}

    @property
    def watches(self) -> WatchList:
        """The saved searches kept with this index (`watching`), for digests."""
        return WatchList(self._directory.path)

    def _key(self, view: View, paper_id: str) -> int:
        found = view.keys_of([paper_id])
        if paper_id not in found:
            raise PaperNotFoundError(paper_id, self._directory.path)
        return found[paper_id]

    def _retriever(self, view: View) -> Retriever:
        return Retriever(view, lambda texts: self.encoder.encode_queries(texts))

    def search(self, query: str, k: int = 10, *, filters: Filters | None = None,
               mode: str = "hybrid", positives: Sequence[str] = (), diverse: bool = False,
               evidence: bool = True, min_score: float | None = None) -> Hits:
        """The `k` papers that best match `query`, best first.

        Args:
            query: what the papers are about, in words.
            k: how many hits (1 to 10,000).
            filters: which papers may be returned (years, venues, keywords); the search
                ranks within them rather than filtering its top k.
            mode: `hybrid` (BM25 and meaning, fused; the default), `dense` (meaning
                only) or `lexical` (shared words only).
            positives: ids of papers like the ones wanted; their vectors join the
                query's.
            diverse: re-rank for variety (maximal marginal relevance), so near-duplicates
                do not fill the page.
            evidence: give each hit the sentence of its abstract that best matches.
            min_score: leave out the hits scoring less than this (`Hit.score`, the number
                they are ordered by, on the cosine scale): fewer than `k` then come back,
                or none.

        Returns:
            The hits, a list of `Hit` (a table in Jupyter; `to_pandas()` for a DataFrame).

        Raises:
            QueryError: an empty query, `k` out of range, or an unknown mode.
            PaperNotFoundError: a `positives` id the index lacks.
        """
        return self.search_many([query], k, filters=filters, mode=mode, positives=positives,
                                diverse=diverse, evidence=evidence, min_score=min_score)[0]

    def search_many(self, queries: Sequence[str], k: int = 10, *,
                    filters: Filters | None = None, mode: str = "hybrid",
                    positives: Sequence[str] = (), diverse: bool = False,
                    evidence: bool = True, min_score: float | None = None) -> list[Hits]:
        """`search` for each of `queries`, their vectors encoded in one batch (faster than
        one call each); the other arguments as for `search`.

        Returns:
            The hits of each query, in the order of `queries`.
        """
        if isinstance(queries, str):
            raise QueryError("search_many takes a list of queries; use search for one")
        texts = [check_query(query) for query in queries]
        check_k(k)
        check_mode(mode)
        if not texts:
            return []
        with self.snapshot() as view:
            examples = self._keys(view, positives)
            # Lexical ranking needs no vector, but every hit's score is on the cosine
            # scale of its candidates (`Hit.score`), so the query is encoded in every mode.
            vectors = self.encoder.encode_queries(texts)
            retriever = self._retriever(view)
            pulled = view.vectors(examples)
            results = []
            for text, vector in zip(texts, vectors):
                vector = None if vector is None else pull_towards(vector, pulled)
                request = Request(text, vector, examples, text)
                results.append(Hits(retriever.hits(request, k, mode, filters, diverse, evidence,
                                                   min_score)))
            return results

    def similar(self, paper_ids: str | Sequence[str], k: int = 10, *,
                negatives: Sequence[str] = (), filters: Filters | None = None,
                diverse: bool = False, evidence: bool = True,
                method: str = DEFAULT_METHOD, min_score: float | None = None) -> Hits:
        """The `k` papers closest to the given papers and, with `negatives`, far from those.

        Ranked by the stored vectors (nothing is re-encoded), by `method`: by default
        the given papers' clusters in turns, so that each topic among them is heard
        (see `recommending`); `mean` ranks by the mean of their vectors minus half the
        mean of the negatives'. The given papers are never returned.

        Args:
            paper_ids: one id, or several, of papers in the index.
            k: how many hits.
            negatives: ids of papers unlike the ones wanted.
            filters: which papers may be returned.
            diverse: re-rank for variety, as for `search`.
            evidence: give each hit its sentence closest to the examples.
            method: clusters, mean, classifier or nearest (`recommending.METHODS`).
            min_score: leave out the hits scoring less than this (`Hit.score`: for a
                recommendation, its cosine to its nearest example).

        Raises:
            PaperNotFoundError: an id the index lacks.
            QueryError: no id, `k` out of range, or an unknown method.
        """
        check_k(k)
        ids = [paper_ids] if isinstance(paper_ids, str) else list(paper_ids)
        if not ids:
            raise QueryError("similar needs at least one paper id")
        with self.snapshot() as view:
            request = like_keys(view, self._keys(view, ids), self._keys(view, negatives),
                                method)
            return Hits(self._retriever(view).hits(request, k, "dense", filters,
                                                   diverse, evidence, min_score))

    def similar_to_papers(self, papers: Iterable[Paper | Mapping[str, Any]], k: int = 10, *,
                          negatives: Iterable[Paper | Mapping[str, Any]] = (),
                          filters: Filters | None = None, diverse: bool = False,
                          evidence: bool = True, method: str = DEFAULT_METHOD,
                          min_score: float | None = None) -> Hits:
        """The `k` papers of the index closest to `papers`, which need not be in it: a
        bibliography, a reading list, your own drafts.

        A given paper the index holds (same id, DOI, arXiv id, or title ignoring case,
        punctuation and spacing) uses its stored vector and is never returned; the
        others are encoded together in one batch. A paper without an abstract (an entry
        known by its title) is encoded from its title and keywords and weighs half
        (`examples.TITLE_ONLY_WEIGHT`). Ranked like `similar`, by `method`.

        Args:
            papers: `Paper` objects or mappings (`{"title": ..., "abstract": ...}`),
                as `read_papers` or `read_bibliography` return them.
            k: how many hits.
            negatives: papers unlike the ones wanted, likewise.
            filters: which papers may be returned.
            diverse: re-rank for variety, as for `search`.
            evidence: give each hit its sentence closest to the examples.
            method: as for `similar`.
            min_score: as for `similar`.

        Raises:
            QueryError: no paper given, `k` out of range, or an unknown method.
            InputError: a paper with neither an abstract nor a title.
        """
        check_k(k)
        given = papers_from_records(papers, title_only=True)
        against = papers_from_records(negatives, title_only=True)
        if not given:
            raise QueryError("similar_to_papers needs at least one paper")
        with self.snapshot() as view:
            request = like_papers(given, against, view,
                                  lambda texts: self.encoder.encode_documents(texts), method)
            return Hits(self._retriever(view).hits(request, k, "dense", filters,
                                                   diverse, evidence, min_score))

    def match_papers(self, papers: Sequence[Paper]) -> list[str | None]:
        """The id of the index's paper each given paper is (same id, DOI, arXiv id or
        normalised title, as `similar_to_papers` matches them), or None."""
        with self.snapshot() as view:
            keys = match_keys(papers, view)
            found = view.papers(key for key in keys if key is not None)
        return [found[key].id if key is not None and key in found else None for key in keys]

    def _keys(self, view: View, paper_ids: Sequence[str]) -> np.ndarray:
        return np.array(sorted({self._key(view, i) for i in paper_ids}), dtype=np.int64)

    # -- the map of the corpus ---------------------------------------------------------------
    def corpus_map(self) -> CorpusMap | None:
        """The 2D map stored with the index as it is now, or None if there is none yet; a
        map computed from other data (before an add or remove) is never returned."""
        with self.snapshot() as view:
            return self._maps.current(self._directory, view.manifest)

    def compute_map(self, *, wait: float | None = DEFAULT_WAIT) -> CorpusMap | None:
        """Compute the map and store it with the index (a new generation sharing the data
        files); None, storing nothing, if the index changed meanwhile. Minutes for large
        indexes; only the snapshot and the commit hold the lock, so queries go on."""
        return self._maps.compute(self._directory, self.snapshot, wait=wait)

    def map_papers(self, corpus_map: CorpusMap) -> list[Paper]:
        """The papers of `corpus_map`'s points, in point order (it must be current)."""
        with self._live.lock:
            papers = self._live.view.papers(corpus_map.keys)
        return [papers[int(key)] for key in corpus_map.keys]

    # -- operating it ----------------------------------------------------------------------
    def check(self, *, deep: bool = False, sample: int = DRIFT_SAMPLE, repair: bool = False,
              wait: float | None = DEFAULT_WAIT) -> CheckReport:
        """Whether the index is whole (`checking`): every file's checksum, its parts
        agreeing on its papers, nothing left by a dead writer. `deep` also re-encodes
        `sample` stored papers (0: all) with the model and runtime installed now and
        reports their drift; `repair` fixes what it can through the writers' lock."""
        return check_index(self._directory, self.snapshot,
                           lambda update: self._live.write(update, wait=wait), deep=deep,
                           sample=sample, repair=repair, wait=wait, cache_dir=self._cache_dir)

    def backup(self, dest: str | os.PathLike[str]) -> IndexInfo:
        """A verified copy of the current generation in the new folder `dest`, an index
        that opens as it is; taken under a reader's lease, so writes go on meanwhile."""
        return describe(IndexDirectory(dest), backup_index(self._directory.path, dest))

    # -- writing ---------------------------------------------------------------------------
    def add(self, papers: Iterable[Paper | Mapping[str, Any]], *, progress: bool = False,
            wait: float | None = DEFAULT_WAIT, executor: Executor | None = None,
            allow_title_only: bool = False) -> int:
        """Encode and add the papers whose ids are new.

        Papers already in the index (by id) are left as they are and not re-encoded, so
        adding a grown export again adds only its new papers. They are encoded before
        the writers' lock is taken, then added to the newest generation (skipping any
        that another process added meanwhile); readers see all of them or none.

        Args:
            papers: as for `build`.
            progress: show progress bars on stderr.
            wait: seconds to wait for another writer (None: no limit).
            executor: as for `build`.
            allow_title_only: as for `build`.

        Returns:
            How many papers were added.

        Raises:
            InputError: as for `build`.
            IndexBusyError: another process kept writing for longer than `wait`.
        """
        records = papers_from_records(papers)
        check_abstracts(records, allow_title_only)
        manifest = self._live.manifest()  # the index is not loaded: only its records read
        known = self._live.keys_of([paper.id for paper in records])
        new = [paper for paper in records if paper.id not in known]
        if not new:
            return 0
        vectors = encode_papers(self.encoder, manifest, new, progress=progress,
                                executor=executor)
        return self._live.write(adding(manifest, new, vectors), wait=wait)

    def add_files(self, paths: Iterable[str | os.PathLike[str]], *, format: str | None = None,
                  progress: bool = False, wait: float | None = DEFAULT_WAIT,
                  executor: Executor | None = None, allow_title_only: bool = False) -> int:
        """`add` the papers of `paths` (any input format; `format` forces one).

        Raises:
            InputError: a file cannot be read; the message names the file, line and
                field. Nothing is added then.
        """
        papers = read_papers([Path(p) for p in paths], format, title_only=allow_title_only)
        return self.add(papers, progress=progress, wait=wait, executor=executor,
                        allow_title_only=allow_title_only)

    def remove(self, paper_ids: Iterable[str], *, wait: float | None = DEFAULT_WAIT) -> int:
        """Remove papers by id: all of them, or none if one is unknown.

        Args:
            paper_ids: ids of papers in the index.
            wait: seconds to wait for another writer (None: no limit).

        Returns:
            How many papers were removed.

        Raises:
            PaperNotFoundError: an id the index lacks (nothing is removed).
            IndexBusyError: another process kept writing for longer than `wait`.
        """
        ids = list(dict.fromkeys(paper_ids))
        known = self._live.keys_of(ids)
        for paper_id in ids:  # refuse an unknown id before waiting for the lock
            if paper_id not in known:
                raise PaperNotFoundError(paper_id, self._directory.path)
        if ids:
            self._live.write(lambda storage, staging, newest: storage.remove(
                staging, newest, ids), wait=wait)
        return len(ids)

    def sync(self, source: SyncSource, *, dry_run: bool = False,
             allow_title_only: bool = False, progress: bool = False,
             wait: float | None = DEFAULT_WAIT, executor: Executor | None = None
             ) -> SyncReport:
        """Bring the index's papers from `source` (a `ZoteroLibrary`) in step with it:
        add its new papers, re-write its changed ones, remove those it no longer has.

        Papers of other sources are left alone; unchanged ones are not written, and a
        changed one is encoded again only if its encoded text changed (otherwise its
        stored vector is kept).
        Changes are written in one generation, so readers see the index before or
        after, never between; running it again at once changes nothing.

        Args:
            source: what to mirror, e.g. `ZoteroLibrary(collection="Thesis")`.
            dry_run: say what would change, changing nothing.
            allow_title_only: index papers without an abstract on their titles.
            progress: show progress bars on stderr.
            wait: seconds to wait for another writer (None: no limit).
            executor: as for `build`.

        Returns:
            The ids added, updated and removed, and how many were unchanged.

        Raises:
            InputError: the source cannot be read (nothing changed then).
            IndexBusyError: another process kept writing for longer than `wait`.
        """
        state = source.sync_state()
        with self.snapshot() as view:
            stored = {paper.id: paper for paper in view.papers(view.keys()).values()
                      if state.owns(paper.id)}
            plan = plan_sync(state, stored, allow_title_only=allow_title_only)
            kept = stored_vectors(view, plan.update, stored)
        report = plan.report(dry_run=dry_run)
        if dry_run or not report.changed:
            return report
        manifest = self._live.manifest()
        written = plan.add + plan.update
        fresh = [paper for paper in written if paper.id not in kept]
        encoded = iter(encode_papers(self.encoder, manifest, fresh, progress=progress,
                                     executor=executor) if fresh else [])
        vectors = np.array([kept[p.id] if p.id in kept else next(encoded) for p in written],
                           dtype=np.float32).reshape(len(written), self.encoder.dim)
        removed = plan.remove + [paper.id for paper in plan.update]
        self._live.write(replacing(manifest, removed, written, vectors), wait=wait)
        return report

    def compact(self, *, wait: float | None = DEFAULT_WAIT) -> bool:
        """Merge the index's segments into one, dropping removed papers for good.

        Writes merge segments as they go (see the architecture page), so this is never
        needed for correctness; it gives the fastest queries and the smallest files,
        before a backup or after removing many papers, at the cost of rewriting the
        whole index once. Readers go on meanwhile and switch when it is published.

        Args:
            wait: seconds to wait for another writer (None: no limit).

        Returns:
            Whether anything was rewritten (False: one segment already, nothing removed,
            or a storage that compacts itself, such as Milvus).

        Raises:
            IndexBusyError: another process kept writing for longer than `wait`.
        """
        written: list[bool] = []

        def compacting(storage: Storage, staging: Staging, newest: Manifest) -> Manifest | None:
            manifest = storage.compact(staging, newest)
            written.append(manifest is not None)
            return manifest

        self._live.write(compacting, wait=wait)
        return any(written)


def _built_with(directory: IndexDirectory) -> ModelRecord | None:
    """The model record of the index at `directory` (None when there is none to read):
    what a build replacing it keeps its encoder backend from."""
    try:
        return directory.read_manifest().model
    except EmbedSearchError:
        return None
