"""The `embedsearch` command line's arguments, and the help that teaches them."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .._version import __version__
from . import assistant, library, sample, serving, upkeep, watches
from . import commands as run

__all__ = ["BACKEND_CHOICES", "FORMAT_CHOICES", "METHOD_CHOICES", "build_parser"]

# Spelled out rather than read from the backend registry: importing that (and numpy with
# it) would double the cold start of `embedsearch info`. A test holds the two equal.
BACKEND_CHOICES = ("torch", "cuda", "onnx", "onnx-int8", "openvino", "openvino-bf16",
             "openvino-int8", "auto")

# Spelled out for the same reason (readers would load with every command); a test holds
# this equal to the readers' registry.
# Spelled out for the same reason; a test holds them equal to recommending.METHODS.
METHOD_CHOICES = ("clusters", "mean", "classifier", "nearest")
FORMAT_CHOICES = ("text", "jsonl", "json", "csv", "tsv", "bibtex", "ris", "csl-json", "arxiv",
            "openalex", "pdf", "zotero")

_COMMON = """\
most used:
  embedsearch search "low-rank visual prompting"          # the bundled ICLR 2025 sample
  embedsearch build papers.jsonl --out indexes/mine       # index your own papers
  embedsearch similar PAPER_ID --index indexes/mine       # papers like one you know
"""

_EXAMPLES = """\
examples:
  embedsearch search "low-rank visual prompting"          # bundled ICLR 2025 sample
  embedsearch sample papers.jsonl                         # the sample as a file of yours
  embedsearch build papers.jsonl --out indexes/mine
  embedsearch search "graph neural networks" --index indexes/mine -k 5 --year 2023-2025
  embedsearch similar iclr2025:7 --index indexes/mine --json
  embedsearch similar ID1 ID2 --not ID3 --index indexes/mine  # like these, unlike that
  embedsearch similar --from refs.bib --index indexes/mine    # like your own papers
  embedsearch search "diffusion" --format ris > diffusion.ris  # or bibtex, csl-json
  embedsearch add new.csv --index indexes/mine
  embedsearch build papers.jsonl --out indexes/big --storage milvus:http://milvus:19530
  embedsearch remove iclr2025:7 --index indexes/mine
  embedsearch serve --index indexes/mine            # web page and API on 127.0.0.1:8000
  embedsearch mcp --index indexes/mine              # tools for an AI assistant (stdio)
"""


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
    parser.add_argument("--backend", default="auto", choices=BACKEND_CHOICES,
                        help="encoder backend: torch (reference), cuda (torch on an NVIDIA "
                             "GPU, float16), onnx, onnx-int8, openvino, openvino-bf16, "
                             "openvino-int8 (these five need the fast extra: pip install "
                             "\"embedsearch[fast]\"), or auto (default): cuda when torch sees "
                             "a GPU, else the fastest installed that agrees with torch on "
                             "this machine, measured once a job of 1,500+ papers repays it "
                             "(smaller jobs run on the float32 ONNX export meanwhile); torch "
                             "when the fast extra is not installed")
    parser.add_argument("--batch-size", type=int, help="texts per encoding batch "
                                                        "(default: the backend's best)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor store vectors in the embedding cache")


def _add_wait(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wait", type=float, default=600, metavar="SECONDS",
                        help="if another process is writing the index (a server, a cron "
                             "add), wait up to SECONDS for it, then give up (default 600; "
                             "encoding happens before the wait)")


def _add_ray(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help="encode on a pool of Ray actors, one thread each: alone, on a "
                             "Ray instance started here; auto or ray://HOST:10001, on a "
                             "cluster (needs pip install \"embedsearch[ray]\"; the cache is "
                             "still asked first)")
    parser.add_argument("--ray-gpus", type=float, metavar="N",
                        help="with --ray: each actor takes N GPUs (0.5 shares one) and "
                             "encodes with the cuda backend, so the cluster's GPU nodes do "
                             "the encoding")


def _add_storage_secrets(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--storage-option", action="append", metavar="KEY=VALUE",
                        help="an option of the index's storage, repeatable: for a Milvus "
                             "server that asks for one, token=USER:PASSWORD or an API key "
                             "(default: $MILVUS_TOKEN; prefer it, other users can see "
                             "command lines; never written to disk)")
    parser.add_argument("--milvus-token", metavar="TOKEN", help="same as --storage-option "
                                                                "token=TOKEN")


def _add_index(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--index", metavar="DIR",
                        help="index directory (default: the bundled ICLR 2025 sample's, "
                             "built on first use in ~/.local/share/embedsearch/indexes/"
                             "iclr2025, or indexes/iclr2025 of an embedsearch checkout)")
    _add_storage_secrets(parser)


def _add_storage(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--storage", metavar="KIND[:LOCATION]",
                        help="where the vectors, words and papers live: local (files in "
                             "--out, the default), milvus:./papers.db (a Milvus Lite file) "
                             "or milvus:http://HOST:19530 (a server); with Milvus, --out "
                             "holds only the manifest. Milvus needs pip install "
                             "\"embedsearch[milvus]\"")
    parser.add_argument("--storage-option", action="append", metavar="KEY=VALUE",
                        help="an option of --storage, repeatable: for Milvus, "
                             "collection=NAME (default: the --out folder's name) and "
                             "token=USER:PASSWORD or an API key (default: $MILVUS_TOKEN; "
                             "prefer it, other users can see command lines; never written "
                             "to disk)")
    parser.add_argument("--milvus", metavar="URI", help="same as --storage milvus:URI")
    parser.add_argument("--milvus-token", metavar="TOKEN",
                        help="same as --storage-option token=TOKEN")


def _add_query_options(parser: argparse.ArgumentParser) -> None:
    _add_index(parser)
    _add_filters(parser)
    parser.add_argument("--diverse", action="store_true",
                        help="re-rank for variety (maximal marginal relevance) so that near-"
                             "duplicates do not fill the page")
    parser.add_argument("--no-evidence", action="store_true",
                        help="skip finding each hit's best-matching sentence")
    parser.add_argument("--min-score", type=float, metavar="SCORE",
                        help="only papers scoring at least this: the score shown, which "
                             "orders the hits, on the cosine scale (e.g. 0.5; comparable "
                             "across queries)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true",
                       help="one JSON object per hit and line (rank, id, score, title, ...)")
    shape.add_argument("--format", dest="output_format",
                       choices=("bibtex", "ris", "csl-json", "csv", "jsonl"),
                       help="print the hits as a .bib file (the papers, keyed by id), RIS "
                            "or CSL-JSON (for Zotero, EndNote, Mendeley, citeproc), CSV "
                            "with a header (the JSON fields, lists joined with '; '), or "
                            "JSON lines (the same as --json)")
    parser.add_argument("--latex", action="store_true",
                        help="with --format bibtex: spell accents and symbols as LaTeX "
                             "escapes ({\\'e}, {\\textendash}) in every field, for BibTeX "
                             "without UTF-8; by default every field is UTF-8 text, as biber "
                             "reads it (LaTeX's special characters such as & and %% are "
                             "escaped either way)")


def _add_filters(parser: argparse.ArgumentParser, k: int = 10) -> None:
    """-k (its default `k`) and the filters, for search, similar and watch add."""
    parser.add_argument("-k", type=int, default=k, help=f"how many papers (default {k})")
    parser.add_argument("--year", help="a year (2024) or a range (2023-2025, 2023-, -2024)")
    parser.add_argument("--venue", action="append", metavar="NAME",
                        help="only papers of this venue (case-insensitive; repeat for any of "
                             "several)")
    parser.add_argument("--keyword", action="append", metavar="WORD",
                        help="only papers with this author keyword (repeat for any of several)")
    parser.add_argument("--collection", action="append", metavar="NAME",
                        help="only papers in this collection of your reference manager or "
                             "its sub-collections: a path (Thesis/Methods) or a name (repeat "
                             "for any of several)")
    parser.add_argument("--added-since", metavar="WHEN",
                        help="only papers the index received since WHEN: a date "
                             "(2026-12-01), a date and time, or a span back (7d, 24h)")


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="*", metavar="INPUT",
                        help="corpus files: .txt (abstracts separated by blank lines), "
                             ".jsonl, .json (array), .csv, .tsv, .bib, .ris; any of them "
                             ".gz; CSL-JSON, arXiv and OpenAlex records are recognised; "
                             "zotero:[DATA_DIR] reads a Zotero library (or see --zotero)")
    parser.add_argument("--format", choices=FORMAT_CHOICES,
                        help="read every INPUT as this format instead of by extension")
    parser.add_argument("--allow-title-only", action="store_true",
                        help="index bibliography entries that have no abstract on their "
                             "titles (default: skip them, with a warning)")
    _add_reading_checks(parser)
    library.add_library_options(parser)


def _add_reading_checks(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true",
                        help="refuse a file with a malformed entry (a missing brace, a cut RIS "
                             "entry) instead of skipping that entry with a warning")
    parser.add_argument("--report", metavar="FILE",
                        help="write every skipped or title-only entry (file, line, entry, "
                             "reason) to FILE as JSON")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every command, its options and its help."""
    parser = argparse.ArgumentParser(
        prog="embedsearch",
        description="Semantic search over research papers: build an index of abstracts, "
                    "then find papers by meaning or by example.",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"embedsearch {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars, messages or warnings on stderr (errors "
                             "still print)")
    common.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    _add_cache_dir(common)
    # No COMMAND prints the overview (commands.overview) rather than argparse's bare
    # "the following arguments are required"; the defaults are what `main` reads.
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    summaries: list[tuple[str, str]] = []  # for the overview, in the order added

    def command(name: str, summary: str, **options: Any) -> argparse.ArgumentParser:
        summaries.append((name, summary))
        if options:  # bench and eval: their own parsers read the rest of the line
            return subparsers.add_parser(name, help=summary, **options)
        return subparsers.add_parser(name, parents=[common], help=summary, description=summary)

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
    build.add_argument("--lexical-fields", default="title,abstract,keywords",
                       help="fields BM25 reads, comma-separated (default "
                            "title,abstract,keywords)")
    build.add_argument("--fields", default="title,abstract",
                       help="fields embedded, comma-separated: title, abstract, tldr, "
                            "keywords (default title,abstract)")
    build.add_argument("--query-prompt", metavar="TEXT",
                       help="put TEXT before every query, e.g. 'query: ' for e5 models "
                            "(default: the model's own prompt from its sentence-transformers "
                            "configuration or its known family, else none; '' for none); "
                            "recorded in the index, which its queries then use")
    build.add_argument("--document-prompt", metavar="TEXT",
                       help="put TEXT before every paper's text, e.g. 'passage: ' for e5 "
                            "models (default as for --query-prompt)")
    _add_encoder_options(build)
    _add_ray(build)
    _add_storage(build)
    build.add_argument("--overwrite", action="store_true",
                       help="replace an existing index at --out (atomically)")
    _add_wait(build)
    build.set_defaults(run=run.build)

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
    search.add_argument("--backend", choices=BACKEND_CHOICES[:-1],
                        help="query encoder backend; must be the index's own (default)")
    search.add_argument("--query-prompt", metavar="TEXT",
                        help="prompt before the query; must be the index's own (default; "
                             "`embedsearch info` shows it)")
    _add_query_options(search)
    search.set_defaults(run=run.search)

    similar = command("similar", "Find the papers closest to given papers, in the index or "
                                 "not.")
    similar.add_argument("paper_ids", nargs="*", metavar="PAPER_ID",
                         help="one or more papers of the index like the ones wanted")
    similar.add_argument("--not", dest="negative", action="append", metavar="PAPER_ID",
                         help="a paper unlike the ones wanted (repeatable)")
    similar.add_argument("--ids-file", action="append", metavar="FILE",
                         help="more PAPER_IDs, one per line ('-' for stdin; blank lines and "
                              "# comments ignored), as the web page's reading list exports")
    similar.add_argument("--from", dest="from_files", action="append", metavar="SOURCE",
                         help="papers like those of SOURCE: a file (any input format: .bib, "
                              ".jsonl, .csv, ...) or a Zotero library, zotero:DATA_DIR?"
                              "collection=NAME&tag=TAG&group=NAME (each part optional); in "
                              "the index or not: "
                              "those the index holds (same id or title) are never returned, "
                              "the others are encoded, entries without an abstract from "
                              "their titles (repeatable)")
    similar.add_argument("--not-from", dest="not_from", action="append", metavar="SOURCE",
                         help="papers unlike those of SOURCE (repeatable)")
    similar.add_argument("--method", choices=METHOD_CHOICES,
                         help="how several papers rank the index: clusters (default: the "
                              "papers' topics in turns, a small one not drowned by a large "
                              "one), mean (one direction, their mean), classifier (a "
                              "logistic regression against the index), nearest (each "
                              "candidate by its nearest given papers)")
    similar.add_argument("--group", action="store_true",
                         help="print the papers under the group of your papers they are "
                              "like (the given papers' clusters, each named by its "
                              "characteristic words)")
    _add_reading_checks(similar)
    _add_query_options(similar)
    similar.set_defaults(run=run.similar)

    sample.add_commands(command)

    show = command("show", "Print one paper of the index.")
    show.add_argument("paper_id", metavar="PAPER_ID")
    _add_index(show)
    show.add_argument("--json", action="store_true", help="the paper as one JSON object")
    show.set_defaults(run=run.show)

    info = command("info", "Describe an index: size, model, index type, files.")
    _add_index(info)
    info.add_argument("--json", action="store_true", help="one JSON object")
    info.set_defaults(run=run.info)

    add = command("add", "Encode and add the papers of INPUT files whose ids are new.")
    _add_input_options(add)
    add.add_argument("--no-cache", action="store_true",
                     help="neither read nor store vectors in the embedding cache")
    _add_index(add)
    _add_ray(add)
    _add_wait(add)
    add.set_defaults(run=run.add)

    command("bench", "Measure performance against the naive pipeline (embedsearch bench "
                     "--help).", add_help=False)
    command("eval", "Score ranking quality on labelled queries, every mode side by side "
                    "(embedsearch eval --help).", add_help=False)

    cache = command("cache", "Show, prune or clear the embedding cache.")
    cache.add_argument("action", nargs="?", choices=("info", "prune", "clear"), default="info")
    cache.add_argument("--max-mb", type=float, default=1024,
                       help="with prune: keep the most recently used vectors within this size")
    cache.set_defaults(run=run.cache)

    remove = command("remove", "Remove papers from an index by id.")
    remove.add_argument("paper_ids", nargs="+", metavar="PAPER_ID")
    _add_index(remove)
    _add_wait(remove)
    remove.set_defaults(run=run.remove)

    corpus_map = command("map", "Compute the 2D map of an index (stored with it) and print "
                                "its clusters.")
    _add_index(corpus_map)
    _add_wait(corpus_map)
    corpus_map.add_argument("--json", action="store_true",
                            help="one JSON object per cluster (id, label, words, x, y, size)")
    corpus_map.set_defaults(run=run.map)

    upkeep.add_commands(command, _add_index, _add_wait)
    watches.add_commands(command, _add_index, _add_filters)
    library.add_commands(command, _add_index, _add_wait)

    serving.add_commands(command, _add_index)
    assistant.add_commands(command, _add_index)
    # `commands`: every command's name, in the order of the help (the docs test the
    # reference against it).
    parser.set_defaults(run=run.overview, quiet=False, debug=False,
                        overview=_overview(summaries),
                        commands=tuple(name for name, _ in summaries))
    return parser


def _overview(rows: list[tuple[str, str]]) -> str:
    """What `embedsearch` alone prints: every command in a line, and the commonest uses."""
    width = max(len(name) for name, _ in rows) + 2
    lines = [f"  {name:<{width}}{summary}" for name, summary in rows]
    return ("usage: embedsearch COMMAND [options]  (embedsearch COMMAND --help for its "
            "options)\n\ncommands:\n" + "\n".join(lines) + "\n\n" + _COMMON)
