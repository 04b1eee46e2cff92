"""The pairwise (SubEval) tasks: ``pairwise`` (judge comparisons in both orders, score SubEval
records) and ``pairwise-gold`` (the offline baseline's agreement with gold preference labels)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dspy
import pandas as pd
from pydantic import BaseModel

from jurist.datasets.pairwise.alpaca_eval import read_annotations
from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError, InputError
from jurist.judges.judge import Judge
from jurist.optimization import MetricResult
from jurist.programs.pairwise.program import PairwiseJudgeProgram, choice_from_prediction
from jurist.report.console import headline_line
from jurist.report.review import Review
from jurist.runner import Item
from jurist.schemas import ItemResult
from jurist.tasks._calibration import CalibrationPlan
from jurist.tasks._contract import (
    JudgeRun,
    Scores,
    json_ready,
)
from jurist.tasks._other_files import OtherFiles
from jurist.tasks._read_once import DATASET, read_once
from jurist.tasks._recorded_run import recorded_run, run_manifest
from jurist.tasks.pairwise import calibration, optimization
from jurist.tasks.pairwise.alpaca import (
    alpaca_figures,
    alpaca_source,
    read_length_control,
    score_annotations,
    score_folder,
)
from jurist.tasks.pairwise.alpaca_report import (
    AlpacaLeaderboard,
    AlpacaScores,
    alpaca_markdown,
    alpaca_summary,
    leaderboard_frame,
    leaderboard_markdown,
    leaderboard_summary,
    write_alpaca,
)
from jurist.tasks.pairwise.figures import PairwiseReview, with_agreement
from jurist.tasks.pairwise.gold import agreement_summary
from jurist.tasks.pairwise.options import PairwiseGoldOptions, PairwiseOptions
from jurist.tasks.pairwise.panel import SwapVerdicts
from jurist.tasks.pairwise.report import (
    PairwiseScores,
    pairs_agreement_files,
    pairs_agreement_markdown,
    pairwise_files,
    pairwise_markdown,
    record_files,
    write_pairwise_scores,
)
from jurist.tasks.pairwise.run import (
    PairwiseData,
    PairwiseRun,
    baseline_judge,
    judgement_text,
    read_pairwise,
    score_run_dir,
    summary_markdown,
)
from jurist.tasks.pairwise.scoring import score_records, scores_summary


def _num_options(options: BaseModel) -> int:
    return getattr(options, "num_options", None) or 2


def _record_scores(scores: PairwiseScores, extra: dict[str, Any]) -> Scores:
    return Scores(
        items=scores.records,
        summary=json_ready(scores_summary(scores)),
        report=pairwise_markdown(scores),
        extra={**extra, "scores": scores},
    )


_NUM_OPTIONS_IN_NAME = re.compile(r"__(?P<n>[234])opt$")


class PairwiseRuns(PairwiseReview):
    """How both pairwise tasks score their run directories through the contract's one path:
    a comparison's two orders (two judged items) are one unit of the verdict.

    The run's options come from what it recorded (:meth:`run_options`); the run's summary and
    what it holds come from one grouping of its recorded judgements with the data it judged
    (:func:`~jurist.tasks.pairwise.run.score_run_dir`), made once per scoring and shared by
    :meth:`summarize` and :meth:`extras`. Its table (``items.csv``) is that grouping's
    ``records`` (:attr:`unit_table`): one row per SubEval comparison, or per pair; SubEval's log
    and tables, or the agreement tables, are its :meth:`export_files`, written into the run
    directory with its exports and into the option ``out`` when given.
    """

    gold_from_run = True
    unit_table = "records"

    def run_options(self, run: Path, options: BaseModel) -> BaseModel:
        """``options`` completed by the run's recorded setup (the manifest's ``dataset``: the
        number of options, for a SubEval table its reference and compared models, for a pairs
        file its column mapping and split-vote rule), each one not given; the number of options
        of a run directory named ``...__Nopt`` else."""
        found = run_manifest(run).get("dataset")
        recorded = found if isinstance(found, dict) else {}
        taken: dict[str, Any] = {}
        for option, key in (
            ("num_options", "num_options"),
            ("reference_model", "reference_model"),
            ("compare", "models"),
            ("map", "map"),
            ("split_vote", "split_vote"),
        ):
            given = option in options.model_fields_set or option not in type(options).model_fields
            if not given and recorded.get(key) is not None:
                taken[option] = recorded[key]
        named = _NUM_OPTIONS_IN_NAME.search(run.name if run.is_dir() else run.parent.name)
        if "num_options" not in taken and "num_options" not in options.model_fields_set and named:
            taken["num_options"] = int(named.group("n"))
        return options.model_copy(update=taken) if taken else options

    def item_row(self, result: ItemResult, options: BaseModel) -> dict[str, Any]:
        """The standard row; the comparison's text, as SubEval records it, is kept for the
        grouping of the two orders (one pass over the run's results)."""
        texts: dict[str, str] = recorded_run().shared("texts", dict)
        texts[result.id] = judgement_text(result)
        return super().item_row(result, options)

    def _scored(self, gold: str | Path | None, options: BaseModel) -> PairwiseRun:
        """The run's comparisons grouped and scored, once per scoring."""
        return recorded_run().shared("pairwise", lambda: self._score_run(gold, options))

    def _score_run(self, gold: str | Path | None, options: BaseModel) -> PairwiseRun:
        run = recorded_run()
        folder = run.path if run.path.is_dir() else run.path.parent
        dataset: PairwiseData | None = None
        if gold is not None:
            file = resolve_input(gold)
            dataset = read_once(DATASET, file, lambda: self.read(file, options))
        elif not any(folder.glob("record_*.tsv")) and run.dataset.get("path"):
            raise InputError("file not found", path=run.dataset["path"])
        return score_run_dir(
            folder,
            dataset,
            run.shared("texts", dict),
            judge=str(run.manifest.get("judge", "")),
            num_options=getattr(options, "num_options", None),
            reference_model=getattr(options, "reference_model", None),
            judge_column=getattr(options, "judge_column", None),
            n_resamples=getattr(options, "resamples", 1000),
            seed=getattr(options, "seed", 0),
            choice_rule=getattr(options, "choice_rule", "subeval"),
        )

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        """SubEval's figures (extraction, consistency, win rates, length bias), or the agreement
        with gold of a pairs file; the items failed are the run's (the summary's counts)."""
        run = self._scored(gold, options)
        if run.scores is not None:
            summary = scores_summary(run.scores)
            summary.pop("failed")
            return summary
        assert run.agreement is not None
        return agreement_summary(run.agreement)

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        """``records`` (the run's table: one row per comparison, or per pair with its agreement),
        ``run`` (the grouping), and ``scores`` (SubEval) or ``agreement`` (pairs)."""
        run = self._scored(gold, options)
        if run.scores is not None:
            return {"records": run.scores.records, "run": run, "scores": run.scores}
        assert run.agreement is not None
        return {"records": with_agreement(run.agreement.judged), "run": run, "agreement": run.agreement}

    def report(self, scores: Scores) -> str:
        if "scores" in scores.extra:
            return pairwise_markdown(scores.extra["scores"])
        return pairs_agreement_markdown(scores.extra["agreement"])

    def export_files(self, scores: Scores, options: BaseModel) -> dict[str, pd.DataFrame | str]:
        """SubEval's record table (``record_{judge}_{n}.tsv``, ``.xlsx``, ``.parquet``; built
        from the run's judgements, unless read from the run's own), log and tables; or the
        agreement tables of a pairs run."""
        if "scores" not in scores.extra:
            return pairs_agreement_files(scores.extra["agreement"])
        run_scores: PairwiseScores = scores.extra["scores"]
        run: PairwiseRun = scores.extra["run"]
        if run.records is None:  # scored from the record table the run holds
            return pairwise_files(run_scores)
        records = record_files(run.records, judge=run_scores.judge, num_options=run_scores.num_options)
        return {**records, **pairwise_files(run_scores)}

    def export_to(self, options: BaseModel) -> Path | None:
        """The option ``out``."""
        out: Path | None = getattr(options, "out", None)
        return out


def _alpaca(paths: list[Path], options: BaseModel, gold: str | Path | None) -> Scores:
    """AlpacaEval annotations (one file, or a results folder of them): the leaderboard row or
    table as alpaca_eval computes it, written with the option ``out`` (tables, summaries and
    ``report.html``)."""
    from jurist.report.html import write_run_views

    assert isinstance(options, PairwiseOptions)
    path = paths[0]
    files = alpaca_source(path) or []
    gamed = read_length_control(options.length_control)
    settings: dict[str, Any] = {"gamed": gamed, "n_resamples": options.resamples, "seed": options.seed}
    result: AlpacaScores | AlpacaLeaderboard
    if path.is_dir():
        result = score_folder(path, files, annotator=options.annotator, **settings)
        items = leaderboard_frame(result, details=True).rename_axis("id").reset_index()
        summary, report = leaderboard_summary(result), leaderboard_markdown(result)
    else:
        result = score_annotations(read_annotations(path), **settings)
        items, summary, report = result.items, alpaca_summary(result), alpaca_markdown(result)
    scores = Scores(
        items=items, summary={"task": "pairwise", **summary}, report=report, extra={"alpaca": result}
    )
    if options.out is not None:
        write_alpaca(result, options.out)
        write_run_views(
            Path(options.out),
            figures=alpaca_figures(result),
            review=Review(),
            items=items,
            summary=scores.summary,
        )
    return scores


def _is_alpaca(path: Path) -> bool:
    return alpaca_source(path) is not None


def _records(paths: list[Path], options: BaseModel, gold: str | Path | None) -> Scores:
    """A SubEval record file (``record_{judge}_{n}.tsv``, judged by SubEval or jurist): its
    extraction, consistency, win rates and length statistics; with the option ``out``,
    SubEval's log and tables written there."""
    assert isinstance(options, PairwiseOptions)
    records = score_records(
        paths[0],
        reference_model=options.reference_model,
        judge_column=options.judge_column,
        num_options=options.num_options,
        n_resamples=options.resamples,
        seed=options.seed,
        choice_rule=options.choice_rule,
    )
    if options.out is not None:
        write_pairwise_scores(records, options.out)
    return _record_scores(records, {})


def _not_a_directory(path: Path) -> bool:
    return not path.is_dir()


class PairwiseTask(PairwiseRuns):
    """SubEval (DevBench): which of two responses is better, asked in both orders.

    ``judge`` takes a SubEval table (every model against a reference model, or all pairs)
    or a pairs file (LLMBar, ...): its items are the comparisons in both orders, judged by the
    loop every task runs into the run directory ``--out`` (resumed if it exists). ``score``
    takes a run directory written by ``judge`` or a judged SubEval record file
    (``record_{judge}_{n}.tsv``), and groups each comparison's two orders into one verdict;
    it also takes AlpacaEval's annotations as published (a file, or a results folder of them)
    and reports alpaca_eval's leaderboard figures (:mod:`jurist.tasks.pairwise.alpaca`).
    """

    name = "pairwise"
    description = (
        "Choose the better of two responses (SubEval/DevBench), asked twice with the order "
        "swapped. Scores: extraction rate, consistency, win rates against a reference model "
        "(consistent-only; ties counted) with bootstrap intervals, length statistics and length "
        "bias; on pairs files with gold labels, agreement (accuracy, kappa). Also scores AlpacaEval "
        "annotations as published: alpaca_eval's leaderboard row per file, its leaderboard per "
        "results folder, and the length-controlled win rate."
    )
    inputs = {
        "question": "the instruction or question",
        "response_1": "the response shown first",
        "response_2": "the response shown second",
        "reference_answer": "a reference answer (optional)",
        "evaluating_guidance": "what to judge by (optional)",
    }
    outputs = {
        "choice": "A (response 1), B (response 2), C/D (ties, with 3 or 4 options)",
        "reason": "the judge's reasoning",
    }
    metrics = {
        "extraction_rate": "judged comparisons whose choice could be extracted",
        "consistency_rate": "comparisons with the same verdict in both orders",
        "win_rates": "wins over consistent judgements against each opponent (old version)",
        "win_rates_with_ties": "wins with inconsistent judgements as ties (new version)",
        "length_bias": "share of decisive judgements that chose the longer response",
        "accuracy": "pairs files: the two-order verdict equals the gold label",
        "win_rate": "AlpacaEval annotations: alpaca_eval's win rate (percent), with its leaderboard's "
        "other columns (standard_error, n_wins, n_wins_base, n_draws, n_total, discrete_win_rate)",
        "length_controlled_winrate": "AlpacaEval annotations with --length-control: AlpacaEval 2's GLM",
    }
    Options = PairwiseOptions

    # ------------------------------------------------------------------ reading and judging

    def read(self, path: str | Path, options: BaseModel) -> PairwiseData:
        assert isinstance(options, PairwiseOptions)
        return read_pairwise(
            resolve_input(path),
            reference_model=options.reference_model,
            models=options.compare,
            fill_contents=options.fill_contents or (),
            mapping=options.map,
            split_vote=options.split_vote,
            num_options=_num_options(options),
        )

    def items(self, dataset: PairwiseData, options: BaseModel) -> list[Item]:
        """Each comparison in both orders (``ID|12`` and ``ID|21`` for a pair; SubEval's
        ``cmp_index`` of each order); :meth:`panel_verdicts` and :meth:`score` group a
        comparison's two orders into one verdict again."""
        return dataset.items

    def run_identity(self, dataset: PairwiseData, options: BaseModel) -> dict[str, Any]:
        """The number of options and, for a SubEval table, the reference and compared models
        (for a pairs file, its column mapping and split-vote rule)."""
        return dict(dataset.selection)

    def row_items(self, dataset: PairwiseData, options: BaseModel, row: int) -> list[Item]:
        """Every ordered comparison of the ``row``-th question (SubEval) or pair (pairs file)."""
        keys = list(dict.fromkeys(dataset.rows))
        if not 0 <= row < len(keys):
            raise ConfigError(f"the data has no row {row} (rows count from 0)", field="row")
        return [item for item, key in zip(dataset.items, dataset.rows, strict=True) if key == keys[row]]

    def program(self, options: BaseModel) -> dspy.Module:
        return PairwiseJudgeProgram(_num_options(options))

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        return choice_from_prediction(prediction, _num_options(options)).model_dump(mode="json")

    def baseline(self, options: BaseModel) -> Judge:
        return baseline_judge(_num_options(options))

    def panel_verdicts(self, options: BaseModel) -> SwapVerdicts:
        """A jury votes per pair on each juror's verdict after the swap rule (``tie`` without a winner)."""
        return SwapVerdicts()

    def summary_lines(self, run: JudgeRun) -> list[str]:
        pairwise_run: PairwiseRun = run.scores.extra["run"]
        line = headline_line(self.headline(run.summary))
        return [
            *([line, ""] if line else []),
            summary_markdown(pairwise_run),
            f"run directory: {run.run_dir}",
        ]

    # ------------------------------------------------------------------ scoring

    def other_files(self, options: BaseModel) -> list[OtherFiles]:
        """AlpacaEval's annotations as published (a file, or a results folder of them:
        :mod:`jurist.tasks.pairwise.alpaca`), and a judged SubEval record file
        (``record_{judge}_{n}.tsv``); one at a time."""
        return [
            OtherFiles("AlpacaEval annotations", _is_alpaca, _alpaca),
            OtherFiles("SubEval record files", _not_a_directory, _records),
        ]

    # ------------------------------------------------------------------ calibration, optimization

    def calibration(self, gold: Path, settings: Mapping[str, Any]) -> CalibrationPlan:
        """Every pair judged in both orders, the consistent choice compared with the gold
        preference (see :mod:`jurist.tasks.pairwise.calibration`)."""
        return calibration.calibration(gold, settings)

    optimized_metric = optimization.METRIC_NAME

    def gold_examples(self, path: str | Path, options: BaseModel) -> list[dspy.Example]:
        """Each gold pair of a pairs file in both orders (see :mod:`jurist.tasks.pairwise.optimization`)."""
        return optimization.gold_examples(path, _num_options(options))

    def example_score(
        self, example: dspy.Example, output: dict[str, Any], options: BaseModel
    ) -> MetricResult:
        """1 when the order's choice names the gold winner (a tie for C/D), else 0."""
        return optimization.example_score(example, output)

    def program_options(self, options: BaseModel) -> dict[str, Any]:
        """The number of options (the program's signature)."""
        return {"num_options": _num_options(options)}


class PairwiseGoldTask(PairwiseRuns):
    """The offline pairwise baseline on a pairs file with gold labels, in both orders.

    ``judge`` takes a pairs file (LLMBar ``dataset.json``, JSONL, CSV, ...) and judges each pair
    in both orders with the baseline, through the loop every task runs; ``score`` takes the
    run directory and reports the agreement with the file's labels. Several files side by
    side: ``jurist calibrate pairwise --gold A --gold B`` (the baseline is calibrate's default
    judge).
    """

    name = "pairwise-gold"
    description = (
        "Judge a pairs file with the offline pairwise baseline in both orders and report its "
        "agreement with the gold preference labels (accuracy, order accuracy, Cohen's kappa "
        "with intervals, consistency, agreement by label)."
    )
    inputs = {
        "question": "the instruction or question",
        "response_1": "the first response",
        "response_2": "the second response",
        "label": "gold preference: 1, 2 or tie",
    }
    outputs = {
        "choice_12": "the choice with response 1 first",
        "choice_21": "the choice with the order swapped",
    }
    metrics = {
        "accuracy": "the two-order verdict (inconsistent = tie) equals gold",
        "order_accuracy": "each order's choice equals gold",
        "kappa": "Cohen's kappa of verdict and gold",
        "consistency_rate": "pairs with the same verdict in both orders",
    }
    Options = PairwiseGoldOptions
    llm_judge_hint = "use `jurist judge pairwise` for an LLM judge"

    def read(self, path: str | Path, options: BaseModel) -> PairwiseData:
        """Read a pairs file (any shape ``load_pairs`` knows, with the ``map`` and ``split_vote`` options)."""
        assert isinstance(options, PairwiseGoldOptions)
        data = read_pairwise(
            resolve_input(path),
            mapping=options.map,
            split_vote=options.split_vote,
            num_options=options.num_options,
        )
        if data.kind != "pairs":
            raise InputError("task 'pairwise-gold' reads pairs files, not SubEval tables", path=data.path)
        return data

    def items(self, dataset: PairwiseData, options: BaseModel) -> list[Item]:
        """Each pair in both orders (``ID|12``, ``ID|21``), grouped into one verdict again when scored."""
        return dataset.items

    def run_identity(self, dataset: PairwiseData, options: BaseModel) -> dict[str, Any]:
        """The number of options, the column mapping and the split-vote rule."""
        return dict(dataset.selection)

    def baseline(self, options: BaseModel) -> Judge:
        return baseline_judge(_num_options(options))

    def summary_lines(self, run: JudgeRun) -> list[str]:
        line = headline_line(self.headline(run.summary))
        return [*([line, ""] if line else []), run.scores.report, f"written to {run.run_dir}"]
