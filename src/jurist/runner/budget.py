"""What a batch has spent, the cost limit that stops it, and the figures of its progress bar.

A cost limit (``jurist judge --max-cost USD``, ``jurist.judge(..., max_cost=USD)``) is set
for a block of code with :func:`spending_limit`; every run judged inside it shares it (a
jury's jurors, a cascade's stages). What counts:

- the cost already recorded in each run directory the block judges into (so the same
  command run again with the same limit starts nothing new, and a higher limit resumes),
  counted once per directory: a directory opened again under the same limit (``calibrate``
  reads a juror's run back for its own leaderboard row) adds nothing more, since what it
  spent since was counted as it was spent;
- the cost of every item finished in this call, as the provider's token counts priced by
  the model's entry in the price table. Answers served from the response cache cost 0:
  they were paid for when they were first asked.

The engine asks :attr:`Budget.exhausted` before it starts each item. Once the spend has
reached the limit it starts no more, lets the items in flight finish (they are recorded),
and raises :class:`~jurist.errors.CostLimitReached`. The spend of items in flight is not
known while they run, so a run stops within one batch of the limit: at most
``concurrency`` items are started after the spend that reaches it.

A limit needs prices: a model the price table does not know is refused before anything is
judged (:func:`check_priced`; :func:`check_priced_configs` for every judge of a command
before the first is run), since its spend could not be measured.

The limit is per process. A run spread over several worker processes must record results
in the process that holds the limit (the engine's own bookkeeping) for it to apply.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jurist.errors import ConfigError, CostLimitReached
from jurist.judges.config import JudgeConfig
from jurist.judges.pricing import token_price, unpriced_reason
from jurist.schemas import ItemResult

__all__ = ["Budget", "CostLimit", "active_limit", "check_priced", "check_priced_configs", "spending_limit"]


@dataclass
class CostLimit:
    """A limit in dollars on the spend of every run judged inside :func:`spending_limit`.

    Attributes:
        limit: The most that may be spent, in dollars.
        spent: Dollars spent so far by the runs under the limit (what they had recorded
            when they started, plus what they spent since).
        opened: The run directories whose recorded cost is counted in ``spent``.
    """

    limit: float
    spent: float = 0.0
    opened: set[Path] = field(default_factory=set)

    @property
    def reached(self) -> bool:
        """Whether the spend has reached the limit."""
        return self.spent >= self.limit


_active: contextvars.ContextVar[CostLimit | None] = contextvars.ContextVar("jurist_cost_limit", default=None)


@contextmanager
def spending_limit(max_cost: float | None) -> Iterator[CostLimit | None]:
    """Limit the spend of every run judged in this context to ``max_cost`` dollars.

    ``None`` sets no limit (and keeps one set by an enclosing context).

    Raises:
        ConfigError: ``max_cost`` is negative or not a number.
    """
    if max_cost is None:
        yield _active.get()
        return
    if not isinstance(max_cost, int | float) or isinstance(max_cost, bool) or not max_cost >= 0:
        raise ConfigError(f"max_cost must be a number of dollars >= 0 (got {max_cost!r})", field="max_cost")
    limit = CostLimit(limit=float(max_cost))
    token = _active.set(limit)
    try:
        yield limit
    finally:
        _active.reset(token)


def active_limit() -> CostLimit | None:
    """The cost limit set by the innermost :func:`spending_limit`, or ``None``."""
    return _active.get()


def check_priced(judge: Any) -> None:
    """Refuse a cost limit for a judge whose model has no price (its spend is unknown).

    A judge without an LM (the offline baseline) costs nothing and passes.

    Raises:
        ConfigError: The judge's model is not in the price table.
    """
    lm = getattr(judge, "lm", None)
    if lm is not None and token_price(lm) is None:
        raise ConfigError(
            f"{unpriced_reason(lm)}, so a cost limit cannot be kept; "
            "judge without --max-cost (max_cost=), or use a model with a known price",
            field="max_cost",
        )


def check_priced_configs(configs: Iterable[JudgeConfig]) -> None:
    """:func:`check_priced` for the judges of ``configs``, before any is built or run (a command
    that judges with several, such as ``calibrate``, refuses a limit before it spends anything).

    Raises:
        ConfigError: A config's model is not in the price table.
    """
    from jurist.judges.lm import build_lm

    for config in configs:
        if not config.is_baseline:  # no key needed, no cache touched: only the price is read
            offline = config.model_copy(update={"api_key_env": None, "cache": False})
            check_priced(SimpleNamespace(lm=build_lm(offline)))


def _money(value: float) -> str:
    return f"${value:.4f}" if value < 100 else f"${value:,.2f}"


@dataclass
class Budget:
    """One run's spend and counts, for the cost limit and the progress bar.

    Attributes:
        limit: The cost limit the run is under, or ``None``.
        failed: Items recorded as failed in this call.
        cached: Items of this call whose every LM call was answered by the response cache.
        spent: Dollars spent in this call (known costs only).
        unpriced: Items of this call that called a provider but whose cost is unknown.
    """

    limit: CostLimit | None = None
    failed: int = 0
    cached: int = 0
    spent: float = 0.0
    unpriced: int = 0

    def start(self, run_dir: Path, recorded_cost: float | None) -> None:
        """Count the cost ``run_dir`` had recorded before this call against the limit (once per
        directory under one limit: a second opening's recorded cost was counted as it was spent)."""
        if self.limit is None:
            return
        key = run_dir.resolve()
        if key not in self.limit.opened:
            self.limit.opened.add(key)
            self.limit.spent += recorded_cost or 0.0

    def add(self, result: ItemResult) -> None:
        """Count one finished item: its status, whether the cache answered it, its cost."""
        usage = result.usage
        if result.status != "ok":
            self.failed += 1
        if usage.cache_hits and not usage.calls:
            self.cached += 1
        if usage.cost is not None:
            self.spent += usage.cost
            if self.limit is not None:
                self.limit.spent += usage.cost
        elif usage.calls:
            self.unpriced += 1

    @property
    def exhausted(self) -> bool:
        """Whether the cost limit has been reached (never, without a limit)."""
        return self.limit is not None and self.limit.reached

    def postfix(self) -> dict[str, Any]:
        """The progress bar's figures: failed and cached items, and the spend (with the limit)."""
        figures: dict[str, Any] = {"failed": self.failed, "cached": self.cached}
        if self.spent or self.limit is not None:
            spend = _money(self.spent) + ("+?" if self.unpriced else "")
            if self.limit is not None:
                spend += f" (run {_money(self.limit.spent)}/{_money(self.limit.limit)})"
            figures["spent"] = spend
        elif self.unpriced:
            figures["spent"] = "unknown"
        return figures

    def reached(self, run_dir: Path, judged: int) -> CostLimitReached:
        """The error that stops a run held back by the limit (after its items in flight finished)."""
        assert self.limit is not None
        return CostLimitReached(
            f"cost limit reached: {_money(self.limit.spent)} spent of the {_money(self.limit.limit)} limit "
            f"({_money(self.spent)} in this call, {judged} item(s) judged); items not yet judged were not "
            f"started. Finished items are kept in {run_dir}: run the same command with a higher limit "
            "(or none) to resume",
            spent=self.limit.spent,
            limit=self.limit.limit,
            run_dir=run_dir,
        )
