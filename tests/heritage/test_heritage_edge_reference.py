"""Reference edge cases: nervaluate's schemes on overlapping spans, and retrieval queries
with no relevant document as ir-measures counts them (both are test-only dependencies)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import jurist
from jurist.datasets.heritage.gold import load_heritage_gold
from jurist.metrics.heritage.ner import corpus_entity_level_metrics, nervaluate_metrics
from jurist.metrics.heritage.retrieval import retrieval_metrics
from support import run_cli

TYPES = ["GRP.HER.MUS", "TOP", "TMP"]
SCHEMES = ("strict", "exact", "partial", "ent_type")


def _as_nervaluate(spans: list[tuple[int, int, str]]) -> list[dict]:
    return [{"label": label, "start": start, "end": end - 1} for start, end, label in spans]


def _random_overlapping(rng: random.Random) -> list[tuple[int, int, str]]:
    spans = []
    for _ in range(rng.randint(0, 5)):
        start = rng.randint(0, 40)
        spans.append((start, start + rng.randint(1, 12), rng.choice(TYPES)))
    return spans


def _assert_agrees(docs: list, true: list, pred: list, min_overlap: float = 1.0) -> None:
    nervaluate = pytest.importorskip("nervaluate")
    ours = nervaluate_metrics(docs, min_overlap_percentage=min_overlap)
    reference = nervaluate.Evaluator(
        true, pred, tags=TYPES, loader="dict", min_overlap_percentage=min_overlap
    ).evaluate()
    for scheme in SCHEMES:
        theirs = reference["overall"][scheme]
        for key in ("correct", "incorrect", "partial", "missed", "spurious", "possible", "actual"):
            assert ours[scheme][key] == getattr(theirs, key), (scheme, key, docs)
        for key in ("precision", "recall", "f1"):
            assert ours[scheme][key] == pytest.approx(getattr(theirs, key)), (scheme, key, docs)
        for label, results in reference["entities"].items():
            per_type = ours["per_type"][label][scheme]
            assert per_type["correct"] == results[scheme].correct
            assert per_type["partial"] == results[scheme].partial
            assert per_type["f1"] == pytest.approx(results[scheme].f1)


def test_one_prediction_over_two_gold_spans_and_two_predictions_over_one() -> None:
    # Doc 1: the prediction covers both gold spans. Doc 2: two predictions inside one gold span.
    gold_1 = [(0, 10, "GRP.HER.MUS"), (12, 20, "TOP")]
    pred_1 = [(5, 15, "TOP")]
    gold_2 = [(0, 20, "GRP.HER.MUS")]
    pred_2 = [(0, 5, "GRP.HER.MUS"), (8, 20, "GRP.HER.MUS")]
    docs = [("", gold_1, pred_1), ("", gold_2, pred_2)]
    true = [_as_nervaluate(gold_1), _as_nervaluate(gold_2)]
    pred = [_as_nervaluate(pred_1), _as_nervaluate(pred_2)]
    _assert_agrees(docs, true, pred)
    nv = nervaluate_metrics(docs)
    # nervaluate: the prediction over two gold spans takes the first (MUS) as a partial match
    # and leaves TOP missed; the second prediction in one gold span finds it taken: spurious.
    assert (nv["partial"]["partial"], nv["partial"]["missed"], nv["partial"]["spurious"]) == (2, 1, 1)
    # ent_type: the first overlapping span of the same type wins (TOP), MUS is missed.
    assert (nv["ent_type"]["correct"], nv["ent_type"]["missed"]) == (2, 1)
    # The framework's partial (same type, overlap, one-to-one maximum matching, full credit)
    # gives another figure by definition: 2 matches of 3 gold, 3 predictions.
    framework = corpus_entity_level_metrics(docs, "partial")
    assert framework["true_positives"] == 2 and framework["f1"] == pytest.approx(2 / 3)
    assert nv["partial"]["f1"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("min_overlap", [1.0, 50.0])
def test_nervaluate_schemes_agree_on_random_overlapping_spans(min_overlap: float) -> None:
    rng = random.Random(21)
    for _ in range(300):
        docs, true, pred = [], [], []
        for index in range(rng.randint(1, 4)):
            gold = _random_overlapping(rng)
            if index == 0 and not gold:
                gold = [(0, 3, "TOP")]  # nervaluate's dict loader needs a first span to infer the format
            predicted = _random_overlapping(rng) + [g for g in gold if rng.random() < 0.3]
            rng.shuffle(predicted)
            docs.append(("", gold, predicted))
            true.append(_as_nervaluate(gold))
            pred.append(_as_nervaluate(predicted))
        _assert_agrees(docs, true, pred, min_overlap)


def _queries(rng: random.Random) -> tuple[list, list, list, set[str]]:
    from ir_measures import Qrel, ScoredDoc

    qrels, run, queries, empty = [], [], [], set()
    for q in range(30):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(20)]
        judged = {d: rng.choice([0, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 10))}
        if q % 4 == 0:
            judged = dict.fromkeys(judged, 0)  # judged, nothing relevant
        if not any(judged.values()):
            empty.add(qid)
        ranking = rng.sample(docs, rng.randint(1, 15))
        qrels += [Qrel(qid, d, g) for d, g in judged.items()]
        run += [ScoredDoc(qid, d, float(100 - i)) for i, d in enumerate(ranking)]
        queries.append({"id": qid, "results": ranking, "qrels": judged})
    return qrels, run, queries, empty


def test_queries_without_relevant_documents_follow_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, P, R, nDCG

    qrels, run, queries, empty = _queries(random.Random(4))
    gains = {0: 0, 1: 1, 2: 3, 3: 7}
    measures = [nDCG(gains=gains) @ 10, RR, P @ 5, R @ 5]
    names = ["ndcg@10", "mrr", "precision@5", "recall@5"]
    # Default: counted (ir-measures' default pipeline scores them 0 and averages over them).
    reference = ir_measures.calc_aggregate(measures, qrels, run)
    ours = retrieval_metrics(queries, (5, 10))
    assert ours["queries"] == 30 and ours["queries_without_relevant"] == len(empty) > 0
    for measure, name in zip(measures, names, strict=True):
        assert ours[name] == pytest.approx(reference[measure]), name
    # drop: as ir-measures on the queries that have a relevant document.
    kept = [qrel for qrel in qrels if qrel.query_id not in empty]
    reference = ir_measures.calc_aggregate(measures, kept, run)
    ours = retrieval_metrics(queries, (5, 10), empty_queries="drop")
    assert ours["queries"] == 30 - len(empty) and ours["queries_without_relevant"] == len(empty)
    for measure, name in zip(measures, names, strict=True):
        assert ours[name] == pytest.approx(reference[measure]), name


def test_report_says_how_many_queries_had_no_relevant_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("rank_bm25")
    entries = [e for e in load_heritage_gold("sample:heritage").entries if e.qa_pairs][:6]
    ids = [e.id for e in entries]
    records = [e.model_dump(mode="json") for e in entries]
    records[0]["qa_pairs"][0]["relevance"] = dict.fromkeys(ids, 0)
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    run = jurist.judge(
        "heritage", gold, out=tmp_path / "run", options={"tasks": ["retrieval"]}, progress=False
    )
    counted = run.scores.summary["retrieval"]
    assert counted["queries_without_relevant"] == 1 and counted["empty_queries"] == "zero"
    assert counted["queries"] == sum(len(e.qa_pairs) for e in entries)
    assert "1 without a relevant document, counted as 0 on P, R and MRR" in run.scores.report
    dropped = jurist.score("heritage", tmp_path / "run", options={"empty_queries": "drop"}).summary[
        "retrieval"
    ]
    assert dropped["queries"] == counted["queries"] - 1 and dropped["queries_without_relevant"] == 1
    assert dropped["mrr"] > counted["mrr"]
    assert run_cli(["score", "heritage", str(tmp_path / "run"), "--empty-queries", "drop", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)["retrieval"]
    assert printed["queries"] == dropped["queries"] and printed["empty_queries"] == "drop"
