"""The commands that write an index's papers: `build`, `add` and `remove`, declared
(`add_commands`) and run here, with the encoding and storage options they take."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import output
from .context import open_index, progress, say, storage_options
from .library import add_library_options
from .options import BACKEND_CHOICES, Declare, add_index, add_reading_checks, add_renamed, add_wait
from .sources import inputs, read_files, stream_files, write_report

__all__ = ["INPUT_FORMAT_CHOICES", "add", "add_commands", "build", "remove"]

# Spelled out rather than read from the readers' registry (readers would load with every
# command); a test holds the two equal.
INPUT_FORMAT_CHOICES = ("text", "jsonl", "json", "csv", "tsv", "bibtex", "ris", "csl-json",
                        "arxiv", "openalex", "pdf", "zotero")


def add_commands(command: Declare) -> None:
    """Declare build, add and remove."""
    _declare_build(command("build", "Encode the papers of INPUT files into a new index."))

    adding = command("add", "Encode and add the papers of INPUT files whose ids are new.")
    _add_input_options(adding)
    adding.add_argument("--no-cache", action="store_true",
                        help="neither read nor store vectors in the embedding cache")
    add_index(adding)
    _add_ray(adding)
    add_wait(adding)
    adding.set_defaults(run=add)

    removing = command("remove", "Remove papers from an index by id.")
    removing.add_argument("paper_ids", nargs="+", metavar="PAPER_ID")
    add_index(removing)
    add_wait(removing)
    removing.set_defaults(run=remove)


def _declare_build(parser: argparse.ArgumentParser) -> None:
    _add_input_options(parser)
    parser.add_argument("--out", required=True, metavar="DIR", help="index directory to create")
    parser.add_argument("--model", help="sentence-transformers model name or local path "
                                       "(default: the bundled all-MiniLM-L6-v2)")
    parser.add_argument("--index-type", default="auto",
                       help="auto (exact up to --exact-max papers, then hnsw-sq8), flat, "
                            "hnsw, hnsw-sq8 (HNSW over 8-bit codes, re-ranked exactly), ivf, "
                            "ivfpq (compressed further, re-ranked), or a FAISS factory "
                            "string such as 'IVF1024,SQ8'")
    parser.add_argument("--index-param", action=_ParamsAction, type=_key_value, default=None,
                       metavar="KEY=VALUE", help="index parameter, e.g. efSearch=128, M=48, "
                                                 "nlist=1024, nprobe=32 (repeatable)")
    parser.add_argument("--exact-max", type=int, default=50_000, metavar="N",
                       help="with --index-type auto: exact search up to N papers (default "
                            "50000)")
    parser.add_argument("--memory-budget", type=float, metavar="MB",
                       help="with --index-type auto: if the exact or hnsw-sq8 index would "
                            "hold more than MB in memory, build the compressed ivfpq index "
                            "(IVF-PQ codes in memory, full vectors read from disk to re-rank)")
    parser.add_argument("--lexical-fields", default="title,abstract,keywords",
                       help="fields BM25 reads, comma-separated (default "
                            "title,abstract,keywords)")
    parser.add_argument("--fields", default="title,abstract",
                       help="fields embedded, comma-separated: title, abstract, tldr, "
                            "keywords (default title,abstract)")
    parser.add_argument("--query-prompt", metavar="TEXT",
                       help="put TEXT before every query, e.g. 'query: ' for e5 models "
                            "(default: the model's own prompt from its sentence-transformers "
                            "configuration or its known family, else none; '' for none); "
                            "recorded in the index, which its queries then use")
    parser.add_argument("--document-prompt", metavar="TEXT",
                       help="put TEXT before every paper's text, e.g. 'passage: ' for e5 "
                            "models (default as for --query-prompt)")
    _add_encoder_options(parser)
    _add_ray(parser)
    _add_storage(parser)
    parser.add_argument("--overwrite", action="store_true",
                       help="replace an existing index at --out (atomically)")
    add_wait(parser)
    parser.set_defaults(run=build)


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


def _add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="*", metavar="INPUT",
                        help="corpus files: .txt (abstracts separated by blank lines), "
                             ".jsonl, .json (array), .csv, .tsv, .bib, .ris; any of them "
                             ".gz; CSL-JSON, arXiv and OpenAlex records are recognised; "
                             "zotero:[DATA_DIR] reads a Zotero library (or see --zotero)")
    # --format names what a command writes (search's export, digest's output); what
    # build and add read was --format too, which still works, saying so.
    parser.add_argument("--input-format", choices=INPUT_FORMAT_CHOICES,
                        help="read every INPUT as this format instead of by extension")
    add_renamed(parser, "--format", "--input-format", dest="input_format",
                choices=INPUT_FORMAT_CHOICES)
    parser.add_argument("--allow-title-only", action="store_true",
                        help="index bibliography entries that have no abstract on their "
                             "titles (default: skip them, with a warning)")
    parser.add_argument("--abstract-only", action="store_true",
                        help="read PDFs for their title, abstract and authors only, from "
                             "their first pages (default: their whole text too, as "
                             "passages, so that a search finds the page that answers it; "
                             "this builds and reads faster and makes a smaller index)")
    add_reading_checks(parser)
    add_library_options(parser)


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


def build(args: argparse.Namespace) -> None:
    from ..engine import SearchEngine
    from ..readers import Bibliography
    from ..storage import IndexOptions
    from ..storage.directory import IndexDirectory

    fields = [name.strip() for name in args.fields.split(",") if name.strip()]
    lexical = [name.strip() for name in args.lexical_fields.split(",") if name.strip()]
    backend = _backend(args)
    # Refuse an index in the way before reading: the readers' warnings about skipped
    # entries would come first, for files that will not be indexed.
    IndexDirectory(args.out).ensure_writable(replace=args.overwrite)
    # The files are read as the build goes, a buffer at a time (a folder of PDFs is
    # never all in memory); the report says what was read, even of a build that failed.
    found = Bibliography([])
    papers = stream_files(args, inputs(args), found, title_only=args.allow_title_only,
                          full_text=not args.abstract_only)
    with _executor(args) as executor, _reporting(args, found):
        engine = SearchEngine.build(
            args.out, papers, IndexOptions(
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


@contextmanager
def _reporting(args: argparse.Namespace, found: Any) -> Iterator[None]:
    """--report FILE of what `found` read, written when the work inside ends."""
    try:
        yield
    finally:
        write_report(args, found)


def add(args: argparse.Namespace) -> None:
    engine = open_index(args, verify=False)  # a write reads only the records it checks
    if args.ray_gpus and engine.info().encoder_backend != "cuda":
        raise InputError(f"--ray-gpus: {engine.path} was built with backend "
                         f"{engine.info().encoder_backend}, and added papers must be encoded "
                         "as it was; build the index with --backend cuda to add on GPUs")
    before = len(engine)
    found = read_files(args, inputs(args), title_only=args.allow_title_only,
                       full_text=not args.abstract_only)
    write_report(args, found)
    with _executor(args) as executor:
        added = engine.add(found.papers, allow_title_only=args.allow_title_only,
                           progress=progress(args), wait=args.wait, executor=executor)
        if executor is not None:
            say(args, executor.stats.summary())
    say(args, f"Added {output.counted(added, 'paper')} ({before} before, {len(engine)} now); "
               "papers already in the index were left as they are.")


def remove(args: argparse.Namespace) -> None:
    engine = open_index(args, verify=False)
    removed = engine.remove(args.paper_ids, wait=args.wait)
    say(args, f"Removed {output.counted(removed, 'paper')}; {len(engine)} remain.")
