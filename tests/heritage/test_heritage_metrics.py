"""Heritage metrics on hand-computed cases, including the cases the framework's sample code got wrong."""

from __future__ import annotations

import math

import pytest

from jurist.metrics.heritage.classification import (
    classification_example_score,
    hierarchical_type_metrics,
    secondary_type_metrics,
    type_classification_metrics,
    type_confusion_analysis,
)
from jurist.metrics.heritage.linking import (
    cross_kb_consistency,
    linking_accuracy,
    linking_example_score,
    mean_reciprocal_rank,
    nil_detection_metrics,
)
from jurist.metrics.heritage.ner import (
    corpus_entity_level_metrics,
    entity_example_f1,
    entity_level_metrics,
    match_entities,
    token_labels,
    token_level_metrics,
    type_distribution_analysis,
)
from jurist.metrics.heritage.qa import factual_accuracy, faithfulness, rouge_l, rouge_n, rouge_scores
from jurist.metrics.heritage.retrieval import dcg, ndcg_at_k, retrieval_metrics, retrieval_source_analysis
from jurist.metrics.significance import bootstrap_ci, paired_t_test, significance_test, wilcoxon_signed_rank


def test_token_labels_use_real_offsets_not_running_positions() -> None:
    text = "Het  Rijksmuseum\nin  Amsterdam"  # double spaces and a newline
    spans = [(5, 16, "GRP.HER.MUS"), (21, 30, "TOP")]
    assert token_labels(text, spans) == [None, "GRP.HER.MUS", None, "TOP"]
    # The sample's running position (len(token) + 1) would put "Amsterdam" at 19 and miss it.
    metrics = token_level_metrics(spans, spans, text)
    assert metrics["TOP"]["f1"] == 1.0 and metrics["TOP"]["support"] == 1


def test_token_level_counts_by_hand() -> None:
    text = "Stadsarchief Kampen opende in 1838"
    gold = [(0, 19, "GRP.HER.ARC"), (30, 34, "TMP")]
    pred = [(0, 12, "GRP.HER.ARC"), (13, 19, "TOP"), (30, 34, "TMP")]
    m = token_level_metrics(pred, gold, text)
    assert (m["GRP.HER.ARC"]["tp"], m["GRP.HER.ARC"]["fn"], m["GRP.HER.ARC"]["fp"]) == (1, 1, 0)
    assert m["GRP.HER.ARC"]["recall"] == 0.5 and m["GRP.HER.ARC"]["f1"] == pytest.approx(2 / 3)
    assert (m["TOP"]["fp"], m["TOP"]["precision"], m["TOP"]["support"]) == (1, 0.0, 0)
    assert m["macro_avg"]["f1"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert m["micro_avg"]["tp"] == 2 and m["micro_avg"]["fp"] == 1 and m["micro_avg"]["fn"] == 1


def test_entity_strict_and_partial_by_hand() -> None:
    gold = [(4, 25, "GRP.HER.MUS"), (33, 40, "IDENTIFIER"), (58, 62, "TMP")]
    pred = [(4, 15, "GRP.HER.MUS"), (33, 40, "IDENTIFIER"), (58, 62, "TOP"), (70, 75, "TOP")]
    strict = entity_level_metrics(pred, gold, "strict")
    assert (strict["true_positives"], strict["false_positives"], strict["false_negatives"]) == (1, 3, 2)
    assert strict["precision"] == 0.25 and strict["recall"] == pytest.approx(1 / 3)
    partial = entity_level_metrics(pred, gold, "partial")
    assert partial["true_positives"] == 2 and partial["f1"] == pytest.approx(
        2 * 0.5 * (2 / 3) / (0.5 + 2 / 3)
    )
    assert partial["per_type"]["TMP"]["fn"] == 1 and partial["per_type"]["TOP"]["fp"] == 2


def test_partial_matching_is_one_to_one_and_maximal() -> None:
    gold = [(0, 10, "TOP"), (12, 20, "TOP")]
    # Greedy in order would give pred 0 the first gold it overlaps (gold 0) and leave pred 1
    # with nothing; the maximum matching pairs pred 0 with gold 1 and pred 1 with gold 0.
    pred = [(5, 15, "TOP"), (0, 4, "TOP")]
    assert match_entities(pred, gold, "partial") == [(0, 1), (1, 0)]
    assert entity_level_metrics(pred, gold, "partial")["true_positives"] == 2
    # One long prediction over two gold spans matches only one of them.
    assert entity_level_metrics([(0, 20, "TOP")], gold, "partial")["false_negatives"] == 1


def test_corpus_matching_stays_within_documents() -> None:
    doc_a = ("a", [(0, 5, "TOP")], [])
    doc_b = ("b", [], [(0, 5, "TOP")])
    result = corpus_entity_level_metrics([doc_a, doc_b], "strict")
    assert result["true_positives"] == 0 and result["false_positives"] == 1 and result["false_negatives"] == 1


def test_entity_example_f1_and_type_distribution() -> None:
    assert entity_example_f1([], []) == 1.0
    assert entity_example_f1([(0, 4, "TOP")], []) == 0.0
    dist = type_distribution_analysis([(0, 1, "TOP"), (2, 3, "TOP"), (4, 5, "TMP")], [(0, 1, "TOP")])
    assert dist["TOP"] == {"predicted": 2, "gold": 1, "over_prediction": 1, "ratio": 2.0}
    assert dist["TMP"]["ratio"] is None


def test_classification_metrics_by_hand() -> None:
    y_true = ["M", "M", "A", "L", "S"]
    y_pred = ["M", "G", "A", "A", "S"]
    m = type_classification_metrics(y_true, y_pred)
    assert m["labels"] == ["G", "L", "A", "M", "S"]  # GLAMORCUBESFIXPHDNT order, present labels only
    assert m["accuracy"] == 0.6
    assert m["per_class"]["A"] == {"precision": 0.5, "recall": 1.0, "f1": pytest.approx(2 / 3), "support": 1}
    assert m["macro_f1"] == pytest.approx((0 + 2 / 3 + 2 / 3 + 0 + 1) / 5)
    assert m["weighted_f1"] == pytest.approx((2 / 3 * 1 + 2 / 3 * 2 + 1) / 5)
    assert m["confusion_matrix"][3] == [1, 0, 0, 1, 0]  # gold M: one predicted G, one M
    fixed = type_classification_metrics(y_true, y_pred, labels=list("GLAMORCUBESFIXPHDNT"))
    assert fixed["macro_f1"] < m["macro_f1"]  # absent types count as F1 = 0 when asked for
    top = type_confusion_analysis(y_true, y_pred)
    assert top["total_errors"] == 2 and top["top_confusions"][0] == {
        "true_type": "L",
        "predicted_type": "A",
        "count": 1,
    }


def test_hierarchy_secondary_and_example_score() -> None:
    h = hierarchical_type_metrics(["M", "A", "S", "B"], ["G", "A", "N", "M"])
    assert h["exact_accuracy"] == 0.25 and h["category_accuracy"] == 0.75 and h["hierarchy_gap"] == 0.5
    with pytest.raises(ValueError, match="'Z'"):
        hierarchical_type_metrics(["Z"], ["Z"])
    s = secondary_type_metrics([["A", "L"], []], [["A"], ["M"]])
    assert (s["tp"], s["fp"], s["fn"], s["exact_set_rate"]) == (1, 1, 1, 0.0)
    assert classification_example_score("M", "M") == 1.0
    assert classification_example_score("M", "G") == 0.0
    assert classification_example_score("M", "G", category_credit=0.5) == 0.5
    assert classification_example_score("M", "S", category_credit=0.5) == 0.0


GOLD_LINKS = [
    {"id": "t1@0-5", "mention": "Rijksmuseum", "gold_kb_id": "Q190804"},
    {"id": "t2@0-5", "mention": "Rijksmuseum", "gold_kb_id": "Q190804"},
    {"id": "t3@0-9", "mention": "Nationaal Archief", "gold_kb_id": "Q1857081"},
    {"id": "t4@0-9", "mention": "Oudheidkamer", "gold_kb_id": None},
]


def test_hits_and_mrr_share_one_denominator_and_align_by_key() -> None:
    predictions = [  # out of order, one missing (t2), one extra key
        {"id": "t3@0-9", "candidates": [{"kb_id": "Q1", "score": 90}, {"kb_id": "Q1857081", "score": 80}]},
        {"id": "t1@0-5", "candidates": ["Q190804"]},
        {"id": "t4@0-9", "candidates": ["Q5"], "nil": True},
        {"id": "zz", "candidates": ["Q190804"]},
    ]
    hits = linking_accuracy(predictions, GOLD_LINKS, (1, 5))
    # 3 linkable gold mentions: t1 at rank 1, t2 missing, t3 at rank 2.
    assert hits["hits@1"] == pytest.approx(1 / 3) and hits["hits@5"] == pytest.approx(2 / 3)
    assert (
        hits["evaluated"],
        hits["missing_predictions"],
        hits["nil_gold"],
        hits["unmatched_predictions"],
    ) == (3, 1, 1, 1)
    assert mean_reciprocal_rank(predictions, GOLD_LINKS) == pytest.approx((1 + 0 + 0.5) / 3)
    # A NIL answer has no ranking, whatever candidates it lists.
    assert (
        linking_accuracy([{"id": "t1@0-5", "candidates": ["Q190804"], "nil": True}], GOLD_LINKS[:1])["hits@1"]
        == 0.0
    )
    with pytest.raises(ValueError, match="twice"):
        linking_accuracy([], [GOLD_LINKS[0], GOLD_LINKS[0]])


def test_nil_detection_is_aligned_by_key_not_position() -> None:
    predictions = [
        {"id": "t4@0-9", "nil": True},
        {"id": "t3@0-9", "nil": True},
        {"id": "t1@0-5", "nil": False},
    ]
    nil = nil_detection_metrics(predictions, GOLD_LINKS)
    assert (nil["true_positives"], nil["false_positives"], nil["false_negatives"], nil["true_negatives"]) == (
        1,
        1,
        0,
        2,
    )
    assert nil["nil_precision"] == 0.5 and nil["nil_recall"] == 1.0 and nil["missing_predictions"] == 1
    seed_format = nil_detection_metrics(
        [{"mention": "b", "is_nil_pred": True}, {"mention": "a", "is_nil_pred": False}],
        [{"mention": "a", "is_nil_gold": False}, {"mention": "b", "is_nil_gold": True}],
    )
    assert seed_format["nil_f1"] == 1.0  # zipping by position would score 0


def test_linking_example_score_and_cross_kb() -> None:
    assert linking_example_score(None, [], True) == 1.0
    assert linking_example_score(None, ["Q1"], False) == 0.0
    assert linking_example_score("Q2", ["Q1", "Q2"], False) == 0.5
    assert linking_example_score("Q2", ["Q2"], True) == 0.0
    c = cross_kb_consistency(
        [
            {"wikidata_id": "Q1", "isil_code": "NL-A"},
            {"wikidata_id": "Q1", "isil_code": "NL-B"},
            {"isil_code": "X"},
        ],
        {"Q1": ["NL-A"]},
    )
    assert (c["consistent"], c["inconsistent"], c["partial"], c["consistency_rate"]) == (1, 1, 1, 0.5)


def test_ndcg_ideal_comes_from_the_judgments() -> None:
    qrels = {"d1": 3, "d2": 2, "d3": 1}
    # Retrieved only the grade-1 document, first: the sample's ideal (from the retrieved list)
    # would give NDCG 1.0; against all judgments it is (1/1) / (7 + 3/log2(3) + 1/2).
    expected = 1.0 / (7 + 3 / math.log2(3) + 1 / 2)
    assert ndcg_at_k(["d3", "x"], qrels, 10) == pytest.approx(expected)
    assert ndcg_at_k(["d1", "d2", "d3"], qrels, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x"], {"d1": 0}, 10) == 0.0
    assert dcg([3, 2], 1) == 7.0


def test_retrieval_metrics_by_hand() -> None:
    queries = [
        {"results": [{"doc_id": "a"}, {"doc_id": "b"}, {"doc_id": "c"}], "qrels": {"b": 2, "z": 1}},
        {"results": ["x"], "gold_relevant": ["x"]},
        {"results": ["x"], "qrels": {"x": 0}},  # no relevant document: 0 by default, or left out
    ]
    r = retrieval_metrics(queries, (1, 2))
    assert r["queries"] == 3 and r["queries_without_relevant"] == 1 and r["empty_queries"] == "zero"
    assert r["mrr"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert r["recall@2"] == pytest.approx((0.5 + 1 + 0) / 3)
    r = retrieval_metrics(queries, (1, 2), empty_queries="drop")
    assert r["queries"] == 2 and r["queries_without_relevant"] == 1
    assert r["mrr"] == pytest.approx((0.5 + 1) / 2)
    assert r["precision@2"] == pytest.approx((0.5 + 0.5) / 2)  # a 1-long list is padded with misses
    assert r["recall@2"] == pytest.approx((0.5 + 1) / 2)
    sources = retrieval_source_analysis(
        [
            {"results": [{"doc_id": "a", "source": "bm25"}, {"doc_id": "b", "source": "kb"}]},
            {"results": [{"doc_id": "a", "source": "kb"}]},
        ]
    )
    assert sources["top1_by_source"] == {"bm25": 0.5, "kb": 0.5}
    assert sources["top5_by_source"] == {"bm25": pytest.approx(1 / 3), "kb": pytest.approx(2 / 3)}


def test_rouge_faithfulness_and_factual_accuracy_by_hand() -> None:
    assert rouge_n("opgericht in 1800", "werd opgericht in 1800", 1)["fmeasure"] == pytest.approx(
        2 * 1 * 0.75 / 1.75
    )
    assert rouge_n("opgericht in 1800", "werd opgericht in 1800", 2)["fmeasure"] == pytest.approx(0.8)
    assert rouge_l("a b c d", "a c d e")["fmeasure"] == pytest.approx(0.75)
    assert rouge_scores("Één café", "één café")["rougeL"] == 1.0
    context = "Het Rijksmuseum werd opgericht in 1800 in Den Haag."
    assert faithfulness("Het Rijksmuseum is oud. Het museumkaart bestaat.", context) == 0.5
    assert faithfulness("Opgericht in 1800 in Parijs, Frankrijk.", context) == 1.0
    assert faithfulness("Opgericht in 1800 in Parijs, Frankrijk.", context, min_supported_fraction=1.0) == 0.0
    assert faithfulness("Ja.", context) is None
    facts = factual_accuracy(
        [
            "Opgericht in 1800.",
            {"claim": "in Utrecht", "verifiable": True},
            {"claim": "mooi", "verifiable": False},
            "",
        ],
        ["werd opgericht in 1800", {"fact": "Den Haag"}],
    )
    assert (facts["correct_claims"], facts["incorrect_claims"], facts["unverifiable_claims"]) == (1, 2, 1)
    assert facts["factual_accuracy"] == pytest.approx(1 / 3)


def test_significance_by_hand() -> None:
    t = paired_t_test([1, 2, 3, 4], [0, 1, 1, 3])  # d = 1, 1, 2, 1
    assert t["statistic"] == pytest.approx(1.25 / (0.5 / 2)) and t["df"] == 3
    assert paired_t_test([1, 2], [1, 2])["p_value"] == 1.0
    w = wilcoxon_signed_rank([1, 2, 3, 4, 5], [0, 0, 0, 0, 0])
    assert w["statistic"] == 0 and w["p_value"] == pytest.approx(2 / 32) and w["method"] == "exact"
    assert wilcoxon_signed_rank([1, 1], [1, 1])["p_value"] is None
    boot = bootstrap_ci([1.0] * 10, [0.0] * 10, n_resamples=200)
    assert boot["ci_lower"] == boot["ci_upper"] == 1.0 and boot["significant"]
    assert bootstrap_ci([1, 0, 1], [0, 1, 1], seed=3) == bootstrap_ci([1, 0, 1], [0, 1, 1], seed=3)
    assert significance_test([1, 2, 3, 4], [0, 1, 1, 3], "paired_t")["significant"] is True
    with pytest.raises(ValueError, match="equal lengths"):
        significance_test([1], [1, 2])
