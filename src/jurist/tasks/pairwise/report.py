"""Outputs of the pairwise (SubEval) task: record tables, SubEval's log and win tables, Markdown.

:func:`pairwise_files` gives, and a scored run directory holds:

- ``log.txt``: SubEval's log, line for line (length table, comparisons, failures,
  extraction, consistency, both win tables against the reference model);
- ``length_stats.csv``, ``win+bothgood.xlsx``/``.csv``, ``win+halfdraw.xlsx``/``.csv``:
  SubEval's tables (the XLSX files need openpyxl, the ``xlsx`` extra);
- ``win_rate_with_tie.csv``, ``win_rate_without_tie.csv``: SubEval's new-version tables
  (columns ``Metric;Model`` and ``WinRateWithTie``/``WinRateWithoutTie``; rows sorted by
  metric, model, opponent, where SubEval's order follows a Python set; 0.0 for a zero
  denominator, as SubEval writes it);
- ``win_rates.csv``, ``win_rates_with_ties.csv``: all win rates with bootstrap intervals;
- ``comparisons.csv``: one row per comparison with both orders' choices;
- ``consistent_cmp.tsv``/``inconsistent_cmp.tsv`` when some judgements are inconsistent,
  with SubEval's columns (its record columns, the judge's column, ``extracted``) in file order;
- ``summary.md``: the same numbers as the log, plus intervals, consistency per
  comparison, position preference and length bias; the choice rule used, every choice
  SubEval's rule read from a letter that begins a longer word, and, when the two rules read
  some answer differently, the strict reading's figures beside SubEval's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.datasets.pairwise.tables import COMPARISON_COLUMNS
from jurist.metrics.pairwise.choice_readings import RULE_NAMES, ChoiceReadings
from jurist.metrics.pairwise.subeval import ConsistencyStats, JudgementCounts, LengthBias, consistent_rows
from jurist.report.markdown import fmt, table

__all__ = [
    "OtherReading",
    "PairsAgreement",
    "PairwiseScores",
    "pairs_agreement_markdown",
    "pairwise_markdown",
    "pretty_table",
    "subeval_log",
    "subeval_win_table",
    "pairs_agreement_files",
    "pairwise_files",
    "record_files",
    "record_stem",
    "write_pairwise_scores",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
_SUBEVAL_COLUMNS = COMPARISON_COLUMNS
_RATE_FILES = {"win_both_good_rate": "win+bothgood", "win_half_tie_rate": "win+halfdraw"}


@dataclass
class OtherReading:
    """The headline figures of the same records read by the rule the scores do not use.

    Attributes:
        rule: That rule (``strict`` when the scores use SubEval's rule).
        counts: Extraction under it.
        consistency: Consistency under it.
        win_rates: Old-version win rates under it.
        win_rates_with_ties: New-version win rates under it.
    """

    rule: str
    counts: JudgementCounts
    consistency: ConsistencyStats
    win_rates: pd.DataFrame
    win_rates_with_ties: pd.DataFrame


@dataclass
class PairwiseScores:
    """Everything ``jurist score pairwise`` computes from judged records.

    Attributes:
        judge: The judge's name.
        num_options: Number of options the judge chose from.
        reference_model: The model every other model was compared with (``None``: all pairs).
        reference_inferred: Whether ``reference_model`` was inferred from the records.
        source: Where the records came from.
        records: The judged records, with ``choice`` and ``status``.
        pairs: One row per comparison with both orders' choices
            (:func:`~jurist.metrics.pairwise.subeval.pair_table`).
        counts: Comparisons, failures, exact matches, extraction.
        consistency: Consistency and position preference.
        length_stats: Mean and std of response lengths per model.
        length_unit: What a length counts (``"cl100k_base tokens"`` or ``"words"``).
        length_bias: How often the longer response wins.
        win_rates: Old-version win rates over consistent judgements (long format).
        win_rates_with_ties: New-version win rates, inconsistent = tie (long format).
        readings: The choice rule used, SubEval's-rule letters that begin a longer word,
            and the records the two rules read differently.
        other_reading: The figures by the other rule, when the two rules read some record
            differently (``None`` otherwise).
    """

    judge: str
    num_options: int
    reference_model: str | None
    reference_inferred: bool
    source: str
    records: pd.DataFrame
    pairs: pd.DataFrame
    counts: JudgementCounts
    consistency: ConsistencyStats
    length_stats: pd.DataFrame
    length_unit: str
    length_bias: LengthBias
    win_rates: pd.DataFrame
    win_rates_with_ties: pd.DataFrame
    readings: ChoiceReadings = field(default_factory=ChoiceReadings)
    other_reading: OtherReading | None = None

    @property
    def models(self) -> list[str]:
        """The models in the records, in order of first appearance."""
        return list(dict.fromkeys([*self.records["A"], *self.records["B"]]))


@dataclass
class PairsAgreement:
    """A judge's two-order verdicts on pairs files, and their agreement with gold labels.

    Attributes:
        judged: One row per pair: its fields, both orders' judgements and choices, and the
            verdict (see :func:`~jurist.metrics.pairwise.subeval.pair_verdicts`).
        agreement: One row per dataset (plus ``all``): accuracy, order accuracy, Cohen's
            kappa with intervals, consistency and coverage (see
            :func:`~jurist.metrics.pairwise.subeval.gold_agreement`).
        by_label: Per dataset, agreement per gold label and per verdict.
        num_options: Number of options the judge chose from.
        judge: The judge's name.
        human: With several annotators per pair: per dataset, human–human agreement
            (pairwise agreement, Fleiss' kappa, Krippendorff's alpha) and the judge's
            agreement with single annotators, with three and two options (see
            :func:`~jurist.metrics.annotators.annotator_agreement`); else ``None``.
        readings: The choice rule used, SubEval's-rule letters that begin a longer word,
            and the orders the two rules read differently.
        other_agreement: ``agreement`` by the other rule, when the two rules read some
            order differently (``None`` otherwise).
    """

    judged: pd.DataFrame
    agreement: pd.DataFrame
    by_label: pd.DataFrame
    num_options: int
    judge: str
    human: pd.DataFrame | None = None
    readings: ChoiceReadings = field(default_factory=ChoiceReadings)
    other_agreement: pd.DataFrame | None = None


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_") or "_"


def pretty_table(frame: pd.DataFrame) -> str:
    """A DataFrame as SubEval logs it (``tabulate(frame, headers="keys", tablefmt="pretty")``).

    Every cell, the index included, is ``str(value)`` centred in its column (extra space
    on the right) with one space of padding, framed by ``+---+`` rules.
    """
    headers = ["", *[str(c) for c in frame.columns]]
    rows = [
        [str(index), *[str(v) for v in values]]
        for index, values in zip(frame.index, frame.to_numpy(), strict=True)
    ]
    widths = [max([len(headers[i]), *(len(row[i]) for row in rows)]) for i in range(len(headers))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: list[str]) -> str:
        return "|" + "|".join(f" {c:^{w}} " for c, w in zip(cells, widths, strict=True)) + "|"

    return "\n".join([rule, line(headers), rule, *(line(r) for r in rows), rule])


def subeval_win_table(win_rates: pd.DataFrame, reference_model: str, rate: str) -> pd.DataFrame:
    """SubEval's win table of every model against the reference model.

    Columns: ``model``, ``Overall-lang``, ``EN`` (SubEval's language split; every record
    is English, so it equals the overall rate), the software-design files, then the
    tasks, each sorted. Models are sorted by name, then by ``Overall-lang`` from high to
    low (ties in reverse name order); the index keeps the name order. Values are
    rounded to 4 decimals; a group where a model has no consistent judgement (or a zero
    denominator) is 0.0, as SubEval writes it.

    Args:
        win_rates: The long table of :func:`jurist.metrics.pairwise.subeval.win_rates`.
        reference_model: The opponent.
        rate: ``"win_both_good_rate"`` (win+bothgood) or ``"win_half_tie_rate"`` (win+halfdraw).
    """
    against = win_rates[win_rates["opponent"] == reference_model]
    models = sorted(set(against["model"]))
    files = sorted(set(against.loc[against["group_kind"] == "design_file", "group"]))
    tasks = sorted(set(against.loc[against["group_kind"] == "task", "group"]))
    value = {
        (row.group, row.model): _zero_if_nan(getattr(row, rate)) for row in against.itertuples(index=False)
    }
    rows = []
    for model in models:
        overall = value.get(("Overall", model), 0.0)
        row: dict[str, Any] = {"model": model, "Overall-lang": overall, "EN": overall}
        row.update({group: value.get((group, model), 0.0) for group in [*files, *tasks]})
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["model", "Overall-lang", "EN", *files, *tasks]).astype(
        {c: float for c in ["Overall-lang", "EN", *files, *tasks]}
    )
    frame = frame.sort_values("Overall-lang", kind="stable", na_position="first").iloc[::-1]
    return frame.round(4)


def subeval_log(scores: PairwiseScores) -> str:
    """SubEval's ``log.txt`` for these scores, line for line (see the module docstring).

    Wording, spacing and spelling are SubEval's own (``Reponse length``, two spaces after
    ``Non exact matches:``), so that a jurist log can be diffed against a SubEval one.
    The consistency line appears only when some judgement is inconsistent; the win tables
    only when there is a reference model.
    """
    counts = scores.counts
    lines = [
        "Reponse length",
        pretty_table(scores.length_stats[["model", "mean", "std"]]),
        f"Total comparisons: {counts.comparisons}. Failed to response: {counts.failed}",
        f"Total comparisons: {counts.comparisons}. Non exact matches:  {counts.judged}",
        f"Extracted {counts.extracted} answers from the responses "
        f"(extraction success rate {counts.extraction_rate * 100:.2f}%)",
    ]
    consistency = scores.consistency
    if consistency.consistent_rows != consistency.extracted_rows:
        lines.append(
            f"{consistency.consistent_rows} out of {consistency.extracted_rows} answers are consistent. "
            f"(A vs. B <-> B vs. A) The consistent rate is {consistency.row_consistency_rate * 100:.2f}%"
        )
    if scores.reference_model is not None:
        for title, rate in (
            ("Win + Draw / 2", "win_half_tie_rate"),
            ("Win + Both Good", "win_both_good_rate"),
        ):
            lines.append(f"({title}) w. {scores.reference_model}: ")
            lines.append(pretty_table(subeval_win_table(scores.win_rates, scores.reference_model, rate)))
    return "\n".join(lines) + "\n"


def _zero_if_nan(value: Any) -> float:
    """SubEval writes 0 where a rate's denominator is zero."""
    number = float(value)
    return 0.0 if number != number else number


def _with_ci(value: Any, low: Any, high: Any) -> str:
    if fmt(value) == "n/a":
        return "n/a"
    if fmt(low) == "n/a":
        return fmt(value)
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def _percent(numerator: int, denominator: int) -> str:
    return (
        f"{numerator} / {denominator} ({numerator / denominator:.2%})" if denominator else f"{numerator} / 0"
    )


_RULE_TEXT = {
    "subeval": "SubEval's published rule: the first character after `Choice: `, when it is A-D, "
    "even one that begins a word",
    "strict": "strict: a standalone option letter after `Choice: `; a letter that begins a word "
    "is not extracted",
}
_LISTED = 50
"""Letters-in-words a Markdown report lists (``--json`` lists them all)."""


def _readings_markdown(readings: ChoiceReadings, what: str) -> list[str]:
    """The rule the choices were read by, and every SubEval's-rule letter that begins a word.

    Nothing when no answer was read from text (the choices were given).
    """
    if not readings.read:
        return []
    found = readings.letter_in_word
    parts = [
        f"Choice rule: {_RULE_TEXT[readings.rule]} (`--choice-rule {readings.other}` reads by the "
        f"other rule). Letters that begin a longer word, read by SubEval's rule: {len(found)}. "
        f"The two rules read {len(readings.differ)} of {readings.read} {what} differently.",
        "",
    ]
    if not found:
        return parts
    rows = [
        [entry.id, fmt(entry.line), entry.subeval, fmt(entry.strict), f'"{entry.after}"']
        for entry in found[:_LISTED]
    ]
    more = len(found) - _LISTED
    parts += [
        "## Choices read from a letter that begins a word",
        "",
        f"SubEval's rule read these {len(found)} choice(s) from the first letter of a word "
        "(`Choice: Definitely A` is D); the strict reading takes a standalone letter only "
        "(n/a: not extracted).",
        "",
        table(["record", "line", "SubEval's rule", "strict reading", "text after Choice:"], rows),
        "",
    ]
    if more > 0:
        parts += [f"... and {more} more (all of them in `--json`: `letter_in_word_records`).", ""]
    return parts


def _beside_title(readings: ChoiceReadings, what: str) -> list[str]:
    return [
        "## Strict reading beside SubEval's rule",
        "",
        f"The two rules read {len(readings.differ)} of {readings.read} {what} differently, so "
        f"these figures differ; the rest of this report uses {RULE_NAMES[readings.rule]}.",
        "",
    ]


def _by_rule(readings: ChoiceReadings, used: str, other: str) -> tuple[str, str]:
    """(SubEval's rule's cell, strict reading's cell) from the used and other rule's cells."""
    return (used, other) if readings.rule == "subeval" else (other, used)


def _other_reading_markdown(scores: PairwiseScores) -> list[str]:
    """The headline figures by both rules side by side, when the rules read some record differently."""
    other = scores.other_reading
    if other is None:
        return []
    readings = scores.readings
    rows: list[list[Any]] = []

    def add(name: str, used: str, by_other: str) -> None:
        rows.append([name, *_by_rule(readings, used, by_other)])

    counts, consistency = scores.counts, scores.consistency
    add(
        "choice extracted",
        _percent(counts.extracted, counts.judged),
        _percent(other.counts.extracted, other.counts.judged),
    )
    add(
        "consistent judgements (SubEval's rate)",
        _percent(consistency.consistent_rows, consistency.extracted_rows),
        _percent(other.consistency.consistent_rows, other.consistency.extracted_rows),
    )
    add(
        "consistent comparisons",
        _percent(consistency.consistent_pairs, consistency.complete_pairs),
        _percent(other.consistency.consistent_pairs, other.consistency.complete_pairs),
    )
    tables = (
        ("win rate with ties", scores.win_rates_with_ties, other.win_rates_with_ties, "metric"),
        ("win+both good (old)", scores.win_rates, other.win_rates, "group"),
    )
    for (title, used_table, other_table, key), rate in zip(
        tables, ("win_rate_with_tie", "win_both_good_rate"), strict=True
    ):
        for model, opponent, used_rate, other_rate in _overall_rates(
            used_table, other_table, key, rate, scores.reference_model
        ):
            add(f"{title}, overall: {model} vs {opponent}", fmt(used_rate), fmt(other_rate))
    what = "judged records"
    return [
        *_beside_title(readings, what),
        table(["figure", "SubEval's rule", "strict reading"], rows),
        "",
    ]


def _overall_rates(
    used: pd.DataFrame, other: pd.DataFrame, key: str, rate: str, reference: str | None
) -> list[tuple[str, str, float, float]]:
    """Each (model, opponent)'s overall ``rate`` in both tables (NaN where a table lacks it)."""
    pairs: dict[tuple[str, str], list[float]] = {}
    for position, frame in enumerate((used, other)):
        overall = frame[frame[key] == "Overall"] if len(frame) else frame
        if reference is not None and len(overall):
            overall = overall[overall["opponent"] == reference]
        for row in overall.itertuples(index=False):
            values = pairs.setdefault((str(row.model), str(row.opponent)), [float("nan"), float("nan")])
            values[position] = float(getattr(row, rate))
    return [(model, opponent, values[0], values[1]) for (model, opponent), values in sorted(pairs.items())]


def pairwise_markdown(scores: PairwiseScores) -> str:
    """A Markdown summary with the numbers of SubEval's log plus intervals and bias checks."""
    counts, consistency = scores.counts, scores.consistency
    reference = scores.reference_model or "none (all pairs)"
    if scores.reference_inferred:
        reference += " (inferred)"
    parts = [
        f"# Pairwise scores: {scores.judge}",
        "",
        f"- Records: `{scores.source}`",
        f"- Judge: {scores.judge}; options: {scores.num_options}; reference model: {reference}",
        f"- Models: {', '.join(scores.models)}",
        "",
        "## Judgements",
        "",
        table(
            ["", "count"],
            [
                ["comparisons (both orders counted)", counts.comparisons],
                ["failed to respond", counts.failed],
                ["exact matches (not judged)", counts.exact_matches],
                ["judged (non exact matches)", counts.judged],
                ["choice extracted", _percent(counts.extracted, counts.judged)],
            ],
        ),
        "",
        *_readings_markdown(scores.readings, "judged records"),
        *_other_reading_markdown(scores),
        "## Consistency (responses swapped)",
        "",
        table(
            ["", "value"],
            [
                [
                    "consistent judgements (SubEval's rate)",
                    _percent(consistency.consistent_rows, consistency.extracted_rows),
                ],
                ["comparisons with both orders extracted", consistency.complete_pairs],
                [
                    "consistent comparisons",
                    _percent(consistency.consistent_pairs, consistency.complete_pairs),
                ],
                [
                    "position preference: first position wins when inconsistent",
                    _percent(
                        consistency.first_position_wins,
                        consistency.first_position_wins + consistency.second_position_wins,
                    ),
                ],
            ],
        ),
        "",
        "## Win rates over consistent judgements (old version)",
        "",
        "95% bootstrap intervals over comparisons in brackets; n/a where a denominator is zero.",
        "",
    ]
    old = scores.win_rates
    if scores.reference_model is not None:
        old = old[old["opponent"] == scores.reference_model]
    parts.append(
        table(
            [
                "group",
                "model",
                "opponent",
                "win",
                "lose",
                "both good",
                "both fail",
                "win rate",
                "win+both good",
                "win+half tie",
            ],
            [
                [
                    r.group,
                    r.model,
                    r.opponent,
                    r.win,
                    r.lose,
                    r.both_good,
                    r.both_fail,
                    _with_ci(r.win_rate, r.win_rate_low, r.win_rate_high),
                    _with_ci(r.win_both_good_rate, r.win_both_good_rate_low, r.win_both_good_rate_high),
                    _with_ci(r.win_half_tie_rate, r.win_half_tie_rate_low, r.win_half_tie_rate_high),
                ]
                for r in old.itertuples(index=False)
            ],
        )
    )
    new = scores.win_rates_with_ties
    if scores.reference_model is not None:
        new = new[new["opponent"] == scores.reference_model]
    bias = scores.length_bias
    parts += [
        "",
        "## Win rates with inconsistent judgements as ties (new version)",
        "",
        table(
            ["metric", "model", "opponent", "win", "tie", "total", "with tie", "without tie"],
            [
                [
                    r.metric,
                    r.model,
                    r.opponent,
                    r.win,
                    r.tie,
                    r.total,
                    _with_ci(r.win_rate_with_tie, r.win_rate_with_tie_low, r.win_rate_with_tie_high),
                    _with_ci(r.win_rate_without_tie, r.win_rate_without_tie_low, r.win_rate_without_tie_high),
                ]
                for r in new.itertuples(index=False)
            ],
        ),
        "",
        f"## Response length ({scores.length_unit})",
        "",
        table(
            ["model", "mean", "std"],
            [[r.model, r.mean, r.std] for r in scores.length_stats.itertuples(index=False)],
        ),
        "",
        f"Length bias: the longer response was chosen in {_percent(bias.longer_wins, bias.decisive)} "
        f"decisive judgements (A or B, unequal lengths); "
        f"rate {_with_ci(bias.rate, bias.ci_low, bias.ci_high)}.",
        "",
    ]
    return "\n".join(parts)


def record_files(records: pd.DataFrame, *, judge: str, num_options: int) -> dict[str, pd.DataFrame]:
    """A record table as the files ``record_{judge}_{nopt}.{tsv,xlsx,parquet}``
    (:func:`jurist.tasks._results.write_files` writes the TSV with every cell quoted, as
    SubEval writes it, and skips the XLSX without openpyxl). The judge's name is made safe
    for a file name (the column keeps the real name)."""
    stem = record_stem(judge, num_options)
    return {f"{stem}.{kind}": records for kind in ("tsv", "xlsx", "parquet")}


def record_stem(judge: str, num_options: int) -> str:
    """The name of a record table's files without the suffix: ``record_{judge}_{nopt}``."""
    return f"record_{_safe(judge)}_{num_options}"


def _subeval_new_table(scores: PairwiseScores, rate: str, title: str) -> pd.DataFrame:
    new = scores.win_rates_with_ties
    new = new[new["metric"] != "Overall"]
    if scores.reference_model is not None:
        new = new[(new["model"] == scores.reference_model) | (new["opponent"] == scores.reference_model)]
    return pd.DataFrame(
        {
            "Metric;Model": [f"{r.metric};{r.model};{r.opponent}" for r in new.itertuples(index=False)],
            title: [_zero_if_nan(value) for value in new[rate]],
        }
    )


def _cmp_table(records: pd.DataFrame, judge: str) -> pd.DataFrame:
    """Records with SubEval's columns: its record columns, the judge's column, ``extracted``."""
    columns = [c for c in _SUBEVAL_COLUMNS if c in records.columns]
    table = records[columns].copy()
    if "judgement" in records.columns:
        table[judge] = records["judgement"]
    table["extracted"] = records["choice"]
    return table


def pairwise_files(scores: PairwiseScores) -> dict[str, pd.DataFrame | str]:
    """Every output of :func:`jurist.tasks.pairwise.score_records` by file name (see the
    module docstring): tables and texts for :func:`jurist.tasks._results.write_files`, which
    skips the XLSX win tables when openpyxl is not installed (their CSV twins are always
    written)."""
    files: dict[str, pd.DataFrame | str] = {
        "log.txt": subeval_log(scores),
        "length_stats.csv": scores.length_stats[["model", "mean", "std"]],
    }
    if scores.reference_model is not None:
        for rate, stem in _RATE_FILES.items():
            wide = subeval_win_table(scores.win_rates, scores.reference_model, rate)
            files[f"{stem}.xlsx"] = wide
            files[f"{stem}.csv"] = wide
    files["win_rate_with_tie.csv"] = _subeval_new_table(scores, "win_rate_with_tie", "WinRateWithTie")
    files["win_rate_without_tie.csv"] = _subeval_new_table(
        scores, "win_rate_without_tie", "WinRateWithoutTie"
    )
    files["win_rates.csv"] = scores.win_rates
    files["win_rates_with_ties.csv"] = scores.win_rates_with_ties
    files["comparisons.csv"] = scores.pairs
    if scores.consistency.consistent_rows != scores.consistency.extracted_rows:
        records = scores.records.reset_index(drop=True)
        extracted = records["choice"].notna() & (records["status"] != "exact_match")
        agrees = consistent_rows(records)
        cmp_table = _cmp_table(records, scores.judge)
        files["consistent_cmp.tsv"] = cmp_table.loc[extracted & agrees]
        files["inconsistent_cmp.tsv"] = cmp_table.loc[extracted & ~agrees]
    files["summary.md"] = pairwise_markdown(scores)
    return files


def write_pairwise_scores(scores: PairwiseScores, out_dir: str | Path) -> list[Path]:
    """Write :func:`pairwise_files` into ``out_dir``.

    Returns:
        The files written.
    """
    from jurist.tasks._results import write_files

    folder, files = Path(out_dir), pairwise_files(scores)
    write_files(folder, files)
    return [folder / name for name in files if (folder / name).is_file()]


def pairs_agreement_markdown(result: PairsAgreement) -> str:
    """A Markdown summary of a judge's agreement with gold preference labels."""
    rows = [
        [
            r.dataset,
            r.pairs,
            f"{r.complete} ({fmt(r.coverage)})",
            _with_ci(r.accuracy, r.accuracy_low, r.accuracy_high),
            _with_ci(r.order_accuracy, r.order_accuracy_low, r.order_accuracy_high),
            _with_ci(r.kappa, r.kappa_low, r.kappa_high),
            f"{fmt(getattr(r, 'accuracy_2', float('nan')))} (n={getattr(r, 'decisive', 0)})",
            f"{r.consistent} ({fmt(r.consistency_rate)})",
        ]
        for r in result.agreement.itertuples(index=False)
    ]
    labels = [
        [r.dataset, r.side, r.label, r.n, r.agreed, _with_ci(r.rate, r.rate_low, r.rate_high)]
        for r in result.by_label.itertuples(index=False)
    ]
    return "\n".join(
        [
            f"# Agreement with gold labels: {result.judge} ({result.num_options} options, both orders)",
            "",
            "accuracy: the two-order verdict (inconsistent = tie) equals gold, over comparisons with both "
            "orders extracted; order accuracy: each order's choice equals gold; kappa: Cohen's kappa of "
            "verdict and gold (three options: 1, 2, tie); accuracy without ties: two options, over "
            "pairs whose gold and verdict are both 1 or 2. 95% bootstrap intervals over comparisons "
            "in brackets.",
            "",
            table(
                [
                    "dataset",
                    "pairs",
                    "both orders extracted",
                    "accuracy",
                    "order accuracy",
                    "kappa",
                    "accuracy without ties",
                    "consistent",
                ],
                rows,
            ),
            "",
            "## Agreement by label",
            "",
            "gold: share of pairs with this gold label that the verdict matches; "
            "judge: share of verdicts with this label that gold matches. 95% Wilson intervals.",
            "",
            table(["dataset", "side", "label", "n", "agreed", "rate"], labels),
            "",
            *_human_markdown(result.human),
            *_readings_markdown(result.readings, "judged orders"),
            *_other_agreement_markdown(result),
        ]
    )


def _other_agreement_markdown(result: PairsAgreement) -> list[str]:
    """Agreement by both rules side by side, when the rules read some order differently."""
    other = result.other_agreement
    if other is None:
        return []
    rows: list[list[Any]] = []
    by_dataset = {str(row.dataset): row for row in other.itertuples(index=False)}
    for row in result.agreement.itertuples(index=False):
        twin = by_dataset.get(str(row.dataset))
        for name, value, other_value in (
            ("both orders extracted", f"{row.complete} of {row.pairs}", _complete(twin)),
            ("accuracy", fmt(row.accuracy), fmt(getattr(twin, "accuracy", None))),
            ("kappa", fmt(row.kappa), fmt(getattr(twin, "kappa", None))),
            ("consistency rate", fmt(row.consistency_rate), fmt(getattr(twin, "consistency_rate", None))),
        ):
            rows.append([row.dataset, name, *_by_rule(result.readings, value, other_value)])
    return [
        *_beside_title(result.readings, "judged orders"),
        table(["dataset", "figure", "SubEval's rule", "strict reading"], rows),
        "",
    ]


def _complete(row: Any) -> str:
    return "n/a" if row is None else f"{row.complete} of {row.pairs}"


def _human_markdown(human: pd.DataFrame | None) -> list[str]:
    """The human–human agreement section (empty without annotators)."""
    if human is None or human.empty:
        return []
    rows = []
    for r in human.itertuples(index=False):
        for suffix, options in (("_3", "3 (with tie)"), ("_2", "2 (no tie)")):
            rows.append(
                [
                    r.dataset,
                    options,
                    getattr(r, f"items{suffix}"),
                    fmt(getattr(r, f"pairwise_agreement{suffix}")),
                    fmt(getattr(r, f"fleiss_kappa{suffix}")),
                    fmt(getattr(r, f"krippendorff_alpha{suffix}")),
                    fmt(getattr(r, f"judge_annotator_agreement{suffix}")),
                ]
            )
    return [
        "## Human–human agreement (the ceiling)",
        "",
        "Annotators of the same pair: pairwise agreement (share of agreeing annotator pairs), Fleiss' "
        "kappa and Krippendorff's alpha (nominal); judge vs one annotator: share of (pair, vote) where "
        "the judge's verdict equals the vote, to be read against the pairwise agreement. Two options: "
        "tie votes and tie verdicts left out.",
        "",
        table(
            [
                "dataset",
                "options",
                "pairs with 2+ votes",
                "human-human agreement",
                "Fleiss kappa",
                "Krippendorff alpha",
                "judge-human agreement",
            ],
            rows,
        ),
        "",
    ]


def pairs_agreement_files(result: PairsAgreement) -> dict[str, pd.DataFrame | str]:
    """``agreement.csv``, ``agreement_by_label.csv``, ``judged_pairs.csv``, ``agreement.md``,
    and ``human_agreement.csv`` when the pairs carry several annotators' labels, by file name."""
    files: dict[str, pd.DataFrame | str] = {
        "agreement.csv": result.agreement,
        "agreement_by_label.csv": result.by_label,
        "judged_pairs.csv": result.judged,
    }
    if result.human is not None:
        files["human_agreement.csv"] = result.human
    files["agreement.md"] = pairs_agreement_markdown(result)
    return files
