"""The run of a cascade: per item the output of the stage that decided it, built from the
stages' recorded runs with no model call.

Per item the run keeps the deciding stage's output plus ``cascade`` (``stage``; ``path``: the
stages it went through; ``reasons``: why each one before the last sent it on), and the usage,
raw answers and LM calls of every stage on its path, so ``task.score(DIR)`` scores the cascade
with the task's own scoring and the HTML report and ``jurist view`` read it like any run. An
item whose deciding stage gave no verdict (the last stage failed on it) is a failed item.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from jurist.datasets.samples import resolve_input
from jurist.judges.judge import JudgeFailure, Judgment
from jurist.jury.cascade_config import Cascade
from jurist.jury.cascade_paths import StageRecord, Step, item_path
from jurist.jury.cascade_report import CascadeViews, add_columns, cascade_section, section_markdown
from jurist.report.html import write_run_views
from jurist.report.review import Review
from jurist.runner import MANIFEST, RESULTS_DB, Item, ResultStore, iter_run_results, run_items, run_lock
from jurist.schemas import ItemResult, LMCall, Usage
from jurist.tasks._contract import JudgeRun, Task, atomic_write_text, json_ready
from jurist.tasks._results import strict_json, write_exports

__all__ = ["CASCADE_JSON", "build_cascade_run", "read_manifest"]

ITEM_KEY = "item"
CASCADE_JSON = "cascade.json"
"""The cascade's part of the summary in its run directory (also its identity while it runs)."""


@dataclass
class _Outcome:
    """What the cascade's run records for one item."""

    id: str
    output: dict[str, Any] | None
    error: str | None
    raw: list[str]
    usage: Usage
    attempts: int
    latency_s: float
    path: list[Step]

    def result(self, calls: list[LMCall] | None) -> ItemResult:
        return ItemResult(
            id=self.id,
            status="ok" if self.output is not None else "failed",
            output=self.output,
            error=self.error,
            error_type=None if self.output is not None else "cascade_failed",
            raw=self.raw,
            attempts=self.attempts,
            latency_s=self.latency_s,
            usage=self.usage,
            calls=calls,
        )


def _outcome(item_id: str, cascade: Cascade, records: Mapping[str, StageRecord], review: Review) -> _Outcome:
    path = item_path(cascade, records, item_id, review)
    usage, attempts, latency = Usage(), 0, 0.0
    raw: list[str] = []
    for step in path:
        found = records[step.stage].results.get(item_id)
        if found is not None:
            usage, raw = usage.add(found.usage), raw + found.raw
            attempts, latency = attempts + found.attempts, latency + found.latency_s
    last = path[-1] if path else None
    decided = records[last.stage].results.get(item_id) if last is not None and last.reason is None else None
    if last is None or decided is None or decided.status != "ok" or decided.output is None:
        where = last.stage if last is not None else cascade.stages[0].name
        why = (
            (decided.error if decided is not None else None)
            or (last.reason if last else None)
            or "not judged"
        )
        message = f"stage {where} gave no verdict: {why}"
        return _Outcome(item_id, None, message, raw, usage, attempts, latency, path)
    output = dict(decided.output)
    output["cascade"] = {
        "stage": last.stage,
        "path": [step.stage for step in path],
        "reasons": {step.stage: step.reason for step in path if step.reason is not None},
    }
    return _Outcome(item_id, output, None, raw, usage, attempts, latency, path)


class _CascadeJudge:
    """The runner's judge of a cascade's run: it answers each item from the stages' recorded runs."""

    def __init__(
        self, name: str, fingerprint: str, outcomes: dict[str, _Outcome], stores: dict[str, ResultStore]
    ):
        self.name = name
        self._fingerprint = fingerprint
        self.outcomes = outcomes
        self.stores = stores

    def fingerprint(self) -> str:
        return self._fingerprint

    def calls(self, item_id: str) -> list[LMCall]:
        """Every LM call the stages on the item's path made for it, in stage order."""
        found: list[LMCall] = []
        for step in self.outcomes[item_id].path:
            store = self.stores.get(step.stage)
            detail = store.item_detail(item_id) if store is not None else None
            if detail is not None and detail.calls:
                found += detail.calls
        return found

    async def judge(self, inputs: dict[str, Any]) -> Judgment:
        outcome = self.outcomes[inputs[ITEM_KEY]]
        calls = self.calls(outcome.id)
        if outcome.output is None:
            raise JudgeFailure(
                outcome.error or "no verdict",
                error_type="cascade_failed",
                raw=outcome.raw,
                usage=outcome.usage,
                attempts=outcome.attempts,
                calls=calls,
            )
        return Judgment(
            output=outcome.output,
            raw=outcome.raw,
            usage=outcome.usage,
            attempts=outcome.attempts,
            calls=calls,
        )


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run directory's manifest, or ``{}`` when it has none that can be read."""
    try:
        loaded = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def build_cascade_run(
    task: Task,
    cascade: Cascade,
    data: str | Path,
    out: Path,
    options: BaseModel,
    records: Mapping[str, StageRecord],
) -> JudgeRun:
    """Write the cascade's run into ``out`` from its stages' recorded runs (no model is called).

    ``records`` may hold more items than reach a stage (``jurist calibrate`` runs every stage on
    every gold item): only the stages on an item's path count for it.
    """
    review = task.review(options)
    path = resolve_input(data)
    dataset = task.read(path, options)
    ids = [item.id for item in task.items(dataset, options)]
    outcomes = {item_id: _outcome(item_id, cascade, records, review) for item_id in ids}
    identity = [cascade.fingerprint()]
    identity += [str(read_manifest(record.run_dir).get("judge_fingerprint")) for record in records.values()]
    fingerprint = hashlib.sha256("|".join(identity).encode()).hexdigest()[:16]
    head = records.get(cascade.stages[0].name)
    first = read_manifest(head.run_dir) if head is not None else {}
    with run_lock(out), ExitStack() as opened:
        stores = {
            name: opened.enter_context(ResultStore(record.run_dir / RESULTS_DB))
            for name, record in records.items()
            if (record.run_dir / RESULTS_DB).is_file()
        }
        judge = _CascadeJudge(cascade.judge_name, fingerprint, outcomes, stores)
        run_items(
            [Item(item_id, {ITEM_KEY: item_id}) for item_id in ids],
            judge,
            out,
            task=task.name,
            task_source=first.get("task_source"),
            task_options=options.model_dump(mode="json"),
            dataset=dataset.describe(),
            config=cascade.describe(),
            total=len(ids),
            concurrency=32,
            retry_failed=True,
            progress=False,
        )
        _refresh(out, judge)
        scores = task.score(out, options, gold=path, write=False)
        section = cascade_section(
            cascade, records, review, scores.items, {i: o.path for i, o in outcomes.items()}
        )
        add_columns(scores.items, {item_id: outcome.path for item_id, outcome in outcomes.items()})
        report = task.report(scores)
        scores.summary = json_ready({**scores.summary, "cascade": section})
        scores.report = report.rstrip("\n") + "\n\n" + section_markdown(section)
        write_exports(out, scores, iter_run_results(out))
        atomic_write_text(out / CASCADE_JSON, strict_json(json_ready(section)))
    write_run_views(CascadeViews(task, section), out, scores, options)
    return JudgeRun(run_dir=out, scores=scores)


def _refresh(out: Path, judge: _CascadeJudge) -> None:
    """Re-record the items whose stages' runs changed since the cascade's run recorded them."""
    with ResultStore(out / RESULTS_DB, judge_fingerprint=judge.fingerprint()) as store:
        stale = [
            recorded.id
            for recorded in store.iter_results()
            if recorded.id in judge.outcomes
            and (recorded.output, recorded.status)
            != (judge.outcomes[recorded.id].output, judge.outcomes[recorded.id].result(None).status)
        ]
        for item_id in stale:
            store.put(judge.outcomes[item_id].result(judge.calls(item_id)))
