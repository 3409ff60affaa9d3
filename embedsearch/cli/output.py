"""How the CLI prints results: a readable ranked list, one JSON object per line, CSV,
or a .bib file of the papers.

The readable list shows a paper's text as words (`text.plain_text`: "80%", not
"80\\%"), and a title derived from the abstract as the abstract's opening it is (an
ellipsis; dim and italic on a terminal). JSON, CSV and BibTeX keep the text as stored.

The JSON shape is a contract for scripts: each hit has rank (1-based), id, score
(what the hits are ordered by, on the cosine scale: descending, see `results.Hit`),
title, abstract, year, venue and the other paper fields, and similarity (the cosine);
batch searches add query_index (0-based line) and query. CSV has the same fields as
columns (`exporting.to_csv`).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from ..papers import Passage, first_sentence
from ..search.results import hit_record
from ..text import plain_text

if TYPE_CHECKING:
    from ..corpus_map.projection import CorpusMap
    from ..index.info import IndexInfo
    from ..papers import Paper
    from ..search.results import Hit

__all__ = ["SHAPES", "corpus_map", "counted", "grouped", "hits", "info", "paper", "results",
           "snippet"]

#: How `results` prints hits: a readable list, or the formats of `exporting`.
SHAPES = ("text", "jsonl", "bibtex", "csv")

_SNIPPET_CHARS = 220
_MUTED = "\033[2;3m"  # dim italic: a derived title is not the paper's own
_PLAIN = "\033[0m"


def counted(count: int, noun: str) -> str:
    """`count` and `noun`, plural unless one: "1 paper", "2 papers", "0 papers"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.") + "…"


def snippet(text: str, limit: int = _SNIPPET_CHARS) -> str:
    """The start of `text`, whitespace collapsed, cut at a word with an ellipsis."""
    return _clip(" ".join(text.split()), limit)


def _readable(text: str, limit: int) -> str:
    """The start of `text` as words (`snippet` of `plain_text`). Only a start is read: a
    snippet needs no more, and LaTeX costs time on a long abstract."""
    return snippet(plain_text(text[: limit * 4]), limit)


def _title(record: Paper) -> str:
    """The title as words; a derived title (the abstract's first sentence) ends in an
    ellipsis, so it reads as the abstract's opening, not as a title."""
    title = plain_text(record.title)
    return title.rstrip("…") + "…" if record.title_derived and title else title


def _muted(text: str, record: Paper, tty: bool) -> str:
    return f"{_MUTED}{text}{_PLAIN}" if record.title_derived and tty else text


def _after_opening(record: Paper) -> str:
    """The abstract after its first sentence when the title is that sentence (shown
    above it already); the whole abstract when there is no more."""
    if not record.title_derived:
        return record.abstract
    flat = " ".join(record.abstract[: _SNIPPET_CHARS * 8].split())
    return flat[len(first_sentence(flat)):].strip() or record.abstract


def _highlight(text: str, terms: Sequence[str], bold: bool) -> str:
    """`text` with the evidence words in bold, on a terminal."""
    if not bold or not terms:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\b")
    return pattern.sub(lambda match: f"\033[1m{match.group(0)}\033[0m", text)


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 110))


def _where(paper: Paper) -> str:
    parts = [part for part in (paper.venue, str(paper.year or "")) if part]
    return " ".join(parts)


def _json_line(data: dict[str, Any], out: IO[str]) -> None:
    out.write(json.dumps(data, ensure_ascii=False) + "\n")


def hits(results: Sequence[Hit], *, json_lines: bool, query: str | None = None,
         query_index: int | None = None, query_id: str | None = None,
         out: IO[str] | None = None) -> None:
    """Print one query's hits."""
    out = out or sys.stdout
    if json_lines:
        extra: dict[str, Any] = {}
        if query_index is not None:
            extra = {"query_index": query_index, "query": query}
        if query_id is not None:
            extra["query_id"] = query_id
        for hit in results:
            _json_line(hit_record(hit, **extra), out)
        return
    width = _width()
    if query_index is not None:  # a line, as a pasted abstract would fill a screen
        out.write(f"\n{_clip(f'[{query_index}] ' + ' '.join((query or '').split()), width)}\n")
    if not results:
        out.write("No papers match.\n")
        return
    indent = " " * 12
    tty = out.isatty()
    for hit in results:
        lead = f"{hit.rank:>3}. {hit.score:6.3f}  "
        title = _clip(lead + _title(hit.paper), width)[len(lead):]
        out.write(lead + _muted(title, hit.paper, tty) + "\n")
        meta = "  ·  ".join(part for part in (_where(hit.paper), hit.paper.id) if part)
        out.write(f"{indent}{meta}\n")
        text = (_readable(hit.evidence, 300) if hit.evidence else
                _readable(_after_opening(hit.paper), _SNIPPET_CHARS))
        where = f"{hit.passage.where}: " if hit.passage is not None and hit.passage.where else ""
        body = textwrap.fill(("» " if hit.evidence else "") + where + text, width,
                             initial_indent=indent, subsequent_indent=indent)
        out.write(_highlight(body, hit.evidence_terms, tty) + "\n")
        if hit.because:
            named = "; ".join(f"“{plain_text(reason.title) or reason.id}”"
                              for reason in hit.because)
            out.write(_clip(f"{indent}because you have {named}", width) + "\n")


def grouped(found: Sequence[Hit]) -> list[tuple[str, list[Hit]]]:
    """Recommendations by the library group of their nearest example (`Hit.group`), the
    groups in the order of their best hit, each keeping its hits' order."""
    groups: dict[str, list[Hit]] = {}
    for hit in found:
        groups.setdefault(hit.group or "", []).append(hit)
    return list(groups.items())


def results(batches: Sequence[tuple[Sequence[Hit], dict[str, Any]]], shape: str,
            out: IO[str] | None = None, *, group: bool = False, latex: bool = False) -> None:
    """Print the hits of one or more queries, each with what names its query (`query`
    and `query_index`, or `query_id`). CSV has one header; a .bib file holds each paper
    once, whichever queries found it. `group`: text output under a heading for each
    library group (JSON and CSV carry each hit's `group` anyway). `latex`: BibTeX in
    LaTeX escapes (`exporting.to_bibtex`)."""
    out = out or sys.stdout
    if group and shape == "text":
        for found, extra in batches:
            for name, members in grouped(found):
                out.write(f"\n── {name or 'other'} ({len(members)}) ──\n")
                hits(members, json_lines=False, out=out, **extra)
        return
    if shape in ("bibtex", "ris", "csl-json", "csv"):
        from ..exporting import export

        if shape != "csv":  # a bibliography: each paper once, whichever queries found it
            out.write(export([hit for found, _ in batches for hit in found], shape,
                             latex=latex))
        else:
            out.write(export([hit_record(hit, **extra) for found, extra in batches
                              for hit in found], "csv"))
        return
    for found, extra in batches:
        hits(found, json_lines=shape == "jsonl", out=out, **extra)


def paper(record: Paper, *, json_lines: bool, out: IO[str] | None = None,
          passages: Sequence[Passage] | None = None) -> None:
    """Print one paper in full, and its `passages` when given."""
    out = out or sys.stdout
    if json_lines:
        extra = {} if passages is None else {"passages": [p.to_dict() for p in passages]}
        _json_line({**record.to_dict(), **extra}, out)
        return
    width = _width()
    title = _muted(_title(record), record, out.isatty())
    if record.title_derived:
        title += "  (untitled: the abstract's opening)"
    lines = [title, f"id: {record.id}"]
    for label, value in (("venue", _where(record)), ("authors", ", ".join(record.authors)),
                         ("keywords", ", ".join(record.keywords)), ("url", record.url),
                         ("tldr", plain_text(record.tldr))):
        if value:
            lines.append(f"{label}: {value}")
    abstract = textwrap.fill(plain_text(record.abstract), width)
    out.write("\n".join(lines) + "\n\n" + abstract + "\n")
    if passages is not None:
        out.write(f"\n{counted(len(passages), 'passage')} (read in full)\n" if passages else
                  "\nNo passages: the paper is known by its abstract.\n")
        for passage in passages:
            out.write(textwrap.fill(f"{passage.where or '?'}: {passage.text}", width,
                                    subsequent_indent="    ") + "\n")


def info(summary: IndexInfo, *, json_lines: bool, out: IO[str] | None = None) -> None:
    """Print what an index holds."""
    out = out or sys.stdout
    if json_lines:
        _json_line(summary.to_dict(), out)
        return
    params = ", ".join(f"{key}={value}" for key, value in summary.index_params.items())
    rows = [
        ("index", summary.path),
        ("papers", f"{summary.count}"),
        ("model", f"{summary.model} (backend {summary.encoder_backend}, {summary.dim}-d, "
                  f"fingerprint {summary.fingerprint[:12]})"),
        ("prompts", _prompts(summary.prompts)),
        ("embedded", " + ".join(summary.fields)),
        ("vector index", f"{summary.index_type} ({params})"),
        ("stored in", _stored_in(summary.storage)),
        ("size", f"{summary.bytes / 1e6:.1f} MB"),
        ("format", f"version {summary.format_version}"),
        ("created", summary.created),
        ("updated", summary.updated),
    ]
    for label, value in rows:
        out.write(f"{label:>13}: {value}\n")


def _prompts(prompts: dict[str, str]) -> str:
    if not (prompts.get("query") or prompts.get("document")):
        return "none (texts are encoded as they are)"
    return (f"query {prompts.get('query', '')!r}, document {prompts.get('document', '')!r} "
            f"(from {prompts.get('source', 'the user')})")


def _stored_in(storage: dict[str, object]) -> str:
    if storage.get("kind", "local") == "local":
        return "files beside the manifest"
    return f"{storage['kind']} collection '{storage.get('collection')}' at {storage.get('uri')}"


def corpus_map(summary: CorpusMap, *, json_lines: bool, out: IO[str] | None = None) -> None:
    """Print a map's clusters, largest first."""
    out = out or sys.stdout
    clusters = sorted(summary.clusters, key=lambda cluster: -cluster.size)
    if json_lines:
        for cluster in clusters:
            _json_line(cluster.to_dict(), out)
        return
    out.write(f"{counted(len(summary), 'paper')}, {counted(len(clusters), 'cluster')} "
              f"({summary.method}):\n")
    for cluster in clusters:
        out.write(f"{cluster.size:>7}  {cluster.label}\n")
