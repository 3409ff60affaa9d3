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


@cache
def _decoder() -> Any:
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    context = get_default_latex_context_db()
    # \url{x} is x, not pylatexenc's "<x>"; \textasciicircum is the ASCII caret BibTeX
    # writers (ours too) escape ^ to, not pylatexenc's modifier letter "ˆ".
    context.add_context_category("embedsearch", prepend=True,
                                 macros=[MacroTextSpec("url", simplify_repl="%s"),
                                         MacroTextSpec("textasciicircum", simplify_repl="^")])
    return LatexNodes2Text(latex_context=context, math_mode="verbatim")


def latex_to_text(text: str) -> str:
    """`text` with accents and escapes turned into Unicode, whitespace collapsed."""
    if not _MARKUP.search(text):
        return " ".join(text.split())
    try:
        plain = str(_decoder().latex_to_text(text))
    except RecursionError:
        # Braces nested thousands deep are no real markup; dropping them keeps the words.
        plain = _BRACES.sub("", text)
    return " ".join(plain.split())
