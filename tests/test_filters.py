"""Filters narrow every mode's search, not its results."""

from __future__ import annotations

from embedsearch import Filters, SearchEngine


def test_filters_hold_in_every_mode(seed_engine: SearchEngine) -> None:
    for mode in ("hybrid", "dense", "lexical"):
        assert seed_engine.search("learning", k=5, mode=mode,
                                  filters=Filters.parse(venues=["NeurIPS"])) == []
        hits = seed_engine.search("learning", k=5, mode=mode,
                                  filters=Filters.parse(year="2025"))
        assert hits and all(h.paper.year == 2025 for h in hits)


def test_filters_in_words() -> None:
    assert Filters().describe() == []
    assert Filters.parse(year="2023-", venues=["ICLR", "NeurIPS"], keywords=["graphs"],
                         collections=["Thesis/Methods"],
                         added_since="2026-12-01T08:05").describe() == [
        "years from 2023", "venues ICLR or NeurIPS", "keyword graphs",
        "collection Thesis/Methods", "added since 1 December 2026, 08:05 UTC"]
    assert [Filters.parse(year=year).describe() for year in ("2024", "-2024", "2020-2024")] == [
        ["year 2024"], ["years up to 2024"], ["years 2020–2024"]]
