"""A digest as an HTML mail: a heading in words, a section per saved search, each paper's
title a link, its authors, venue, year and score, and the sentence that matched.

Mail clients drop a `<style>` block or rewrite it (Gmail keeps only some of it,
Outlook's Word engine most of none), so every element carries its own inline style,
kept to what all of them render: colours, font sizes, margins, borders. No script, no
image, no outside file: the mail reads the same offline and trips no "remote content"
warning. Everything quoted from a paper is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from ..search.results import Hit
from ..text.dates import day_in_words
from .digests import Digest, DigestSection
from .feeds import (
    cosine_text,
    count_text,
    digest_days,
    digest_heading,
    paper_link,
    received_text,
    window_start,
)

__all__ = ["digest_html"]

_GREY = "color:#59636e"
_STYLES = {
    "body": "margin:0;padding:24px 12px;background:#f3f3f0;color:#1f2328;"
            "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif",
    "card": "max-width:680px;margin:0 auto;padding:24px 28px;background:#ffffff;"
            "border:1px solid #deded9;border-radius:8px",
    "h1": "margin:0 0 4px;font-size:22px;line-height:1.3;font-weight:600",
    "lead": f"margin:0 0 8px;font-size:14px;{_GREY}",
    "h2": "margin:24px 0 2px;padding-top:16px;border-top:1px solid #e6e6e1;font-size:17px;"
          "line-height:1.35;font-weight:600",
    "name": f"font-size:13px;font-weight:normal;{_GREY}",
    "count": f"margin:0 0 12px;font-size:13px;{_GREY}",
    "list": "margin:0;padding-left:22px",
    "item": "margin:0 0 14px;font-size:15px;line-height:1.4",
    "title": "color:#0b57d0;font-weight:600;text-decoration:none",
    "plain": "font-weight:600",
    "meta": f"font-size:13px;{_GREY}",
    "quote": "margin:4px 0 0;font-size:14px;font-style:italic;color:#3d444d",
    "footer": "margin:28px 0 0;font-size:12px;color:#818b98",
}
#: Authors named before "et al.": a mail's line, not the paper's byline.
_AUTHORS = 3


def _tag(name: str, style: str, inner: str, **attributes: str) -> str:
    extra = "".join(f' {key}="{html.escape(value)}"' for key, value in attributes.items())
    return f'<{name} style="{_STYLES[style]}"{extra}>{inner}</{name}>'


def digest_html(digest: Digest, *, page_url: str = "") -> str:
    """The digest as one HTML page fit for a mail (no scripts, no outside files, inline
    styles). `page_url`: a server's page, which papers without a URL, DOI or arXiv id
    link to (`feeds.paper_link`)."""
    e = html.escape
    heading, days = digest_heading(digest), digest_days(digest)
    listed = sum(len(section.hits) for section in digest.sections)
    lead = f"{e(days)} · " + (f"{listed} paper{'s' * (listed != 1)} listed" if listed
                              else "nothing new this time")
    parts = [_tag("h1", "h1", e(heading)), _tag("p", "lead", lead)]
    start = window_start(digest)
    parts += [_section(section, start, page_url) for section in digest.sections]
    parts.append(_tag("p", "footer", f"Papers the index received {e(received_text(digest))}, "
                                     "listed by <code>embedsearch digest</code>. "
                                     "<code>embedsearch watch list</code> shows each saved "
                                     "search; <code>watch add --replace</code> changes one."))
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width\">"
            f"<title>{e(heading)}, {e(days)}</title></head>\n"
            f"<body style=\"{_STYLES['body']}\">"
            f"<div style=\"{_STYLES['card']}\">\n" + "\n".join(parts)
            + "\n</div></body></html>\n")


def _section(section: DigestSection, start: str, page_url: str) -> str:
    e = html.escape
    watch = section.watch
    looks_for = (f"“{watch.query}”" if watch.query
                 else watch.describe()[:1].upper() + watch.describe()[1:])
    heading = _tag("h2", "h2", f"{e(looks_for)} {_tag('span', 'name', '· ' + e(watch.name))}")
    count = [count_text(section), ", ".join(watch.filters.describe())]
    if section.since and section.since != start:  # its own window: a later last digest
        count.append(f"since {day_in_words(section.since)}")
    said = "; ".join(part for part in count if part)
    summary = _tag("p", "count", e(said[:1].upper() + said[1:]))  # "None of the 5 ..."
    if not section.hits:
        return heading + summary
    items = "".join(_item(hit, page_url) for hit in section.hits)
    return heading + summary + _tag("ol", "list", items)


def _item(hit: Hit, page_url: str) -> str:
    e = html.escape
    paper = hit.paper
    link = paper_link(paper, page_url)
    title = (_tag("a", "title", e(paper.title or paper.id), href=link) if link
             else _tag("span", "plain", e(paper.title or paper.id)))
    meta = " · ".join(part for part in (_authors(paper.authors),
                                        " ".join(p for p in (paper.venue, str(paper.year or ""))
                                                 if p),
                                        f"score {hit.score:.2f}{cosine_text(hit)}", paper.id)
                        if part)
    quote = _tag("p", "quote", f"“{e(hit.evidence)}”") if hit.evidence else ""
    return _tag("li", "item", f"{title}<br>{_tag('span', 'meta', e(meta))}{quote}")


def _authors(authors: Sequence[str]) -> str:
    if len(authors) <= _AUTHORS:
        return ", ".join(authors)
    return ", ".join(authors[:_AUTHORS]) + " et al."
