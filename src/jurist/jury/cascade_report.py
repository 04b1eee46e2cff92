"""What a cascade's run reports: its section of the summary (items per stage, usage and cost per
stage, the cost saved against everything by the last stage, agreement with gold), its Markdown,
its figures, the lines ``jurist judge`` prints, and its per-item columns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from jurist.jury.agreement import gold_rate
from jurist.jury.cascade_config import Cascade, Stage
from jurist.jury.cascade_paths import StageRecord, Step
from jurist.jury.derived_run import SectionViews
from jurist.report.figures import Figure
from jurist.report.review import Review
from jurist.schemas import Usage
from jurist.tasks._contract import Task

__all__ = [
    "CascadeViews",
    "add_columns",
    "cascade_figures",
    "cascade_lines",
    "cascade_section",
    "section_markdown",
]

COLUMNS = ("cascade_stage", "cascade_path")
"""The per-item columns a cascade's run adds: the stage that decided, and the stages gone through."""


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _fmt(value: Any, digits: int = 3) -> str:
    if _missing(value):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 0.01 and value else f"{value:.{digits}f}"
    return str(value)


def _rule(stage: Stage, last: bool) -> str:
    """How a stage sends items on, in words."""
    if last:
        return "answers what reaches it"
    if stage.kind == "jury":
        return "jurors not unanimous"
    parts = ["no rule fired"] if stage.kind == "baseline" else []
    if stage.escalate_below is not None:
        parts.append(f"confidence < {stage.escalate_below:g}")
    return " or ".join(parts) or "never (no rule signal)"


def _estimate(per_stage: Sequence[float | None], last_sent: int, items: int) -> dict[str, Any]:
    """Total, the estimate of everything by the last stage (its mean per item × all items), saved."""
    total = None if any(value is None for value in per_stage) else float(sum(v or 0.0 for v in per_stage))
    last = per_stage[-1] if per_stage else None
    per_item = last / last_sent if last is not None and last_sent else None
    everything = per_item * items if per_item is not None else None
    saved = everything - total if everything is not None and total is not None else None
    return {
        "total": total,
        "last_stage_per_item": per_item,
        "all_by_last_stage": everything,
        "saved": saved,
        "saved_share": saved / everything if saved is not None and everything else None,
    }


def cascade_section(
    cascade: Cascade,
    records: Mapping[str, StageRecord],
    review: Review,
    items: pd.DataFrame,
    paths: Mapping[str, list[Step]],
) -> dict[str, Any]:
    """The cascade's part of the summary, from its stages' records and its own per-item table."""
    final: dict[str, Any] = {}
    if review.agrees is not None and review.agrees in items and "id" in items:
        final = dict(zip(items["id"].astype(str), items[review.agrees], strict=True))
    stages: list[dict[str, Any]] = []
    costs: list[float | None] = []
    tokens: list[float | None] = []
    for index, stage in enumerate(cascade.stages):
        last = index == len(cascade.stages) - 1
        record = records.get(stage.name)
        sent = [item_id for item_id, path in paths.items() if any(step.stage == stage.name for step in path)]
        decided = [i for i, path in paths.items() if path and path[-1] == Step(stage.name, None)]
        found = [record.results[i] for i in sent if record is not None and i in record.results]
        usage = Usage()
        for result in found:
            usage = usage.add(result.usage)
        paid_unknown = any(r.usage.calls and r.usage.cost is None for r in found)
        cost = None if paid_unknown else float(usage.cost or 0.0)
        costs.append(cost)
        tokens.append(float(usage.prompt_tokens + usage.completion_tokens))
        pairs = [(record.agrees(i, review), final.get(i)) for i in sent if record is not None]
        known = [(bool(s), bool(c)) for s, c in pairs if not _missing(s) and not _missing(c)]
        stages.append(
            {
                "name": stage.name,
                "kind": stage.kind,
                "model": stage.model,
                "escalate_below": stage.escalate_below,
                "sends_on": _rule(stage, last),
                "run_dir": str(record.run_dir) if record is not None else None,
                "sent": len(sent),
                "decided": len(decided),
                "escalated": 0 if last else len(sent) - len(decided),
                "failed": sum(r.status != "ok" for r in found),
                "usage": usage.model_dump(),
                "cost": cost,
                "cost_per_item": cost / len(sent) if cost is not None and sent else None,
                "gold": {
                    "n": len(known),
                    "stage": sum(s for s, _ in known) / len(known),
                    "cascade": sum(c for _, c in known) / len(known),
                }
                if known
                else None,
            }
        )
    count = len(paths)
    last_sent = int(stages[-1]["sent"]) if stages else 0
    return {
        "name": cascade.name,
        "fingerprint": cascade.fingerprint(),
        "verdict": review.verdict,
        "items": count,
        "stages": stages,
        "decided": {entry["name"]: entry["decided"] for entry in stages},
        "cost": {"unit": "usd", **_estimate(costs, last_sent, count)},
        "tokens": {"unit": "tokens", **_estimate(tokens, last_sent, count)},
        "gold": gold_rate(items, review),
    }


def add_columns(items: pd.DataFrame, paths: Mapping[str, list[Step]]) -> None:
    """Add ``cascade_stage`` (the stage that decided) and ``cascade_path`` (``a > b``) to the table."""
    if items.empty or "id" not in items:
        return
    found = [paths.get(str(item_id)) or [] for item_id in items["id"]]
    items["cascade_stage"] = pd.Series(
        [path[-1].stage if path and path[-1].reason is None else None for path in found],
        index=items.index,
        dtype=object,
    )
    items["cascade_path"] = pd.Series(
        [" > ".join(step.stage for step in path) for path in found], index=items.index, dtype=object
    )


def _money(value: Any, unit: str) -> str:
    """A cost in its unit: ``$0.0123`` (usd), ``812 tokens`` or ``40 calls``."""
    if _missing(value):
        return "n/a"
    return f"${value:.4g}" if unit == "usd" else f"{value:.0f} {unit}"


def _saving_line(block: Mapping[str, Any], last: str, items: int) -> str:
    unit = str(block.get("unit"))
    share = block.get("saved_share")
    everything = _money(block.get("all_by_last_stage"), unit)
    return (
        f"{_money(block.get('total'), unit)} in all; everything by {last} (estimated: its mean per item × "
        f"{items} items) {everything}; saved {_money(block.get('saved'), unit)}"
        + (f" ({share:.0%})" if not _missing(share) else "")
    )


def section_markdown(section: Mapping[str, Any]) -> str:
    """The Markdown section of a cascade: each stage's items, usage, cost and agreement, and the saving."""
    stages = list(section.get("stages") or [])
    names = " > ".join(str(stage.get("name")) for stage in stages)
    lines = [
        f"## cascade: {names} ({section.get('name')})",
        "",
        f"Each stage judges the items the one before it was unsure of, on `{section.get('verdict')}`; "
        "each is its own run directory.",
        "",
        "| stage | judge | sends on when | sent | decided | sent on | failed | calls | tokens | cost "
        "| agreement: stage | agreement: cascade |",
        "|---" * 12 + "|",
    ]
    for stage in stages:
        usage = stage.get("usage") or {}
        gold = stage.get("gold") or {}
        cells = [
            stage.get("name"),
            stage.get("model"),
            stage.get("sends_on"),
            stage.get("sent"),
            stage.get("decided"),
            stage.get("escalated"),
            stage.get("failed"),
            usage.get("calls", 0),
            f"{_tokens(stage):.0f}",
            _money(stage.get("cost"), "usd"),
            _fmt(gold.get("stage")),
            _fmt(gold.get("cascade")),
        ]
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    last = str(stages[-1].get("name")) if stages else "the last stage"
    items = int(section.get("items") or 0)
    lines += [
        "",
        "Agreement columns: on the items sent to the stage that have gold, the stage's own verdicts and the "
        "cascade's final ones.",
        "",
        f"- cost: {_saving_line(section.get('cost') or {}, last, items)}",
        f"- tokens: {_saving_line(section.get('tokens') or {}, last, items)}",
    ]
    gold = section.get("gold")
    if gold:
        lines.append(
            f"- agreement with gold: cascade {_fmt(gold.get('rate'))} [{_fmt(gold.get('low'))}, "
            f"{_fmt(gold.get('high'))}] (n={gold.get('n')})"
        )
    return "\n".join(lines) + "\n"


def cascade_figures(section: Mapping[str, Any]) -> list[Figure]:
    """Items decided per stage; the cost of each stage, the cascade and everything by the last
    stage; and, with gold, each stage's agreement against the cascade's on the items it judged."""
    stages = list(section.get("stages") or [])
    if not stages:
        return []
    last = str(stages[-1].get("name"))
    found = [
        Figure(
            kind="bars",
            title="Items decided by each stage",
            data={
                "bars": [
                    {"label": str(s.get("name")), "value": s.get("decided"), "group": "stage"} for s in stages
                ],
                "ylabel": "items",
            },
            caption=(
                f"Of {section.get('items')} items, how many each stage decided; the others it sent on "
                "(the last stage answers whatever reaches it)."
            ),
        )
    ]
    cost = section.get("cost") or {}
    block, unit = (
        (cost, "usd") if not _missing(cost.get("total")) else (section.get("tokens") or {}, "tokens")
    )
    per_stage = [s.get("cost") if unit == "usd" else _tokens(s) for s in stages]
    bars = [
        {"label": str(s.get("name")), "value": v, "group": "stage"}
        for s, v in zip(stages, per_stage, strict=True)
    ]
    bars.append({"label": "cascade", "value": block.get("total"), "group": "cascade"})
    if not _missing(block.get("all_by_last_stage")):
        bars.append({"label": f"all by {last}", "value": block.get("all_by_last_stage"), "group": "estimate"})
    found.append(
        Figure(
            kind="bars",
            title="Cost: each stage, the cascade, and everything by the last stage",
            data={"bars": bars, "ylabel": "USD" if unit == "usd" else "tokens"},
            caption=(
                "What each stage spent on the items sent to it, their sum, and the estimate of judging "
                f"every item with {last} (its mean per item × all items)."
            ),
        )
    )
    agreement = []
    for stage in stages:
        gold = stage.get("gold")
        if gold:
            agreement.append(
                {"label": f"{stage.get('name')}: stage", "value": gold["stage"], "group": "stage"}
            )
            agreement.append(
                {"label": f"{stage.get('name')}: cascade", "value": gold["cascade"], "group": "cascade"}
            )
    if agreement:
        found.append(
            Figure(
                kind="bars",
                title="Agreement with gold on the items each stage judged",
                data={"bars": agreement, "ylabel": "agreement with gold", "ylim": [0, 1]},
                caption=(
                    "For each stage, on the items sent to it that have gold: how often its own verdict "
                    "agrees with gold, and how often the cascade's final verdict does."
                ),
            )
        )
    return found


def _tokens(stage: Mapping[str, Any]) -> float:
    usage = stage.get("usage") or {}
    return float(usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))


def cascade_lines(summary: Any) -> list[str]:
    """What ``jurist judge`` prints about a cascade's run (nothing for another run)."""
    section = summary.get("cascade") if isinstance(summary, Mapping) else None
    if not isinstance(section, Mapping) or "stages" not in section:
        return []
    stages = list(section.get("stages") or [])
    decided = ", ".join(f"{s.get('name')} {s.get('decided')}" for s in stages)
    last = str(stages[-1].get("name")) if stages else "the last stage"
    items = int(section.get("items") or 0)
    cost = section.get("cost") or {}
    block = cost if not _missing(cost.get("total")) else section.get("tokens") or {}
    lines = [
        f"cascade of {len(stages)} stages: decided {decided} (of {items} items)",
        "cost: " + _saving_line(block, last, items),
    ]
    gold = section.get("gold")
    if gold:
        lines.append(f"agreement with gold: cascade {_fmt(gold.get('rate'))} (n={gold.get('n')})")
    return lines


def _figures_line(label: str, figures: Mapping[str, Any], unit: str) -> str:
    agreement, cost = _fmt(figures.get("agreement")), _money(figures.get("cost"), unit)
    return f"  {label}: agreement {agreement}, cost {cost}"


def choice_lines(name: str, choice: Mapping[str, Any]) -> list[str]:
    """What ``jurist calibrate`` prints about a cascade's chosen thresholds: the thresholds, and the
    agreement with gold and cost of the cascade, of each stage alone and of everything by the last."""
    unit = str(choice.get("unit"))
    thresholds = ", ".join(f"{stage} {value:g}" for stage, value in (choice.get("thresholds") or {}).items())
    target = choice.get("target_agreement")
    chosen = choice.get("cascade") or {}
    reached = "reached" if choice.get("met") else "NOT reached (the most agreeing thresholds are kept)"
    lines = [
        f"cascade {name}: escalate_below {thresholds or '(no stage to tune)'}; target agreement "
        f"{_fmt(target)} {reached}; {choice.get('gold_items')} gold items, "
        f"{choice.get('combinations')} threshold combinations",
        _figures_line("cascade", chosen, unit)
        + ", decided "
        + ", ".join(f"{k} {v}" for k, v in (chosen.get("decided") or {}).items()),
    ]
    last = (choice.get("all_by_last_stage") or {}).get("stage")
    for stage, figures in (choice.get("stages_alone") or {}).items():
        label = f"{stage} alone" + (" (everything by the last stage)" if stage == last else "")
        lines.append(_figures_line(label, figures, unit))
    share = choice.get("saved_share")
    lines.append(
        f"  saved against everything by {last}: {_money(choice.get('saved'), unit)}"
        + (f" ({share:.0%})" if not _missing(share) else "")
    )
    if choice.get("written_to"):
        lines.append(f"  thresholds written to {choice['written_to']}")
    return lines


class CascadeViews(SectionViews):
    """A task as a cascade's run shows it: the task's review with the cascade's columns added,
    and the task's figures followed by the cascade's (:func:`cascade_figures`)."""

    def __init__(self, task: Task, section: Mapping[str, Any]) -> None:
        super().__init__(task, section, COLUMNS, cascade_figures)
