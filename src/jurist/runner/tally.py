"""What every backend of the runner reports to: the items to judge, and each one that finished.

Whatever judges a run (this process, local worker processes, Ray), it takes its work from
:func:`pending` (the dataset's items in order with their positions, recorded ones skipped)
and reports each finished item once to :meth:`Tally.record`, which keeps the run's
:class:`RunSummary` and progress bar; it asks :meth:`Tally.may_launch` before it starts more
work. So counts, usage, the bar and any limit on a run are the same for every backend. Each
backend judges an item with :func:`judge_one`, so a result means the same wherever it was made.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from jurist.judges.judge import Judge, JudgeFailure
from jurist.redaction import redact_secrets
from jurist.runner.budget import Budget
from jurist.schemas import ItemResult, Usage, cached_texts, mark_cached


@dataclass(frozen=True)
class Item:
    """One unit of work: an id unique in its dataset and the judge's keyword inputs."""

    id: str
    inputs: dict[str, Any]
    record_inputs: bool = True
    """Whether the run store records :attr:`inputs` as the judged text (``False`` for items
    whose inputs only point at what a judge reads back, as a jury's derived run's do)."""

    @property
    def recorded_inputs(self) -> dict[str, Any] | None:
        """The inputs the run store records for this item, or ``None``."""
        return self.inputs if self.record_inputs else None


@dataclass
class RunSummary:
    """What a call of :func:`jurist.runner.run_items` did, and the state of the whole run after it."""

    run_dir: Path
    judged: int = 0
    skipped: int = 0
    ok: int = 0
    failed: int = 0
    elapsed_s: float = 0.0
    usage: Usage = field(default_factory=Usage)
    interrupted: bool = False
    stopped: str | None = None
    """Why the run stopped early (a fatal provider error), or ``None``."""
    unrecorded: Usage = field(default_factory=Usage)
    """Usage of provider calls made in this call by judgments that were not recorded because
    a fatal provider error stopped them (part of the run's usage, in no item's)."""

    def count_unrecorded(self, exc: BaseException | None) -> None:
        """Add the calls an unrecorded judgment made, as the error that stopped it carries them
        (:attr:`jurist.errors.FatalProviderError.usage`); nothing for other errors."""
        usage = getattr(exc, "usage", None)
        if isinstance(usage, Usage):
            self.add_unrecorded(usage)

    def add_unrecorded(self, usage: Usage) -> None:
        """Add the usage of judgments that were stopped and so are in no recorded item."""
        self.unrecorded = self.unrecorded.add(usage)

    @property
    def rate(self) -> float:
        """Items judged per second in this call."""
        return self.judged / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass
class Tally:
    """The bookkeeping of one call of the runner: its summary, its progress bar, and its
    spend (:class:`~jurist.runner.budget.Budget`: the cost limit and the bar's figures)."""

    summary: RunSummary
    bar: tqdm
    budget: Budget = field(default_factory=Budget)
    held_back: bool = False
    """Whether the cost limit answered a backend's :meth:`may_launch` with no."""
    work_done: bool = False
    """Whether :func:`pending` handed out every item (so none was held back)."""

    def skip(self) -> None:
        """Count an item recorded before (not judged again)."""
        self.summary.skipped += 1
        self.bar.update(1)

    def record(self, result: ItemResult) -> None:
        """Count a finished item: once per item, from whichever backend judged it."""
        summary = self.summary
        summary.judged += 1
        summary.usage = summary.usage.add(result.usage)
        if result.status == "ok":
            summary.ok += 1
        else:
            summary.failed += 1
        self.budget.add(result)
        if not self.bar.disable:
            self.bar.set_postfix(self.budget.postfix(), refresh=False)
        self.bar.update(1)

    def may_launch(self) -> bool:
        """Whether a backend may start judging another item (asked before each one it starts)."""
        if self.budget.exhausted:
            self.held_back = True
            return False
        return self.summary.stopped is None


def pending(
    items: Iterable[Item], recorded: dict[str, str], *, retry_failed: bool, tally: Tally
) -> Iterator[tuple[int, Item]]:
    """The items to judge with their positions in the dataset (counted from 0), skipping (and
    counting as skipped) those ``recorded`` as ok, and as failed unless ``retry_failed``."""
    for position, item in enumerate(items):
        status = recorded.get(redact_secrets(item.id)) if recorded else None  # as the store keeps it
        if status == "ok" or (status == "failed" and not retry_failed):
            tally.skip()
            continue
        yield position, item
    tally.work_done = True


def to_judge(total: int | None, recorded: dict[str, str], *, retry_failed: bool) -> int | None:
    """How many of ``total`` items :func:`pending` will yield (if the recorded ids are all
    in the dataset; ``None`` when the total is unknown)."""
    if total is None:
        return None
    kept = sum(1 for status in recorded.values() if status == "ok" or not retry_failed)
    return max(0, total - kept)


async def judge_one(judge: Judge, item: Item) -> ItemResult:
    """Judge one item into its result: a judgment that fails is a failed result, not an error
    (only a fatal provider error or a bug propagates)."""
    start = time.perf_counter()
    try:
        judgment = await judge.judge(item.inputs)
    except JudgeFailure as failure:
        return ItemResult(
            id=item.id,
            status="failed",
            error=str(failure),
            error_type=failure.error_type,
            raw=failure.raw,
            attempts=failure.attempts,
            latency_s=time.perf_counter() - start,
            usage=failure.usage,
            calls=failure.calls,
        )
    cached = cached_texts(judgment)
    # A served verdict's parts are kept as they are (the objects the mark names, of the types
    # the fields take), so the run store knows them as the cache's texts.
    build = ItemResult.model_construct if cached is not None else ItemResult
    result = build(
        id=item.id,
        status="ok",
        output=judgment.output,
        raw=judgment.raw,
        attempts=judgment.attempts,
        latency_s=time.perf_counter() - start,
        usage=judgment.usage,
        calls=judgment.calls,
    )
    return mark_cached(result, cached) if cached is not None else result
