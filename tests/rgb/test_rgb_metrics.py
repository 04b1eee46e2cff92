"""Every RGB metric on hand-built results, and the per-example scores for optimizers."""

from __future__ import annotations

import pytest

from jurist.metrics.rgb import (
    ExampleScore,
    Rate,
    accuracy,
    answer_score,
    counterfactual_score,
    fact_check,
    integration_accuracy,
    is_correct,
    judged_fact_check,
    judged_rate,
    judgment_score,
    rejection_rate,
)

LABELS = [[1], [0], [1, 1], [1, 0], [-1], [0, 0], [1]]


def test_accuracy_below_noise_rate_1_counts_answers_with_every_part():
    result = accuracy(LABELS, 0.4)
    assert (result.count, result.total) == (3, 7)  # [1], [1, 1], [1]
    assert result.rate == pytest.approx(3 / 7)


def test_accuracy_at_noise_rate_1_counts_rejections_and_answers():
    result = accuracy(LABELS, 1.0)
    assert result.count == 4  # three answers plus the rejection
    assert accuracy([[-1], [-1], [0]], 1).rate == pytest.approx(2 / 3)
    # Below 1 a rejection is a miss.
    assert accuracy([[-1], [-1], [0]], 0.8).count == 0


def test_is_correct_edge_cases():
    assert not is_correct([], 0.0) and not is_correct([], 1.0)
    assert is_correct([-1], 1.0) and not is_correct([-1], 0.0)
    assert not is_correct([1, 0], 0.2)


def test_rates_of_nothing_are_none_not_zero():
    assert accuracy([], 0.0) == Rate(0, 0) and accuracy([], 0.0).rate is None
    assert rejection_rate([]).rate is None and judged_rate([]).rate is None


def test_rejection_rates():
    assert rejection_rate(LABELS) == Rate(1, 7)
    assert rejection_rate([[-1], [-1], [1], []]).rate == 0.5
    # Rej* from a judge's verdicts.
    assert judged_rate([True, False, True, True]) == Rate(3, 4)


def test_integration_accuracy():
    assert integration_accuracy([[1, 1], [1, 0], [0, 0], [-1], [1, 1, 1]]) == Rate(2, 5)


def test_fact_check_detection_and_correction():
    labels = [[1], [0], [1], [-1], [0], [1]]
    factlabels = [1, 1, 0, 1, 0, 1]
    result = fact_check(labels, factlabels)
    # the detection that rejects ([-1]) is not a correction; RGB's evalue.py would count it
    assert (result.fact_tt, result.correct_tt, result.nums, result.detected_rejections) == (4, 2, 6, 1)
    assert result.fact_check_rate == pytest.approx(4 / 6)
    assert result.correct_rate == pytest.approx(2 / 4)


def test_fact_check_without_detections_has_correction_rate_0_as_in_rgb():
    result = fact_check([[1], [1]], [0, 0])
    assert (result.fact_check_rate, result.correct_rate) == (0.0, 0.0)
    assert fact_check([], []).fact_check_rate is None
    with pytest.raises(ValueError, match="factlabels"):
        fact_check([[1]], [1, 0])


def test_judged_fact_check():
    result = judged_fact_check([[1], [0], [1]], [True, True, False])
    assert (result.fact_tt, result.correct_tt) == (2, 1)
    assert result.fact_check_rate == pytest.approx(2 / 3) and result.correct_rate == 0.5


def test_per_example_scores():
    assert answer_score("The capital is Paris", "Paris").score == 1.0
    assert answer_score("The capital is Rome", "Paris") == ExampleScore(0.0, "misses answer part(s): 'Paris'")
    assert answer_score("insufficient information", "Paris", noise_rate=1.0).score == 1.0
    rejected = answer_score("insufficient information", "Paris", noise_rate=0.2)
    assert rejected.score == 0.0 and rejected.feedback.startswith("rejects although")
    assert answer_score("死亡 12 人", "12人", language="zh").score == 1.0
    should = answer_score("I cannot answer.", "Paris", noise_rate=1.0)
    assert should == ExampleScore(0.0, "should reject: no passage holds the answer, but it answers")
    assert answer_score("I cannot answer.", "Paris", noise_rate=1.0, check="improved").score == 1.0
    assert answer_score("Paris", "Paris", noise_rate=1.0).feedback.startswith("gives the right answer")


def test_judgment_scores():
    assert judgment_score(True, True).score == judgment_score(False, False).score == 1.0
    assert judgment_score(True, False) == ExampleScore(
        0.0, "wrong: judged that the answer rejects, but it does not"
    )
    wrong = judgment_score(False, True, kind="error_detection")
    assert wrong.score == 0.0
    assert wrong.feedback == (
        "wrong: judged that the answer does not report factual errors in the documents, but it does"
    )


def test_counterfactual_scores():
    assert (
        counterfactual_score("There are factual errors in the provided documents. Paris.", "Paris").score
        == 1.0
    )
    assert counterfactual_score("There are factual errors in the provided documents.", "Paris").score == 0.0
    assert counterfactual_score("Paris.", "Paris").feedback.startswith("does not report")
