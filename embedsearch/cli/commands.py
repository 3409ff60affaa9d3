"""What each `embedsearch` command does: read its arguments, call the engine, print."""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ..bundled import default_index
from ..errors import DependencyError, EmbedSearchError, InputError, QueryError
from ..filters import Filters
from . import output
from .sources import inputs

__all__ = ["add", "build", "cache", "filters_of", "index_path", "info", "map", "open_index",
           "overview", "progress", "read_files", "remove", "say",
           "search", "serve", "show", "similar", "storage_options"]


def progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


def say(args: argparse.Namespace, message: str) -> None:
    """Print a message for the person at the keyboard on stderr, unless --quiet."""
    if not args.quiet:
        print(message, file=sys.stderr)


def open_index(args: argparse.Namespace, *, model: str | None = None,
               verify: bool = True) -> Any:
    """The engine of the index the command names. `verify` False: files are checked by
    size, not hashed (a write that reads a few records should not hash the index)."""
    from ..engine import SearchEngine

    options = {"backend": getattr(args, "backend", None), "cache_dir": args.cache_dir,
               "verify": verify,
               "cache": not getattr(args, "no_cache", False),
               "secrets": storage_options(args),
               "query_prompt": getattr(args, "query_prompt", None)}
    if args.index is None:
        sample = default_index()
        if not (sample / "manifest.json").exists():
            say(args, f"Building the default index of the bundled ICLR 2025 sample in "
                       f"{sample} (first use only)...")
        return SearchEngine.open_default(sample, progress=progress(args),
                                         cache_dir=args.cache_dir)
    return SearchEngine.open(args.index, model=model, **options)


def index_path(args: argparse.Namespace) -> Path:
    """The index a command names: --index, else the bundled sample's."""
    return Path(args.index) if args.index else default_index()


def _storage(args: argparse.Namespace) -> Any:
    """Where `build` keeps the data: --storage KIND[:LOCATION] (or --milvus URI) with
    its --storage-option KEY=VALUEs."""
    from ..storage import parse_target

    uri = args.storage
    if args.milvus is not None:
        if uri is not None:
            raise InputError("--milvus URI is --storage milvus:URI: give one of them")
        uri = f"milvus:{args.milvus}"
    return parse_target(uri or "local", storage_options(args), Path(args.out).name)


def storage_options(args: argparse.Namespace) -> dict[str, str]:
    """--storage-option KEY=VALUEs, with the older --milvus-token. (The older Milvus
    --collection is gone: --collection chooses a Zotero collection, or filters.)"""
    options: dict[str, str] = {}
    for option in getattr(args, "storage_option", None) or []:
        key, equals, value = option.partition("=")
        if not equals or not key:
            raise InputError(f"--storage-option {option}: write KEY=VALUE")
        options[key.strip()] = value
    token = getattr(args, "milvus_token", None)
    if token is not None:
        options.setdefault("token", token)
    return options


def _executor(args: argparse.Namespace) -> Any:
    """`--ray [ADDRESS]`'s executor, to use in a `with` (it stops what it started)."""
    if args.ray is None:
        if args.ray_gpus is not None:
            raise InputError("--ray-gpus places encoding actors on a Ray cluster's GPUs: "
                             "give --ray too")
        return nullcontext(None)
    from ..encoding.ray_executor import RayExecutor

    executor = RayExecutor(args.ray, gpus_per_actor=args.ray_gpus or 0.0)
    try:
        executor.check_gpus()
    except BaseException:
        executor.close()  # stop the Ray instance it started to look
        raise
    return executor


def _backend(args: argparse.Namespace) -> str:
    """--backend, which --ray-gpus makes cuda (the actors encode on their GPUs)."""
    if not args.ray_gpus:
        return str(args.backend)
    if args.backend not in ("auto", "cuda"):
        raise InputError(f"--ray-gpus encodes with the cuda backend, not {args.backend}: "
                         "drop --backend or give --backend cuda")
    return "cuda"


def read_files(args: argparse.Namespace, files: list[Any], *, title_only: bool) -> Any:
    """The papers of `files` as --format, --strict say (a `Bibliography`)."""
    from ..readers import read_bibliography

    return read_bibliography(files, getattr(args, "format", None), title_only=title_only,
                             strict=args.strict)


def _write_report(args: argparse.Namespace, *found: Any) -> None:
    """--report FILE: every skipped and title-only entry of what was read, as JSON."""
    if args.report:
        from ..fs import write_atomic

        entries = [entry for bibliography in found for entry in bibliography.report()]
        write_atomic(Path(args.report), json.dumps(entries, indent=2, ensure_ascii=False))


def _shape(args: argparse.Namespace) -> str:
    """How hits are printed: text, jsonl (also --json), bibtex or csv."""
    shape = "jsonl" if args.json else args.output_format or "text"
    if getattr(args, "latex", False) and shape != "bibtex":
        raise QueryError("--latex spells BibTeX in LaTeX escapes: add --format bibtex")
    return shape


def filters_of(args: argparse.Namespace) -> Filters:
    """The filters --year, --venue, --keyword, --collection and --added-since give."""
    return Filters.parse(year=args.year, venues=args.venue or (), keywords=args.keyword or (),
                         collections=args.collection or (),
                         added_since=getattr(args, "added_since", None))


# -- commands ---------------------------------------------------------------------------
def build(args: argparse.Namespace) -> None:
    from ..engine import SearchEngine
    from ..storage import IndexOptions
    from ..storage.layout import IndexDirectory

    fields = [name.strip() for name in args.fields.split(",") if name.strip()]
    lexical = [name.strip() for name in args.lexical_fields.split(",") if name.strip()]
    backend = _backend(args)
    # Refuse an index in the way before reading: the readers' warnings about skipped
    # entries would come first, for files that will not be indexed.
    IndexDirectory(args.out).ensure_writable(replace=args.overwrite)
    found = read_files(args, inputs(args), title_only=args.allow_title_only)
    _write_report(args, found)
    with _executor(args) as executor:
        engine = SearchEngine.build(
            args.out, found.papers, IndexOptions(
                index_type=args.index_type, index_params=args.index_param,
                fields=tuple(fields), lexical_fields=tuple(lexical), exact_max=args.exact_max,
                memory_budget=int(args.memory_budget * 1e6) if args.memory_budget else None),
            allow_title_only=args.allow_title_only, model=args.model,
            overwrite=args.overwrite, progress=progress(args), backend=backend,
            batch_size=args.batch_size, cache_dir=args.cache_dir,
            cache=not args.no_cache, wait=args.wait, executor=executor,
            storage=_storage(args), query_prompt=args.query_prompt,
            document_prompt=args.document_prompt,
        )
        if executor is not None:
            say(args, executor.stats.summary())
    info = engine.info()
    prompts = info.prompts
    prompted = (f", query prompt {prompts['query']!r}, document prompt "
                f"{prompts['document']!r} ({prompts['source']})"
                if prompts["query"] or prompts["document"] else "")
    say(args, f"Indexed {output.counted(info.count, 'paper')} into {info.path} ({info.index_type}, "
               f"{info.model}, backend {info.encoder_backend}{prompted}).")


def search(args: argparse.Namespace) -> None:
    if (args.query is None) == (args.queries is None):
        raise InputError("give either a QUERY or --queries FILE")
    engine = open_index(args, model=args.model)
    options = {"filters": filters_of(args), "mode": args.mode, "diverse": args.diverse,
               "positives": args.positive or (), "evidence": not args.no_evidence,
               "min_score": args.min_score}
    if args.queries is None:
        output.results([(engine.search(args.query, args.k, **options), {})], _shape(args),
                       latex=args.latex)
        return
    from .reading import read_lines

    # (0-based line number, query) of each non-blank line: hits give the line as query_index
    numbered = [(number, line.strip()) for number, line in enumerate(read_lines(args.queries))
                if line.strip()]
    if not numbered:
        raise InputError("holds no queries (one per line)", path=args.queries)
    results = engine.search_many([query for _, query in numbered], args.k, **options)
    output.results([(hits, {"query_index": number, "query": query})
                    for (number, query), hits in zip(numbered, results)], _shape(args),
                   latex=args.latex)


def similar(args: argparse.Namespace) -> None:
    from .reading import example_papers, read_ids

    ids = list(dict.fromkeys([*args.paper_ids, *read_ids(args.ids_file or [])]))
    if not ids and not args.from_files:
        raise InputError("give the papers to start from: PAPER_IDs, --ids-file FILE or "
                         "--from FILE")
    engine = open_index(args)
    options = {"filters": filters_of(args), "diverse": args.diverse,
               "evidence": not args.no_evidence, "min_score": args.min_score}
    if args.method is not None:
        options["method"] = args.method
    if args.from_files or args.not_from:
        given = read_files(args, args.from_files or [], title_only=True)
        against = read_files(args, args.not_from or [], title_only=True)
        _write_report(args, given, against)
        papers = example_papers(engine, ids, given.papers)
        negatives = example_papers(engine, args.negative or [], against.papers)
        hits = engine.similar_to_papers(papers, args.k, negatives=negatives, **options)
        ids = [paper.id for paper in papers]
    else:
        hits = engine.similar(ids, args.k, negatives=args.negative or (), **options)
    output.results([(hits, {"query_id": ",".join(ids)})], _shape(args), group=args.group,
                   latex=args.latex)


def overview(args: argparse.Namespace) -> None:
    """`embedsearch` alone: the commands and the commonest uses, on stderr, status 2.

    2, as for any unusable command line: a script that lost its command fails rather
    than printing help to a pipe and succeeding; `embedsearch --help` is the one that
    prints help and succeeds.
    """
    sys.stderr.write(args.overview)
    raise SystemExit(2)


def show(args: argparse.Namespace) -> None:
    output.paper(open_index(args).get(args.paper_id), json_lines=args.json)


def info(args: argparse.Namespace) -> None:
    from ..index.info import index_info

    if args.index is None and not (default_index() / "manifest.json").exists():
        open_index(args)
    output.info(index_info(args.index or default_index()), json_lines=args.json)


def add(args: argparse.Namespace) -> None:
    engine = open_index(args, verify=False)  # a write reads only the records it checks
    if args.ray_gpus and engine.info().encoder_backend != "cuda":
        raise InputError(f"--ray-gpus: {engine.path} was built with backend "
                         f"{engine.info().encoder_backend}, and added papers must be encoded "
                         "as it was; build the index with --backend cuda to add on GPUs")
    before = len(engine)
    found = read_files(args, inputs(args), title_only=args.allow_title_only)
    _write_report(args, found)
    with _executor(args) as executor:
        added = engine.add(found.papers, allow_title_only=args.allow_title_only,
                           progress=progress(args), wait=args.wait, executor=executor)
        if executor is not None:
            say(args, executor.stats.summary())
    say(args, f"Added {output.counted(added, 'paper')} ({before} before, {len(engine)} now); "
               "papers already in the index were left as they are.")


def cache(args: argparse.Namespace) -> None:
    from ..encoding import EmbeddingCache, default_cache_dir

    root = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    cache = EmbeddingCache(root)
    if args.action == "clear":
        say(args, f"Removed {output.counted(cache.clear(), 'cached vector')} from {cache.path}.")
    elif args.action == "prune":
        removed = cache.prune(int(args.max_mb * 1e6))
        say(args, f"Removed {output.counted(removed, 'vector')} (least recently used) from "
                   f"{cache.path}.")
    stats = cache.stats()
    print(f"{stats.vectors} vectors, {stats.bytes / 1e6:.1f} MB in {stats.path}")


def remove(args: argparse.Namespace) -> None:
    engine = open_index(args, verify=False)
    removed = engine.remove(args.paper_ids, wait=args.wait)
    say(args, f"Removed {output.counted(removed, 'paper')}; {len(engine)} remain.")


def map(args: argparse.Namespace) -> None:
    engine = open_index(args)
    corpus_map = engine.corpus_map()
    if corpus_map is None:
        say(args, f"Computing the map of {output.counted(len(engine), 'paper')} (UMAP takes "
                   "a few minutes "
                   "for tens of thousands)...")
        corpus_map = engine.compute_map(wait=args.wait)
    if corpus_map is None:
        raise EmbedSearchError("the index changed while its map was computed; run this again")
    output.corpus_map(corpus_map, json_lines=args.json)


def serve(args: argparse.Namespace) -> None:
    try:
        from ..server import serve
        from ..server.security import check_options, is_loopback, is_wildcard
    except ImportError as exc:
        raise DependencyError(f"embedsearch serve needs the server extra ({exc.name} is "
                              "missing): pip install 'embedsearch[server]'") from None

    # An explicit empty --token is an error, not "no token": only the variables may be empty.
    token = args.token if args.token is not None else os.environ.get("EMBEDSEARCH_TOKEN") or None
    read_token = (args.read_token if args.read_token is not None
                  else os.environ.get("EMBEDSEARCH_READ_TOKEN") or None)
    check_options(args.host, allow_writes=args.allow_writes, token=token,
                  read_token=read_token, cors_origins=args.cors_origin)
    if not is_loopback(args.host) and read_token is None:
        say(args, f"Warning: on --host {args.host} anyone who can reach this machine can "
                   "search the index and read every paper in it; pass --read-token (or set "
                   "EMBEDSEARCH_READ_TOKEN) to require a token, or serve on --host 127.0.0.1.")
    if is_wildcard(args.host) and not args.allowed_host:
        say(args, f"Note: on --host {args.host} only requests to localhost are answered; "
                   "pass --allowed-host NAME for each name or address clients use.")
    engine = open_index(args)
    say(args, f"Serving {engine.path} ({output.counted(len(engine), 'paper')}) on "
               f"http://{args.host}:"
               f"{args.port}/ ({'read-write' if args.allow_writes else 'read-only'}); "
               "Ctrl+C stops.")
    serve(engine, host=args.host, port=args.port, allow_writes=args.allow_writes,
          compute_map=not args.no_map, log_level="warning" if args.quiet else "info",
          token=token, read_token=read_token, allowed_hosts=args.allowed_host,
          cors_origins=args.cors_origin)


# -- the parser --------------------------------------------------------------------------
