"""A run derived from other runs' records with no model call: what a panel's run
(:mod:`jurist.jury.run`) and a cascade's run (:mod:`jurist.jury.cascade_build`) share.

A derived run is an ordinary run of the task, written by the runner with a judge that answers
each item from the recorded runs (:class:`RecordedJudge`), so ``task.score(DIR)``, the HTML
report and ``jurist view`` read it like any run. It is derived again on every call, and an item
whose recorded runs changed since is recorded again, so a run resumed later is reflected in it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from jurist.judges.judge import JudgeFailure, Judgment
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.runner import MANIFEST, RESULTS_DB, Item, ResultStore, Scale, iter_run_results, run_items
from jurist.schemas import ItemResult, LMCall, Usage
from jurist.tasks._contract import Scores, Task, atomic_write_text, json_ready
from jurist.tasks._results import strict_json, write_exports

__all__ = [
    "ITEM_KEY",
    "Outcome",
    "RecordedJudge",
    "SectionViews",
    "combined_fingerprint",
    "default_dir",
    "read_manifest",
    "record_items",
    "write_section",
]

ITEM_KEY = "item"
"""The one input of a derived run's items: the item's id."""


def default_dir(task: Task, data: str | Path, kind: str, name: str, fingerprint: str) -> Path:
    """``runs/TASK/DATA-KIND-NAME-FINGERPRINT``: where a derived run goes when no ``out`` is given
    (stable, so a second call resumes the first)."""
    stem = Path(str(data).removeprefix("sample:")).stem or "data"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task.name)
    safe_name = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return Path("runs") / safe / f"{stem}-{kind}-{safe_name}-{fingerprint}"


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run directory's manifest, or ``{}`` when it has none that can be read."""
    try:
        loaded = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def combined_fingerprint(parts: Iterable[str]) -> str:
    """A short hash of ``parts``: a derived run's judge fingerprint, from what decides its
    verdicts and the judge fingerprints of the runs it is derived from."""
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


@dataclass
class Outcome:
    """What a derived run records for one item: the output (``None`` for a failed item, with
    ``error`` saying why), and the raw answers, usage, attempts and latency of the recorded runs
    it comes from. A subclass names its failures' ``error_type`` and adds what it records."""

    error_type: ClassVar[str] = "failed"

    id: str
    output: dict[str, Any] | None
    error: str | None
    raw: list[str]
    usage: Usage
    attempts: int
    latency_s: float

    def result(self, calls: list[LMCall] | None) -> ItemResult:
        """The item's result as the runner records it, with ``calls`` as its LM calls."""
        return ItemResult(
            id=self.id,
            status="ok" if self.output is not None else "failed",
            output=self.output,
            error=self.error,
            error_type=None if self.output is not None else self.error_type,
            raw=self.raw,
            attempts=self.attempts,
            latency_s=self.latency_s,
            usage=self.usage,
            calls=calls,
        )


OutcomeT = TypeVar("OutcomeT", bound=Outcome)


class RecordedJudge(Generic[OutcomeT]):
    """The runner's judge of a derived run: it answers each item with its outcome, and the LM
    calls the item's recorded runs made (a subclass says which stores hold them)."""

    def __init__(self, name: str, fingerprint: str, outcomes: dict[str, OutcomeT]) -> None:
        self.name = name
        self._fingerprint = fingerprint
        self.outcomes = outcomes

    def fingerprint(self) -> str:
        return self._fingerprint

    def stores_of(self, item_id: str) -> Iterable[ResultStore]:
        """The stores of the recorded runs whose LM calls count for the item, in order."""
        raise NotImplementedError

    def calls(self, item_id: str) -> list[LMCall]:
        """Every LM call the item's recorded runs made for it, in :meth:`stores_of` order."""
        found: list[LMCall] = []
        for store in self.stores_of(item_id):
            detail = store.item_detail(item_id)
            if detail is not None and detail.calls:
                found += detail.calls
        return found

    async def judge(self, inputs: dict[str, Any]) -> Judgment:
        outcome = self.outcomes[inputs[ITEM_KEY]]
        calls = self.calls(outcome.id)
        if outcome.output is None:
            raise JudgeFailure(
                outcome.error or "no verdict",
                error_type=outcome.error_type,
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


def record_items(
    task: Task,
    judge: RecordedJudge[Any],
    out: Path,
    path: Path,
    dataset: Any,
    ids: Sequence[str],
    options: BaseModel,
    config: dict[str, Any],
    task_source: str | None,
    described: dict[str, Any] | None = None,
) -> Scores:
    """Record ``judge``'s answer for each of ``ids`` into ``out``, then score ``out`` against the
    data file ``path`` without writing the exports.

    The caller holds ``out``'s run lock and keeps ``judge``'s stores open. ``config`` is what
    the manifest records as the judge's config, ``described`` its dataset (default:
    ``dataset.describe()``; with the selection of rows, :func:`jurist.tasks._selection.judged_description`).
    """
    run_items(
        [Item(item_id, {ITEM_KEY: item_id}, record_inputs=False) for item_id in ids],
        judge,
        out,
        task=task.name,
        task_source=task_source,
        task_options=options.model_dump(mode="json"),
        dataset=described if described is not None else dataset.describe(),
        config=config,
        total=len(ids),
        concurrency=32,
        retry_failed=True,
        progress=False,
        scale=Scale(),  # read from the recorded runs in this process: nothing to spread
    )
    _refresh(out, judge)
    return task.score(out, options, gold=path, write=False)


def _refresh(out: Path, judge: RecordedJudge[Any]) -> None:
    """Re-record the items whose recorded runs changed since the derived run recorded them."""
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


def write_section(
    task: Task, out: Path, scores: Scores, key: str, section: Mapping[str, Any], markdown: str
) -> None:
    """Write a derived run's exports with its ``section`` of the summary under ``key``.

    The report is the task's own (of the summary without the section) followed by the section's
    ``markdown``; the section is also written alone to ``out/KEY.json``.
    """
    report = task.report(scores)
    scores.summary = json_ready({**scores.summary, key: section})
    scores.report = report.rstrip("\n") + "\n\n" + markdown
    write_exports(out, scores, iter_run_results(out))
    atomic_write_text(out / f"{key}.json", strict_json(json_ready(section)))


class SectionViews(Task):
    """A task as a derived run shows it: the task's review with the run's own per-item columns
    added, and the task's figures followed by those of the run's section of the summary."""

    def __init__(
        self,
        task: Task,
        section: Mapping[str, Any],
        columns: Sequence[str],
        figures: Callable[[Mapping[str, Any]], list[Figure]],
    ) -> None:
        self.task = task
        self.section = section
        self.columns = tuple(columns)
        self.section_figures = figures
        self.name = task.name
        self.description = task.description
        self.source = task.source

    def review(self, options: BaseModel) -> Review:
        review = self.task.review(options)
        return replace(review, columns=(*review.columns, *self.columns))

    def figures(self, scores: Scores, options: BaseModel) -> list[Figure]:
        return [*self.task.figures(scores, options), *self.section_figures(self.section)]
