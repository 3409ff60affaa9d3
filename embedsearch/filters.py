"""Metadata filters for search and similar: years, venues, keywords, collections,
reference-manager libraries, and when the index received a paper.

Within one field the values are alternatives (any venue listed); across fields all must
hold. Matching of venues and keywords ignores case. A bad value is a QueryError whose
`parameter` is `Filters.parse`'s argument (year, venues, keywords, collections,
libraries): the CLI and the server each name it in their own terms (--venue, venue).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import QueryError
from .text.dates import moment_in_words, parse_since

__all__ = ["COLLECTION_SEPARATOR", "MY_LIBRARY", "Filters", "collection_names",
           "is_my_library", "library_name"]

#: What separates a collection from its sub-collection in a path ("Thesis/Methods").
COLLECTION_SEPARATOR = "/"
#: The name of the user's own library, as Zotero shows it: what a library filter calls
#: the papers whose `Paper.library` is "" (every paper not from a group library).
MY_LIBRARY = "My Library"

_YEAR_RANGE = re.compile(r"^\s*(\d{4})?\s*(-|–|\.\.)?\s*(\d{4})?\s*$")


@dataclass(frozen=True)
class Filters:
    """Which papers a query may return; the empty Filters admits every paper.

    A paper passes when its year is within the bounds (either may be open), its venue
    is one of `venues`, one of its keywords is one of `keywords` and it is in one of
    `collections` or their sub-collections (each ignoring case; an empty list admits
    all), and the index received it after `added_after` (an instant, see `dates`; papers
    an index received before it kept dates count as older than any). A collection is
    named by its path ("Thesis/Methods") or its own name
    ("Methods"), see `collection_names`. With `libraries`, a paper passes when it is in
    one of them: a group library by its name, the user's own as `MY_LIBRARY` (which holds
    every paper not from a group library). Searches rank within the papers that pass, so a
    filtered search still returns `k` hits whenever `k` papers pass. Build one from
    user text with `Filters.parse`.
    """

    year_min: int | None = None
    year_max: int | None = None
    venues: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    added_after: str | None = None
    libraries: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.year_min or self.year_max or self.venues or self.keywords
                    or self.collections or self.added_after or self.libraries)

    @classmethod
    def parse(
        cls,
        year: str | int | None = None,
        venues: Iterable[str] = (),
        keywords: Iterable[str] = (),
        collections: Iterable[str] = (),
        added_since: str | None = None,
        libraries: Iterable[str] = (),
    ) -> Filters:
        """Filters from user text, as the CLI and the server take them.

        Args:
            year: `2024`, `"2023-2025"`, `"2023-"` (from) or `"-2024"` (up to).
            venues: venue names, any of which matches (case ignored).
            keywords: author keywords, any of which matches (case ignored).
            collections: collections (a path "Thesis/Methods" or a name), any of which
                matches a paper in it or in a sub-collection of it (case ignored).
            added_since: papers the index received since then: a date ("2026-12-01"),
                a date and time, or a span back from now ("7d"); see `dates.parse_since`.
            libraries: reference-manager libraries, any of which matches: a Zotero group
                library's name, or "My Library" (case ignored).

        Raises:
            QueryError: a year that is not one, a range whose start is after its end,
                an empty venue or keyword, or a time that is not one; `parameter` names
                which.

        Example:
            ```python
            from embedsearch import Filters

            recent_iclr = Filters.parse(year="2023-", venues=["ICLR"])
            print(recent_iclr.to_dict())
            ```
        """
        year_min, year_max = _parse_years(year)
        return cls(
            year_min=year_min,
            year_max=year_max,
            venues=_clean(venues, "venues"),
            keywords=_clean(keywords, "keywords"),
            collections=tuple(_collection(name) for name in
                              _clean(collections, "collections")),
            added_after=(parse_since(added_since, parameter="added_since")
                         if added_since else None),
            libraries=_clean(libraries, "libraries"),
        )

    def describe(self) -> list[str]:
        """Each filter in words: "years 2023–2025", "venue ICLR or NeurIPS", "keyword
        graphs", "added since 1 December 2026, 00:00 UTC" (none for the empty Filters)."""
        phrases = ([] if self.year_min is None and self.year_max is None
                   else [_years(self.year_min, self.year_max)])
        for one, many, values in (("venue", "venues", self.venues),
                                  ("keyword", "keywords", self.keywords),
                                  ("collection", "collections", self.collections),
                                  ("library", "libraries", self.libraries)):
            if values:
                phrases.append(f"{many if len(values) > 1 else one} {' or '.join(values)}")
        if self.added_after:
            phrases.append(f"added since {moment_in_words(self.added_after)}")
        return phrases

    def to_dict(self) -> dict[str, object]:
        """The filters as JSON-ready data (what the search endpoints echo back, what a
        saved search keeps); `libraries` only when given, so that what was written
        before library filters existed is written as it was."""
        return {
            "year_min": self.year_min,
            "year_max": self.year_max,
            "venues": list(self.venues),
            "keywords": list(self.keywords),
            "collections": list(self.collections),
            "added_after": self.added_after,
            **({"libraries": list(self.libraries)} if self.libraries else {}),
        }


def is_my_library(name: str) -> bool:
    """Whether a library filter's `name` is the user's own library ("my library")."""
    return name.strip().casefold() == MY_LIBRARY.casefold()


def library_name(library: str) -> str:
    """The name a paper's `library` shows as (a facet's entry): `MY_LIBRARY` for ""."""
    return library or MY_LIBRARY


def _years(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"year {low}" if low == high else f"years {low}–{high}"
    return f"years from {low}" if low is not None else f"years up to {high}"


def _segments(path: str) -> list[str]:
    return [part.strip() for part in path.split(COLLECTION_SEPARATOR) if part.strip()]


def _collection(name: str) -> str:
    """A collection filter as it is matched: its path's parts, trimmed."""
    return COLLECTION_SEPARATOR.join(_segments(name))


def collection_names(paths: Iterable[str]) -> list[str]:
    """Every name a collection filter may give to match a paper in the collections
    `paths`, case folded: each run of consecutive parts of each path.

    A paper in "Thesis/Methods/Old" is matched by "Thesis" (it is in a sub-collection
    of Thesis), "Thesis/Methods", "Methods" (a collection's own name), "Methods/Old"
    and "Old". Storages index these names, so a filter is one lookup, not a scan.
    """
    names: set[str] = set()
    for path in paths:
        parts = [part.casefold() for part in _segments(path)]
        for start in range(len(parts)):
            for end in range(start + 1, len(parts) + 1):
                names.add(COLLECTION_SEPARATOR.join(parts[start:end]))
    return sorted(names)


def _clean(values: Iterable[str], parameter: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = [values]
    cleaned = tuple(value.strip() for value in values)
    if any(not value for value in cleaned):
        raise QueryError("empty value", parameter=parameter)
    return cleaned


def _parse_years(year: str | int | None) -> tuple[int | None, int | None]:
    if year is None or year == "":
        return None, None
    if isinstance(year, int):
        return year, year
    match = _YEAR_RANGE.match(year)
    if not match or not (match.group(1) or match.group(3)):
        raise QueryError(f"expected a year or a range such as 2023-2025, got '{year}'",
                         parameter="year")
    low, dash, high = match.groups()
    first = int(low) if low else None
    last = int(high) if high else (None if dash else first)
    if first is not None and last is not None and first > last:
        raise QueryError(f"the range {year} runs backwards; write {last}-{first}",
                         parameter="year")
    return first, last
