"""A digest as the formats people read it in: an Atom feed (feed readers), an HTML page
(a mail or a browser), and plain text (a terminal, a cron mail).

The Atom feed is written by feedgen (a maintained generator of valid Atom, rather than
XML assembled here). Each entry's id is stable for a paper and a watch, so a feed reader
that has shown a paper does not show it again when the next digest lists it.
"""

from __future__ import annotations

import html
import uuid
from collections.abc import Iterable
from pathlib import Path

from .digests import Digest, DigestSection
from .info import IndexInfo
from .papers import Paper
from .results import Hit

__all__ = ["atom_feed", "digest_html", "digest_text", "index_name", "paper_link"]

_NAMESPACE = uuid.UUID("6f0b8a2e-4c1d-5e8f-9a3b-2d7c1e0f4a55")  # embedsearch's own
_TITLE_CHARS = 300


def paper_link(paper: Paper) -> str:
    """Where a reader opens the paper: its URL, else its DOI or arXiv page ('' if none)."""
    if paper.url:
        return paper.url
    if paper.doi:
        return f"https://doi.org/{paper.doi}"
    return f"https://arxiv.org/abs/{paper.arxiv_id}" if paper.arxiv_id else ""


def index_name(info: IndexInfo) -> str:
    """A stable name of an index for its feeds' ids: its folder's name and when it was
    built (not its path, which a server does not disclose and a move changes)."""
    return f"{Path(info.path).name}@{info.created}"


def _urn(*parts: str) -> str:
    return uuid.uuid5(_NAMESPACE, "\x1f".join(parts)).urn


def atom_feed(digest: Digest, *, index: str, self_url: str = "",
              sections: Iterable[DigestSection] | None = None) -> bytes:
    """The digest as an Atom feed (RFC 4287), UTF-8: one entry per paper and watch,
    newest first, titled with the paper's title and summarised by its evidence sentence.

    `index` names the index (`index_name`: the feed's id is made of it and the
    watches' names, so it is the same wherever the feed is made); `self_url` is
    the feed's own address when it is served (its rel="self" link)."""
    from feedgen.feed import FeedGenerator

    chosen = list(digest.sections if sections is None else sections)
    names = ", ".join(section.watch.name for section in chosen) or "no watch"
    feed = FeedGenerator()
    feed.id(_urn(index, *(section.watch.name for section in chosen)))
    feed.title(f"embedsearch: new papers for {names}")
    feed.subtitle(" · ".join(f"{s.watch.name}: {s.watch.describe()}" for s in chosen)
                  or "no watch")
    feed.author(name="embedsearch")
    feed.updated(digest.until)
    if self_url:
        feed.link(href=self_url, rel="self", type="application/atom+xml")
    entries = [(section, hit) for section in chosen for hit in section.hits]
    entries.sort(key=lambda pair: pair[0].added.get(pair[1].paper.id, ""))
    for section, hit in entries:  # feedgen puts the last added first
        _entry(feed, section, hit, index, digest.until)
    return bytes(feed.atom_str(pretty=True))


def _entry(feed: object, section: DigestSection, hit: Hit, index: str, until: str) -> None:
    paper = hit.paper
    entry = feed.add_entry()  # type: ignore[attr-defined]
    entry.id(_urn(index, section.watch.name, paper.id))
    entry.title(paper.title[:_TITLE_CHARS] or paper.id)
    entry.updated(section.added.get(paper.id) or until)
    for author in paper.authors:
        entry.author(name=author)
    if paper_link(paper):
        entry.link(href=paper_link(paper), rel="alternate")
    entry.category(term=section.watch.name)
    entry.summary(hit.evidence or paper.abstract[:_TITLE_CHARS])
    entry.content(paper.abstract or paper.title, type="text")


def digest_text(digest: Digest) -> str:
    """The digest as plain text: per watch, its papers with score (and the cosine where
    it differs), venue and evidence."""
    lines = [f"Papers added {_window(digest)}"]
    for section in digest.sections:
        lines += ["", f"== {section.watch.name}: {section.watch.describe()} "
                      f"({_count(section)})"]
        for hit in section.hits:
            where = ", ".join(p for p in (hit.paper.venue, str(hit.paper.year or "")) if p)
            lines.append(f"{hit.rank:>3}. {hit.paper.title}  [{hit.paper.id}]")
            lines.append(f"     score {hit.score:.2f}" + _cosine(hit)
                         + (f" · {where}" if where else "")
                         + (f" · {paper_link(hit.paper)}" if paper_link(hit.paper) else ""))
            if hit.evidence:
                lines.append(f"     “{hit.evidence}”")
    return "\n".join(lines) + "\n"


def digest_html(digest: Digest) -> str:
    """The digest as one HTML page (no scripts, no outside files: fit for a mail)."""
    e = html.escape
    parts = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
             f"embedsearch digest</title></head><body><h1>Papers added "
             f"{e(_window(digest))}</h1>"]
    for section in digest.sections:
        parts.append(f"<h2>{e(section.watch.name)}</h2><p>{e(section.watch.describe())}: "
                     f"{e(_count(section))}</p><ol>")
        for hit in section.hits:
            link = paper_link(hit.paper)
            title = (f"<a href=\"{e(link)}\">{e(hit.paper.title)}</a>" if link
                     else e(hit.paper.title))
            parts.append(f"<li><p><strong>{title}</strong> <small>{e(hit.paper.id)} · "
                         f"score {hit.score:.2f}{e(_cosine(hit))}</small></p>"
                         + (f"<blockquote>{e(hit.evidence)}</blockquote>" if hit.evidence
                            else "") + "</li>")
        parts.append("</ol>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _cosine(hit: Hit) -> str:
    """The cosine beside the score, where they differ (a hybrid digest's)."""
    if hit.similarity is None or round(hit.similarity, 2) == round(hit.score, 2):
        return ""
    return f" (cosine {hit.similarity:.2f})"


def _window(digest: Digest) -> str:
    start = f"since {digest.since}" if digest.since else "since each watch's last digest"
    return f"{start}, until {digest.until}"


def _count(section: DigestSection) -> str:
    shown = len(section.hits)
    if not section.arrived:
        return "nothing new"
    return (f"{shown} of the {section.arrived} new paper{'s' * (section.arrived != 1)} "
            f"at score {section.floor:.2f} or more")
