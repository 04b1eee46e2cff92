"""The RAG trace gates task: score traces a RAG system wrote against a gold QA set.

Scoring calls no model (``jurist score gates TRACES --gold QA``, ``jurist gate``); the optional
claim check asks a judge whether each answered trace states its gold claim
(``jurist judge gates TRACES --gold QA --out DIR``, ``jurist gate --judge CONFIG``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pandas as pd
from pydantic import BaseModel

from jurist.datasets.io import read_text
from jurist.errors import InputError
from jurist.judges.judge import Judge
from jurist.programs.gates import ClaimJudge, verdict_from_prediction
from jurist.report.figures import Figure
from jurist.report.jsonout import dumps
from jurist.report.review import Review
from jurist.runner import Item, iter_run_results
from jurist.tasks._contract import JudgeRun, Scores, Task, atomic_write_text
from jurist.tasks._other_files import OtherFiles
from jurist.tasks._read_once import DATASET, read_once
from jurist.tasks.gates.claims import ClaimItems, add_claim_verdicts, claim_baseline_judge, collect_claims
from jurist.tasks.gates.figures import REVIEW, gates_figures
from jurist.tasks.gates.options import GatesOptions, as_gates_options, gold_of, thresholds_of
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

    def score(
        self,
        run: str | Path | list[Path],
        options: BaseModel,
        *,
        gold: str | Path | None = None,
        write: bool = False,
    ) -> Scores:
        """A trace file is scored by its kind (:meth:`other_files`); a run directory of the
        claim judge as :func:`claim_run_scores` says: the gates of the traces it judged with
        its verdicts added when this scoring holds those traces (the judging loop), else what
        the run recorded."""
        paths = [Path(path) for path in run] if isinstance(run, list) else [Path(run)]
        if len(paths) != 1:
            raise self.unsupported("score several trace files at once")
        if not paths[0].is_dir():
            return super().score(paths, options, gold=gold, write=write)
        return claim_run_scores(paths[0], gold, write=write)

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


def claim_run_scores(run_dir: Path, traces: str | Path | None, *, write: bool) -> Scores:
    """The scores of a run directory of the claim judge.

    When this scoring holds the claim items of ``traces`` (the judging loop scores its run
    with the dataset it judged: :func:`~jurist.tasks.read_once` of kind ``"dataset"``), the
    gates of every trace they were collected from with the run's claim verdicts added,
    written with ``write`` as ``summary.json`` and ``report.md`` (what ``jurist gate --judge``
    reports). Otherwise what the run recorded (:func:`_recorded_scores`): ``jurist score gates
    RUN_DIR`` is given no trace file (its ``--gold`` is the QA set), so it reads back the
    scores the judging loop wrote.
    """
    claims: ClaimItems | None = None
    if traces is not None:
        claims = read_once(DATASET, traces, lambda: None)  # never read here: only what is held
    if claims is None:
        return _recorded_scores(run_dir)
    scores = scores_of(add_claim_verdicts(claims, iter_run_results(run_dir)))
    if write:
        atomic_write_text(run_dir / "summary.json", dumps(scores.summary))
        atomic_write_text(run_dir / "report.md", scores.report)
    return scores


def _recorded_scores(run_dir: Path) -> Scores:
    """The scores ``jurist judge gates`` wrote into a run directory (its ``summary.json`` and
    ``report.md``), read back without calling a model.

    Raises:
        InputError: The directory holds no ``summary.json`` written by ``jurist judge gates``.
    """
    summary_path = run_dir / "summary.json"
    if not summary_path.is_file():
        raise InputError(
            "not a run directory of `jurist judge gates` (no summary.json); "
            "give a trace file, or the --out directory of `jurist judge gates`",
            path=run_dir,
        )
    try:
        summary = json.loads(read_text(summary_path))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=summary_path, line=exc.lineno) from None
    report_path = run_dir / "report.md"
    report = read_text(report_path) if report_path.is_file() else ""
    return Scores(items=pd.DataFrame(), summary=summary, report=report)


TASK = GatesTask()

TASKS = {"gates": GatesTask}
"""The tasks this package registers (name -> class)."""
