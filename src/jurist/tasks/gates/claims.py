"""The optional judged correctness of ``jurist gate --judge CONFIG`` (``jurist judge gates``).

The deterministic metrics never depend on it: the traces are scored first; then every
*answered* trace of an answerable question with a gold claim becomes one runner item, and
a judge (an LLM through the core pipeline, or the lexical baseline) decides whether the
answer states the claim. The verdicts become an extra per-question column (``judged
claim``: traces that state the claim / traces judged) and two extra metrics:

- ``judged_claim_accuracy = stating / judged`` over the items the judge answered;
- ``judged_claim_failed = failed / items``: items whose judgment failed after the retries
  (recorded with their raw answers in the run directory, never counted as either verdict).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurist.datasets.gates import GoldQuestion, TraceRecord
from jurist.judges.config import JudgeConfig, load_config
from jurist.judges.judge import BaselineJudge, Judge, LLMJudge
from jurist.metrics.gates import DEFAULT_REFUSAL_TOKEN, GateThresholds, TraceScore
from jurist.programs.gates import ClaimJudge, claim_baseline, verdict_from_prediction
from jurist.report.gates_records import GateReport
from jurist.runner import Item, JudgeRecipe, iter_run_results, run_items
from jurist.schemas import ItemResult
from jurist.tasks.gates.scoring import score_traces

__all__ = [
    "DEFAULT_RUNS",
    "TASK",
    "ClaimItems",
    "add_claim_verdicts",
    "claim_baseline_judge",
    "collect_claims",
    "make_claim_judge",
    "score_traces_judged",
]

TASK = "gates-claim"
"""The task name recorded in the claim judge's run directories."""
DEFAULT_RUNS = Path(".jurist_cache") / "gate-judge"


def claim_baseline_judge() -> Judge:
    """The offline claim judge: the lexical coverage of the claim's content words."""
    return BaselineJudge(claim_baseline, name="baseline", version="1")


def make_claim_judge(config: JudgeConfig) -> Judge:
    """The baseline or the LLM claim judge a config names."""
    if config.is_baseline:
        return claim_baseline_judge()
    return LLMJudge(ClaimJudge(), config, verdict_from_prediction)


@dataclass
class ClaimItems:
    """The claim items of a trace file: one per answered trace of an answerable question with
    a gold claim, with the deterministic report they were collected from."""

    gold: str | Path
    traces: str | Path
    report: GateReport
    items: list[Item]
    question_of: dict[str, int]
    """Item id -> the ``id()`` of its gold question (to find its row in :attr:`report`)."""
    sha256: str
    """The hash of the gold and trace files (the run's dataset fingerprint)."""

    def describe(self) -> dict[str, Any]:
        """The dataset record of the claim judge's run: both files, their hash, the item count."""
        return {"path": f"{self.gold} + {self.traces}", "sha256": self.sha256, "items": len(self.items)}


@dataclass
class _Collector:
    items: list[Item] = field(default_factory=list)
    question_of: dict[str, int] = field(default_factory=dict)

    def __call__(self, gold: GoldQuestion, record: TraceRecord, score: TraceScore) -> None:
        if score.refusal or not gold.answerable or not gold.gold_claim:
            return
        item_id = f"line-{record.line}"
        self.items.append(
            Item(
                id=item_id,
                inputs={"question": gold.question, "gold_claim": gold.gold_claim, "answer": record.answer},
            )
        )
        self.question_of[item_id] = id(gold)


def _files_hash(*paths: str | Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def collect_claims(
    gold: str | Path,
    traces: str | Path,
    *,
    thresholds: GateThresholds | None = None,
    refusal_token: str = DEFAULT_REFUSAL_TOKEN,
    list_limit: int = 20,
) -> ClaimItems:
    """Score the traces deterministically and collect the claim items (no model is called)."""
    collect = _Collector()
    report = score_traces(
        gold,
        traces,
        thresholds=thresholds,
        refusal_token=refusal_token,
        list_limit=list_limit,
        on_trace=collect,
    )
    return ClaimItems(gold, traces, report, collect.items, collect.question_of, _files_hash(gold, traces))


def add_claim_verdicts(claims: ClaimItems, results: Iterable[ItemResult]) -> GateReport:
    """Add the claim judge's recorded verdicts to the report of ``claims`` (and return it)."""
    report = claims.report
    stated: dict[int, int] = {}
    judged: dict[int, int] = {}
    failed = 0
    for result in results:
        question = claims.question_of.get(result.id)
        if question is None:
            continue
        if result.status != "ok" or result.output is None:
            failed += 1
            continue
        judged[question] = judged.get(question, 0) + 1
        stated[question] = stated.get(question, 0) + int(bool(result.output["states_claim"]))
    for row in report.questions:
        key = id(row.gold)
        if key in judged:
            row.extra["judged claim"] = f"{stated[key]}/{judged[key]}"
    total = sum(judged.values())
    report.extra_metrics["judged_claim_accuracy"] = sum(stated.values()) / total if total else None
    report.extra_metrics["judged_claim_failed"] = failed / len(claims.items) if claims.items else None
    return report


def score_traces_judged(
    gold: str | Path,
    traces: str | Path,
    config: JudgeConfig | str | Path,
    *,
    run_dir: str | Path | None = None,
    progress: bool = False,
    retry_failed: bool = False,
    thresholds: GateThresholds | None = None,
    refusal_token: str = DEFAULT_REFUSAL_TOKEN,
    list_limit: int = 20,
) -> GateReport:
    """Score traces deterministically, then add the judge's claim verdicts to the report.

    Args:
        gold: The gold QA set.
        traces: The trace file.
        config: The claim judge's config (``baseline`` or any LLM), or its YAML path.
        run_dir: Where the judge's run is kept (resumable, cached); by default under
            ``.jurist_cache/gate-judge/`` named after the inputs and the judge.
        progress: Show the runner's progress bar.
        retry_failed: Judge again the items whose judgment failed in an earlier run.
        thresholds: Gate thresholds (see :func:`~jurist.tasks.gates.score_traces`).
        refusal_token: The answer that means "refused".
        list_limit: How many unmatched traces to keep for the report.
    """
    judge_config = config if isinstance(config, JudgeConfig) else load_config(config)
    claims = collect_claims(
        gold, traces, thresholds=thresholds, refusal_token=refusal_token, list_limit=list_limit
    )
    judge = make_claim_judge(judge_config)
    folder = (
        Path(run_dir) if run_dir is not None else DEFAULT_RUNS / f"{claims.sha256[:12]}-{judge.fingerprint()}"
    )
    run_items(
        claims.items,
        judge,
        folder,
        task=TASK,
        dataset=claims.describe(),
        config=judge_config.model_dump(mode="json"),
        total=len(claims.items),
        concurrency=judge_config.concurrency,
        retry_failed=retry_failed,
        progress=progress,
        # Other processes (--workers, Ray) rebuild the same judge from this.
        recipe=JudgeRecipe(make_claim_judge, judge_config),
    )
    return add_claim_verdicts(claims, iter_run_results(folder))
