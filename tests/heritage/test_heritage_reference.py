"""The heritage metrics agree with reference implementations on randomized inputs.

seqeval (strict entity level), nervaluate (entity type with overlap), scikit-learn
(classification), ir-measures over trec_eval (NDCG with graded gains, RR, P@K, R@K) and
SciPy (paired t-test, Wilcoxon). All are test-only dependencies.
"""

from __future__ import annotations

import random

import pytest

from jurist.metrics.heritage.classification import type_classification_metrics
from jurist.metrics.heritage.ner import corpus_entity_level_metrics
from jurist.metrics.heritage.retrieval import ndcg_at_k, retrieval_metrics
from jurist.metrics.significance import paired_t_test, wilcoxon_signed_rank

TYPES = ["GRP.HER.MUS", "GRP.HER.ARC", "TOP", "TMP"]


def _random_spans(rng: random.Random, n_tokens: int) -> list[tuple[int, int, str]]:
    spans, position = [], 0
    while position < n_tokens:
        position += rng.randint(0, 3)
        length = rng.randint(1, 3)
        if position + length > n_tokens or rng.random() < 0.3:
            position += 1
            continue
        spans.append((position, position + length, rng.choice(TYPES)))
        position += length
    return spans


def _iob2(spans: list[tuple[int, int, str]], n_tokens: int) -> list[str]:
    tags = ["O"] * n_tokens
    for start, end, label in spans:
        tags[start] = f"B-{label}"
        for i in range(start + 1, end):
            tags[i] = f"I-{label}"
    return tags


def test_strict_entity_scores_match_seqeval() -> None:
    seqeval_metrics = pytest.importorskip("seqeval.metrics")
    from seqeval.scheme import IOB2

    rng = random.Random(11)
    for _ in range(30):
        docs, true_tags, pred_tags = [], [], []
        for _ in range(rng.randint(1, 6)):
            n = rng.randint(3, 25)
            gold = _random_spans(rng, n)
            pred = [s for s in gold if rng.random() < 0.6] + _random_spans(rng, n)
            pred = [s for i, s in enumerate(pred) if all(s[1] <= t[0] or s[0] >= t[1] for t in pred[:i])]
            docs.append(("", gold, pred))
            true_tags.append(_iob2(gold, n))
            pred_tags.append(_iob2(pred, n))
        ours = corpus_entity_level_metrics(docs, "strict")
        if ours["true_positives"] + ours["false_negatives"] == 0:
            continue
        report = seqeval_metrics.classification_report(
            true_tags, pred_tags, mode="strict", scheme=IOB2, output_dict=True, zero_division=0
        )
        assert ours["precision"] == pytest.approx(report["micro avg"]["precision"])
        assert ours["recall"] == pytest.approx(report["micro avg"]["recall"])
        assert ours["f1"] == pytest.approx(report["micro avg"]["f1-score"])
        for label, scores in report.items():
            if label in TYPES:
                assert ours["per_type"][label]["f1"] == pytest.approx(scores["f1-score"])
                assert ours["per_type"][label]["support"] == scores["support"]


def test_partial_entity_scores_match_nervaluate_ent_type() -> None:
    nervaluate = pytest.importorskip("nervaluate")
    rng = random.Random(5)
    for _ in range(40):
        docs, true, pred_all = [], [], []
        for _ in range(rng.randint(1, 5)):
            gold, preds, position = [], [], 0
            for _ in range(rng.randint(0, 6)):
                position += rng.randint(3, 6)  # gaps of 3+ keep perturbed spans apart
                length = rng.randint(1, 4)
                gold.append((position, position + length, rng.choice(TYPES)))
                position += length
            for start, end, label in gold:
                roll = rng.random()
                if roll < 0.2:
                    continue  # missed
                new_start = start + rng.choice([-1, 0, 0, 1]) if end - start > 1 else start
                new_end = end + rng.choice([-1, 0, 0, 1]) if end - start > 1 else end
                new_label = rng.choice(TYPES) if roll > 0.8 else label
                preds.append((max(0, new_start), max(new_start + 1, new_end), new_label))
            if rng.random() < 0.5:
                preds.append((position + 2, position + 4, rng.choice(TYPES)))  # spurious, after all gold
            docs.append(("", gold, preds))
            true.append([{"label": lab, "start": s, "end": e - 1} for s, e, lab in gold])
            pred_all.append([{"label": lab, "start": s, "end": e - 1} for s, e, lab in preds])
        ours = corpus_entity_level_metrics(docs, "partial")
        result = nervaluate.Evaluator(true, pred_all, tags=TYPES, loader="dict").evaluate()
        reference = result["overall"]["ent_type"]
        assert ours["true_positives"] == reference.correct
        assert ours["precision"] == pytest.approx(reference.precision)
        assert ours["recall"] == pytest.approx(reference.recall)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_classification_matches_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(3)
    for _ in range(50):
        letters = rng.sample("GLAMORCUBESFIXPHDNT", rng.randint(2, 8))
        n = rng.randint(1, 60)
        y_true = [rng.choice(letters) for _ in range(n)]
        y_pred = [rng.choice(letters) if rng.random() < 0.5 else t for t in y_true]
        ours = type_classification_metrics(y_true, y_pred)
        labels = ours["labels"]
        assert ours["accuracy"] == pytest.approx(metrics.accuracy_score(y_true, y_pred))
        assert ours["macro_f1"] == pytest.approx(
            metrics.f1_score(y_true, y_pred, average="macro", zero_division=0)
        )
        assert ours["macro_precision"] == pytest.approx(
            metrics.precision_score(y_true, y_pred, average="macro", zero_division=0)
        )
        assert ours["weighted_f1"] == pytest.approx(
            metrics.f1_score(y_true, y_pred, average="weighted", zero_division=0)
        )
        p, r, f, s = metrics.precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
        for i, label in enumerate(labels):
            assert ours["per_class"][label]["precision"] == pytest.approx(p[i])
            assert ours["per_class"][label]["recall"] == pytest.approx(r[i])
            assert ours["per_class"][label]["f1"] == pytest.approx(f[i])
            assert ours["per_class"][label]["support"] == s[i]
        assert ours["confusion_matrix"] == metrics.confusion_matrix(y_true, y_pred, labels=labels).tolist()
        fixed = list("GLAMORCUBESFIXPHDNT")
        assert type_classification_metrics(y_true, y_pred, labels=fixed)["macro_f1"] == pytest.approx(
            metrics.f1_score(y_true, y_pred, labels=fixed, average="macro", zero_division=0)
        )


def test_retrieval_matches_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, P, Qrel, R, ScoredDoc, nDCG

    rng = random.Random(8)
    gains = {0: 0, 1: 1, 2: 3, 3: 7}  # 2^grade - 1, the framework's gain
    measures = [nDCG(gains=gains) @ 5, nDCG(gains=gains) @ 10, RR, P @ 5, P @ 10, R @ 5, R @ 10]
    qrels, run, queries = [], [], []
    for q in range(40):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(30)]
        judged = {d: rng.choice([0, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 15))}
        if not any(judged.values()):
            judged[docs[0]] = 1
        ranking = rng.sample(docs, rng.randint(1, 25))
        qrels += [Qrel(qid, d, g) for d, g in judged.items()]
        run += [ScoredDoc(qid, d, float(100 - i)) for i, d in enumerate(ranking)]
        queries.append({"id": qid, "results": ranking, "qrels": judged})
    reference: dict[tuple[str, str], float] = {}
    for metric in ir_measures.iter_calc(measures, qrels, run):
        reference[(metric.query_id, str(metric.measure))] = metric.value
    for query in queries:
        qid = query["id"]
        for k in (5, 10):
            assert ndcg_at_k(query["results"], query["qrels"], k) == pytest.approx(
                reference[(qid, str(nDCG(gains=gains) @ k))]
            )
            single = retrieval_metrics([query], (k,))
            assert single[f"precision@{k}"] == pytest.approx(reference[(qid, str(P @ k))])
            assert single[f"recall@{k}"] == pytest.approx(reference[(qid, str(R @ k))])
        assert retrieval_metrics([query], (5,))["mrr"] == pytest.approx(reference[(qid, str(RR))])
    aggregate = ir_measures.calc_aggregate([nDCG(gains=gains) @ 10, RR], qrels, run)
    ours = retrieval_metrics(queries, (10,))
    assert ours["ndcg@10"] == pytest.approx(aggregate[nDCG(gains=gains) @ 10])
    assert ours["mrr"] == pytest.approx(aggregate[RR])


def test_significance_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(2)
    for trial in range(120):
        n = rng.randint(3, 70)
        a = [rng.gauss(0, 1) for _ in range(n)]
        b = [x + rng.gauss(0.2, 1) for x in a]
        if trial % 3 == 1:  # ties
            a, b = [round(x) for x in a], [round(x) for x in b]
        if trial % 3 == 2:  # many zeros and ties, like per-text 0/1 scores
            a = [float(rng.randint(0, 2)) for _ in range(n)]
            b = [float(rng.randint(0, 2)) for _ in range(n)]
        t = paired_t_test(a, b)
        if t["statistic"] is not None:
            reference = stats.ttest_rel(a, b)
            assert t["statistic"] == pytest.approx(reference.statistic)
            assert t["p_value"] == pytest.approx(reference.pvalue, abs=1e-10)
        if any(x != y for x, y in zip(a, b, strict=True)):
            w = wilcoxon_signed_rank(a, b)
            reference = stats.wilcoxon(a, b)
            assert w["statistic"] == pytest.approx(reference.statistic)
            assert w["p_value"] == pytest.approx(reference.pvalue, abs=1e-10)
