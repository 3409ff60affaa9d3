"""Taking results away: hits or papers as BibTeX, RIS, CSL-JSON, CSV or JSON lines.

The same writers serve `--format` on the command line and Python callers:
`to_bibtex(engine.search("diffusion"))` gives a .bib file's text, `export(hits, "ris")`
any format's. BibTeX, CSV and JSON lines are written here; RIS and CSL-JSON, what
reference managers exchange, by `export_ris` and `export_csl`.

BibTeX is written by bibtexparser 2's writer: each paper under its entry type (@book,
@phdthesis, ...; guessed from the venue only when the source did not say) with every
standard field it keeps (publisher, editor, pages, ... `Paper.bib_fields`), each value
LaTeX-encoded by pylatexenc (what bibtexparser's own encoding middleware uses) so that
`&`, `%` and braces neither break the file nor the LaTeX run that cites it. Text is
Unicode in every field by default (biber, and LaTeX since 2018, read UTF-8); `latex=True`
spells every character that has a LaTeX escape in it, in every field, for classic
BibTeX. Our reader reads either back as the same papers. The citation key is
the paper id when the id is a valid key (so re-reading the file gives back the same
ids), else the id made safe plus a short hash of it: the same paper always gets the
same key, and two ids never share one.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

from .bibentry import NAME_FIELDS, guessed_type
from .errors import DependencyError, QueryError
from .export_common import citation_key, papers_of
from .papers import Paper
from .readers.latex import latex_to_text
from .results import HIT_COLUMNS, Hit, hit_record

__all__ = ["FORMATS", "citation_key", "export", "papers_of", "to_bibtex", "to_csv",
           "to_jsonl", "write"]

#: The formats `write` and `--format` know.
FORMATS = ("bibtex", "ris", "csl-json", "csv", "jsonl")
#: Columns a batch or similar-paper result adds after the hit's own.
EXTRA_COLUMNS = ("query_index", "query", "query_id")
_PAPER_COLUMNS = tuple(column for column in HIT_COLUMNS if column in Paper.__dataclass_fields__)
# Words with a capital after their first letter (LoRA, GPT-4, ImageNet) are braced so
# that BibTeX styles which lower-case titles leave them as written.
_KEEP_CASE = re.compile(r"(?<![\w{\\])([A-Za-z0-9]+[A-Z][\w-]*)")
# A name with " and " in it (a company): braced, or BibTeX would split it in two.
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: Entry types whose venue is the book they are in (booktitle), not a journal.
_IN_BOOK = ("inproceedings", "incollection", "inbook", "proceedings")
#: Fields where "--" is a range (BibTeX's en dash), not two hyphens typed.
_RANGES = ("pages",)
# LaTeX's special characters, and < > (which OT1 fonts print as ¡ ¿).
_SPECIALS = {ord(char): latex for char, latex in {
    "\\": r"{\textbackslash}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$", "%": r"\%",
    "&": r"\&", "_": r"\_", "~": r"{\textasciitilde}", "^": r"{\textasciicircum}",
    "<": r"\ensuremath{<}", ">": r"\ensuremath{>}"}.items()}


class _Latex:
    """LaTeX-encode a value with pylatexenc: math ($...$) kept as written, LaTeX's special
    characters escaped (so that no value breaks the file or the LaTeX run), and the rest
    of Unicode kept as UTF-8, which biber and LaTeX read and which reads back exactly.
    `escapes`: every other character that has a LaTeX spelling our reader turns back
    into it is spelt so too ({\\'e}, {\\textendash}), for BibTeX without UTF-8 (which
    abbreviates first names byte by byte); "ﬁ" or "−" stay UTF-8, as their spelling
    would come back as "fi" and "-". A value whose kept math would leave braces
    unbalanced is encoded whole instead, $ included. `dashes=False` (page ranges) writes
    "--" as BibTeX's en dash instead of as two hyphens."""

    def __init__(self, *, escapes: bool = False) -> None:
        from pylatexenc.latexencode import (
            RULE_CALLABLE,
            RULE_DICT,
            RULE_REGEX,
            UnicodeToLatexConversionRule,
            UnicodeToLatexEncoder,
        )

        keep_math = UnicodeToLatexConversionRule(rule_type=RULE_CALLABLE, rule=_math_span)
        # "--", "``" and "''" stay as typed (LaTeX would print a dash or curly quotes).
        dashes = UnicodeToLatexConversionRule(rule_type=RULE_REGEX, rule=[
            (re.compile(r"-(?=-)"), "-{}"), (re.compile(r"'(?=')"), "'{}"),
            (re.compile(r"`"), "{`}")])
        specials = UnicodeToLatexConversionRule(rule_type=RULE_DICT, rule=_SPECIALS)
        spelt = [UnicodeToLatexConversionRule(rule_type=RULE_CALLABLE, rule=_escape)] \
            if escapes else []
        options = {"unknown_char_policy": "keep", "unknown_char_warning": False}
        self._encoders = {
            (math, keep_dashes): UnicodeToLatexEncoder(conversion_rules=[
                *([keep_math] if math else []), *([dashes] if keep_dashes else []),
                specials, *spelt], **options)
            for math in (True, False) for keep_dashes in (True, False)}

    def __call__(self, text: str, *, dashes: bool = True) -> str:
        encoded: str = self._encoders[True, dashes].unicode_to_latex(text)
        if not _balanced(encoded):
            encoded = self._encoders[False, dashes].unicode_to_latex(text)
        return encoded


@functools.cache
def _spelling() -> Any:
    """pylatexenc's encoder of one character to its LaTeX spelling, braced whole."""
    from pylatexenc.latexencode import UnicodeToLatexEncoder

    return UnicodeToLatexEncoder(conversion_rules=["defaults"], unknown_char_policy="keep",
                                 unknown_char_warning=False,
                                 replacement_latex_protection="braces-all")


@functools.cache
def _spelt(char: str) -> str | None:
    """`char`'s LaTeX spelling if our reader reads it back as `char`, else None."""
    spelling: str = _spelling().unicode_to_latex(char)
    return spelling if spelling != char and latex_to_text(spelling) == char else None


def _escape(text: str, start: int) -> tuple[int, str] | None:
    """(1, spelling) for a non-ASCII character that has a LaTeX spelling (see `_spelt`)."""
    if ord(text[start]) < 128:
        return None
    spelling = _spelt(text[start])
    return (1, spelling) if spelling else None


def _math_span(text: str, start: int) -> tuple[int, str] | None:
    """(length, itself) of the math ($...$) starting at `start`, to keep it as written: it
    ends at the first unescaped $ outside the braces it opens, so $\\textbf{2$\\times$}$
    is one span. None where no math starts, or it never ends."""
    if text[start] != "$" or (start and text[start - 1] == "\\"):
        return None
    depth, position = 0, start + 1
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char in "{}":
            depth += 1 if char == "{" else -1
        elif char == "$" and depth == 0:
            span = text[start : position + 1]
            return (len(span), span) if len(span) > 2 else None
        position += 1
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for match in re.finditer(r"\\.|[{}]", text):
        token = match.group(0)
        if token in "{}":
            depth += 1 if token == "{" else -1
            if depth < 0:
                return False
    return depth == 0


def _title(encoded: str) -> str:
    parts = re.split(r"(\$[^$]*\$)", encoded)  # never brace inside math
    return "".join(part if part.startswith("$") else _KEEP_CASE.sub(r"{\1}", part)
                   for part in parts)


def _names(value: Iterable[str], encode: _Latex) -> str:
    """People as BibTeX lists them: " and " between names, a name holding " and " (a
    company) braced whole so that it stays one."""
    names = (" ".join(name.split()) for name in value)
    return " and ".join(f"{{{encode(name)}}}" if _AND.search(name) else encode(name)
                        for name in names if name)


def _kept(paper: Paper, encode: _Latex) -> list[Any]:
    """The paper's other standard fields (`bib_fields`) as written: a month named by its
    abbreviation as BibTeX's macro (styles print it in full), pages with an en dash."""
    from bibtexparser import model

    fields = []
    for name, value in paper.bib_fields:
        if name in NAME_FIELDS:
            fields.append(model.Field(name, _names(value.split(" and "), encode)))
        elif name == "month" and value.lower() in _MONTHS:
            fields.append(model.Field(name, value.lower(), enclosing="no-enclosing"))
        else:
            fields.append(model.Field(name, encode(value, dashes=name not in _RANGES)))
    return fields


def _entry(paper: Paper, encode: _Latex) -> Any:
    from bibtexparser import model

    kind = guessed_type(paper.entry_type, paper.venue)
    kept = dict(paper.bib_fields)
    # The venue goes where the reader takes it from (journal, then booktitle): under
    # journal when the paper also keeps a booktitle of its own.
    venue = "journal" if "booktitle" in kept or kind not in _IN_BOOK else "booktitle"
    values: list[tuple[str, str]] = [
        ("title", _title(encode(paper.title))),
        ("author", _names(paper.authors, encode)),
        (venue, encode(paper.venue)),
        ("year", str(paper.year) if paper.year else ""),
        ("abstract", encode(paper.abstract)),
        ("keywords", ", ".join(encode(word) for word in paper.keywords)),
        # URLs are verbatim in biblatex: percent-quote the braces, encode nothing else.
        ("url", urllib.parse.quote(paper.url, safe=":/?#[]@!$&'()*+,;=%~-._")),
        # Written back so a reader (ours, biber, Zotero) matches the paper by them.
        ("doi", urllib.parse.quote(paper.doi, safe=":/?#[]@!$&'()*+,;=%~-._<>")),
        ("eprint", paper.arxiv_id),
        ("archiveprefix", "arXiv" if paper.arxiv_id else ""),
    ]
    fields = [model.Field(name, value) for name, value in values if value]
    return model.Entry(kind, citation_key(paper.id), [*fields, *_kept(paper, encode)])


def to_bibtex(items: Iterable[Hit | Paper], *, latex: bool = False) -> str:
    """A .bib file's text: one entry per paper of `items` (hits or papers), in order,
    of the paper's entry type, with every field it keeps. Every field is Unicode (LaTeX's
    special characters escaped); `latex`: spelt in LaTeX escapes wherever one exists
    ({\\'e}), for BibTeX without UTF-8. Either reads back as the same papers."""
    try:
        from bibtexparser.entrypoint import write_string
        from bibtexparser.library import Library
    except ImportError:
        raise DependencyError("BibTeX export needs bibtexparser 2, which is not installed: "
                              "pip install 'bibtexparser>=2.0,<3'") from None
    library = Library()
    encode = _Latex(escapes=latex)
    for paper in papers_of(items):
        library.add(_entry(paper, encode))
    return write_string(library)


def _cell(value: Any) -> Any:
    if isinstance(value, Mapping):  # bib_fields: "publisher: MIT Press; pages: 1--9"
        return "; ".join(f"{name}: {text}" for name, text in value.items())
    if isinstance(value, (list, tuple)):
        return "; ".join(_named(item) for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def _named(item: Any) -> str:
    """A list's item in a CSV cell: a reason (an example paper) by its title and id."""
    if isinstance(item, Mapping) and "id" in item:
        return f"{item.get('title') or ''} ({item['id']})".strip()
    return str(item)


def _records(items: Iterable[Hit | Paper | Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [hit_record(item) if isinstance(item, Hit) else
            item.to_dict() if isinstance(item, Paper) else dict(item) for item in items]


def to_csv(items: Iterable[Hit | Paper | Mapping[str, Any]], *, header: bool = True) -> str:
    """CSV text with a header: the JSON hit's fields (`HIT_COLUMNS`, then query_index,
    query or query_id where present), lists joined with "; ". Papers give the paper
    columns only. `items` may also be JSON hit records (`hit_record`)."""
    records = _records(items)
    base = (HIT_COLUMNS if not records or any("rank" in record for record in records)
            else _PAPER_COLUMNS)
    columns = [*base, *(c for c in EXTRA_COLUMNS if any(c in record for record in records))]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header:
        writer.writerow(columns)
    for record in records:
        writer.writerow([_cell(record.get(column)) for column in columns])
    return buffer.getvalue()


def to_jsonl(items: Iterable[Hit | Paper | Mapping[str, Any]]) -> str:
    """One JSON object per line: the `--json` shape of each hit (or paper)."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in _records(items))


def export(items: Iterable[Hit | Paper | Mapping[str, Any]], format: str, *,
           latex: bool = False) -> str:
    """`items` as a file's text in `format` (one of `FORMATS`): BibTeX, RIS and CSL-JSON
    hold each paper once; CSV and JSON lines each hit (or paper, or JSON hit record).
    `latex`: BibTeX in LaTeX escapes (see `to_bibtex`)."""
    if format in ("bibtex", "ris", "csl-json"):  # bibliographies: papers, not hit records
        papers = [item for item in items if not isinstance(item, Mapping)]
        if format == "bibtex":
            return to_bibtex(papers, latex=latex)
        if format == "ris":
            from .export_ris import to_ris

            return to_ris(papers)
        from .export_csl import to_csl_json

        return to_csl_json(papers)
    if format == "csv":
        return to_csv(items)
    if format == "jsonl":
        return to_jsonl(items)
    raise QueryError(f"format must be one of {', '.join(FORMATS)}, got '{format}'")


def write(items: Sequence[Hit | Paper | Mapping[str, Any]], format: str, out: IO[str], *,
          latex: bool = False) -> None:
    """Write `items` to `out` in `format` (one of `FORMATS`, see `export`)."""
    out.write(export(items, format, latex=latex))
