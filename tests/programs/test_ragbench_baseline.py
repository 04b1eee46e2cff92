"""Tests of the offline RAGBench baseline judge on small hand-built items."""

from __future__ import annotations

import doctest

from jurist.metrics.trace import trace_scores_for_sentences
from jurist.programs import _lexical
from jurist.programs._lexical import content_words
from jurist.programs.ragbench.baseline import (
    FULL_SUPPORT_MIN_COVERAGE,
    RELEVANCE_MIN_QUESTION_OVERLAP,
    SUPPORT_MIN_OVERLAP,
    RagbenchBaseline,
)
from jurist.sentences import KeyedSentence, key_documents, key_response
from jurist.signatures.ragbench import RagbenchLabels

QUESTION = "How many inhabitants does Reunion Island have?"
DOCUMENTS = [
    "Title: Influenza in Reunion Island\nPassage: Reunion Island has 850,000 inhabitants. "
    "It lies east of Madagascar.",
    "Title: Vaccines\nPassage: The vaccine campaign starts in April.",
]


def _label(response: str) -> RagbenchLabels:
    return RagbenchBaseline()(question=QUESTION, documents=DOCUMENTS, response=response)


def test_thresholds_are_documented_fractions() -> None:
    for threshold in (SUPPORT_MIN_OVERLAP, FULL_SUPPORT_MIN_COVERAGE, RELEVANCE_MIN_QUESTION_OVERLAP):
        assert 0.0 < threshold <= 1.0


def test_content_words_drop_stopwords_and_fold_plurals() -> None:
    assert content_words("The studies of T-cell counts in 10,009 patients.") == {
        "study",
        "cell",
        "count",
        "10,009",
        "patient",
    }
    assert content_words("Based on the provided context, it is.") == frozenset()


def test_supported_sentence_is_labelled_with_its_source() -> None:
    labels = _label("Reunion Island has 850,000 inhabitants.")
    assert labels.overall_supported is True
    [sentence] = labels.sentence_support_information
    assert sentence.response_sentence_key == "a"
    assert sentence.fully_supported is True
    # 0b holds all 4 content words; the title 0a holds 2 of 4, above SUPPORT_MIN_OVERLAP.
    assert sentence.supporting_sentence_keys == ["0a", "0b"]
    assert "100% of its 4 content words" in sentence.explanation
    assert labels.all_utilized_sentence_keys == ["0a", "0b"]
    assert labels.dropped_keys == []


def test_unsupported_sentence_makes_the_response_unsupported() -> None:
    labels = _label("Reunion Island has 850,000 inhabitants. Its volcano erupted violently yesterday.")
    first, second = labels.sentence_support_information
    assert first.fully_supported is True
    assert second.response_sentence_key == "b"
    assert second.fully_supported is False
    assert second.supporting_sentence_keys == []
    assert "not supported" in second.explanation
    assert labels.overall_supported is False
    assert "not supported: b" in labels.overall_supported_explanation


def test_partly_supported_sentence_is_not_fully_supported() -> None:
    # 0b holds 3 of 7 content words (reunion, island, 850,000): supporting, but coverage 43%;
    # the title 0a holds 2 of 7 (29%), below SUPPORT_MIN_OVERLAP.
    labels = _label("Reunion Island holds 850,000 penguins, seals, walruses.")
    [sentence] = labels.sentence_support_information
    assert sentence.supporting_sentence_keys == ["0b"]
    assert sentence.fully_supported is False
    assert "43% of its 7 content words" in sentence.explanation


def test_sentence_without_content_words_counts_as_supported() -> None:
    labels = _label("Based on the provided context, here it is. Reunion Island has 850,000 inhabitants.")
    first = labels.sentence_support_information[0]
    assert first.fully_supported is True
    assert first.supporting_sentence_keys == []
    assert labels.overall_supported is True


def test_relevant_keys_cover_question_overlap_and_utilized_sentences() -> None:
    labels = _label("The vaccine campaign starts in April.")
    # Question content words: many, inhabitant, reunion, island. 0b holds 3 of 4, the title 0a
    # holds 2 of 4 (50%); 1b is relevant only because the response uses it.
    assert labels.all_relevant_sentence_keys == ["0a", "0b", "1b"]
    assert labels.all_utilized_sentence_keys == ["1b"]
    assert "2 of 5 document sentences" in labels.relevance_explanation
    assert "4 content words; 1 more" in labels.relevance_explanation


def test_keys_match_the_keys_the_llm_judge_sees() -> None:
    response = "Reunion Island has 850,000 inhabitants. It lies east of Madagascar."
    labels = _label(response)
    doc_keys = {sentence.key for sentence in key_documents(DOCUMENTS)}
    assert set(labels.all_relevant_sentence_keys) <= doc_keys
    assert set(labels.all_utilized_sentence_keys) <= doc_keys
    assert [s.response_sentence_key for s in labels.sentence_support_information] == [
        sentence.key for sentence in key_response(response)
    ]


def test_labels_feed_the_trace_metrics() -> None:
    labels = _label("Reunion Island has 850,000 inhabitants.")
    scores = trace_scores_for_sentences(
        key_documents(DOCUMENTS),
        labels.all_relevant_sentence_keys,
        labels.all_utilized_sentence_keys,
        [s.fully_supported for s in labels.sentence_support_information],
        weighting="sentences",
    )
    assert labels.all_relevant_sentence_keys == ["0a", "0b"]
    assert scores.context_relevance == 2 / 5
    assert scores.context_utilization == 2 / 5
    assert scores.completeness == 1.0
    assert scores.adherence is True


def test_empty_response_and_empty_documents() -> None:
    labels = RagbenchBaseline()(question=QUESTION, documents=[], response="")
    assert labels.sentence_support_information == []
    assert labels.all_relevant_sentence_keys == []
    assert labels.all_utilized_sentence_keys == []
    assert labels.overall_supported is True
    unsupported = RagbenchBaseline()(question=QUESTION, documents=[], response="Reunion has 850,000 people.")
    assert unsupported.overall_supported is False


def test_thresholds_can_be_overridden() -> None:
    # 0b holds 3 of the 4 content words (75%; "residents" is not in the documents).
    default = _label("Reunion Island has 850,000 residents.")
    assert default.overall_supported is True
    strict = RagbenchBaseline(full_support_min_coverage=1.0)
    labels = strict(question=QUESTION, documents=DOCUMENTS, response="Reunion Island has 850,000 residents.")
    assert labels.overall_supported is False
    lenient = RagbenchBaseline(full_support_min_coverage=0.75)
    labels = lenient(question=QUESTION, documents=DOCUMENTS, response="Reunion Island has 850,000 residents.")
    assert labels.overall_supported is True


def test_baseline_is_deterministic() -> None:
    response = "Reunion Island has 850,000 inhabitants. It lies east of Madagascar. Its volcano erupted."
    first = RagbenchBaseline()(question=QUESTION, documents=DOCUMENTS, response=response)
    second = RagbenchBaseline()(question=QUESTION, documents=list(DOCUMENTS), response=response)
    assert first.model_dump() == second.model_dump()


def test_label_accepts_pre_keyed_sentences() -> None:
    docs = [
        KeyedSentence("0a", "Reunion Island has 850,000 inhabitants."),
        KeyedSentence("0b", "Nothing else."),
    ]
    resp = [KeyedSentence("a", "Reunion has 850,000 inhabitants."), KeyedSentence("b", "Mars is red.")]
    labels = RagbenchBaseline().label(question=QUESTION, doc_sentences=docs, response_sentences=resp)
    assert [s.response_sentence_key for s in labels.sentence_support_information] == ["a", "b"]
    assert [s.fully_supported for s in labels.sentence_support_information] == [True, False]
    assert labels.all_utilized_sentence_keys == ["0a"]
    assert labels.overall_supported is False


def test_content_words_doctest_holds() -> None:
    assert doctest.testmod(_lexical).failed == 0
