"""The dry run of ``judge``: items, cached items, tokens and cost per judge, calling nothing.

For every judge a run would call (one; each juror of a jury; each stage of a cascade) and
every item it would judge now (items already recorded in its run directory are skipped,
as a resume skips them; failed ones too unless ``retry_failed``), the judge's program is
run up to its first LM call (:mod:`jurist.judges.estimate`). From there:

- **cached**: the response cache holds the answer, so the call costs nothing;
- **prompt tokens** of the calls that would reach the provider: their messages counted
  with the model's tokenizer (:mod:`jurist.judges.tokens`): exact for OpenAI models,
  approximate (``cl100k_base``) for others;
- **completion tokens** (an estimate): the mean length of this judge's answers that are
  known (the cached ones among the items to judge, and the provider calls recorded in its
  run directory) when there are some; otherwise 50 tokens per output field of the judge's
  signature, plus 10, never above ``max_tokens``;
- **cost** (an estimate): those tokens at the model's prices in the price table jurist
  bills with (:mod:`jurist.judges.pricing`); a model without a price has an unknown cost,
  never 0. ``at most`` prices every completion at ``max_tokens``.

A cascade's first stage is estimated exactly; later stages are upper bounds (as if every
item reached them). Nothing is sent, no run directory is created or written, no API key
is needed, and a cache directory that does not exist is not created.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd
from pydantic import BaseModel

from jurist.judges.config import JudgeConfig

if TYPE_CHECKING:
    from jurist.tasks._selection import Selection

__all__ = [
    "Estimate",
    "JudgeTarget",
    "Scope",
    "estimate_judges",
    "estimate_of",
    "judge_row",
    "offline_config",
]

Scope = Literal["exact", "upper bound"]
"""How a judge's estimate holds: for every item it would judge, or as an upper bound."""

PER_OUTPUT_FIELD = 50
"""Completion tokens assumed per output field when no cached answer shows the real length."""
ANSWER_FRAME = 10
"""Completion tokens assumed for the answer's framing (field markers, the end marker)."""
COLUMNS = [
    "judge",
    "model",
    "scope",
    "items",
    "recorded",
    "to_judge",
    "cached",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "completion_basis",
    "cost",
    "cost_max",
    "price",
    "tokenizer",
    "run_dir",
]


@dataclass(frozen=True)
class JudgeTarget:
    """One judge a run would call.

    Attributes:
        name: Its name (a juror's or stage's name; ``stage/juror`` inside a cascade).
        config: Its judge config.
        run_dir: Its run directory (whose recorded items are skipped).
        scope: ``exact``, or ``upper bound`` for a cascade stage after the first.
        repeat: Which repeat of its config it answers as (its cache entries differ per repeat).
    """

    name: str
    config: JudgeConfig
    run_dir: Path
    scope: Scope = "exact"
    repeat: int = 1


@dataclass
class Estimate:
    """What ``judge`` would do: one row per judge (:data:`COLUMNS`) and the notes that say how
    each figure was made. ``cost`` is ``None`` where a model has no price."""

    task: str
    data: str
    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def cost(self) -> float | None:
        """The estimated cost of every judge together (``None`` if one has no price)."""
        costs = self.table["cost"].tolist()
        return None if any(value is None or pd.isna(value) for value in costs) else float(sum(costs))

    def lines(self) -> list[str]:
        """The estimate as ``jurist judge --dry-run`` prints it."""
        rows = self.table.to_dict(orient="records")
        lead = ["dataset"] if "dataset" in self.table.columns else []  # calibrate: judge × gold file
        header = [
            *lead,
            "judge",
            "model",
            "to judge",
            "cached",
            "calls",
            "prompt tok",
            "completion tok*",
            "cost*",
            "at most",
        ]
        cells = [
            [
                *(str(row[column]) for column in lead),
                str(row["judge"]) + (" (upper bound)" if row["scope"] != "exact" else ""),
                str(row["model"]),
                f"{row['to_judge']:,}",
                f"{row['cached']:,}",
                f"{row['calls']:,}",
                f"{row['prompt_tokens']:,}",
                f"{row['completion_tokens']:,}",
                _money(row["cost"]),
                _money(row["cost_max"]),
            ]
            for row in rows
        ]
        if len(rows) > 1:
            cells.append(
                [
                    *("" for _ in lead),
                    "total",
                    "",
                    f"{sum(row['to_judge'] for row in rows):,}",
                    f"{sum(row['cached'] for row in rows):,}",
                    f"{sum(row['calls'] for row in rows):,}",
                    f"{sum(row['prompt_tokens'] for row in rows):,}",
                    f"{sum(row['completion_tokens'] for row in rows):,}",
                    _money(self.cost),
                    _money(_total(row["cost_max"] for row in rows)),
                ]
            )
        widths = [max(len(line[i]) for line in [header, *cells]) for i in range(len(header))]
        table = [
            "  ".join(
                text.ljust(width) if i < 2 + len(lead) else text.rjust(width)
                for i, (text, width) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
            for line in [header, *cells]
        ]
        return [f"dry run of {self.task} on {self.data}: nothing was called or written", *table, *self.notes]


def _money(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "unknown"
    return f"${value:,.4f}" if value < 100 else f"${value:,.2f}"


def _total(values: Any) -> float | None:
    found = list(values)
    return None if any(value is None or pd.isna(value) for value in found) else float(sum(found))


@dataclass
class _Recorded:
    """What a run directory holds: each item's status, and the completion tokens and provider
    calls of its answered items (what this judge's answers were like)."""

    statuses: dict[str, str] = field(default_factory=dict)
    completion_tokens: int = 0
    calls: int = 0


def _recorded(run_dir: Path) -> _Recorded:
    """What ``run_dir`` holds, read without writing anything there."""
    found = _Recorded()
    db = run_dir / "results.sqlite"
    if not db.is_file():
        return found
    # A database left with its write-ahead log is opened read-only (its side files exist
    # already); otherwise as immutable, which creates no side file.
    mode = "ro" if db.with_name(db.name + "-wal").exists() else "immutable"
    uri = f"{db.resolve().as_uri()}?{'mode=ro' if mode == 'ro' else 'immutable=1'}"
    try:
        connection = sqlite3.connect(uri, uri=True)
        try:
            rows = connection.execute("SELECT id, status, usage FROM results").fetchall()
        finally:
            connection.close()
    except sqlite3.Error:
        return found  # the run itself will say what is wrong with the file
    for item_id, status, usage_text in rows:
        found.statuses[item_id] = status
        try:
            usage = json.loads(usage_text) if status == "ok" else {}
        except (TypeError, ValueError):
            usage = {}
        if isinstance(usage, dict) and usage.get("calls"):
            found.calls += int(usage["calls"])
            found.completion_tokens += int(usage.get("completion_tokens") or 0)
    return found


def _describe_price(price: Any, lm: Any) -> str:
    if price is None:
        from jurist.judges.pricing import unpriced_reason

        return f"{unpriced_reason(lm)}: its cost is unknown"
    source = " (the judge config's price)" if price.provider == "config" else ""
    return (
        f"${price.prompt * 1e6:,.2f} / ${price.completion * 1e6:,.2f} per million prompt / completion tokens"
        + source
    )


def _describe_tokenizer(tokenizer: Any) -> str:
    if tokenizer.name == "chars/4":
        return "characters / 4 (no tokenizer on this machine)"
    return (
        tokenizer.name
        if tokenizer.exact
        else f"{tokenizer.name} (approximate: not the model's own tokenizer)"
    )


def offline_config(config: JudgeConfig) -> JudgeConfig:
    """``config`` for a judge that only counts: no API key needed, and a response cache that
    does not exist is not used (so it is not created). Its fingerprint is ``config``'s."""
    update: dict[str, Any] = {"api_key_env": None}
    if config.cache and not Path(config.cache_dir).expanduser().is_dir():
        update["cache"] = False
    return config.model_copy(update=update)


def _judge_row(
    task: Any,
    dataset: Any,
    target: JudgeTarget,
    options: BaseModel,
    retry_failed: bool,
    select: Selection | None = None,
) -> dict[str, Any]:
    from jurist.judges.cache_context import repeat_salt

    with repeat_salt(target.repeat):
        judge = task.make_judge(offline_config(target.config), options)
    items = list(task.items(dataset, options))
    if select is not None:
        items = select.choose(task, dataset, options, items)
    return judge_row(target.name, target.scope, judge, items, target.run_dir, retry_failed)


def judge_row(
    name: str, scope: Scope, judge: Any, items: list[Any], run_dir: Path, retry_failed: bool
) -> dict[str, Any]:
    """One row of :data:`COLUMNS`: what ``judge`` would do for ``items`` judged into ``run_dir``
    (its recorded items skipped), counted without calling anything (see the module)."""
    from jurist.judges.estimate import first_calls, output_fields
    from jurist.judges.judge import LLMJudge
    from jurist.judges.pricing import token_price
    from jurist.judges.tokens import tokenizer_for
    from jurist.runner.blocking import call_blocking

    recorded = _recorded(run_dir)
    statuses = recorded.statuses
    pending = [
        item
        for item in items
        if not (statuses.get(item.id) == "ok" or (statuses.get(item.id) == "failed" and not retry_failed))
    ]
    row: dict[str, Any] = {
        "judge": name,
        "scope": scope,
        "items": len(items),
        "recorded": len(items) - len(pending),
        "to_judge": len(pending),
        "run_dir": str(run_dir),
    }
    if not isinstance(judge, LLMJudge):
        return {
            **row,
            "model": "baseline",
            "cached": 0,
            "calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "completion_basis": "the offline baseline calls no model",
            "cost": 0.0,
            "cost_max": 0.0,
            "price": "free (offline)",
            "tokenizer": "",
        }
    config = judge.config
    tokenizer = tokenizer_for(config.model)
    found = call_blocking(
        lambda: asyncio.run(first_calls(judge, [item.inputs for item in pending], tokenizer))
    )
    calls = [entry for entry in found if entry is not None]
    cached = [entry for entry in calls if entry.cached]
    paid = [entry for entry in calls if not entry.cached]
    if cached or recorded.calls:
        answers = len(cached) + recorded.calls
        per_call = (
            sum(entry.completion_tokens or 0 for entry in cached) + recorded.completion_tokens
        ) / answers
        basis = f"mean of {answers} answer(s) cached or recorded in the run directory"
    else:
        fields = output_fields(judge)
        per_call = PER_OUTPUT_FIELD * fields + ANSWER_FRAME
        basis = (
            f"{PER_OUTPUT_FIELD} per output field ({fields}) + {ANSWER_FRAME}: no cached answer to learn from"
        )
        if config.max_tokens is not None and per_call > config.max_tokens:
            per_call, basis = config.max_tokens, f"max_tokens ({config.max_tokens})"
    if any(not entry.cache_read for entry in calls):
        basis += "; the response cache was not read (DSPy's public call path): every call counts as sent"
    prompt_tokens = sum(entry.prompt_tokens for entry in paid)
    completion_tokens = round(per_call * len(paid))
    price = token_price(judge.lm)
    return {
        **row,
        "model": config.model,
        "cached": len(cached),
        "calls": len(paid),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "completion_basis": basis,
        "cost": price.cost(prompt_tokens, completion_tokens) if price is not None else None,
        "cost_max": (
            price.cost(prompt_tokens, config.max_tokens * len(paid))
            if price is not None and config.max_tokens is not None
            else None
        ),
        "price": _describe_price(price, judge.lm),
        "tokenizer": _describe_tokenizer(tokenizer),
    }


def estimate_judges(
    task: Any,
    data: str | Path,
    targets: list[JudgeTarget],
    options: BaseModel,
    *,
    retry_failed: bool = False,
    select: Selection | None = None,
) -> Estimate:
    """The dry run of ``targets`` on ``data`` (see the module docstring).

    Args:
        task: The task (:class:`~jurist.tasks.Task`).
        data: The rows (``sample:NAME`` allowed).
        targets: The judges the run would call, with their run directories.
        options: The task's options (validated).
        retry_failed: Count items recorded as failed as to be judged again.
        select: Only the rows a ``--limit`` or ``--sample`` picks (all by default).
    """
    from jurist.datasets.samples import resolve_input

    if select is not None and task.plan(data, options) is not None:
        from jurist.errors import ConfigError

        raise ConfigError(
            f"task {task.name!r} is judged as several runs; --limit and --sample cannot select its rows",
            field="limit" if select.limit is not None else "sample",
        )
    dataset = task.read(resolve_input(data), options)
    rows = [_judge_row(task, dataset, target, options, retry_failed, select) for target in targets]
    return estimate_of(task.name, str(data), rows)


def estimate_of(task: str, data: str, rows: list[dict[str, Any]]) -> Estimate:
    """The :class:`Estimate` of ``rows`` (from :func:`judge_row`; with a ``dataset`` key each,
    one per judge and gold file, as ``calibrate`` judges them), with its notes."""
    columns = (["dataset"] if rows and "dataset" in rows[0] else []) + COLUMNS
    table = pd.DataFrame(rows).reindex(columns=columns)
    notes = ["* estimates: completion tokens and cost; prompt tokens are counted from the exact messages."]
    for row in rows:
        notes.append(
            f"{row['judge']}: {row['recorded']} of {row['items']} item(s) recorded in {row['run_dir']}; "
            f"completion tokens: {row['completion_basis']}; price: {row['price']}"
            + (f"; tokens: {row['tokenizer']}" if row["tokenizer"] else "")
        )
    if any(row["scope"] != "exact" for row in rows):
        notes.append("upper bound: a later cascade stage judges only the items the stages before send on.")
    notes.append("cached answers cost nothing: they were paid for when first asked.")
    return Estimate(task=task, data=data, table=table, notes=notes)
