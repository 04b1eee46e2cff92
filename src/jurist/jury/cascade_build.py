"""The run of a cascade: per item the output of the stage that decided it, built from the
stages' recorded runs with no model call.

Per item the run keeps the deciding stage's output plus ``cascade`` (``stage``; ``path``: the
stages it went through; ``reasons``: why each one before the last sent it on), and the usage,
raw answers and LM calls of every stage on its path, so ``task.score(DIR)`` scores the cascade
with the task's own scoring and the HTML report and ``jurist view`` read it like any run. An
item whose deciding stage gave no verdict (the last stage failed on it) is a failed item.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel

from jurist.datasets.samples import resolve_input
from jurist.jury.cascade_config import Cascade
from jurist.jury.cascade_paths import StageRecord, Step, item_path
from jurist.jury.cascade_report import CascadeViews, add_columns, cascade_section, section_markdown
from jurist.jury.derived_run import (
    Outcome,
    RecordedJudge,
    combined_fingerprint,
    read_manifest,
    record_items,
    write_section,
)
from jurist.report.review import Review
from jurist.runner import RESULTS_DB, ResultStore, run_lock
from jurist.schemas import Usage
from jurist.tasks._contract import JudgeRun, Task, write_views
from jurist.tasks._selection import Selection, judged_description

__all__ = ["CASCADE_JSON", "build_cascade_run"]

CASCADE = "cascade"
"""The key of the cascade's part of the summary, and of its per-item output."""
CASCADE_JSON = f"{CASCADE}.json"
"""The cascade's part of the summary in its run directory (also its identity while it runs)."""


@dataclass
class _Outcome(Outcome):
    """What the cascade's run records for one item: with the stages on its path."""

    error_type: ClassVar[str] = "cascade_failed"

    path: list[Step]


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
    output[CASCADE] = {
        "stage": last.stage,
        "path": [step.stage for step in path],
        "reasons": {step.stage: step.reason for step in path if step.reason is not None},
    }
    return _Outcome(item_id, output, None, raw, usage, attempts, latency, path)


class _CascadeJudge(RecordedJudge[_Outcome]):
    """The runner's judge of a cascade's run: it answers each item from the stages' recorded runs."""

    def __init__(
        self, name: str, fingerprint: str, outcomes: dict[str, _Outcome], stores: dict[str, ResultStore]
    ):
        super().__init__(name, fingerprint, outcomes)
        self.stores = stores

    def stores_of(self, item_id: str) -> Iterable[ResultStore]:
        """The stores of the stages on the item's path (that ran), in stage order."""
        for step in self.outcomes[item_id].path:
            store = self.stores.get(step.stage)
            if store is not None:
                yield store


def build_cascade_run(
    task: Task,
    cascade: Cascade,
    data: str | Path,
    out: Path,
    options: BaseModel,
    records: Mapping[str, StageRecord],
    only: Collection[str] | None = None,
    select: Selection | None = None,
) -> JudgeRun:
    """Write the cascade's run into ``out`` from its stages' recorded runs (no model is called),
    of the items of ``data`` (only those whose id is in ``only``, if given).

    ``records`` may hold more items than reach a stage (``jurist calibrate`` runs every stage on
    every gold item): only the stages on an item's path count for it. ``select`` is the
    selection of rows (``--limit``, ``--sample``) the run records, if any.
    """
    review = task.review(options)
    path = resolve_input(data)
    dataset = task.read(path, options)
    wanted = None if only is None else set(only)
    items = [item for item in task.items(dataset, options) if wanted is None or item.id in wanted]
    ids = [item.id for item in items]
    outcomes = {item_id: _outcome(item_id, cascade, records, review) for item_id in ids}
    identity = [cascade.fingerprint()]
    identity += [str(read_manifest(record.run_dir).get("judge_fingerprint")) for record in records.values()]
    fingerprint = combined_fingerprint(identity)
    head = records.get(cascade.stages[0].name)
    first = read_manifest(head.run_dir) if head is not None else {}
    with run_lock(out), ExitStack() as opened:
        stores = {
            name: opened.enter_context(ResultStore(record.run_dir / RESULTS_DB))
            for name, record in records.items()
            if (record.run_dir / RESULTS_DB).is_file()
        }
        judge = _CascadeJudge(cascade.judge_name, fingerprint, outcomes, stores)
        config = cascade.describe()
        described = judged_description(dataset.describe(), items, select, task.optional_inputs)
        scores = record_items(
            task, judge, out, path, dataset, ids, options, config, first.get("task_source"), described
        )
        paths = {item_id: outcome.path for item_id, outcome in outcomes.items()}
        section = cascade_section(cascade, records, review, scores.items, paths)
        add_columns(scores.items, paths)
        write_section(task, out, scores, CASCADE, section, section_markdown(section))
    cached = [stage.config.cache_dir for stage in cascade.stages if stage.config and stage.config.cache]
    # The figure cache of the first stage's judge config that keeps a cache.
    write_views(CascadeViews(task, section), out, scores, options, cache_dir=cached[0] if cached else None)
    return JudgeRun(run_dir=out, scores=scores)
