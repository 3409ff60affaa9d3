"""Fusing the lexical and dense rankings, and diversity (MMR)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from embedsearch import SearchEngine
from embedsearch.search.fusion import fuse


def test_fusion_is_stable_and_rewards_agreement() -> None:
    lexical = (np.array([5.0, 3.0, 1.0, 0.0], np.float32), np.array([7, 3, 9, 4]))
    dense = (np.array([0.9, 0.8, 0.7], np.float32), np.array([3, 8, 7]))
    first = fuse(lexical, dense)
    assert all(np.array_equal(a, b) for a, b in zip(first, fuse(lexical, dense)))
    assert set(first[1][:2].tolist()) == {3, 7}  # first in one list, near the top of both
    assert 4 not in first[1]  # a lexical score of 0 is no match
    ties = fuse((np.zeros(0, np.float32), np.zeros(0, np.int64)),
                (np.array([0.5, 0.5], np.float32), np.array([9, 2])))
    assert ties[1].tolist() == [2, 9]  # equal fused scores: by key


def test_diverse_keeps_near_duplicates_off_the_page(tmp_path: Path) -> None:
    base = "We train graph neural networks to predict molecular properties from atom bonds."
    records = [{"id": f"dup{i}", "abstract": base + (" " + "Indeed." * i)} for i in range(4)]
    records += [{"id": "other1", "abstract": "Message passing networks for crystal property "
                                              "prediction in materials science."},
                {"id": "other2", "abstract": "Transformers over molecular graphs predict "
                                              "quantum chemical properties."},
                {"id": "far", "abstract": "A study of bird migration across continents."}]
    engine = SearchEngine.build(tmp_path / "dups", records)
    query = "graph neural networks for molecular property prediction"
    plain = [h.paper.id for h in engine.search(query, k=3)]
    diverse = [h.paper.id for h in engine.search(query, k=3, diverse=True)]
    assert sum(i.startswith("dup") for i in plain) == 3
    assert sum(i.startswith("dup") for i in diverse) == 1
