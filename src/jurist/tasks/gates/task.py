"""The RAG trace gates task: score traces a RAG system wrote against a gold QA set.

Scoring calls no model (``jurist score gates TRACES --gold QA``, ``jurist gate``); the optional
claim check asks a judge whether each answered trace states its gold claim
(``jurist judge gates TRACES --gold QA --out DIR``, ``jurist gate --judge CONFIG``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
import pandas as pd
from pydantic import BaseModel

from jurist.errors import InputError
from jurist.judges.judge import Judge
from jurist.programs.gates import ClaimJudge, verdict_from_prediction
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.runner import Item
from jurist.tasks._contract import JudgeRun, Scores, Task, recorded_options
from jurist.tasks._other_files import OtherFiles
from jurist.tasks._read_once import DATASET, read_once
from jurist.tasks._recorded_run import recorded_run
from jurist.tasks.gates.claims import ClaimItems, add_claim_verdicts, claim_baseline_judge, collect_claims
from jurist.tasks.gates.figures import REVIEW, gates_figures
from jurist.tasks.gates.options import GatesOptions, as_gates_options, gold_of, thresholds_of
from jurist.tasks.gates.records import GateReport, questions_frame
from jurist.tasks.gates.render import report_to_dict
from jurist.tasks.gates.scoring import gate_verdict, score_traces, scores_of

__all__ = ["TASKS", "GatesTask"]


class GatesTask(Task):
    """The WFGY RAG-quality gates: precision, refusals, citations, claims and compliance of
    recorded RAG traces, each checked against a threshold (G1-G5)."""

    name = "gates"
    description = (
        "Score the traces a RAG system wrote (question, answer, citations) against a gold QA set "
        "with no model: precision over answered, over-/under-refusal, citation hit rate, claim "
        "containment, compliance, and pass/fail gates G1-G5 (`jurist gate` exits 1 when one fails). "
        "`jurist judge gates` adds a judged check that each answer states its gold claim."
    )
    inputs = {
        "traces": "the RAG traces (JSONL: qid or q, answer, optional citations)",
        "gold": "the gold QA set (qid, q, answerable, gold_ids, optional gold_claim)",
        "question": "claim check: the gold question",
        "gold_claim": "claim check: the fact a correct answer states",
        "answer": "claim check: the traced answer",
    }
    outputs = {
        "states_claim": "claim check: the answer states the gold claim",
        "reason": "claim check: why",
    }
    metrics = {
        "answer_precision": "answered answerable traces citing a gold id / answered traces (G1)",
        "under_refusal": "answered unanswerable traces / unanswerable traces (G2)",
        "over_refusal": "refused answerable traces / answerable traces (G3)",
        "citation_hit_rate": "answered answerable traces citing a gold id / answerable traces (G4)",
        "claim_containment": "answers containing a phrase of the gold claim / traces with a gold claim",
        "compliance": "traces that refuse or carry a citations list / traces (G5)",
        "judged_claim_accuracy": "claim check: answers judged to state the claim / answers judged",
    }
    Options = GatesOptions

    # ------------------------------------------------------------------ the claim check

    def read(self, path: str | Path, options: BaseModel) -> ClaimItems:
        """The claim items of a trace file (``path``) against the gold QA set of the options."""
        opts = as_gates_options(options)
        return collect_claims(
            gold_of(opts), path, thresholds=thresholds_of(opts), refusal_token=opts.refusal_token
        )

    def items(self, dataset: ClaimItems, options: BaseModel) -> list[Item]:
        return dataset.items

    def program(self, options: BaseModel) -> dspy.Module:
        return ClaimJudge()

    def postprocess(self, prediction: Any, inputs: dict[str, Any], options: BaseModel) -> dict[str, Any]:
        return verdict_from_prediction(prediction, inputs).model_dump(mode="json")

    def baseline(self, options: BaseModel) -> Judge:
        return claim_baseline_judge()

    def summary_lines(self, run: JudgeRun) -> list[str]:
        report = run.scores.extra["report"]
        lines = [f"gates: {gate_verdict(report)}; {report.totals.traces} traces scored"]
        for name, value in report.extra_metrics.items():
            lines.append(f"  {name.replace('_', ' ')}: {'n/a' if value is None else f'{value:.3f}'}")
        return [*lines, f"report: {run.run_dir / 'report.md'}"]

    # ------------------------------------------------------------------ scoring

    def other_files(self, options: BaseModel) -> list[OtherFiles]:
        """A trace file a RAG system wrote (any path that is not a directory), scored against
        the gold QA set (``--gold``, else the ``gold`` option); no model is called. The scores'
        ``report`` is the Markdown of ``jurist gate``, ``summary`` its JSON, ``items`` the
        per-question table and ``extra["report"]`` the
        :class:`~jurist.tasks.gates.records.GateReport`; nothing is written."""
        return [OtherFiles("trace files", _not_a_directory, self._score_traces, several=True)]

    def _score_traces(self, paths: list[Path], options: BaseModel, gold: str | Path | None) -> Scores:
        if len(paths) != 1:
            raise self.unsupported("score several trace files at once")
        opts = as_gates_options(options)
        report = score_traces(
            gold_of(opts, gold), paths[0], thresholds=thresholds_of(opts), refusal_token=opts.refusal_token
        )
        return scores_of(report)

    gold_from_run = True
    """A run directory of the claim judge is scored against the trace file it judged (the
    path its manifest records), read again by ``jurist score gates RUN_DIR``."""

    def run_options(self, run: Path, options: BaseModel) -> BaseModel:
        """The options given, completed by those the claim run was judged with (its QA set,
        thresholds and refusal token), so its gates are those ``jurist judge`` reported."""
        return recorded_options(self, run, options)

    def summarize(self, items: pd.DataFrame, options: BaseModel, gold: str | Path | None) -> dict[str, Any]:
        """The claim run's figures: ``judged_claim_accuracy``, ``judged_claim_failed``,
        ``passed`` and, under ``gate``, the gate report of the traces it judged with its
        verdicts added (what ``jurist gate --judge CONFIG --json`` prints)."""
        report = self._judged_report(items, gold, options)
        return {
            **report.extra_metrics,
            "passed": report.passed,
            "gate": report_to_dict(report),
        }

    def extras(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> dict[str, Any]:
        """``questions``: one row per gold question, its traces' counts and judged claims;
        ``report``: the :class:`~jurist.tasks.gates.records.GateReport` of the claim run."""
        report = self._judged_report(items, gold, options)
        return {"questions": questions_frame(report), "report": report}

    def _judged_report(self, items: pd.DataFrame, gold: str | Path | None, options: BaseModel) -> GateReport:
        """The gates of the trace file the run judged (``gold``: read once, or held by the
        judging loop) with the run's claim verdicts added, made once per scoring (its
        :meth:`summarize` and :meth:`extras` share it).

        Raises:
            InputError: The trace file the run judged is not found.
        """
        if gold is None:
            raise InputError(
                "the trace file this claim run judged is not found (its manifest's dataset path); "
                "the gates are scored from it: put it back, or score the trace file itself",
                field="gold",
            )
        claims = read_once(DATASET, gold, lambda: self.read(gold, options))
        return recorded_run().shared("gate report", lambda: add_claim_verdicts(claims, _verdicts(items)))

    def review(self, options: BaseModel) -> Review:
        return REVIEW

    def figures(self, scores: Scores, options: BaseModel) -> list[Figure]:
        """The gates against their thresholds, the trace outcomes, and the rates."""
        return gates_figures(scores.summary)

    def report(self, scores: Scores) -> str:
        from jurist.tasks.gates.render import render_markdown

        report = scores.extra.get("report")
        return render_markdown(report) if report is not None else super().report(scores)


def _not_a_directory(path: Path) -> bool:
    return not path.is_dir()


def _verdicts(items: pd.DataFrame) -> list[tuple[str, bool | None]]:
    """``(item id, states_claim)`` of each row of a claim run's item table, ``None`` when failed."""
    if items.empty:
        return []
    states = items["states_claim"] if "states_claim" in items else [None] * len(items)
    return [
        (str(item_id), bool(state) if status == "ok" and state is not None else None)
        for item_id, status, state in zip(items["id"], items["status"], states, strict=True)
    ]


TASK = GatesTask()

TASKS = {"gates": GatesTask}
"""The tasks this package registers (name -> class)."""
