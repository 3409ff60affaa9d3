"""Words broken by a hyphen at a line end, joined again: "predic-" + "tion" is
"prediction", but "semi-" + "cooperative" is "semi-cooperative". PDFium marks every
hyphen that ends a line as a break (`layout`), so which it was is decided here, from
the document's own spelling first, then from the shape and the first part of the word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["BREAK", "COMPOUND_PREFIXES", "Spelling", "mend_breaks"]

#: What `fields.join_lines` leaves where a line ended in a hyphen, until `mend_breaks`.
BREAK = "\u00ad"
#: First parts after which a line-end hyphen stays, when the document does not say: of
#: the dev abstracts' words that begin with them, three in four or more are written with
#: the hyphen (`python scripts/hyphen_prefix_study.py --data ../shared/data/papers`,
#: even lines; the odd lines agree within 0.03): well 0.990, self 0.985, quasi 0.899,
#: pseudo 0.897, fine 0.890, cross 0.886, semi 0.804 ("semi-supervised" against
#: "semidefinite", "seminal"). Not non 0.623, multi 0.444 ("multiple"), pre 0.052
#: ("prediction"), co 0.004 ("cooperative"): joining is right more often after those.
#: In the ten real PDFs of tests/data/pdfs/real, 2 of the 125 line-end breaks of the
#: pages read keep their hyphen so ("semi-definite", "cross-section").
COMPOUND_PREFIXES = frozenset({"cross", "fine", "pseudo", "quasi", "self", "semi", "well"})
# A run of word characters, hyphens and break marks: a word as the text spells it.
_TOKEN = re.compile(rf"[\w{BREAK}-]+")
_COMPOUND = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
_WORD = re.compile(r"[^\W\d_]+")
# A broken word: the letters (or digits) either side of the mark.
_BROKEN = re.compile(rf"([\w]+){BREAK}([\w]+)?")


@dataclass
class Spelling:
    """How the document itself spells words: hyphenated compounds written within a line
    ("semi-cooperative") and plain words, both case-folded; the two parts of a word
    broken at a line end are neither ("dis" of "dis-cussing" is no word of it)."""

    hyphenated: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, texts: Iterable[str]) -> Spelling:
        """The spelling of `texts`: running text with its breaks marked (`BREAK`)."""
        spelling = cls()
        for text in texts:
            for token in _TOKEN.findall(text):
                if BREAK in token:
                    continue
                if _COMPOUND.fullmatch(token):
                    spelling.hyphenated.add(token.casefold())
                elif _WORD.fullmatch(token):
                    spelling.words.add(token.casefold())
        return spelling


def _keeps_hyphen(first: str, second: str, spelling: Spelling) -> bool:
    """Whether `first`-`second`, broken at a line end, is a compound (the hyphen stays)."""
    joined = (first + second).casefold()
    if f"{first}-{second}".casefold() in spelling.hyphenated:
        return True
    if joined in spelling.words:
        return False
    # TeX breaks words of lower-case letters only: a digit or a capital after the break
    # ("GPT-4", "non-English") or inside the first part ("LoRA-based") is a real hyphen.
    if second[:1].isdigit() or second[:1].isupper() or first[-1:].isdigit() \
            or any(char.isupper() for char in first[1:]):
        return True
    return first.casefold() in COMPOUND_PREFIXES


def mend_breaks(text: str, spelling: Spelling) -> str:
    """`text` with each line-end break (`BREAK`) joined, or a hyphen where the word is a
    compound."""
    if BREAK not in text:
        return text

    def mend(match: re.Match[str]) -> str:
        first, second = match.group(1), match.group(2)
        if second is None:  # nothing after the break (the text ended): drop the mark
            return first
        return f"{first}-{second}" if _keeps_hyphen(first, second, spelling) \
            else first + second

    return _BROKEN.sub(mend, text).replace(BREAK, "")
