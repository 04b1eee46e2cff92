"""The RGB suite's report: tables shaped like the paper's, the runs, and a chart.

The paper (Chen et al., arXiv 2309.01431) reports, per model and language:

1. noise robustness: accuracy at noise rates 0, 0.2, 0.4, 0.6, 0.8;
2. negative rejection: Rej (RGB's keyword check at noise rate 1) and Rej* (judged by an LM);
3. information integration: accuracy at noise rates 0, 0.2, 0.4;
4. counterfactual robustness: Acc (no passages), Acc_doc (counterfactual passages), ED and
   ED* (error detection by keywords / by an LM) and CR (correction among detections).

Figures are percentages, as in the paper.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurist.atomic import atomic_write, atomic_write_text
from jurist.report.markdown import fmt, table

_LANGUAGES = ("en", "zh")


def _key(rate: float) -> str:
    return format(float(rate), "g")


def rgb_tables(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The paper's four tables from run scores (``scores.json`` of each run), by language.

    - ``noise_robustness[lang][rate]``: accuracy (all_rate) at each noise rate;
    - ``negative_rejection[lang]``: ``rej`` (all_rate at noise rate 1), ``rej_star`` (the
      judge's rejection rate) and ``judge``;
    - ``integration[lang][rate]``: accuracy on ``{lang}_int``;
    - ``counterfactual[lang]``: ``acc`` (closed book), ``acc_doc``, ``ed``, ``ed_star``,
      ``cr``, ``cr_star`` and ``judge``.
    """
    tables: dict[str, Any] = {
        "noise_robustness": {},
        "negative_rejection": {},
        "integration": {},
        "counterfactual": {},
    }
    for scores in runs:
        setting = scores["setting"]
        language, set_name = setting["language"], setting["set"]
        judge = scores.get("judge") or {}
        if set_name in ("noise", "integration"):
            name = "noise_robustness" if set_name == "noise" else "integration"
            tables[name].setdefault(language, {})[_key(setting["noise_rate"])] = scores["all_rate"]
        elif set_name == "rejection":
            tables["negative_rejection"][language] = {
                "rej": scores["all_rate"],
                "rej_star": judge.get("rate"),
                "judge": judge.get("judge"),
            }
        elif set_name == "counterfactual":
            tables["counterfactual"].setdefault(language, {}).update(
                acc_doc=scores["all_rate"],
                ed=scores.get("fact_check_rate"),
                ed_star=judge.get("rate"),
                cr=scores.get("correct_rate"),
                cr_star=judge.get("correct_rate"),
                judge=judge.get("judge"),
            )
        elif set_name == "closed_book":
            tables["counterfactual"].setdefault(language, {})["acc"] = scores["all_rate"]
    return tables


def pct(value: float | None) -> str:
    """A rate as a percentage with two decimals (``0.5`` -> ``50.00``), ``n/a`` when missing."""
    return "n/a" if value is None else f"{100 * value:.2f}"


def _languages(section: dict[str, Any]) -> list[str]:
    return [language for language in _LANGUAGES if language in section] + sorted(
        language for language in section if language not in _LANGUAGES
    )


def _rates(section: dict[str, Any]) -> list[str]:
    found = {rate for values in section.values() for rate in values}
    return sorted(found, key=float)


def _rate_table(model: str, section: dict[str, Any]) -> str:
    languages, rates = _languages(section), _rates(section)
    headers = ["model"] + [f"{language} {rate}" for language in languages for rate in rates]
    row = [model] + [pct(section[language].get(rate)) for language in languages for rate in rates]
    return table(headers, [row])


def _judge_note(judges: set[str | None], star: str) -> str:
    named = sorted(judge for judge in judges if judge)
    if not named:
        return ""
    if all(name.endswith("-keywords") for name in named):
        return (
            f"{star} here comes from jurist's tiered keyword judge ({', '.join(named)}), not from an LM "
            f"as in the paper; give a judge model for an LM-judged {star}."
        )
    return f"{star} judged by `{'`, `'.join(named)}`."


def render_rgb_report(summary: dict[str, Any], *, tables_key: str = "tables") -> str:
    """Render a suite's summary (as in ``summary.json``) as Markdown."""
    model = str(summary.get("model"))
    settings = summary.get("settings", {})
    tables = summary.get(tables_key, {})
    parts = [
        "# RGB robustness suite",
        "",
        f"- model under test: `{model}` (responder `{summary.get('responder')}`)",
        f"- Rej*/ED* judge: `{summary.get('judge_model') or 'tiered keywords (offline)'}`",
        f"- data: `{summary.get('data_dir')}` — "
        + (", ".join(sorted(summary.get("files", {}))) or "no RGB files"),
        f"- passages per question: {settings.get('passage_num')}, seed {settings.get('seed')}, "
        f"temperature {settings.get('temperature')}, answer check: {settings.get('answer_check')}"
        + (f", first {settings['limit']} rows per file" if settings.get("limit") else ""),
        f"- items: {summary.get('items', 0)} answered or attempted, {summary.get('failed', 0)} failed "
        "(failed items are counted here and never scored)",
        "",
        "Figures are percentages over the scored items of each run.",
        "",
    ]
    noise = tables.get("noise_robustness") or {}
    if noise:
        parts += ["## Noise robustness (accuracy by noise rate)", "", _rate_table(model, noise), ""]
    rejection = tables.get("negative_rejection") or {}
    if rejection:
        languages = _languages(rejection)
        headers = ["model"] + [f"{language} {name}" for language in languages for name in ("Rej", "Rej*")]
        row = [model] + [
            pct(rejection[language].get(name)) for language in languages for name in ("rej", "rej_star")
        ]
        parts += ["## Negative rejection (noise rate 1)", "", table(headers, [row]), ""]
        note = _judge_note({entry.get("judge") for entry in rejection.values()}, "Rej*")
        parts += [note, ""] if note else []
    integration = tables.get("integration") or {}
    if integration:
        parts += [
            "## Information integration (accuracy by noise rate)",
            "",
            _rate_table(model, integration),
            "",
        ]
    counterfactual = tables.get("counterfactual") or {}
    if counterfactual:
        languages = _languages(counterfactual)
        columns = (("Acc", "acc"), ("Acc_doc", "acc_doc"), ("ED", "ed"), ("ED*", "ed_star"), ("CR", "cr"))
        headers = ["model"] + [f"{language} {label}" for language in languages for label, _ in columns]
        row = [model] + [
            pct(counterfactual[language].get(key)) for language in languages for _, key in columns
        ]
        parts += ["## Counterfactual robustness", "", table(headers, [row]), ""]
        parts += [
            "Acc: no passages (the model's own knowledge); Acc_doc: with counterfactual passages; "
            "ED / ED*: error detection by RGB's keywords / by the judge; CR: correct answers among "
            "keyword detections (RGB's CR; a detection that rejects is never a correction).",
            "",
        ]
        note = _judge_note({entry.get("judge") for entry in counterfactual.values()}, "ED*")
        parts += [note, ""] if note else []
    if tables_key == "tables" and summary.get("tables_improved"):
        parts += [
            "## Improved answer check (jurist's, not RGB's)",
            "",
            "The same answers labelled with jurist's normalised, token-overlap check and tiered keywords "
            "(see docs/rgb.md). RGB's figures above are unchanged.",
            "",
        ]
        improved = summary["tables_improved"]
        for key, title in (
            ("noise_robustness", "Noise robustness"),
            ("integration", "Information integration"),
        ):
            if improved.get(key):
                parts += [f"{title}:", "", _rate_table(model, improved[key]), ""]
        if improved.get("negative_rejection"):
            section = improved["negative_rejection"]
            languages = _languages(section)
            parts += [
                "Negative rejection:",
                "",
                table(
                    ["model"] + [f"{lang} Rej" for lang in languages],
                    [[model] + [pct(section[lang]["rej"]) for lang in languages]],
                ),
                "",
            ]
        if improved.get("counterfactual"):
            section = improved["counterfactual"]
            languages = _languages(section)
            headers = ["model"] + [
                f"{lang} {label}" for lang in languages for label in ("Acc", "Acc_doc", "ED", "CR")
            ]
            row = [model] + [
                pct(section[lang].get(key)) for lang in languages for key in ("acc", "acc_doc", "ed", "cr")
            ]
            parts += ["Counterfactual robustness:", "", table(headers, [row]), ""]
    runs = summary.get("runs") or []
    if runs:
        rows = []
        for scores in runs:
            setting = scores["setting"]
            judge = scores.get("judge") or {}
            rows.append(
                [
                    f"{setting['dataset']} noise {setting['noise_rate']} passages {setting['passage_num']}",
                    setting["set"],
                    scores["items"],
                    scores["ok"],
                    scores["failed"],
                    f"{scores['tt']}/{scores['nums']}",
                    pct(scores.get("all_rate")),
                    pct(scores.get("rejection_share")),
                    pct(scores.get("fact_check_rate")) if "fact_check_rate" in scores else "",
                    f"{pct(judge.get('rate'))} ({judge.get('nums')})" if judge else "",
                ]
            )
        headers = [
            "run",
            "set",
            "items",
            "scored",
            "failed",
            "tt/nums",
            "all_rate",
            "[-1] share",
            "ED",
            "judge rate (n)",
        ]
        parts += ["## Runs", "", table(headers, rows), ""]
    skipped = summary.get("skipped") or []
    if skipped:
        rows = [[entry["set"], entry["language"], entry["reason"]] for entry in skipped]
        parts += ["## Skipped", "", table(["set", "language", "why"], rows), ""]
    notes = [note for note in summary.get("notes") or [] if not note.startswith("skipped ")]
    if notes:
        parts += ["## Notes", ""] + [f"- {note}" for note in notes] + [""]
    if summary.get("chart"):
        parts += [f"![accuracy against noise rate]({Path(summary['chart']).name})", ""]
    usage = summary.get("usage") or {}
    if usage.get("calls") or usage.get("cache_hits"):
        tokens = f"{usage.get('prompt_tokens', 0)} prompt and {usage.get('completion_tokens', 0)} completion"
        cost = f", cost {fmt(usage['cost'], 4)}" if usage.get("cost") is not None else ""
        parts += [
            f"Usage: {usage.get('calls', 0)} provider calls, {usage.get('cache_hits', 0)} cache hits, "
            f"{tokens} tokens{cost}.",
            "",
        ]
    parts += [
        "RGB: Chen, Lin, Han and Sun, *Benchmarking Large Language Models in Retrieval-Augmented "
        "Generation*, arXiv:2309.01431; data CC BY-NC-SA 4.0.",
        "",
    ]
    return "\n".join(parts)


def write_rgb_report(path: str | Path, summary: dict[str, Any]) -> Path:
    """Write :func:`render_rgb_report` to ``path``."""
    target = Path(path)
    atomic_write_text(target, render_rgb_report(summary))
    return target


def write_accuracy_chart(path: str | Path, summary: dict[str, Any]) -> Path:
    """A PNG of accuracy (%) against noise rate: noise robustness per language (solid lines)
    and information integration (dashed), drawn with matplotlib's Agg backend (no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = summary.get("tables", {})
    figure, axes = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    ticks: set[float] = set()
    try:
        for key, style, label in (
            ("noise_robustness", "-o", "noise robustness"),
            ("integration", "--s", "information integration"),
        ):
            section = tables.get(key) or {}
            for language in _languages(section):
                points = sorted(
                    (float(rate), value) for rate, value in section[language].items() if value is not None
                )
                if points:
                    ticks.update(rate for rate, _ in points)
                    axes.plot(
                        [rate for rate, _ in points],
                        [100 * value for _, value in points],
                        style,
                        label=f"{language} {label}",
                    )
        axes.set_xlabel("noise rate")
        axes.set_ylabel("accuracy (%)")
        axes.set_ylim(-2, 102)
        if ticks:
            axes.set_xticks(sorted(ticks))
            axes.set_xlim(min(ticks) - 0.05, max(ticks) + 0.05)
        axes.grid(True, alpha=0.3)
        axes.set_title(f"RGB: accuracy against noise rate ({summary.get('model')})")
        if axes.get_legend_handles_labels()[0]:
            axes.legend(loc="best")
        figure.tight_layout()
        target = Path(path)
        atomic_write(target, figure.savefig)
    finally:
        plt.close(figure)
    return target


def render_rgb_scores(scores: Sequence[dict[str, Any]]) -> str:
    """The figures of ``jurist score rgb`` (one row per prediction file) as Markdown.

    A table of RGB's ``evalue.py`` figures; for files judged by RGB's ChatGPT scripts a
    second table with the figures those scripts write (Rej*, or ED* and CR); then the
    warnings (e.g. repeated ids counted once).
    """
    headers = [
        "file",
        "noise_rate",
        "nums",
        "tt",
        "all_rate",
        "fact_check_rate",
        "correct_rate",
        "language",
        "labels",
    ]
    rows = [
        [
            Path(entry["file"]).name,
            format(entry["noise_rate"], "g"),
            entry["nums"],
            entry["tt"],
            fmt(entry["all_rate"], 4),
            fmt(entry.get("fact_check_rate"), 4) if "fact_check_rate" in entry else "",
            fmt(entry.get("correct_rate"), 4) if "correct_rate" in entry else "",
            f"{entry['language']} ({entry.get('language_source', '')})" if "language" in entry else "",
            entry.get("labels", "stored"),
        ]
        for entry in scores
    ]
    parts = ["# RGB scores", "", table(headers, rows), ""]
    if any("detected_rejections" in entry and entry["detected_rejections"] for entry in scores):
        parts += [
            "CR counts a detection as corrected only when it gives the correct answer; detections "
            "that reject are not corrections ("
            + ", ".join(
                f"{Path(entry['file']).name}: {entry['detected_rejections']}"
                for entry in scores
                if entry.get("detected_rejections")
            )
            + ").",
            "",
        ]
    judged = [entry for entry in scores if entry.get("chatgpt")]
    if judged:
        judged_rows = []
        for entry in judged:
            chatgpt = entry["chatgpt"]
            star = "Rej*" if entry["judgment"] == "rejection" else "ED*"
            judged_rows.append(
                [
                    Path(entry["file"]).name,
                    entry["judgment"],
                    f"{star} {fmt(chatgpt['reject_rate'], 4)}",
                    f"{chatgpt['rejecttt']}/{chatgpt['nums']}",
                    fmt(chatgpt.get("correct_rate"), 4) if "correct_rate" in chatgpt else "",
                    chatgpt.get("correct_tt", ""),
                    fmt(chatgpt["all_rate"], 4),
                    chatgpt["tt"],
                ]
            )
        parts += [
            "## Judged by ChatGPT (RGB's reject_evalue.py / fact_evalue.py)",
            "",
            table(
                [
                    "file",
                    "judgment",
                    "reject_rate",
                    "rejecttt/nums",
                    "correct_rate (CR)",
                    "correct_tt",
                    "all_rate",
                    "tt",
                ],
                judged_rows,
            ),
            "",
        ]
    warnings = [warning for entry in scores for warning in entry.get("warnings") or []]
    if warnings:
        parts += ["## Warnings", ""] + [f"- {warning}" for warning in warnings] + [""]
    return "\n".join(parts)
