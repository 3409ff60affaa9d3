"""Titles and abstracts as plain words: LaTeX and Markdown markup read as what it prints.

The stored text keeps its markup as written (clients render it); what a terminal
shows is the words.
"""

from __future__ import annotations

import re

from .latex import latex_to_text

__all__ = ["plain_text", "without_markup"]

# Markdown's emphasis as abstracts use it (OpenReview renders it): **bold** and __bold__
# may sit inside a word ("**Lo**w-**R**ank"); *italic* and _italic_ not, so "2*3*4" and
# "track_on" stay as they are. The same rules as the page's (static/richtext.js).
_EMPHASIS = (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"),
             re.compile(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)"),
             re.compile(r"(?<![\w*])\*([^\s*](?:[^*]*?[^\s*])?)\*(?![\w*])"),
             re.compile(r"(?<![\w_])_([^\s_](?:[^_]*?[^\s_])?)_(?![\w_])"),
             re.compile(r"`([^`]+)`"))
# A bare % starts a LaTeX comment, which would swallow the rest of the abstract: in an
# abstract it is a percent sign ("16.32%"), as it is in a web address.
_BARE_PERCENT = re.compile(r"(?<!\\)%")
_URL = re.compile(r"https?://[^\s{}]+")
# A LaTeX command's name (\texttt, \mathbf, \emph), which is no word of the text.
_COMMAND = re.compile(r"\\[A-Za-z@]+\*?")


def plain_text(text: str) -> str:
    """`text` (a title, an abstract) as words for a terminal, whitespace collapsed:
    LaTeX escapes and text macros as what they print ("80\\%" is "80%", "\\emph{x}" is
    x), math spelt in Unicode ("$6\\times$" is "6×"), Markdown emphasis and code as
    their words ("*PruneNet*" is PruneNet). What the CLI prints; the stored text and
    every data format keep the markup as written, for clients that render it."""
    text = _BARE_PERCENT.sub(r"\\%", text)
    # "~" is LaTeX's non-breaking space, but not in a web address ("/~name/").
    text = _URL.sub(lambda url: url.group(0).replace("~", r"\textasciitilde{}"), text)
    text = latex_to_text(text, math="text")
    for emphasis in _EMPHASIS:
        text = emphasis.sub(r"\1", text)
    return text


def without_markup(text: str) -> str:
    """`text` without its LaTeX commands' names, their arguments' words kept
    ("$\\texttt{SELECT}$" keeps SELECT): the words a text is counted by (the map's
    labels), where a map cluster was labelled "subset · texttt · reward". A pattern, not
    the LaTeX parser `plain_text` uses: that parses every abstract with markup (a bare %
    counts), which over a corpus's map would cost minutes."""
    return _COMMAND.sub(" ", text)
