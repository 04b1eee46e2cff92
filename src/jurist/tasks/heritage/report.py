"""The Markdown report of a heritage run: the target table, then every metric by task."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.atomic import atomic_write_text
from jurist.report.markdown import fmt, table

__all__ = ["render_comparison", "render_report", "write_report"]


def _targets(summary: Mapping[str, Any]) -> list[str]:
    rows = [
        (
            r["task"],
            r["metric"],
            fmt(r["value"]),
            f"≥{r['target']:.2f}",
            f"{r['state_of_art']:.2f}",
            r["status"],
        )
        for r in summary.get("targets", [])
    ]
    passed = sum(r["status"] == "pass" for r in summary.get("targets", []))
    measured = sum(r["status"] != "not measured" for r in summary.get("targets", []))
    return [
        "## Targets",
        "",
        table(["task", "metric", "value", "target", "state of the art", "status"], rows),
        "",
        f"{passed} of {measured} measured targets met.",
        "",
    ]


def _ner(ner: Mapping[str, Any]) -> list[str]:
    token = ner["token"]
    types = [name for name in token if name not in ("macro_avg", "micro_avg")]
    rows = []
    for name in types:
        strict = ner["strict"]["per_type"].get(name, {})
        partial = ner["partial"]["per_type"].get(name, {})
        rows.append(
            (
                name,
                strict.get("support", 0),
                fmt(strict.get("precision")),
                fmt(strict.get("recall")),
                fmt(strict.get("f1")),
                fmt(partial.get("f1")),
                fmt(token[name]["f1"]),
            )
        )
    dist = ner["type_distribution"]
    lines = [
        "## Entity extraction",
        "",
        f"{ner['texts']} texts. Entity level, strict: P {fmt(ner['strict']['precision'])}, "
        f"R {fmt(ner['strict']['recall'])}, F1 {fmt(ner['strict']['f1'])}; partial: "
        f"P {fmt(ner['partial']['precision'])}, R {fmt(ner['partial']['recall'])}, "
        f"F1 {fmt(ner['partial']['f1'])}. "
        f"Token level: macro F1 {fmt(token['macro_avg']['f1'])}, micro F1 {fmt(token['micro_avg']['f1'])}. "
        f"Re-anchored spans: {ner['reanchored_entities']}; flagged spans: {ner['flagged_entities']}.",
        "",
        table(["type", "gold", "strict P", "strict R", "strict F1", "partial F1", "token F1"], rows),
        "",
        table(
            ["type", "predicted", "gold", "over-prediction", "ratio"],
            [(t, d["predicted"], d["gold"], d["over_prediction"], fmt(d["ratio"])) for t, d in dist.items()],
        ),
        "",
    ]
    if "tags" in ner:
        tags = ner["tags"]
        scheme = f", scheme {tags['scheme']}" if tags.get("scheme") else ""
        lines[2] += f" Gold read from a token-tag file, {tags['mode']} decoding{scheme}."
    if "nervaluate" in ner:
        nv = ner["nervaluate"]
        lines += [
            "nervaluate's schemes (greedy matching in list order; its `partial` ignores the type and "
            "counts an inexact overlap as half, unlike the framework's partial above):",
            "",
            table(
                ["scheme", "COR", "INC", "PAR", "MIS", "SPU", "P", "R", "F1"],
                [
                    (
                        name,
                        nv[name]["correct"],
                        nv[name]["incorrect"],
                        nv[name]["partial"],
                        nv[name]["missed"],
                        nv[name]["spurious"],
                        fmt(nv[name]["precision"]),
                        fmt(nv[name]["recall"]),
                        fmt(nv[name]["f1"]),
                    )
                    for name in ("strict", "exact", "partial", "ent_type")
                    if name in nv
                ],
            ),
            "",
        ]
    return lines


def _classification(c: Mapping[str, Any]) -> list[str]:
    rows = [
        (label, m["support"], fmt(m["precision"]), fmt(m["recall"]), fmt(m["f1"]))
        for label, m in c["per_class"].items()
    ]
    confusions = [
        (x["true_type"], x["predicted_type"], x["count"]) for x in c["confusions"]["top_confusions"]
    ]
    h, s = c["hierarchy"], c["secondary_types"]
    labels = c["labels"]
    matrix = [(label, *counts) for label, counts in zip(labels, c["confusion_matrix"], strict=True)]
    return [
        "## Custodian type classification",
        "",
        f"{c['n']} texts. Accuracy {fmt(c['accuracy'])}, macro F1 {fmt(c['macro_f1'])}, weighted F1 "
        f"{fmt(c['weighted_f1'])}; category accuracy {fmt(h['category_accuracy'])} (gap "
        f"{fmt(h['hierarchy_gap'])}). Secondary types: P {fmt(s['precision'])}, R {fmt(s['recall'])}, "
        f"F1 {fmt(s['f1'])}, exact sets {fmt(s['exact_set_rate'])}.",
        "",
        table(["type", "support", "precision", "recall", "F1"], rows),
        "",
        "Confusion matrix (rows: gold, columns: predicted):",
        "",
        table(["gold \\ pred", *labels], matrix),
        "",
        "Top confusions:",
        "",
        table(["gold", "predicted", "count"], confusions) if confusions else "none",
        "",
    ]


def _linking(link: Mapping[str, Any]) -> list[str]:
    hits = ", ".join(f"{k} {fmt(v)}" for k, v in link.items() if k.startswith("hits@"))
    nil = link["nil"]
    return [
        "## Entity linking",
        "",
        f"{link['mentions']} gold mentions ({link['nil_gold']} NIL, {link['evaluated']} linkable). "
        f"{hits}; MRR {fmt(link['mrr'])}. NIL detection: P {fmt(nil['nil_precision'])}, "
        f"R {fmt(nil['nil_recall'])}, F1 {fmt(nil['nil_f1'])} (TP {nil['true_positives']}, "
        f"FP {nil['false_positives']}, FN {nil['false_negatives']}, TN {nil['true_negatives']}). "
        f"Mentions without a prediction: {link['missing_predictions']}.",
        "",
    ]


def _retrieval(r: Mapping[str, Any]) -> list[str]:
    ks = sorted({int(k.split("@")[1]) for k in r if k.startswith("ndcg@")})
    rows = [(k, fmt(r[f"ndcg@{k}"]), fmt(r[f"precision@{k}"]), fmt(r[f"recall@{k}"])) for k in ks]
    sources = r["sources"]["source_distribution"]
    empty = r.get("queries_without_relevant", 0)
    if r.get("empty_queries", "drop") == "drop":
        handled = f"{empty} without a relevant document, left out of every mean"
    else:
        handled = (
            f"{empty} without a relevant document, counted as 0 on P, R and MRR (ir-measures' convention)"
        )
    return [
        "## Retrieval",
        "",
        f"{r['queries']} queries averaged ({handled}). "
        f"MRR {fmt(r['mrr'])}. Sources in the top 10: "
        + (", ".join(f"{s} {n}" for s, n in sources.items()) or "none")
        + ".",
        "",
        table(["K", "NDCG@K", "P@K", "R@K"], rows),
        "",
    ]


def _qa(q: Mapping[str, Any]) -> list[str]:
    relevance = (
        fmt(q["relevance"]) if q["relevance"] is not None else "not measured (needs a similarity function)"
    )
    return [
        "## Question answering",
        "",
        f"{q['answers']} answers. ROUGE-1 {fmt(q['rouge1'])}, ROUGE-2 {fmt(q['rouge2'])}, ROUGE-L "
        f"{fmt(q['rougeL'])}; faithfulness {fmt(q['faithfulness'])} "
        f"(strict: {fmt(q['faithfulness_strict'])}); "
        f"factual accuracy of supporting facts {fmt(q['factual_accuracy'])}; relevance {relevance}; "
        f"ungrounded quotes {q['ungrounded_facts']}.",
        "",
    ]


def render_report(summary: Mapping[str, Any], failed: pd.DataFrame | None = None) -> str:
    """The run's Markdown report: counts, target table, then each task's metrics."""
    run = summary.get("run") or {}
    lines = [
        "# Heritage evaluation",
        "",
        f"Judge: {run.get('judge', 'n/a')} ({run.get('model', 'n/a')}). "
        f"Gold: {summary['gold']['entries']} texts. "
        f"Items: {summary['items']} ({summary['ok']} scored, {summary['failed']} failed, "
        f"{summary['missing']} gold texts not judged).",
        "",
    ]
    lines += _targets(summary)
    if "ner" in summary:
        lines += _ner(summary["ner"])
    if "classification" in summary:
        lines += _classification(summary["classification"])
    if "linking" in summary:
        lines += _linking(summary["linking"])
    if "retrieval" in summary:
        lines += _retrieval(summary["retrieval"])
    if "qa" in summary:
        lines += _qa(summary["qa"])
    if failed is not None and len(failed):
        lines += [
            "## Failed items (not scored)",
            "",
            table(
                ["id", "error type", "error"],
                [(r["id"], r["error_type"], r["error"]) for _, r in failed.head(50).iterrows()],
            ),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def render_comparison(records: Sequence[Mapping[str, Any]], run_a: str, run_b: str) -> str:
    """The Markdown section of a comparison of two runs (the records of ``compare_heritage``)."""
    rows = [
        (
            r["metric"],
            r["n"],
            f"{r['mean_a']:.3f}",
            f"{r['mean_b']:.3f}",
            f"{r['mean_difference']:+.3f}",
            "n/a" if r["t_p_value"] is None else f"{r['t_p_value']:.4f}",
            "n/a" if r["wilcoxon_p_value"] is None else f"{r['wilcoxon_p_value']:.4f}",
            f"[{r['ci_lower']:+.3f}, {r['ci_upper']:+.3f}]",
        )
        for r in records
    ]
    header = ["metric", "n", "mean A", "mean B", "A − B", "t-test p", "Wilcoxon p", "bootstrap 95% CI"]
    return f"## Comparison with {run_b} (A = {run_a}, B = {run_b})\n\n" + table(header, rows) + "\n"


def write_report(path: Path, summary: Mapping[str, Any], failed: pd.DataFrame | None = None) -> None:
    """Write :func:`render_report` to ``path``."""
    atomic_write_text(path, render_report(summary, failed))
