"""The `embedsearch` command: arguments in, engine calls, results out.

Every error the engine raises on purpose becomes one line on stderr and exit status 1
(2 for bad arguments); `--debug` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import output
from ._version import __version__
from .bundled import DEFAULT_INDEX
from .errors import DependencyError, EmbedSearchError, InputError
from .filters import Filters

__all__ = ["main"]

_BACKENDS = ("torch", "onnx", "onnx-int8", "openvino", "openvino-bf16", "auto")

_EXAMPLES = """\
examples:
  embedsearch search "low-rank visual prompting"          # bundled ICLR 2025 sample
  embedsearch build papers.jsonl --out indexes/mine
  embedsearch search "graph neural networks" --index indexes/mine -k 5 --year 2023-2025
  embedsearch similar nips2018:11607 --index indexes/mine --json
  embedsearch similar ID1 ID2 --not ID3 --index indexes/mine  # like these, unlike that
  embedsearch add new.csv --index indexes/mine
  embedsearch remove nips2018:11607 --index indexes/mine
  embedsearch serve --index indexes/mine            # web page and API on 127.0.0.1:8000
"""


def _progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


def _say(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        print(message, file=sys.stderr)


def _open(args: argparse.Namespace, *, model: str | None = None) -> Any:
    from .engine import SearchEngine

    options = {"backend": getattr(args, "backend", None), "cache_dir": args.cache_dir,
               "cache": not getattr(args, "no_cache", False)}
    if args.index is None:
        if not (DEFAULT_INDEX / "manifest.json").exists():
            _say(args, f"Building the default index of the bundled ICLR 2025 sample in "
                       f"{DEFAULT_INDEX} (first use only)...")
        return SearchEngine.open_default(DEFAULT_INDEX, progress=_progress(args),
                                         cache_dir=args.cache_dir)
    return SearchEngine.open(args.index, model=model, **options)


def _filters(args: argparse.Namespace) -> Filters:
    return Filters.parse(year=args.year, venues=args.venue or (), keywords=args.keyword or ())


def _read_queries(source: str) -> list[tuple[int, str]]:
    """(0-based line number, query) for each non-blank line of `source` ('-': stdin)."""
    if source == "-":
        lines = sys.stdin.read().splitlines()
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError("no such file" if not path.exists() else "is not a file",
                             path=path)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 ({exc.reason})", path=path) from None
    queries = [(number, line.strip()) for number, line in enumerate(lines) if line.strip()]
    if not queries:
        raise InputError("holds no queries (one per line)", path=source)
    return queries


# -- commands ---------------------------------------------------------------------------
def _cmd_build(args: argparse.Namespace) -> None:
    from .engine import SearchEngine

    fields = [name.strip() for name in args.fields.split(",") if name.strip()]
    engine = SearchEngine.build_from_files(
        args.out, args.inputs, format=args.format, model=args.model,
        index_type=args.index_type, index_params=args.index_param, fields=fields,
        exact_max=args.exact_max, overwrite=args.overwrite, progress=_progress(args),
        memory_budget=int(args.memory_budget * 1e6) if args.memory_budget else None,
        backend=args.backend, batch_size=args.batch_size, cache_dir=args.cache_dir,
        cache=not args.no_cache,
    )
    info = engine.info()
    _say(args, f"Indexed {info.count} papers into {info.path} ({info.index_type}, "
               f"{info.model}, backend {info.encoder_backend}).")


def _cmd_search(args: argparse.Namespace) -> None:
    if (args.query is None) == (args.queries is None):
        raise InputError("give either a QUERY or --queries FILE")
    engine = _open(args, model=args.model)
    options = {"filters": _filters(args), "mode": args.mode, "diverse": args.diverse,
               "positives": args.positive or (), "evidence": not args.no_evidence}
    if args.queries is None:
        hits = engine.search(args.query, args.k, **options)
        output.hits(hits, json_lines=args.json)
        return
    numbered = _read_queries(args.queries)
    results = engine.search_many([query for _, query in numbered], args.k, **options)
    for (number, query), hits in zip(numbered, results):
        output.hits(hits, json_lines=args.json, query=query, query_index=number)


def _cmd_similar(args: argparse.Namespace) -> None:
    engine = _open(args)
    hits = engine.similar(args.paper_ids, args.k, negatives=args.negative or (),
                          filters=_filters(args), diverse=args.diverse,
                          evidence=not args.no_evidence)
    output.hits(hits, json_lines=args.json, query_id=",".join(args.paper_ids))


def _cmd_show(args: argparse.Namespace) -> None:
    output.paper(_open(args).get(args.paper_id), json_lines=args.json)


def _cmd_info(args: argparse.Namespace) -> None:
    from .info import index_info

    if args.index is None and not (DEFAULT_INDEX / "manifest.json").exists():
        _open(args)
    output.info(index_info(args.index or DEFAULT_INDEX), json_lines=args.json)


def _cmd_add(args: argparse.Namespace) -> None:
    engine = _open(args)
    before = len(engine)
    added = engine.add_files(args.inputs, format=args.format, progress=_progress(args))
    _say(args, f"Added {added} papers ({before} before, {len(engine)} now); "
               "papers already in the index were left as they are.")


def _cmd_cache(args: argparse.Namespace) -> None:
    from .encoding import EmbeddingCache, default_cache_dir

    root = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    cache = EmbeddingCache(root)
    if args.action == "clear":
        _say(args, f"Removed {cache.clear()} cached vectors from {cache.path}.")
    elif args.action == "prune":
        removed = cache.prune(int(args.max_mb * 1e6))
        _say(args, f"Removed {removed} least recently used vectors from {cache.path}.")
    stats = cache.stats()
    print(f"{stats.vectors} vectors, {stats.bytes / 1e6:.1f} MB in {stats.path}")


def _cmd_remove(args: argparse.Namespace) -> None:
    engine = _open(args)
    removed = engine.remove(args.paper_ids)
    _say(args, f"Removed {removed} papers; {len(engine)} remain.")


def _cmd_map(args: argparse.Namespace) -> None:
    engine = _open(args)
    corpus_map = engine.corpus_map()
    if corpus_map is None:
        _say(args, f"Computing the map of {len(engine)} papers (UMAP takes a few minutes "
                   "for tens of thousands)...")
        corpus_map = engine.compute_map()
    if corpus_map is None:
        raise EmbedSearchError("the index changed while its map was computed; run this again")
    output.corpus_map(corpus_map, json_lines=args.json)


def _cmd_serve(args: argparse.Namespace) -> None:
    try:
        from .server import serve
    except ImportError as exc:
        raise DependencyError(f"embedsearch serve needs the server extra ({exc.name} is "
                              "missing): pip install 'embedsearch[server]'") from None

    engine = _open(args)
    _say(args, f"Serving {engine.path} ({len(engine)} papers) on http://{args.host}:"
               f"{args.port}/ ({'read-write' if args.allow_writes else 'read-only'}); "
               "Ctrl+C stops.")
    serve(engine, host=args.host, port=args.port, allow_writes=args.allow_writes,
          compute_map=not args.no_map, log_level="warning" if args.quiet else "info")


# -- the parser --------------------------------------------------------------------------
def _key_value(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got '{text}'")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


class _ParamsAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        params = dict(getattr(namespace, self.dest) or {})
        key, value = values
        params[key] = value
        setattr(namespace, self.dest, params)


def _add_cache_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="exported models and the embedding cache (default: "
                             "$EMBEDSEARCH_CACHE_DIR or ~/.cache/embedsearch)")


def _add_encoder_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="auto", choices=_BACKENDS,
                        help="encoder backend: torch (reference), onnx, onnx-int8, openvino, "
                             "openvino-bf16, or auto, the fastest that agrees with torch on "
                             "this machine (measured once; default)")
    parser.add_argument("--batch-size", type=int, help="texts per encoding batch "
                                                        "(default: the backend's best)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor store vectors in the embedding cache")


def _add_index(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--index", metavar="DIR",
                        help=f"index directory (default: {DEFAULT_INDEX}, the bundled ICLR "
                             "2025 sample, built on first use)")


def _add_query_options(parser: argparse.ArgumentParser) -> None:
    _add_index(parser)
    parser.add_argument("-k", type=int, default=10, help="how many papers (default 10)")
    parser.add_argument("--year", help="a year (2024) or a range (2023-2025, 2023-, -2024)")
    parser.add_argument("--venue", action="append", metavar="NAME",
                        help="only papers of this venue (case-insensitive; repeat for any of "
                             "several)")
    parser.add_argument("--keyword", action="append", metavar="WORD",
                        help="only papers with this author keyword (repeat for any of several)")
    parser.add_argument("--diverse", action="store_true",
                        help="re-rank for variety (maximal marginal relevance) so that near-"
                             "duplicates do not fill the page")
    parser.add_argument("--no-evidence", action="store_true",
                        help="skip finding each hit's best-matching sentence")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per hit and line (rank, id, score, title, ...)")


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="corpus files: .txt (abstracts separated by blank lines), "
                             ".jsonl, .json (array), .csv, .tsv; any of them .gz")
    parser.add_argument("--format", choices=("text", "jsonl", "json", "csv", "tsv"),
                        help="read every INPUT as this format instead of by extension")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="embedsearch",
        description="Semantic search over research papers: build an index of abstracts, "
                    "then find papers by meaning or by example.",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"embedsearch {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars or messages on stderr")
    common.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    _add_cache_dir(common)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, parents=[common], help=summary, description=summary)

    build = command("build", "Encode the papers of INPUT files into a new index.")
    _add_input_options(build)
    build.add_argument("--out", required=True, metavar="DIR", help="index directory to create")
    build.add_argument("--model", help="sentence-transformers model name or local path "
                                       "(default: the bundled all-MiniLM-L6-v2)")
    build.add_argument("--index-type", default="auto",
                       help="auto (exact up to --exact-max papers, then HNSW), flat, hnsw, "
                            "ivf, ivfpq (compressed, re-ranked), or a FAISS factory string "
                            "such as 'IVF1024,SQ8'")
    build.add_argument("--index-param", action=_ParamsAction, type=_key_value, default=None,
                       metavar="KEY=VALUE", help="index parameter, e.g. efSearch=128, M=48, "
                                                 "nlist=1024, nprobe=32 (repeatable)")
    build.add_argument("--exact-max", type=int, default=50_000, metavar="N",
                       help="with --index-type auto: exact search up to N papers (default "
                            "50000)")
    build.add_argument("--memory-budget", type=float, metavar="MB",
                       help="with --index-type auto: if the exact or HNSW index would hold "
                            "more than MB in memory, build the compressed ivfpq index (IVF-PQ "
                            "codes in memory, full vectors memory-mapped for re-ranking)")
    build.add_argument("--fields", default="title,abstract",
                       help="fields embedded, comma-separated: title, abstract, tldr, "
                            "keywords (default title,abstract)")
    _add_encoder_options(build)
    build.add_argument("--overwrite", action="store_true",
                       help="replace an existing index at --out (atomically)")
    build.set_defaults(run=_cmd_build)

    search = command("search", "Find the papers that best match a query, by words and meaning.")
    search.add_argument("query", nargs="?", help="what you are looking for")
    search.add_argument("--mode", choices=("hybrid", "dense", "lexical"), default="hybrid",
                        help="hybrid: BM25 and dense ranking fused (default); dense: by "
                             "meaning only; lexical: BM25 only")
    search.add_argument("--positive", action="append", metavar="PAPER_ID",
                        help="a paper like the ones you want; its vector joins the query's "
                             "(repeatable)")
    search.add_argument("--queries", metavar="FILE",
                        help="answer every line of FILE ('-' for stdin) in one batch")
    search.add_argument("--model", help="query encoder; must be the index's own (default)")
    search.add_argument("--backend", choices=_BACKENDS[:-1],
                        help="query encoder backend; must be the index's own (default)")
    _add_query_options(search)
    search.set_defaults(run=_cmd_search)

    similar = command("similar", "Find the papers closest to papers of the index.")
    similar.add_argument("paper_ids", nargs="+", metavar="PAPER_ID",
                         help="one or more papers like the ones wanted")
    similar.add_argument("--not", dest="negative", action="append", metavar="PAPER_ID",
                         help="a paper unlike the ones wanted (repeatable)")
    _add_query_options(similar)
    similar.set_defaults(run=_cmd_similar)

    show = command("show", "Print one paper of the index.")
    show.add_argument("paper_id", metavar="PAPER_ID")
    _add_index(show)
    show.add_argument("--json", action="store_true", help="the paper as one JSON object")
    show.set_defaults(run=_cmd_show)

    info = command("info", "Describe an index: size, model, index type, files.")
    _add_index(info)
    info.add_argument("--json", action="store_true", help="one JSON object")
    info.set_defaults(run=_cmd_info)

    add = command("add", "Encode and add the papers of INPUT files whose ids are new.")
    _add_input_options(add)
    add.add_argument("--no-cache", action="store_true",
                     help="neither read nor store vectors in the embedding cache")
    _add_index(add)
    add.set_defaults(run=_cmd_add)

    commands.add_parser("bench", help="Measure performance against the naive pipeline "
                                      "(embedsearch bench --help).", add_help=False)

    cache = command("cache", "Show, prune or clear the embedding cache.")
    cache.add_argument("action", nargs="?", choices=("info", "prune", "clear"), default="info")
    cache.add_argument("--max-mb", type=float, default=1024,
                       help="with prune: keep the most recently used vectors within this size")
    cache.set_defaults(run=_cmd_cache)

    remove = command("remove", "Remove papers from an index by id.")
    remove.add_argument("paper_ids", nargs="+", metavar="PAPER_ID")
    _add_index(remove)
    remove.set_defaults(run=_cmd_remove)

    corpus_map = command("map", "Compute the 2D map of an index (stored with it) and print "
                                "its clusters.")
    _add_index(corpus_map)
    corpus_map.add_argument("--json", action="store_true",
                            help="one JSON object per cluster (id, label, words, x, y, size)")
    corpus_map.set_defaults(run=_cmd_map)

    serve = command("serve", "Serve the index over HTTP: a JSON API and a web page.")
    _add_index(serve)
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1, this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--allow-writes", action="store_true",
                       help="accept POST /papers and DELETE /papers/{id} (default read-only)")
    serve.add_argument("--no-map", action="store_true",
                       help="do not compute the corpus map when the index has none")
    serve.set_defaults(run=_cmd_serve)
    return parser


def _log_to_stderr(*, quiet: bool) -> None:
    """The engine reports slow one-off steps (model export, backend choice) by logging."""
    logger = logging.getLogger("embedsearch")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.propagate = False  # libraries that configure the root logger would echo it
    logger.setLevel(logging.WARNING if quiet else logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # the benchmark has its own parser (scripts/benchmark.py)
        from .benchmark import main as bench

        _log_to_stderr(quiet=False)
        return bench(argv[1:])
    args = _parser().parse_args(argv)
    _log_to_stderr(quiet=args.quiet)
    try:
        args.run(args)
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except KeyboardInterrupt:
        print("embedsearch: interrupted; no index was changed", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        if isinstance(exc, (EmbedSearchError, OSError)):
            print(f"embedsearch: error: {exc}", file=sys.stderr)
        else:
            print(f"embedsearch: unexpected error: {type(exc).__name__}: {exc} (rerun with "
                  "--debug to see where)", file=sys.stderr)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
