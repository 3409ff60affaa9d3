"""A digest as the formats people read it in: an Atom feed (feed readers), an HTML mail
(`mails`), and plain text (a terminal, a cron mail); and what they share: where a paper
links to, a floor as it is printed, a watch as it is listed.

The Atom feed is written by feedgen (a maintained generator of valid Atom, rather than
XML assembled here). Each entry's id is stable for a paper and a watch, so a feed reader
that has shown a paper does not show it again when the next digest lists it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from ..papers import Paper
from ..search.results import Hit
from ..text.dates import moment_in_words, span_in_words
from .digests import Digest, DigestSection, similarity_floor
from .saved import Watch

__all__ = ["Described", "atom_feed", "cosine_text", "count_text", "digest_days", "digest_heading",
           "digest_text", "floor_text", "index_name", "paper_link", "received_text",
           "watch_details", "watch_summary", "window_start"]

_NAMESPACE = uuid.UUID("6f0b8a2e-4c1d-5e8f-9a3b-2d7c1e0f4a55")  # embedsearch's own
_TITLE_CHARS = 300


def floor_text(floor: float) -> str:
    """A score floor as every face prints it (`watch list`, each digest format):
    three decimals, as the floors are chosen in steps of 0.025 (scripts/
    digest_threshold_study.py), which two would misprint (0.475 as 0.47)."""
    return f"{floor:.3f}"


def paper_link(paper: Paper, page_url: str = "") -> str:
    """Where a reader opens the paper: its URL, else its DOI or arXiv page, else its
    view on the page of the server at `page_url` (where one is given); '' if none."""
    if paper.url:
        return paper.url
    if paper.doi:
        return f"https://doi.org/{paper.doi}"
    if paper.arxiv_id:
        return f"https://arxiv.org/abs/{paper.arxiv_id}"
    # The page's hash route of a paper (static/app.js), its id encoded as the page does.
    return f"{page_url.rstrip('/')}/#/paper/{quote(paper.id, safe='')}" if page_url else ""


class Described(Protocol):
    """What a feed's id reads of an index's description (`IndexInfo` is one): a
    protocol, so that watches sit below the index they are kept with."""

    @property
    def path(self) -> str: ...

    @property
    def created(self) -> str: ...


def index_name(info: Described) -> str:
    """A stable name of an index for its feeds' ids: its folder's name and when it was
    built (not its path, which a server does not disclose and a move changes)."""
    return f"{Path(info.path).name}@{info.created}"


def watch_summary(watch: Watch) -> dict[str, Any]:
    """A watch as `watch list --json` and GET /watches list it: its library's papers
    counted, not listed, and the floor its digests use (its own or its kind's)."""
    return {**{key: value for key, value in watch.to_dict().items() if key != "papers"},
            "papers": len(watch.papers), "floor": similarity_floor(watch)}


def watch_details(watch: Watch) -> str:
    """What a watch lists, in words: "up to 20 papers at score 0.550 or more,
    years from 2024, venue ICLR"."""
    return ", ".join([f"up to {watch.k} paper{'s' * (watch.k != 1)} at score "
                      f"{floor_text(similarity_floor(watch))} or more",
                      *watch.filters.describe()])


def _urn(*parts: str) -> str:
    return uuid.uuid5(_NAMESPACE, "\x1f".join(parts)).urn


def atom_feed(digest: Digest, *, index: str, self_url: str = "", page_url: str = "",
              sections: Iterable[DigestSection] | None = None) -> bytes:
    """The digest as an Atom feed (RFC 4287), UTF-8: one entry per paper and watch,
    newest first, titled with the paper's title and summarised by its evidence sentence.

    `index` names the index (`index_name`: the feed's id is made of it and the
    watches' names, so it is the same wherever the feed is made); `self_url` is
    the feed's own address when it is served (its rel="self" link); `page_url`, a
    server's page, which papers without a link of their own link to (`paper_link`)."""
    from feedgen.feed import FeedGenerator

    chosen = list(digest.sections if sections is None else sections)
    names = ", ".join(section.watch.name for section in chosen) or "no watch"
    feed = FeedGenerator()
    feed.id(_urn(index, *(section.watch.name for section in chosen)))
    feed.title(f"embedsearch: new papers for {names}")
    feed.subtitle(" · ".join(f"{s.watch.name}: {s.watch.describe()} "
                             f"(score {floor_text(s.floor)} or more)" for s in chosen)
                  or "no watch")
    feed.author(name="embedsearch")
    feed.updated(digest.until)
    if self_url:
        feed.link(href=self_url, rel="self", type="application/atom+xml")
    entries = [(section, hit) for section in chosen for hit in section.hits]
    entries.sort(key=lambda pair: pair[0].added.get(pair[1].paper.id, ""))
    for section, hit in entries:  # feedgen puts the last added first
        _entry(feed, section, hit, index, digest.until, page_url)
    return bytes(feed.atom_str(pretty=True))


def _entry(feed: object, section: DigestSection, hit: Hit, index: str, until: str,
           page_url: str) -> None:
    paper = hit.paper
    entry = feed.add_entry()  # type: ignore[attr-defined]
    entry.id(_urn(index, section.watch.name, paper.id))
    entry.title(paper.title[:_TITLE_CHARS] or paper.id)
    entry.updated(section.added.get(paper.id) or until)
    for author in paper.authors:
        entry.author(name=author)
    link = paper_link(paper, page_url)
    if link:
        entry.link(href=link, rel="alternate")
    entry.category(term=section.watch.name)
    entry.summary(hit.evidence or paper.abstract[:_TITLE_CHARS])
    entry.content(paper.abstract or paper.title, type="text")


def digest_heading(digest: Digest) -> str:
    """Whose papers the digest lists: "New papers for your 3 saved searches"."""
    count = len(digest.sections)
    whose = (f"your saved search “{digest.sections[0].watch.name}”" if count == 1
             else f"your {count} saved searches")
    return f"New papers for {whose}"


def digest_days(digest: Digest) -> str:
    """The days the digest covers, in words: "1–7 December 2026" (from the earliest
    watch's start when each has its own)."""
    return span_in_words(window_start(digest), digest.until)


def window_start(digest: Digest) -> str:
    """Where the digest's window starts: its `since`, else its earliest watch's."""
    starts = [section.since for section in digest.sections]
    return digest.since or (min(starts) if starts and all(starts) else "")


def count_text(section: DigestSection) -> str:
    """How many of the papers that arrived a watch lists: "2 of the 5 new papers at
    similarity 0.475 or more", or "nothing new"."""
    if not section.arrived:
        return "nothing new"
    listed = len(section.hits) or "none"
    return (f"{listed} of the {section.arrived} new paper{'s' * (section.arrived != 1)} "
            f"at score {floor_text(section.floor)} or more")


def digest_text(digest: Digest, *, page_url: str = "") -> str:
    """The digest as plain text: per watch, its papers with score, venue and evidence."""
    lines = [f"{digest_heading(digest)}, {digest_days(digest)}",
             f"(papers the index received {received_text(digest)})"]
    for section in digest.sections:
        lines += ["", f"== {section.watch.name}: {section.watch.describe()} "
                      f"({count_text(section)})"]
        for hit in section.hits:
            where = ", ".join(p for p in (hit.paper.venue, str(hit.paper.year or "")) if p)
            link = paper_link(hit.paper, page_url)
            lines.append(f"{hit.rank:>3}. {hit.paper.title}  [{hit.paper.id}]")
            lines.append(f"     score {hit.score:.2f}" + cosine_text(hit)
                         + (f" · {where}" if where else "") + (f" · {link}" if link else ""))
            if hit.evidence:
                lines.append(f"     “{hit.evidence}”")
    return "\n".join(lines) + "\n"


def received_text(digest: Digest) -> str:
    """The digest's window to the minute: "after 1 December 2026, 07:00 UTC, up to 8
    December 2026, 07:00 UTC"."""
    start = window_start(digest)
    until = f"up to {moment_in_words(digest.until)}"
    return f"after {moment_in_words(start)}, {until}" if start else until


def cosine_text(hit: Hit) -> str:
    """The cosine beside the score, where they differ (a hybrid digest's): " (cosine
    0.42)"."""
    if hit.similarity is None or round(hit.similarity, 2) == round(hit.score, 2):
        return ""
    return f" (cosine {hit.similarity:.2f})"
