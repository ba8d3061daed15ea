import math

import pytest

from askfirst.evaluation.answer_metrics import best_token_f1, contains_any, normalize_answer, token_f1
from askfirst.evaluation.retrieval_metrics import ndcg_at_k, recall_at_k
from askfirst.retrieval.fusion import reciprocal_rank_fusion


def test_rrf_arithmetic_k60():
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "a", "d"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 63)


def test_rrf_order_and_ties_are_deterministic():
    ranked = reciprocal_rank_fusion([["x", "y"], ["z", "y"]], k=1)
    # y: 1/3 + 1/3 = 0.667 beats x and z (1/2 each); x before z because it appeared first.
    assert [i for i, _ in ranked] == ["y", "x", "z"]
    assert reciprocal_rank_fusion([]) == []


def test_recall_hand_computed():
    qrels = {"d1": 1, "d2": 1, "d3": 1, "d4": 0}
    assert recall_at_k(["d1", "x", "d3", "d2"], qrels, 3) == pytest.approx(2 / 3)
    assert recall_at_k(["d4"], qrels, 5) == 0.0
    assert recall_at_k(["d1"], {}, 5) == 0.0


def test_ndcg_hand_computed():
    # trec_eval ndcg_cut: gain = relevance, discount log2(rank + 1).
    qrels = {"a": 2, "b": 1}
    ranked = ["x", "b", "a"]
    dcg = 1 / math.log2(3) + 2 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at_k(ranked, qrels, 3) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(["a", "b"], qrels, 5) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], qrels, 2) == 0.0
    # Cut-off applies to the ideal ranking too: one relevant at rank 1 of k=1 is perfect.
    assert ndcg_at_k(["a"], {"a": 1, "b": 1}, 1) == pytest.approx(1.0)


def test_answer_normalisation_and_containment():
    assert normalize_answer("The fee is EUR 4,200!") == "fee is eur 4200"
    assert contains_any("Tuition is EUR 4,200 per semester.", ["4200"])
    assert not contains_any("Tuition is EUR 14,200.", ["4200"])  # whole tokens only
    assert not contains_any("anything", [])
    # A hyphen or slash joins two tokens; a comma inside a number does not split it.
    assert contains_any("The essay has a 500-word limit.", ["500"]) and contains_any("Apply by June/July.", ["July"])
    assert contains_any("It is a well-known award.", ["well-known"]) and contains_any("Jean–Paul won", ["Jean-Paul"])
    assert not contains_any("A one-off EUR 1,500 award.", ["500"])
    assert token_f1("CS 101 with a C", "CS 101") == pytest.approx(2 * (2 / 4) * 1 / (2 / 4 + 1))
    assert best_token_f1("no overlap", ["CS 101", "x"]) == 0.0
