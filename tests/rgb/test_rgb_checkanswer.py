"""RGB's answer check and labels (RGB's documented cases), the tiered keywords and the improved check."""

from __future__ import annotations

import doctest

import pytest

import jurist.metrics.rgb as rgb_metrics
import jurist.programs.rgb.baseline as rgb_baseline
from jurist.metrics.rgb import (
    ERROR_KEYWORDS,
    REJECTION_KEYWORDS,
    check_answer,
    check_answer_improved,
    detect_factual_error,
    detect_rejection,
    labels_for,
    normalize_text,
    rgb_labels,
    rgb_labels_improved,
)


def test_seed_examples():
    assert check_answer("The capital is Paris", "Paris") == [1]
    assert check_answer("The capital is Paris", "Rome") == [0]


def test_case_is_ignored_and_the_check_is_a_substring_test():
    assert check_answer("THE CAPITAL IS PARIS", "paris") == [1]
    assert check_answer("Parisian cafés", "Paris") == [1]  # RGB's check: a plain substring


def test_a_list_of_variants_counts_if_any_matches():
    answer = [["Tampa", "Tampa, Florida"]]
    assert check_answer("It was in tampa.", answer) == [1]
    assert check_answer("It was in Glendale.", answer) == [0]


def test_each_part_of_a_list_answer_gets_a_label():
    assert check_answer("It was on 1月3日.", ["1月3日", "1月12日"]) == [1, 0]
    assert check_answer("1月3日 and 1月12日", ["1月3日", "1月12日"]) == [1, 1]
    assert check_answer("x", [["a", "b"], "x", ["x", "y"]]) == [0, 1, 1]


def test_chinese_predictions_lose_their_spaces_first():
    labels = rgb_labels("死亡人数为 12 人", ["12人"], language="zh")
    assert labels.label == [1] and labels.prediction == "死亡人数为12人"
    # English predictions keep them.
    assert rgb_labels("Tampa ,Florida", "Tampa, Florida", language="en").label == [0]
    # Only the prediction is changed, not the answer: a spaced answer cannot match in zh.
    assert rgb_labels("Tampa, Florida", "Tampa, Florida", language="zh").label == [0]


def test_rejection_label_and_fact_label():
    rejection = rgb_labels(
        "I can not answer the question because of the insufficient information in documents.",
        "Paris",
        language="en",
    )
    assert (rejection.label, rejection.factlabel) == ([-1], 0)
    assert rgb_labels("文档信息不足，因此我无法基于提供的文档回答该问题。", "巴黎", language="zh").label == [
        -1
    ]
    # The rejection wins over the answer check even when the answer is there.
    assert rgb_labels("insufficient information, but maybe Paris", "Paris", language="en").label == [-1]
    found = rgb_labels(
        "There are factual errors in the provided documents. It is Paris.", "Paris", language="en"
    )
    assert (found.label, found.factlabel) == ([1], 1)
    assert rgb_labels("提供文档的文档存在事实性错误。答案是巴黎。", "巴黎", language="zh").factlabel == 1


def test_rgb_keywords_are_exact_and_case_sensitive():
    # As in RGB's code: other wordings are not detected (RGB's written description with
    # "factually incorrect" does not follow its own code; the code is the definition).
    assert (
        rgb_labels("The documents are factually incorrect; it is Paris.", "Paris", language="en").factlabel
        == 0
    )
    assert rgb_labels("Factual errors were found.", "x", language="en").factlabel == 0
    assert rgb_labels("Insufficient information.", "x", language="en").label == [0]
    assert rgb_labels("I cannot answer that.", "x", language="en").label == [0]


def test_tiered_keywords():
    assert detect_rejection("Insufficient  Information in the documents").tier == 1
    assert detect_rejection("文档 信息 不足").tier == 1
    assert detect_rejection("I cannot answer this from the documents.").tier == 2
    assert detect_rejection("The date is not specified.") is None
    assert detect_rejection("The date is not specified.", max_tier=3).tier == 3
    assert detect_rejection("无法确定具体时间").keyword == "无法确定"
    assert detect_factual_error("The documents are factually incorrect.").tier == 2
    assert detect_factual_error("Document 2 is wrong.") is None
    assert detect_factual_error("Document 2 is wrong.", max_tier=3).tier == 3
    assert detect_factual_error("文档存在事实错误").tier == 2
    assert detect_factual_error("The documents contain no factual errors.") is None
    assert detect_factual_error("文档中没有事实性错误。") is None
    assert detect_factual_error("There are no errors; Paris.") is None
    assert all(len(tier) for tier in REJECTION_KEYWORDS) and len(ERROR_KEYWORDS) == 3


def test_normalisation():
    assert normalize_text("The  U.S. paid $1,000!", language="en") == "u s paid 1000"
    assert normalize_text("ＡＢＣ　１２", language="en") == "abc 12"
    assert normalize_text("J·K·罗琳", language="zh") == normalize_text("J.K. 罗琳", language="zh") == "jk罗琳"
    assert normalize_text("增长 6.4%。", language="zh") == "增长6.4%"
    assert normalize_text("end. 2.", language="en") == "end 2"


def test_improved_check():
    assert check_answer_improved("It was held in Tampa in Florida.", "Tampa, Florida", language="en") == [1]
    assert check_answer_improved("About 112 people died.", "12 people", language="en") == [0]
    assert check_answer("About 112 people died.", "12 people") == [1]  # RGB's check says yes
    assert check_answer_improved("It cost 1000 dollars", "1,000", language="en") == [1]
    assert check_answer_improved("增长了64%", "6.4%", language="zh") == [0]
    assert check_answer_improved("GDP grew 6.4 % in 2022", "6.4%", language="en") == [1]
    assert check_answer_improved("GDP grew 16.4% in 2022", "6.4%", language="en") == [0]
    assert check_answer_improved("3月1日举行", "1月3日", language="zh") == [0]
    assert check_answer_improved("事故造成12 人死亡", "12人", language="zh") == [1]
    assert check_answer_improved("作者是J.K.罗琳", [["J·K·罗琳", "罗琳"]], language="zh") == [1]
    assert check_answer_improved("Tampa", "Tampa, Florida", language="en") == [0]
    assert check_answer_improved("Tampa", "Tampa, Florida", language="en", min_overlap=0.5) == [1]


def test_improved_labels_never_replace_the_original():
    text = "I cannot answer from these documents."
    assert rgb_labels(text, "Paris", language="en").label == [0]
    assert rgb_labels_improved(text, "Paris", language="en").label == [-1]
    assert labels_for(text, "Paris", language="en").label == [0]  # original by default
    assert labels_for(text, "Paris", language="en", check="improved").label == [-1]
    with pytest.raises(ValueError, match="answer check"):
        labels_for(text, "Paris", language="en", check="fuzzy")  # type: ignore[arg-type]


@pytest.mark.parametrize("module", [rgb_metrics, rgb_baseline])
def test_doctests(module):
    failures, tried = doctest.testmod(module)
    assert tried > 0 and failures == 0
