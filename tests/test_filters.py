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
