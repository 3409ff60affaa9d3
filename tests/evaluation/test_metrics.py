"""Ranking metrics on a ranking made by hand."""

from __future__ import annotations

import numpy as np
import pytest

from embedsearch.evaluation.metrics import mrr, ndcg, precision, recall


def test_metrics_on_a_hand_made_ranking() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    relevant = {"a", "b", "z"}
    assert mrr(ranked, relevant) == 1.0 and mrr(["x", "a"], relevant) == 0.5
    assert mrr(["x"] * 10 + ["a"], relevant) == 0.0  # past the cutoff
    assert recall(ranked, relevant) == pytest.approx(2 / 3)
    assert precision(ranked, relevant) == pytest.approx(0.2)
    ideal = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert ndcg(ranked, relevant) == pytest.approx((1 + 1 / np.log2(4)) / ideal)
    assert ndcg([], relevant) == 0.0 and recall(ranked, set()) == 0.0
