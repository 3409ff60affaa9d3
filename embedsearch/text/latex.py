"""LaTeX markup in bibliographic fields ("M{\\"u}ller", "50\\%") as plain text.

Read from a file, math ($\\alpha$-divergence) is kept as written: the abstracts of our
other formats carry it that way (OpenReview's do), so a paper exported to .bib and read
back is the same paper. Shown on a terminal (`math="text"`), math is spelt in Unicode
("α-divergence") and a macro the converter does not know is kept as written.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Literal

__all__ = ["latex_to_text"]

# Only text with one of these can hold markup; the rest skips the (slow) LaTeX parser.
_MARKUP = re.compile(r"[\\{}$~]")
_BRACES = re.compile(r"[{}]")


def _href_text(node: Any, l2tobj: Any) -> str:
    """\\href{url}{text} as its text; as its url when the text is missing. (pylatexenc
    passes the converter by the parameter name `l2tobj`.)"""
    arguments = node.nodeargd.argnlist if node.nodeargd is not None else []
    given = [argument for argument in arguments if argument is not None]
    return str(l2tobj.nodelist_to_text(given[-1:]))


def _as_written(node: Any) -> str:
    return str(node.latex_verbatim())


@cache
def _decoder(math: Literal["verbatim", "text"] = "verbatim") -> tuple[Any, Any]:
    """(the parser's macro table, the converter to text with math as `math` says)."""
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
    from pylatexenc.latexwalker import get_default_latex_context_db as parser_macros
    from pylatexenc.macrospec import MacroSpec

    # pylatexenc 2 knows how to write \href{url}{text} but not that it takes two
    # arguments, and fails on it (an IndexError): abstracts cite code that way.
    macros = parser_macros()
    macros.add_context_category("embedsearch", prepend=True, macros=[MacroSpec("href", "{{")])
    context = get_default_latex_context_db()
    # \url{x} is x, not pylatexenc's "<x>"; \href{url}{text} is its text, as printed;
    # \textasciicircum is the ASCII caret BibTeX writers (ours too) escape ^ to, not
    # pylatexenc's modifier letter "ˆ"; pylatexenc drops \texttt{x} whole, x included.
    context.add_context_category("embedsearch", prepend=True,
                                 macros=[MacroTextSpec("url", simplify_repl="%s"),
                                         MacroTextSpec("href", simplify_repl=_href_text),
                                         MacroTextSpec("textasciicircum", simplify_repl="^"),
                                         MacroTextSpec("texttt", simplify_repl="%s")])
    if math == "text":
        # Unknown macros vanish in pylatexenc's text, \foo{x} and all: a reader is
        # better served by the macro as written than by a hole in the sentence.
        context.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=_as_written))
    return macros, LatexNodes2Text(latex_context=context, math_mode=math)


def latex_to_text(text: str, math: Literal["verbatim", "text"] = "verbatim") -> str:
    """`text` with accents and escapes turned into Unicode, whitespace collapsed; math
    kept as written (`"verbatim"`) or spelt in Unicode (`"text"`: "$6\\times$" is "6×")."""
    if not _MARKUP.search(text):
        return " ".join(text.split())
    from pylatexenc.latexwalker import LatexWalker

    macros, converter = _decoder(math)
    try:
        nodes = LatexWalker(text, latex_context=macros, tolerant_parsing=True).get_latex_nodes()[0]
        plain = str(converter.nodelist_to_text(nodes))
    except (RecursionError, IndexError, KeyError):
        # Braces nested thousands deep are no real markup, and pylatexenc fails on some
        # macros that lack their arguments: dropping the braces keeps the words.
        plain = _BRACES.sub("", text)
    return " ".join(plain.split())
