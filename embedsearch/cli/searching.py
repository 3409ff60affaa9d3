"""The commands that find papers: `search` (by words and meaning) and `similar` (by
example), declared (`add_commands`) and run here, with the options of what they print."""

from __future__ import annotations

import argparse

from ..errors import InputError, QueryError
from . import output
from .context import filters_of, open_index
from .options import BACKEND_CHOICES, Declare, add_filters, add_index, add_reading_checks
from .sources import read_files, write_report

__all__ = ["EXPORT_CHOICES", "METHOD_CHOICES", "add_commands", "search", "similar"]

# Spelled out rather than read from recommending (numpy would load with every command);
# a test holds them equal to recommending.METHODS.
METHOD_CHOICES = ("clusters", "mean", "classifier", "nearest")
#: What --format writes the hits as, besides the readable list.
EXPORT_CHOICES = ("bibtex", "ris", "csl-json", "csv", "jsonl")


def add_commands(command: Declare) -> None:
    """Declare search and similar."""
    searching = command("search", "Find the papers that best match a query, by words and "
                                  "meaning.")
    searching.add_argument("query", nargs="?", help="what you are looking for")
    searching.add_argument("--mode", choices=("hybrid", "dense", "lexical"), default="hybrid",
                           help="hybrid: BM25 and dense ranking fused (default); dense: by "
                                "meaning only; lexical: BM25 only")
    searching.add_argument("--positive", action="append", metavar="PAPER_ID",
                           help="a paper like the ones you want; its vector joins the "
                                "query's (repeatable)")
    searching.add_argument("--queries", metavar="FILE",
                           help="answer every line of FILE ('-' for stdin) in one batch")
    searching.add_argument("--model", help="query encoder; must be the index's own (default)")
    searching.add_argument("--backend", choices=BACKEND_CHOICES[:-1],
                           help="query encoder backend; must be the index's own (default)")
    searching.add_argument("--query-prompt", metavar="TEXT",
                           help="prompt before the query; must be the index's own (default; "
                                "`embedsearch info` shows it)")
    _add_query_options(searching)
    searching.set_defaults(run=search)
    _declare_similar(command("similar", "Find the papers closest to given papers, in the "
                                        "index or not."))


def _declare_similar(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paper_ids", nargs="*", metavar="PAPER_ID",
                        help="one or more papers of the index like the ones wanted")
    parser.add_argument("--not", dest="negative", action="append", metavar="PAPER_ID",
                        help="a paper unlike the ones wanted (repeatable)")
    parser.add_argument("--ids-file", action="append", metavar="FILE",
                        help="more PAPER_IDs, one per line ('-' for stdin; blank lines and "
                             "# comments ignored), as the web page's reading list exports")
    parser.add_argument("--from", dest="from_files", action="append", metavar="SOURCE",
                        help="papers like those of SOURCE: a file (any input format: .bib, "
                             ".jsonl, .csv, ...) or a Zotero library, zotero:DATA_DIR?"
                             "collection=NAME&tag=TAG&group=NAME (each part optional); in "
                             "the index or not: "
                             "those the index holds (same id or title) are never returned, "
                             "the others are encoded, entries without an abstract from "
                             "their titles (repeatable)")
    parser.add_argument("--not-from", dest="not_from", action="append", metavar="SOURCE",
                        help="papers unlike those of SOURCE (repeatable)")
    parser.add_argument("--method", choices=METHOD_CHOICES,
                        help="how several papers rank the index: clusters (default: the "
                             "papers' topics in turns, a small one not drowned by a large "
                             "one), mean (one direction, their mean), classifier (a "
                             "logistic regression against the index), nearest (each "
                             "candidate by its nearest given papers)")
    parser.add_argument("--group", action="store_true",
                        help="print the papers under the group of your papers they are "
                             "like (the given papers' clusters, each named by its "
                             "characteristic words)")
    add_reading_checks(parser)
    _add_query_options(parser)
    parser.set_defaults(run=similar)


def _add_query_options(parser: argparse.ArgumentParser) -> None:
    add_index(parser)
    add_filters(parser)
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
    shape.add_argument("--format", dest="output_format", choices=EXPORT_CHOICES,
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


def _shape(args: argparse.Namespace) -> str:
    """How hits are printed: text, jsonl (also --json), bibtex or csv."""
    shape = "jsonl" if args.json else args.output_format or "text"
    if getattr(args, "latex", False) and shape != "bibtex":
        raise QueryError("--latex spells BibTeX in LaTeX escapes: add --format bibtex")
    return shape


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
        write_report(args, given, against)
        papers = example_papers(engine, ids, given.papers)
        negatives = example_papers(engine, args.negative or [], against.papers)
        hits = engine.similar_to_papers(papers, args.k, negatives=negatives, **options)
        ids = [paper.id for paper in papers]
    else:
        hits = engine.similar(ids, args.k, negatives=args.negative or (), **options)
    output.results([(hits, {"query_id": ",".join(ids)})], _shape(args), group=args.group,
                   latex=args.latex)
