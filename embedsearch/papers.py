"""The `Paper` record every part of embedsearch passes around, and the rules that fill gaps.

A corpus may lack ids or titles (the ICLR seed files have neither); the functions here
derive them deterministically so that the same file always yields the same papers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_FIELDS",
    "TEXT_FIELDS",
    "TITLE_ONLY_FIELDS",
    "Block",
    "Paper",
    "Passage",
    "cited_title",
    "derive_id",
    "derive_title",
    "embedding_text",
    "first_sentence",
    "normalise_title",
    "split_sentences",
]

#: Fields that can be embedded; title + abstract is what the bundled embeddings use.
TEXT_FIELDS = ("title", "abstract", "tldr", "keywords")
DEFAULT_FIELDS: tuple[str, ...] = ("title", "abstract")
#: What a paper without an abstract is encoded from. scripts/title_only_study.py (see
#: examples.TITLE_ONLY_WEIGHT): keywords added to the title found the hidden paper in
#: the top 20 for 0.369 of held-out topics against 0.344 for the title alone; the venue
#: added nothing (0.350 with it, 0.357 with both), so it is left out.
TITLE_ONLY_FIELDS: tuple[str, ...] = ("title", "keywords")
_SEPARATOR = ". "
_TITLE_CHARS = 120

# A sentence ends at . ! or ? followed by space and an upper-case letter, digit or
# bracket; this keeps "e.g. the" inside its sentence. Not after the abbreviations papers
# cite with, which a number or a capital follows ("et al. (2020)", "Fig. 3b", "Eq. 2",
# "cf. Table 1"): a passage or evidence sentence cut there named half a sentence.
_ABBREVIATIONS = ("al", "Fig", "Figs", "fig", "Eq", "Eqs", "eq", "Sec", "Sect", "Tab",
                  "Ref", "Refs", "No", "no", "cf", "vs", "e.g", "i.e", "resp", "approx")
# The full stop first: checked at every position of every text, the twenty
# abbreviations' lookbehinds first made splitting 30 times as slow (400 us an abstract).
_SENTENCE_END = re.compile(r"(?<=[.!?])" + "".join(rf"(?<!\b{re.escape(word)}\.)"
                                                  for word in _ABBREVIATIONS)
                           + r"\s+(?=[A-Z0-9\[(])")
_MARKUP = re.compile(r"\*\*|__|`")
_SPACE = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Passage:
    """A window of whole sentences of a paper's body, where a reader can find it.

    `page` is the 1-based page of the PDF it starts on (None when the source has no
    pages, as a plain-text cache); `page_label` is the page number printed there
    ("356", "iv") when the PDF names its pages, else ""; `section` is the heading of the
    section it is in ("4.1 Results"), "" before the first heading.
    """

    text: str
    page: int | None = None
    page_label: str = ""
    section: str = ""

    def to_dict(self) -> dict[str, object]:
        """The passage as JSON-ready plain data."""
        return {"text": self.text, "page": self.page, "page_label": self.page_label,
                "section": self.section}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Passage:
        """What `to_dict` wrote."""
        page = data.get("page")
        return cls(str(data["text"]), int(page) if isinstance(page, int) else None,
                   str(data.get("page_label") or ""), str(data.get("section") or ""))

    @property
    def where(self) -> str:
        """Where it is, as a citation says it: "p. 6 (§4.1 Results)", "" if unknown."""
        page = self.page_label or (str(self.page) if self.page is not None else "")
        parts = [f"p. {page}" if page else "", f"(§{self.section})" if self.section else ""]
        return " ".join(part for part in parts if part)


@dataclass(frozen=True, slots=True)
class Block:
    """A paragraph of a body as a reader found it: its text, page, page label, section."""

    text: str
    page: int | None = None
    page_label: str = ""
    section: str = ""


@dataclass(frozen=True, slots=True)
class Paper:
    """One paper: an id, an abstract, and whatever metadata the corpus provides.

    What readers make of every input format, what the index stores and what each
    `Hit` carries. Text fields are `""` and `year` is None when the corpus does not
    say. A paper without a title gets its abstract's first sentence as one, marked
    `title_derived` (left out of the encoded text); one without an abstract is a
    bibliography entry known by its title (`title_only`).
    """

    id: str
    abstract: str
    title: str = ""
    title_derived: bool = False
    authors: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    venue: str = ""
    year: int | None = None
    url: str = ""
    tldr: str = ""
    primary_area: str = ""
    #: Normalised (`identifiers`): bare and lower-cased; '' when unknown.
    doi: str = ""
    #: Normalised: bare, without its version; '' when unknown.
    arxiv_id: str = ""
    #: The reference manager's collections the paper is in, each as its path from the
    #: top ("Thesis/Methods"); what `Filters.collections` matches.
    collections: tuple[str, ...] = ()
    #: What kind of publication it is, as a standard BibTeX entry type ("article",
    #: "book", "inproceedings", ... `bibentry.ENTRY_TYPES`); '' when the source does not
    #: say (the BibTeX export then guesses from the venue).
    entry_type: str = ""
    #: The other standard bibliographic fields the source gave (publisher, editor,
    #: volume, pages, ... `bibentry.KEPT_FIELDS`), as (BibTeX field name, plain Unicode
    #: text) pairs in that list's order; editors as "First Last and First Last".
    bib_fields: tuple[tuple[str, str], ...] = ()
    #: The body read in full (a PDF, a Zotero attachment) as passages with their pages;
    #: () for a paper known by its abstract. A paper read back from an index has ()
    #: here: its passages are asked for apart (`SearchEngine.passages`), as they can
    #: be thousands.
    passages: tuple[Passage, ...] = ()
    #: The document the paper was read from (a PDF's absolute path), which the server
    #: may open at a passage's page; "" when it came from a record.
    file: str = ""
    #: The reference-manager library the paper is in when that is not the user's own: a
    #: Zotero group library's name. "" for My Library, and for a paper from anywhere
    #: else (a file, a folder); `filters.MY_LIBRARY` is what a library filter calls it.
    library: str = ""
    #: A fingerprint of the file the passages were read from (a Zotero attachment and
    #: Zotero's text of it: which, their sizes and modification times), which a sync
    #: compares to read an attachment again only when it changed; "" for none.
    file_stamp: str = ""

    @property
    def title_only(self) -> bool:
        """A bibliography entry without an abstract, known by its title (and keywords,
        venue): usable as an example, and indexed only when asked (`--allow-title-only`)."""
        return not self.abstract

    def __repr__(self) -> str:
        # One line: a list of papers printed in a notebook reads as a list, not as pages
        # of abstracts (`to_dict` has every field).
        title = self.title if len(self.title) <= 60 else self.title[:59] + "…"
        where = ", ".join(part for part in (self.venue, str(self.year or "")) if part)
        return f"Paper(id={self.id!r}, title={title!r}" + (f", {where}" if where else "") + ")"

    def to_dict(self) -> dict[str, object]:
        """The paper as JSON-ready plain data (lists, not tuples; `bib_fields` an object;
        `file` and `library` only when set, so that a paper without them is written as
        before they existed; not `file_stamp`, a sync's bookkeeping)."""
        return {
            "id": self.id,
            "title": self.title,
            "title_derived": self.title_derived,
            "abstract": self.abstract,
            "authors": list(self.authors),
            "keywords": list(self.keywords),
            "venue": self.venue,
            "year": self.year,
            "url": self.url,
            "tldr": self.tldr,
            "primary_area": self.primary_area,
            "doi": self.doi,
            "arxiv_id": self.arxiv_id,
            "collections": list(self.collections),
            "entry_type": self.entry_type,
            "bib_fields": dict(self.bib_fields),
            **({"file": self.file} if self.file else {}),
            **({"library": self.library} if self.library else {}),
        }


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, whitespace collapsed."""
    text = _SPACE.sub(" ", text).strip()
    return [s for s in _SENTENCE_END.split(text) if s] if text else []


def first_sentence(text: str) -> str:
    """The first sentence of `text`, whitespace collapsed."""
    text = _SPACE.sub(" ", text).strip()
    return _SENTENCE_END.split(text, maxsplit=1)[0]


def derive_title(abstract: str, max_chars: int = _TITLE_CHARS) -> str:
    """A display title for a paper without one: its first sentence, cut at a word."""
    # The title needs only the start: collapsing all of a 50 MB abstract took seconds.
    sentence = _MARKUP.sub("", first_sentence(abstract[:max_chars * 20])).rstrip(".")
    if len(sentence) <= max_chars:
        return sentence
    cut = sentence[:max_chars].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def cited_title(paper: Paper) -> str:
    """The title a citation (BibTeX, RIS, CSL-JSON) shows: a derived one in square
    brackets, as a library catalogue writes a title it supplied ("[Visual prompting has
    gained popularity…]"), so that no one cites the abstract's opening as the paper's
    title; `derived_title_in` reads it back as derived. (Left out, biber refused the
    entry: a @misc needs a title.)"""
    return f"[{paper.title}]" if paper.title_derived and paper.title else paper.title


def derived_title_in(title: str, abstract: str) -> str | None:
    """The derived title `cited_title` wrote as `title` for a paper with an abstract, or
    None when `title` is a real one. Whole in brackets, a title is a supplied one, as a
    catalogue's "[Untitled manuscript]" is; "[Re] A study [2]" is a real title."""
    inner = title[1:-1]
    if abstract and title.startswith("[") and title.endswith("]") and inner.strip() \
            and "[" not in inner and "]" not in inner:
        return inner.strip()
    return None


def derive_id(source: str, position: int) -> str:
    """A stable id for the `position`-th (1-based) record of a file named `source`."""
    return f"{source}:{position}"


def embedding_text(paper: Paper, fields: Sequence[str] = DEFAULT_FIELDS) -> str:
    """The text the encoder sees for `paper`: the chosen fields joined by '. '.

    A derived title repeats the abstract's first sentence, so it is left out: it would
    only give that sentence double weight. A title-only paper is its title (and
    keywords, see `TITLE_ONLY_FIELDS`), whatever the fields, since it has nothing else.
    """
    if paper.title_only:
        fields = TITLE_ONLY_FIELDS
    parts: list[str] = []
    for name in fields:
        if name == "title" and paper.title_derived:
            continue
        value = ", ".join(paper.keywords) if name == "keywords" else getattr(paper, name)
        value = value.strip()
        if value:
            parts.append(value)
    return _SEPARATOR.join(parts)


def normalise_title(title: str) -> str:
    """`title` case folded, with every run of punctuation and spaces one space: how a
    given paper is matched to one an index holds ("Attention Is All You Need." and
    "attention is all you need" are one paper)."""
    return _NOT_WORD.sub(" ", title.casefold()).strip()
