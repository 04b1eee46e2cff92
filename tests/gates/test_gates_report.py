"""Scoring whole trace files: matching, labels per question, rates, gates and rendering."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from jurist.datasets.gates import GoldQuestion, TraceRecord, iter_traces, load_gold
from jurist.errors import InputError
from jurist.metrics.gates import GateResult, GateStatus, GateThresholds, Label, Ratio, TraceScore
from jurist.tasks.gates.render import questions_frame, render_json, render_markdown, report_to_dict
from jurist.tasks.gates.scoring import score_traces

TOY = Path(__file__).parent.parent / "data" / "gates"
Writer = Callable[..., Path]

ALL_LABELS = [
    {"q": "What is X?", "answer": "X is a mapping\ncitations: [p1#1]"},  # OK, contains the claim
    {"qid": "q2", "q": "Explain Y.", "answer": "Y is Y", "citations": ["p9"]},  # ANS_NO_HIT
    {"q": "What is Z?", "answer": "not in context"},  # REFUSAL_OK
    {"q": "Summarize the link.", "answer": "Z is a thing"},  # HALLUCINATION, not compliant
    {"qid": "q2", "answer": "Not in context "},  # OVER_REFUSAL (second trace of q2)
]


def _by_qid(report: object) -> dict[str | None, object]:
    return {row.gold.qid: row for row in report.questions}  # type: ignore[attr-defined]


def test_toy_data_from_the_seed() -> None:
    report = score_traces(TOY / "qaset.json", TOY / "trace.sample.jsonl")
    assert report.traces_read == 1 and report.totals.traces == 1
    assert _by_qid(report)["q1"].label is Label.OK
    m = report.metrics
    assert (m.answer_precision, m.citation_hit_rate, m.compliance) == (Ratio(1, 1), Ratio(1, 1), Ratio(1, 1))
    assert m.claim_containment == Ratio(0, 1)  # "- claim" does not contain the gold claim
    assert m.under_refusal.value is None
    assert [g.qid for g in report.gold_without_trace] == ["q2", "q3", "q4"]
    assert report.passed and report.exit_code == 0


def test_every_label_and_rate_on_a_hand_built_set(gold_file: Writer, traces_file: Writer) -> None:
    report = score_traces(gold_file(), traces_file(ALL_LABELS))
    rows = _by_qid(report)
    assert rows["q1"].label is Label.OK
    assert rows["q3"].label is Label.REFUSAL_OK
    assert rows["q4"].label is Label.HALLUCINATION
    assert rows["q2"].label is None
    assert rows["q2"].label_counts == {Label.OVER_REFUSAL: 1, Label.ANS_NO_HIT: 1}
    assert (rows["q2"].counts.traces, rows["q2"].first_trace_line) == (2, 2)
    m = report.metrics
    assert m.answered == Ratio(3, 5)
    assert m.answer_precision == Ratio(1, 3)
    assert m.over_refusal == Ratio(1, 3)
    assert m.under_refusal == Ratio(1, 2)
    assert m.citation_hit_rate == Ratio(1, 3)
    assert m.claim_containment == Ratio(1, 1)
    assert m.compliance == Ratio(4, 5)
    assert [g.status for g in report.gates] == [GateStatus.FAIL] * 5
    assert not report.passed and report.exit_code == 1
    assert report.repeated_questions == 1


def test_a_good_run_passes(gold_file: Writer, traces_file: Writer) -> None:
    traces = [
        {"qid": "q1", "answer": "x", "citations": ["p1#1"]},
        {"qid": "q2", "answer": "y\ncitations: [p0, p2#2]"},
        {"qid": "q3", "answer": "not in context"},
        {"qid": "q4", "answer": "not in context"},
    ]
    report = score_traces(gold_file(), traces_file(traces))
    assert all(g.status is GateStatus.PASS for g in report.gates)
    assert report.exit_code == 0
    assert "**All gates pass.**" in render_markdown(report)


def test_empty_answered_set(gold_file: Writer, traces_file: Writer) -> None:
    refusals = [{"qid": q, "answer": "not in context"} for q in ("q1", "q2", "q3", "q4")]
    report = score_traces(gold_file(), traces_file(refusals))
    gates = {g.gate_id: g for g in report.gates}
    assert report.metrics.answer_precision == Ratio(0, 0)
    assert gates["G1"].status is GateStatus.NA and not gates["G1"].blocking
    assert gates["G3"].status is GateStatus.FAIL  # everything answerable was refused
    assert report.metrics.claim_containment == Ratio(0, 1)
    assert "n/a (skipped)" in render_markdown(report)


def test_no_negatives(gold_file: Writer, traces_file: Writer) -> None:
    gold = gold_file([{"qid": "a", "q": "A?", "answerable": True, "gold_ids": ["p"]}])
    traces = traces_file([{"qid": "a", "answer": "x", "citations": ["p"]}])
    report = score_traces(gold, traces)
    assert report.metrics.under_refusal.value is None
    assert report.passed
    strict = score_traces(gold, traces, thresholds=GateThresholds(fail_on_na=True))
    assert not strict.passed
    assert [g.gate_id for g in strict.gates if g.blocking] == ["G2"]
    assert "n/a: fails (fail_on_na)" in render_markdown(strict)


def test_no_positives(gold_file: Writer, traces_file: Writer) -> None:
    gold = gold_file([{"qid": "n", "q": "N?", "answerable": False}])
    report = score_traces(gold, traces_file([{"qid": "n", "answer": "a guess"}]))
    m = report.metrics
    assert (m.over_refusal.value, m.citation_hit_rate.value, m.claim_containment.value) == (None, None, None)
    assert m.answer_precision == Ratio(0, 1)
    assert m.under_refusal == Ratio(1, 1)
    assert _by_qid(report)["n"].label is Label.HALLUCINATION


def test_duplicate_traces_are_each_counted(gold_file: Writer, traces_file: Writer) -> None:
    ok = {"qid": "q1", "answer": "x", "citations": ["p1#1"]}
    traces = [ok, ok, ok, {"q": "What is X?", "answer": "x", "citations": []}]
    report = score_traces(gold_file(), traces_file(traces))
    row = _by_qid(report)["q1"]
    assert row.counts.traces == 4
    assert row.label_counts == {Label.OK: 3, Label.ANS_NO_HIT: 1}
    assert report.metrics.answer_precision == Ratio(3, 4)
    assert report.repeated_questions == 1
    assert "OK ×3, ANS_NO_HIT ×1" in render_markdown(report)
    same = score_traces(gold_file(), traces_file([ok, ok]))
    assert _by_qid(same)["q1"].label is Label.OK
    assert same.metrics.answer_precision == Ratio(2, 2)


def test_citations_field_and_text_sources(gold_file: Writer, traces_file: Writer) -> None:
    traces = [
        {"qid": "q1", "answer": "citations: [p1#1]"},  # text: hit
        {"qid": "q1", "answer": "citations: [p1#1]", "citations": ["nope"]},  # field wins: no hit
        {"qid": "q1", "answer": "no list", "citations": ["p1#1"]},  # field: hit
        {"qid": "q1", "answer": "no list", "citations": None},  # null: text, none: no hit, not compliant
    ]
    report = score_traces(gold_file(), traces_file(traces))
    counts = _by_qid(report)["q1"].counts
    assert (counts.ok, counts.ans_no_hit, counts.hit, counts.compliant) == (2, 2, 2, 3)


def test_qid_and_text_matching(gold_file: Writer, traces_file: Writer) -> None:
    gold = gold_file(
        [
            {"qid": "a", "q": "A?", "answerable": False},
            {"q": "B?", "answerable": False},
            {"qid": "c", "q": "C?", "answerable": False},
        ]
    )
    traces = [
        {"qid": "a", "q": "text differs", "answer": "not in context"},  # qid wins
        {"q": "A?", "answer": "not in context"},  # text, no qid
        {"qid": "zz", "q": "B?", "answer": "not in context"},  # gold row has no qid: text
        {"qid": "zz", "q": "C?", "answer": "not in context"},  # conflicting qid: unmatched
        {"q": "D?", "answer": "not in context"},  # unknown question: unmatched
    ]
    report = score_traces(gold, traces_file(traces))
    traces_per_row = [row.counts.traces for row in report.questions]
    assert traces_per_row == [2, 1, 0]
    assert report.unmatched_count == 2
    assert [(u.line, u.qid, u.question) for u in report.unmatched] == [(4, "zz", "C?"), (5, None, "D?")]
    assert "gold qid 'c'" in report.unmatched[0].reason
    assert [g.qid for g in report.gold_without_trace] == ["c"]
    text = render_markdown(report)
    assert "## Traces with no gold question (2)" in text
    assert "## Gold questions with no trace (1)" in text


def test_unmatched_traces_are_counted_and_listed_up_to_a_limit(
    gold_file: Writer, traces_file: Writer
) -> None:
    traces = [{"q": f"Unknown {i}?", "answer": "x"} for i in range(7)] + [
        {"qid": "q1", "answer": "not in context"}
    ]
    report = score_traces(gold_file(), traces_file(traces), list_limit=3)
    assert (report.traces_read, report.unmatched_count, len(report.unmatched)) == (8, 7, 3)
    assert "… and 4 more not listed." in render_markdown(report)
    assert report_to_dict(report)["unmatched_traces"]["count"] == 7


def test_nothing_matched_fails(gold_file: Writer, traces_file: Writer) -> None:
    for traces in ([{"q": "Unknown?", "answer": "x"}],):
        report = score_traces(gold_file(), traces_file(traces))
        assert report.totals.traces == 0
        assert all(g.status is GateStatus.NA for g in report.gates)
        assert not report.passed and report.exit_code == 1
        assert "No trace matched a gold question" in render_markdown(report)


def test_empty_trace_file_is_an_input_error(gold_file: Writer, traces_file: Writer) -> None:
    # An empty file is bad input (exit 2), never a scored run with nothing in it.
    with pytest.raises(InputError, match="no traces"):
        score_traces(gold_file(), traces_file([]))


def test_ambiguous_question_text_is_an_input_error(gold_file: Writer, traces_file: Writer) -> None:
    gold = gold_file(
        [{"qid": "a", "q": "Same?", "answerable": False}, {"qid": "b", "q": "Same?", "answerable": False}]
    )
    traces = traces_file([{"qid": "a", "answer": "x"}, {"q": "Same?", "answer": "x"}])
    with pytest.raises(InputError) as info:
        score_traces(gold, traces)
    assert (info.value.line, info.value.field, info.value.path) == (2, "q", str(traces))


def test_malformed_line_stops_scoring_with_its_line(gold_file: Writer, traces_file: Writer) -> None:
    traces = traces_file([{"qid": "q1", "answer": "x"}, '{"qid": "q2", "answer": '])
    with pytest.raises(InputError) as info:
        score_traces(gold_file(), traces)
    assert info.value.line == 2 and "invalid JSON" in str(info.value)


def test_custom_refusal_token(gold_file: Writer, traces_file: Writer) -> None:
    traces = traces_file(
        [{"qid": "q3", "answer": "I don't know."}, {"qid": "q4", "answer": "not in context"}]
    )
    report = score_traces(gold_file(), traces, refusal_token="I DON'T KNOW.")
    rows = _by_qid(report)
    assert rows["q3"].label is Label.REFUSAL_OK
    assert rows["q4"].label is Label.HALLUCINATION
    assert report.refusal_token == "i don't know."


def test_in_memory_inputs_and_observer(gold_file: Writer, traces_file: Writer) -> None:
    golds = load_gold(gold_file())
    seen: list[tuple[str | None, int, Label]] = []

    def observe(gold: GoldQuestion, record: TraceRecord, score: TraceScore) -> None:
        seen.append((gold.qid, record.line, score.label))

    report = score_traces(golds, iter_traces(traces_file(ALL_LABELS)), on_trace=observe)
    assert seen[0] == ("q1", 1, Label.OK) and len(seen) == 5
    assert report.gold_source is None and report.traces_source is None
    assert "(in memory)" in render_markdown(report)


def test_json_rendering(gold_file: Writer, traces_file: Writer) -> None:
    report = score_traces(gold_file(), traces_file(ALL_LABELS[:1]))
    data = json.loads(render_json(report))
    assert data["passed"] is True and data["exit_code"] == 0
    assert data["metrics"]["answer_precision"] == {"value": 1.0, "numerator": 1, "denominator": 1}
    assert data["metrics"]["under_refusal"]["value"] is None
    assert data["gates"][1] == {
        "gate": "G2",
        "metric": "under_refusal",
        "comparator": "<=",
        "threshold": 0.05,
        "value": None,
        "status": "n/a",
        "blocking": False,
    }
    assert data["counts"]["traces_scored"] == 1 and data["counts"]["ok"] == 1
    assert data["thresholds"]["precision_min"] == 0.8
    assert [q["label"] for q in data["questions"]] == ["OK", None, None, None]
    assert [g["qid"] for g in data["gold_without_trace"]] == ["q2", "q3", "q4"]


def test_markdown_sections(gold_file: Writer, traces_file: Writer) -> None:
    text = render_markdown(score_traces(gold_file(), traces_file(ALL_LABELS)))
    assert text.startswith("# RAG trace gates: FAIL\n")
    for needle in (
        "## Metrics",
        "| Answer precision (over answered) | 33.3% (1/3) |",
        "## Gates",
        "| G1 | Answer precision (over answered) | 33.3% | ≥ 0.8 | **FAIL** |",
        "**Failed: G1, G2, G3, G4, G5.**",
        "## Per-question",
        "| q1 | yes | 1 | 1 | 1 | 0 | **OK** | 1 |",
        "| q3 | no | 1 | 0 | 0 | 1 | **REFUSAL_OK** | 3 |",
    ):
        assert needle in text, needle


def test_questions_frame(gold_file: Writer, traces_file: Writer) -> None:
    report = score_traces(gold_file(), traces_file(ALL_LABELS))
    frame = questions_frame(report)
    assert list(frame["qid"]) == ["q1", "q2", "q3", "q4"]
    assert list(frame["traces"]) == [1, 2, 1, 1]
    assert pd.isna(frame.loc[1, "label"])
    assert str(frame["first_trace_line"].dtype) == "Int64"
    assert list(frame["label"][[0, 2, 3]]) == ["OK", "REFUSAL_OK", "HALLUCINATION"]
    assert {"ok", "over_refusal", "hit", "compliant", "contained", "first_trace_line"} <= set(frame.columns)
    assert report.to_frame().equals(frame)


def test_extra_columns_metrics_and_gates_render_without_touching_scores(
    gold_file: Writer, traces_file: Writer
) -> None:
    report = score_traces(gold_file(), traces_file(ALL_LABELS[:1]))
    assert report.passed
    report.questions[0].extra["judge_faithful"] = 0.9
    report.extra_metrics["judge faithfulness"] = 0.9
    report.gates.append(GateResult("J1", "judge faithfulness", ">=", 0.95, 0.9, GateStatus.FAIL, True))
    text = render_markdown(report)
    assert "| judge_faithful |" in text and "| judge faithfulness | 90.0% |" in text
    assert "| J1 | judge faithfulness | 90.0% | ≥ 0.95 | **FAIL** |" in text
    assert not report.passed and report.exit_code == 1
    assert questions_frame(report).loc[0, "judge_faithful"] == 0.9
    assert report_to_dict(report)["extra_metrics"] == {"judge faithfulness": 0.9}


def _synthetic(count: int) -> Iterator[TraceRecord]:
    for i in range(count):
        yield TraceRecord(i + 1, f"q{i % 4 + 1}", None, "x\ncitations: [p1#1]", None)
        if i % 10 == 0:
            yield TraceRecord(i + 1, f"unknown-{i}", None, "x", None)


def test_memory_does_not_grow_with_the_number_of_traces(gold_file: Writer) -> None:
    golds = load_gold(gold_file())
    peaks = []
    for count in (2_000, 40_000):
        tracemalloc.start()
        report = score_traces(golds, _synthetic(count))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert report.totals.traces == count and len(report.unmatched) == 20
    assert peaks[1] - peaks[0] < 64 * 1024
