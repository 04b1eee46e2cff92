"""Judging with a panel: every member into its own run directory, then the panel's verdicts into
the panel's run directory, an ordinary run of the task.

Each member is run by the task's own ``judge`` hook (resumable on its own, sharing the response
cache). The panel's run holds, per item, the output of a member whose verdict is the panel's
(for a mean or median, that output with the verdict replaced) plus the votes under the key
``jury`` or ``repeats`` (``votes``: member -> verdict, ``null`` for a member that failed;
``voters``; ``source``: whose output it is; ``tie``: member order decided), with the usage,
raw answers and LM calls of every member. So ``task.score(DIR)`` scores the panel with the
task's own scoring, and the HTML report and ``jurist view`` read it like any run. An item every
member failed on is a failed item. The panel's run is rebuilt from its members' runs on every
call (it costs no model call), so a member resumed later is reflected in it. A task whose
verdict is derived from several items' outputs (:meth:`~jurist.tasks.Task.panel_verdicts`) is
voted per unit of items, and one whose item output holds many labels
(:meth:`~jurist.tasks.Task.panel_labels`, e.g. one per sentence) per labelled key, agreement
then reported per label kind (:mod:`jurist.jury.ballots`, :mod:`jurist.jury.label_section`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from jurist.datasets.samples import resolve_input
from jurist.errors import ConfigError, RunDirectoryError
from jurist.judges.cache_context import repeat_salt
from jurist.jury.aggregate import is_number, is_one_value
from jurist.jury.agreement import agreement_figures, gold_rate, headline, member_pairs
from jurist.jury.ballots import (
    Ballot,
    LabelBallot,
    PanelOutcome,
    item_outcome,
    labelled_outcome,
    unit_outcomes,
)
from jurist.jury.derived_run import (
    RecordedJudge,
    combined_fingerprint,
    default_dir,
    read_manifest,
    record_items,
    write_section,
)
from jurist.jury.label_section import label_figures, label_votes
from jurist.jury.loop import run_judgment
from jurist.jury.panel import Member, Panel, panel_of, repeats_panel
from jurist.jury.report import PanelViews, section_markdown
from jurist.runner import MANIFEST, RESULTS_DB, Item, ResultStore, iter_run_results, run_lock
from jurist.tasks._contract import JudgeRun, Scores, Task, write_views
from jurist.tasks._item_labels import ItemLabels
from jurist.tasks._selection import Selection, judged_description
from jurist.tasks._unit_verdicts import UnitVerdicts

__all__ = ["check_task", "default_panel_dir", "judge_panel", "run_panel"]


def check_task(task: Task, options: BaseModel, panel: Panel) -> str:
    """The verdict a panel of ``task`` votes on: the task's review verdict, an output field per
    item, derived per unit of items by the task's :meth:`~jurist.tasks.Task.panel_verdicts`, or
    following from labels voted per key (:meth:`~jurist.tasks.Task.panel_labels`).

    Raises:
        ConfigError: The task names no verdict, its verdict is neither an output field nor
            derived by the task, or the aggregate needs numbers the task does not give.
    """
    review = task.review(options)
    what = "have a jury" if panel.kind == "jury" else "be repeated"
    if review.verdict is None:
        raise ConfigError(f"task {task.name!r} cannot {what}: it names no verdict column", field="task")
    labels = task.panel_labels(options)
    numeric = panel.aggregate in ("mean", "median")
    if labels is not None:
        if panel.kind in task.outputs:
            raise ConfigError(
                f"task {task.name!r} cannot {what}: its output field {panel.kind!r} is where the votes go",
                field="task",
            )
        if numeric and not labels.numeric:
            raise ConfigError(
                f"aggregate {panel.aggregate!r} needs numeric labels; task {task.name!r} votes on "
                f"labels ({', '.join(labels.kinds)}) that are not numbers (use majority or plurality)",
                field="aggregate",
            )
        return review.verdict
    derived = task.panel_verdicts(options) is not None
    if not derived and review.verdict not in task.outputs:
        outputs = ", ".join(task.outputs) or "none"
        raise ConfigError(
            f"task {task.name!r} cannot {what}: its verdict {review.verdict!r} is not one of its output "
            f"fields ({outputs}), and a panel votes on one output value per item",
            field="task",
        )
    if panel.kind in task.outputs:
        raise ConfigError(
            f"task {task.name!r} cannot {what}: its output field {panel.kind!r} is where the votes go",
            field="task",
        )
    if numeric and review.label is not None and review.label.kind != "score":
        raise ConfigError(
            f"aggregate {panel.aggregate!r} needs numeric verdicts; task {task.name!r} gives "
            f"{review.label.kind} verdicts (use majority or plurality)",
            field="aggregate",
        )
    return review.verdict


def _check_votes(task: Task, panel: Panel, verdict: str, run_dir: Path) -> None:
    """Refuse, after the first member's run, verdicts a vote cannot hold."""
    what = "have a jury" if panel.kind == "jury" else "be repeated"
    for result in iter_run_results(run_dir):
        if result.status != "ok" or not result.output or result.output.get(verdict) is None:
            continue
        value = result.output[verdict]
        if not is_one_value(value):
            raise ConfigError(
                f"task {task.name!r} cannot {what}: its verdict {verdict!r} is not one value "
                f"(got {type(value).__name__})",
                field="task",
            )
        if panel.aggregate in ("mean", "median") and not is_number(value):
            raise ConfigError(
                f"aggregate {panel.aggregate!r} needs numeric verdicts; "
                f"task {task.name!r} answered {value!r}",
                field="aggregate",
            )
        return


def default_panel_dir(task: Task, data: str | Path, panel: Panel) -> Path:
    """``runs/TASK/DATA-KIND-NAME-FINGERPRINT``: where a panel's run goes when no ``out`` is given."""
    return default_dir(task, data, panel.kind, panel.name, panel.fingerprint())


def judge_panel(
    task: Task,
    data: str | Path,
    config: Any,
    *,
    out: str | Path | None = None,
    options: BaseModel | None = None,
    repeats: int = 1,
    overrides: Mapping[str, Any] | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    select: Selection | None = None,
) -> JudgeRun:
    """Judge ``data`` with a jury file, or with one judge ``repeats`` times, into ``out``.

    Args:
        task: The task.
        data: The rows to judge (``sample:NAME`` allowed).
        config: A jury file, or a judge config (file or :class:`JudgeConfig`) to repeat.
        out: The panel's run directory (default: :func:`default_panel_dir`).
        options: The task's options (validated).
        repeats: How many times each judge is asked.
        overrides: Judge-config fields applied to every juror (the command line's).
        retry_failed: Judge again the items a member recorded as failed.
        progress: Show each member's progress bar.
        select: Judge only some rows (``--limit``, ``--sample``): every member and the panel.

    Raises:
        ConfigError: Neither a jury nor repeats were asked for, or they cannot be (see
            :func:`check_task`, :func:`jurist.jury.panel.panel_of`).
    """
    panel = panel_of(config, repeats, overrides)
    if panel is None:
        raise ConfigError("give a jury file or --repeats 2 or more for a panel", field="config")
    task_options = options if options is not None else task.options()
    target = Path(out) if out is not None else default_panel_dir(task, data, panel)
    return run_panel(
        task, panel, data, target, task_options, retry_failed=retry_failed, progress=progress, select=select
    )


def _refuse_other_run(out: Path, panel: Panel) -> None:
    path = out / MANIFEST
    if not path.is_file():
        return
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # the runner reports a damaged manifest
    config = manifest.get("config") if isinstance(manifest, dict) else None
    recorded = config.get("panel_fingerprint") if isinstance(config, dict) else None
    if manifest.get("judge") != panel.judge_name or recorded != panel.fingerprint():
        raise RunDirectoryError(
            f"{out} holds another run (judge {manifest.get('judge')!r}, panel {recorded}; now "
            f"{panel.judge_name!r}, panel {panel.fingerprint()}): another jury, aggregate, weights or "
            "juror config writes its own run directory; use another --out directory"
        )


def run_panel(
    task: Task,
    panel: Panel,
    data: str | Path,
    out: Path,
    options: BaseModel,
    *,
    retry_failed: bool = False,
    progress: bool = True,
    only: Collection[str] | None = None,
    select: Selection | None = None,
) -> JudgeRun:
    """Run every member of ``panel`` (each resumed if it exists), then aggregate into ``out``.

    With ``only`` (a cascade's jury stage, a calibration on the labelled items), every member
    judges, and the panel votes on, only the items with these ids (and the units of items
    that hold one of them); all by default. With ``select`` (``--limit``, ``--sample``), only
    the rows it picks, recorded in every member's run and the panel's.
    """
    verdict = check_task(task, options, panel)
    _refuse_other_run(out, panel)
    wanted = None if only is None else frozenset(only)
    runs: dict[str, JudgeRun] = {}
    for member in panel.members:
        ran = _run_member(task, panel, member, data, out, options, retry_failed, progress, wanted, select)
        runs[member.name] = ran
        if len(runs) == 1 and task.panel_verdicts(options) is None and task.panel_labels(options) is None:
            _check_votes(task, panel, verdict, ran.run_dir)
    return _aggregate(task, panel, verdict, data, out, options, runs, wanted, select)


def _run_member(
    task: Task,
    panel: Panel,
    member: Member,
    data: str | Path,
    out: Path,
    options: BaseModel,
    retry_failed: bool,
    progress: bool,
    only: frozenset[str] | None,
    select: Selection | None,
) -> JudgeRun:
    directory = panel.member_dir(out, member)
    if member.repeats > 1:
        inner = repeats_panel(member.config, member.repeats, panel.aggregate)
        inner = replace(inner, name=member.name)
        return run_panel(
            task,
            inner,
            data,
            directory,
            options,
            retry_failed=retry_failed,
            progress=progress,
            only=only,
            select=select,
        )
    # Its exports are written by the task; its HTML report on demand (`jurist report DIR`), as
    # drawing every member's figures on every call would cost more than aggregating them.
    with repeat_salt(member.repeat):
        return run_judgment(
            task,
            data,
            directory,
            member.config,
            options,
            retry_failed=retry_failed,
            progress=progress,
            only=only,
            select=select,
        )


class _PanelJudge(RecordedJudge[PanelOutcome]):
    """The runner's judge of a panel's run: it answers each item from the members' recorded runs."""

    def __init__(
        self, panel: Panel, fingerprint: str, outcomes: dict[str, PanelOutcome], stores: list[ResultStore]
    ) -> None:
        super().__init__(panel.judge_name, fingerprint, outcomes)
        self.stores = stores

    def stores_of(self, item_id: str) -> Iterable[ResultStore]:
        """Every member's store, in panel order."""
        return self.stores


def _aggregate(
    task: Task,
    panel: Panel,
    verdict: str,
    data: str | Path,
    out: Path,
    options: BaseModel,
    runs: dict[str, JudgeRun],
    only: frozenset[str] | None,
    select: Selection | None,
) -> JudgeRun:
    path = resolve_input(data)
    dataset = task.read(path, options)
    results = {name: {r.id: r for r in iter_run_results(run.run_dir)} for name, run in runs.items()}
    labels = task.panel_labels(options)
    items = list(task.items(dataset, options))
    if select is not None:
        items = select.choose(task, dataset, options, items)
    items = [item for item in items if only is None or item.id in only]
    ids = [item.id for item in items]
    ballots: list[Ballot] | list[LabelBallot]
    if labels is not None:  # the labels' keys come from each item's inputs
        outcomes, ballots = _vote_labels(labels, items, panel, results)
    else:
        outcomes, ballots = _vote(task.panel_verdicts(options), dataset, ids, panel, verdict, results)
    manifests = {name: read_manifest(run.run_dir) for name, run in runs.items()}
    fingerprint = combined_fingerprint(
        [panel.fingerprint(), *(str(manifests[m.name].get("judge_fingerprint")) for m in panel.members)]
    )
    first = manifests[panel.members[0].name]
    with run_lock(out), ExitStack() as opened:
        stores = [opened.enter_context(ResultStore(runs[m.name].run_dir / RESULTS_DB)) for m in panel.members]
        judge = _PanelJudge(panel, fingerprint, outcomes, stores)
        config = panel.describe()
        described = judged_description(dataset.describe(), items, select, task.optional_inputs)
        scores = record_items(
            task, judge, out, path, dataset, ids, options, config, first.get("task_source"), described
        )
        section = _section(task, options, panel, runs, ballots, scores)
        _add_votes(scores, panel, ballots)
        write_section(task, out, scores, panel.kind, section, section_markdown(section))
    cached = [member.config.cache_dir for member in panel.members if member.config.cache]
    # The figure cache of the first juror's cache folder (the jurors of a jury usually share one).
    write_views(PanelViews(task, section), out, scores, options, cache_dir=cached[0] if cached else None)
    return JudgeRun(run_dir=out, scores=scores)


def _vote_labels(
    rule: ItemLabels, items: list[Item], panel: Panel, results: dict[str, dict[str, Any]]
) -> tuple[dict[str, PanelOutcome], list[LabelBallot]]:
    """Every item's outcome and ballot, voted per labelled key."""
    outcomes: dict[str, PanelOutcome] = {}
    ballots: list[LabelBallot] = []
    for item in items:
        outcomes[item.id], ballot = labelled_outcome(item.id, item.inputs, panel, rule, results)
        ballots.append(ballot)
    return outcomes, ballots


def _vote(
    rule: UnitVerdicts | None,
    dataset: Any,
    ids: list[str],
    panel: Panel,
    verdict: str,
    results: dict[str, dict[str, Any]],
) -> tuple[dict[str, PanelOutcome], list[Ballot]]:
    """Every item's outcome, and the ballots: one per item, or (with ``rule``) one per unit."""
    outcomes: dict[str, PanelOutcome] = {}
    ballots: list[Ballot] = []
    if rule is None:
        for item_id in ids:
            outcomes[item_id], ballot = item_outcome(item_id, panel, verdict, results)
            ballots.append(ballot)
        return outcomes, ballots
    judged = set(ids)
    for unit_id, item_ids in rule.units(dataset).items():
        if judged.isdisjoint(item_ids):
            continue  # none of its items is judged here (a panel on some of the items)
        found, ballot = unit_outcomes(unit_id, item_ids, panel, rule, results)
        outcomes.update((outcome.id, outcome) for outcome in found)
        ballots.append(ballot)
    return {item_id: outcomes[item_id] for item_id in ids if item_id in outcomes}, ballots


def _section(
    task: Task,
    options: BaseModel,
    panel: Panel,
    runs: dict[str, JudgeRun],
    ballots: Sequence[Ballot] | Sequence[LabelBallot],
    scores: Scores,
) -> dict[str, Any]:
    """The panel's part of the summary: members, the panel's own figures, votes and agreement
    (for labels voted per key: under ``labels``, per label kind)."""
    review = task.review(options)
    rule = task.panel_verdicts(options)
    members = []
    for member in panel.members:
        run = runs[member.name]
        entry: dict[str, Any] = {
            "name": member.name,
            "run_dir": str(run.run_dir),
            "model": member.config.model,
            "weight": member.weight if panel.weights is not None else None,
            "gold": gold_rate(run.items, review),
            "figures": headline(run.summary),
            "usage": run.summary.get("usage"),  # tokens and cost per member (jurist.report.usage)
        }
        nested = run.summary.get("repeats") if isinstance(run.summary, dict) else None
        if isinstance(nested, dict):
            entry["self_consistency"] = nested.get("self_consistency")
        members.append(entry)
    names = [member.name for member in panel.members]
    agreement = "agreement" if panel.kind == "jury" else "self_consistency"
    section: dict[str, Any] = {
        "kind": panel.kind,
        "name": panel.name,
        "aggregate": panel.aggregate,
        "weights": dict(panel.weights) if panel.weights is not None else None,
        "verdict": review.verdict,
        "members": members,
        "aggregated": {"gold": gold_rate(scores.items, review), "figures": headline(scores.summary)},
    }
    labels = task.panel_labels(options)
    if labels is not None:
        voted = [ballot for ballot in ballots if isinstance(ballot, LabelBallot)]
        section["votes"] = label_votes(voted, len(names))
        section["labels"] = label_figures(voted, labels.kinds, names, agreement)
        return section
    single = [ballot for ballot in ballots if isinstance(ballot, Ballot)]
    matrix = [[ballot.votes.get(name) for name in names] for ballot in single]
    voters = [sum(vote is not None for vote in row) for row in matrix]
    distinct = [len({(type(v).__name__, v) for v in row if v is not None}) for row in matrix]
    tied = sum(ballot.tie for ballot in single)
    votes: dict[str, Any] = {
        "items": len(single),
        "unanimous": sum(n == len(names) and d == 1 for n, d in zip(voters, distinct, strict=True)),
        "split": sum(d > 1 for d in distinct),
        "decided_by_order": tied if rule is None else 0,
        "partial": sum(0 < n < len(names) for n in voters),
        "no_votes": sum(n == 0 for n in voters),
    }
    if rule is not None:  # votes per unit; one without a winner gives the task's no-decision verdict
        votes.update(unit=rule.unit_name, no_decision=tied, no_decision_verdict=rule.no_decision)
    section.update(
        {"votes": votes, agreement: agreement_figures(matrix), "pairs": member_pairs(matrix, names)}
    )
    return section


def _add_votes(scores: Scores, panel: Panel, ballots: Sequence[Ballot] | Sequence[LabelBallot]) -> None:
    """Add the votes to the per-item table (whose rows are the ballots' items or units):
    ``KIND_votes`` (JSON), ``KIND_voters`` and ``KIND_tie``. For labels voted per key,
    ``KIND_votes`` holds the votes of the keys the voters did not label alike (label kind ->
    key -> votes in member order) and ``KIND_tie`` whether member order decided a key."""
    items = scores.items
    if items.empty or "id" not in items:
        return
    if ballots and isinstance(ballots[0], LabelBallot):
        labelled = {ballot.id: ballot for ballot in ballots if isinstance(ballot, LabelBallot)}
        rows = [labelled.get(str(item_id)) for item_id in items["id"]]
        items[f"{panel.kind}_votes"] = pd.Series(
            [json.dumps(b.split(), ensure_ascii=False) if b else None for b in rows],
            index=items.index,
            dtype=object,
        )
        items[f"{panel.kind}_voters"] = [len(b.voters) if b else 0 for b in rows]
        items[f"{panel.kind}_tie"] = pd.Series(
            [any(b.ties.values()) if b else None for b in rows], index=items.index, dtype=object
        )
        return
    by_id = {ballot.id: ballot for ballot in ballots if isinstance(ballot, Ballot)}
    found = [by_id.get(str(item_id)) for item_id in items["id"]]
    items[f"{panel.kind}_votes"] = pd.Series(
        [json.dumps(o.votes, ensure_ascii=False) if o else None for o in found],
        index=items.index,
        dtype=object,
    )
    items[f"{panel.kind}_voters"] = [sum(v is not None for v in o.votes.values()) if o else 0 for o in found]
    items[f"{panel.kind}_tie"] = pd.Series(
        [o.tie if o else None for o in found], index=items.index, dtype=object
    )
