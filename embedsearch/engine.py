"""`SearchEngine`: one index opened for search, similar-paper lookup and updates.

It composes the parts (encoder, the index's storage, retrieval) and owns the rules that
span them: a query encoder must match the index's, a filter narrows the search rather
than its results, a paper is never its own neighbour. What needs no ranking (papers by
id, writes, the map, checks: the index's life) it has from `index.opened.OpenIndex`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .bundled import default_index, sample_papers
from .encoding import DEFAULT_BACKEND, Encoder, Executor
from .errors import QueryError
from .filters import Filters
from .index.live import known_keys
from .index.opened import OpenIndex
from .index.writing import IndexOptions, new_index
from .papers import Paper
from .readers import stream_papers
from .readers.records import each_paper, papers_from_records
from .search.results import Hits
from .search.retrieval import Retriever, check_k, check_mode, check_query
from .similar.examples import like_keys, like_papers, match_keys, query_requests
from .similar.recommending import DEFAULT_METHOD
from .storage import Target, View
from .storage.directory import DEFAULT_WAIT, IndexDirectory
from .storage.records import ModelRecord

__all__ = ["SearchEngine"]


class SearchEngine(OpenIndex):
    """An open index: search it, find papers like others, add and remove papers.

    Make one with `build` or `build_from_files` (encode papers into a new index), or
    `open` (an index built before, by any process). One engine may serve many threads;
    several processes may open the same index while one of them writes: each call
    reads the newest state the index had when it began. Close it (or use `with`) to
    let go of its files. How the methods are named (one, `_many`, `_files`, `_papers`):
    see the Python API reference.

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
                   cache=cache, verify=verify, secrets=secrets, query_prompt=query_prompt)

    @classmethod
    def build(cls, out: str | os.PathLike[str], papers: Iterable[Paper | Mapping[str, Any]],
              options: IndexOptions = IndexOptions(), *, model: str | None = None,
              backend: str = DEFAULT_BACKEND, batch_size: int | None = None,
              query_prompt: str | None = None, document_prompt: str | None = None,
              cache_dir: str | os.PathLike[str] | None = None, cache: bool = True,
              executor: Executor | None = None, vectors: np.ndarray | None = None,
              storage: Target | None = None, allow_title_only: bool = False,
              overwrite: bool = False, progress: bool = False,
              wait: float | None = DEFAULT_WAIT,
              passage_vectors: np.ndarray | None = None) -> SearchEngine:
        """Encode `papers` into a new index at `out` and open it.

        Args:
            out: the index directory to create.
            papers: `Paper` objects, or mappings with at least an `abstract` (the fields
                of [input formats](input-formats.md)); ids must be unique. A sequence
                is checked whole before anything is encoded; any other iterable (a
                generator) is read as the build goes, a buffer at a time
                (`index.writing.buffer_full`), so a corpus need not fit in memory.
            options: the vector index type and the fields embedded and indexed for BM25
                (`IndexOptions`; by default exact search up to 50,000 papers, then HNSW).
            model: a sentence-transformers model name or folder (default: the bundled
                all-MiniLM-L6-v2).
            backend: the encoder runtime; `auto` takes the fastest that agrees with
                torch on this machine, or, replacing an index built by the same model,
                that index's backend (its scores stay as they were).
            batch_size: texts encoded at once (default: the backend's).
            query_prompt: text put before queries; by default the model's own, `""` for
                none. The index keeps it, and its queries use it.
            document_prompt: text put before papers' texts, likewise.
            cache_dir: exported models and the embedding cache.
            cache: False to neither read nor store cached vectors.
            executor: what computes the vectors the cache lacks: this process by
                default, or a Ray cluster (`embedsearch.encoding.RayExecutor`).
            vectors: the papers' embeddings, already made by this model and backend, in
                the order of `papers`: nothing is encoded.
            passage_vectors: likewise for the passages of papers read in full
                (`Paper.passages`), paper after paper.
            storage: where vectors, words and papers live: files in `out` (`None` or
                `Local()`) or a Milvus collection (`Milvus(uri, collection)`).
            allow_title_only: index papers without an abstract on their titles
                (`Paper.title_only`) instead of refusing them.
            overwrite: replace an index already at `out`.
            progress: show progress bars on stderr.
            wait: seconds to wait for another writer of `out` (None: no limit).

        Returns:
            The new index, open.

        Raises:
            IndexExistsError: `out` holds an index (or other files) and not `overwrite`.
            InputError: a paper lacks an abstract (without `allow_title_only`), ids
                repeat, or `options` name an unknown field.
            IndexBusyError: another process kept writing `out` for longer than `wait`.
            ModelError: the model cannot be found or loaded.
        """
        directory = IndexDirectory(out)

        def encoder(job_size: int | None, replacing: ModelRecord | None) -> Encoder:
            return Encoder(model, backend=backend, batch_size=batch_size, cache_dir=cache_dir,
                           cache=cache, query_prompt=query_prompt,
                           document_prompt=document_prompt, job_size=job_size,
                           replacing=replacing)

        given = (papers_from_records(papers) if isinstance(papers, Sequence)
                 else each_paper(papers))
        made = new_index(directory, given, encoder, options,
                         allow_title_only=allow_title_only, vectors=vectors, target=storage,
                         overwrite=overwrite, progress=progress, wait=wait, executor=executor,
                         passage_vectors=passage_vectors)
        return cls(directory, verify=False, cache_dir=cache_dir, encoder=made,
                   secrets=storage.secrets() if storage else None)

    @classmethod
    def build_from_files(cls, out: str | os.PathLike[str], paths: Iterable[str | os.PathLike[str]],
                         options: IndexOptions = IndexOptions(), *, format: str | None = None,
                         model: str | None = None, backend: str = DEFAULT_BACKEND,
                         batch_size: int | None = None, query_prompt: str | None = None,
                         document_prompt: str | None = None,
                         cache_dir: str | os.PathLike[str] | None = None, cache: bool = True,
                         executor: Executor | None = None, vectors: np.ndarray | None = None,
                         storage: Target | None = None, allow_title_only: bool = False,
                         overwrite: bool = False, progress: bool = False,
                         wait: float | None = DEFAULT_WAIT) -> SearchEngine:
        """Read the papers of `paths` and `build` an index of them.

        Args:
            out: the index directory to create.
            paths: files in any [input format](input-formats.md) (JSON
                lines, CSV, BibTeX, RIS, CSL-JSON, arXiv, OpenAlex, ...), chosen by
                extension or content.
            format: read every file as this format instead.
            options: and the other arguments: as for `build`.

        Raises:
            InputError: a file cannot be read; the message names the file, line and
                field.
            IndexExistsError: as for `build`, and the other errors of `build`.
        """
        papers = stream_papers([Path(p) for p in paths], format, title_only=allow_title_only)
        return cls.build(out, papers, options, model=model, backend=backend,
                         batch_size=batch_size, query_prompt=query_prompt,
                         document_prompt=document_prompt, cache_dir=cache_dir, cache=cache,
                         executor=executor, vectors=vectors, storage=storage,
                         allow_title_only=allow_title_only, overwrite=overwrite,
                         progress=progress, wait=wait)

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
            examples = known_keys(view, positives, self.path)
            # Lexical ranking needs no vector, but every hit's score is on the cosine
            # scale of its candidates (`Hit.score`), so the query is encoded in every mode.
            requests = query_requests(view, texts, self.encoder.encode_queries(texts),
                                      examples)
            retriever = self._retriever(view)
            return [Hits(retriever.hits(request, k, mode, filters, diverse, evidence,
                                        min_score)) for request in requests]

    def similar(self, paper_ids: str | Sequence[str], k: int = 10, *,
                filters: Filters | None = None, negatives: Sequence[str] = (),
                method: str = DEFAULT_METHOD, diverse: bool = False, evidence: bool = True,
                min_score: float | None = None) -> Hits:
        """The `k` papers closest to the given papers and, with `negatives`, far from those.

        Ranked by the stored vectors (nothing is re-encoded), by `method`: by default
        the given papers' clusters in turns, so that each topic among them is heard
        (see `recommending`); `mean` ranks by the mean of their vectors minus half the
        mean of the negatives'. The given papers are never returned.

        Args:
            paper_ids: one id, or several, of papers in the index: one query.
            k: how many hits.
            filters: which papers may be returned.
            negatives: ids of papers unlike the ones wanted.
            method: clusters, mean, classifier or nearest (`recommending.METHODS`).
            diverse: re-rank for variety, as for `search`.
            evidence: give each hit its sentence closest to the examples.
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
            request = like_keys(view, known_keys(view, ids, self.path),
                                known_keys(view, negatives, self.path), method)
            return Hits(self._retriever(view).hits(request, k, "dense", filters,
                                                   diverse, evidence, min_score))

    def similar_to_papers(self, papers: Iterable[Paper | Mapping[str, Any]], k: int = 10, *,
                          filters: Filters | None = None,
                          negatives: Iterable[Paper | Mapping[str, Any]] = (),
                          method: str = DEFAULT_METHOD, diverse: bool = False,
                          evidence: bool = True, min_score: float | None = None) -> Hits:
        """`similar` for papers that need not be in the index: a bibliography, a reading
        list, your own drafts.

        A given paper the index holds (same id, DOI, arXiv id, or title ignoring case,
        punctuation and spacing) uses its stored vector and is never returned; the
        others are encoded together in one batch. A paper without an abstract (an entry
        known by its title) is encoded from its title and keywords and weighs half
        (`examples.TITLE_ONLY_WEIGHT`). Ranked like `similar`, by `method`.

        Args:
            papers: `Paper` objects or mappings (`{"title": ..., "abstract": ...}`),
                as `read_papers` or `read_bibliography` return them.
            negatives: papers unlike the ones wanted, likewise.
            k: and the other arguments: as for `similar`.

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
