"""LaTeX markup in bibliographic fields ("M{\\"u}ller", "50\\%") as plain text.

Math ($\\alpha$-divergence) is kept as written: the abstracts of our other formats
carry it that way (OpenReview's do), so a paper exported to .bib and read back is the
same paper.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

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


@cache
def _decoder() -> tuple[Any, Any]:
    """(the parser's macro table, the converter to text)."""
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
    # pylatexenc's modifier letter "ˆ".
    context.add_context_category("embedsearch", prepend=True,
                                 macros=[MacroTextSpec("url", simplify_repl="%s"),
                                         MacroTextSpec("href", simplify_repl=_href_text),
                                         MacroTextSpec("textasciicircum", simplify_repl="^")])
    return macros, LatexNodes2Text(latex_context=context, math_mode="verbatim")


def latex_to_text(text: str) -> str:
    """`text` with accents and escapes turned into Unicode, whitespace collapsed."""
    if not _MARKUP.search(text):
        return " ".join(text.split())
    from pylatexenc.latexwalker import LatexWalker

    macros, converter = _decoder()
    try:
        nodes = LatexWalker(text, latex_context=macros, tolerant_parsing=True).get_latex_nodes()[0]
        plain = str(converter.nodelist_to_text(nodes))
    except (RecursionError, IndexError, KeyError):
        # Braces nested thousands deep are no real markup, and pylatexenc fails on some
        # macros that lack their arguments: dropping the braces keeps the words.
        plain = _BRACES.sub("", text)
    return " ".join(plain.split())
