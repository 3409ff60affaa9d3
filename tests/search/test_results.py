"""Results in notebooks and pipelines: `Hits` as a list, a DataFrame and an HTML table."""

from __future__ import annotations

import sys

import pytest

from embedsearch import SearchEngine
from embedsearch.errors import DependencyError
from embedsearch.papers import Paper
from embedsearch.search.results import HIT_COLUMNS, Hit, Hits


def test_searches_return_hits(seed_engine: SearchEngine) -> None:
    found = seed_engine.search("visual prompting", 3)
    assert isinstance(found, Hits) and isinstance(found, list) and len(found) == 3
    batch = seed_engine.search_many(["visual prompting", "spiking networks"], 2)
    assert all(isinstance(hits, Hits) for hits in batch)
    assert isinstance(seed_engine.similar(found[0].paper.id, 2), Hits)
    assert found.papers() == [hit.paper for hit in found]


def test_to_pandas(seed_engine: SearchEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pandas")
    found = seed_engine.search("visual prompting", 4, mode="dense")
    frame = found.to_pandas()
    assert list(frame.columns) == list(HIT_COLUMNS) and len(frame) == 4
    assert frame["id"].tolist() == [hit.paper.id for hit in found]
    assert frame["rank"].tolist() == [1, 2, 3, 4]
    assert frame["lexical_score"].isna().all()  # a dense search computes no BM25
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if it were not installed
    with pytest.raises(DependencyError, match="pip install pandas"):
        found.to_pandas()


def test_html_table_is_escaped(seed_engine: SearchEngine) -> None:
    hostile = Paper("id<1>", "a < b & c", title="<script>alert(1)</script> & co",
                    url="javascript:alert(1)", venue="<b>V</b>")
    html = Hits([Hit(1, 0.5, hostile, evidence="x <img src=y onerror=z>")])._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in html
    assert "<img" not in html and "&lt;b&gt;V&lt;/b&gt;" in html and "id&lt;1&gt;" in html
    assert "javascript:" not in html
    found = seed_engine.search("visual prompting", 2)
    table = found._repr_html_()
    assert table.count("<tr>") == 3 and "000_ae22c05437d8edef:1" in table
    assert "No papers match" in Hits()._repr_html_()
