"""An injection probe as ordinary judged runs: a recipe of two runs of the probed task's judge.

:class:`InjectionProbe` wraps the probed task (it is built from it and the
:class:`ProbeSettings`, never subclassed from it). Its :meth:`~InjectionProbe.plan` is two
parts, each an ordinary run of the judging loop (:func:`jurist.jury.loop.run_judgment`) into
its own sub-directory, so a probe gets what every run gets: the response cache, resuming,
failed items recorded with their raw answers, ``--workers``, and a manifest:

- ``clean`` (:class:`CleanItems`): the first ``limit`` items of the data, as they are;
- ``probes`` (:class:`PlantedItems`, reading the ``clean`` run): per clean verdict and case,
  the attack item (the payload asks for another verdict) and the control item (the same
  payload asks for the clean verdict), ids ``ITEM|CASE|attack`` and ``ITEM|CASE|control``.

Both judge with the probed task's own judge (its :meth:`~jurist.tasks.Task.make_judge` and
:meth:`~jurist.tasks.Task.judge_options`), so their answers are the answers of an ordinary
``jurist judge`` of that task. :meth:`~InjectionProbe.combine` reads the two runs into the
:class:`~jurist.tasks.probes.report.ProbeReport` and writes ``summary.json`` (the report as
``--json`` prints it) and ``report.md`` into the probe's directory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import BaseModel

from jurist.errors import InputError
from jurist.runner import MANIFEST, Item, iter_run_results
from jurist.tasks._contract import JudgeRun, Part, Recipe, Scores, Task, atomic_write_text
from jurist.tasks._read_once import read_once
from jurist.tasks._results import strict_json
from jurist.tasks.probes.cases import ProbeCase
from jurist.tasks.probes.planting import ProbePlan, check_fields, plan_probes
from jurist.tasks.probes.report import ProbeReport, outcome_of, verdict_of

if TYPE_CHECKING:
    from jurist.judges.config import JudgeConfig
    from jurist.judges.judge import Judge

__all__ = ["CLEAN", "PROBES", "CleanItems", "InjectionProbe", "PlantedItems", "ProbeSettings"]

CLEAN = "clean"
"""The sub-directory of the clean items' run."""
PROBES = "probes"
"""The sub-directory of the attack and control items' run."""


@dataclass(frozen=True)
class ProbeSettings:
    """What a probe plants and where: the cases, the items probed, the inputs planted in.

    Attributes:
        cases: The probe set (after ``--family``).
        limit: Probe the first ``limit`` items of the data.
        fields: Plant payloads in these inputs only; ``None``: every injectable input.
    """

    cases: tuple[ProbeCase, ...]
    limit: int = 3
    fields: tuple[str, ...] | None = None

    def identity(self) -> dict[str, Any]:
        """What a run's manifest records of them (a run directory is resumed only with the same)."""
        cases = json.dumps([asdict(case) for case in self.cases], sort_keys=True, ensure_ascii=False)
        return {
            "probe_items": self.limit,
            "probe_cases": hashlib.sha256(cases.encode("utf-8")).hexdigest()[:16],
            "probe_fields": list(self.fields) if self.fields is not None else None,
        }

    def digest(self) -> str:
        """A short hash of :meth:`identity` (the default probe directory's suffix)."""
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:8]


class _Wrapped(Task):
    """A task made of the probed task's parts: its inputs, outputs, source and judge."""

    def __init__(self, base: Task, settings: ProbeSettings, name: str) -> None:
        self.base = base
        self.settings = settings
        self.name = name
        self.description = f"the injection probe of task {base.name!r}"
        self.inputs = dict(base.inputs)
        self.outputs = dict(base.outputs)
        self.source = base.source
        self.version = base.version

    @property  # the probed task's class attribute, read through the wrapper
    def optional_inputs(self) -> frozenset[str]:  # type: ignore[override]
        """The probed task's inputs that may be blank by design (not warned about)."""
        return self.base.optional_inputs

    def options(self, values: dict[str, Any] | BaseModel | None = None) -> BaseModel:
        return self.base.options(values)

    def make_judge(self, config: JudgeConfig, options: BaseModel) -> Judge:
        """The probed task's judge for ``config``, handed through as a value: the probe's
        runs are judged by the very judge ``jurist judge`` of that task makes (its
        fingerprint and finished-verdict scope too), whether the contract composes it of
        the task's parts or the task's judge is not one program (heritage)."""
        return self.base.make_judge(config, options)


@dataclass(frozen=True)
class _Probed:
    """The probed task's dataset and its first items (a :class:`CleanItems` run's dataset)."""

    base: Any
    items: list[Item]

    def describe(self) -> dict[str, Any]:
        return {**self.base.describe(), "items": len(self.items)}


def _first_items(task: Task, path: str | Path, options: BaseModel, limit: int) -> _Probed:
    """The probed task's dataset of ``path`` and its first ``limit`` items; the data is read
    once for the probe's parts and its report (:func:`~jurist.jury.loop.run_recipe` reads
    its recipe inside one :func:`~jurist.tasks._read_once.reading_once` block)."""
    dataset = read_once(f"probed data of {task.name}", path, lambda: task.read(path, options))
    items = list(islice(task.items(dataset, options), limit))
    if not items:
        raise InputError("the data has no items to probe", path=path)
    return _Probed(dataset, items)


class CleanItems(_Wrapped):
    """The first items of the data as they are, judged by the probed task's judge."""

    def __init__(self, base: Task, settings: ProbeSettings) -> None:
        super().__init__(base, settings, f"{base.name} injection probe: clean items")

    def read(self, path: str | Path, options: BaseModel) -> _Probed:
        """The probed task's dataset and its first ``limit`` items.

        Raises:
            InputError: The data has no items.
        """
        return _first_items(self.base, path, options, self.settings.limit)

    def items(self, dataset: Any, options: BaseModel) -> list[Item]:
        """The items as they are (a ``--field`` every item lacks is refused before any is judged)."""
        check_fields(dataset.items, self.settings.fields)
        return list(dataset.items)

    def run_identity(self, dataset: Any, options: BaseModel) -> dict[str, Any]:
        return {**self.base.run_identity(dataset.base, options), "probe_items": self.settings.limit}

    def judge_options(self, dataset: Any, options: BaseModel) -> BaseModel:
        return self.base.judge_options(dataset.base, options)


@dataclass(frozen=True)
class _Planted:
    """The attack and control items of a clean run (a :class:`PlantedItems` run's dataset)."""

    probed: _Probed
    plans: list[ProbePlan]
    skipped: dict[str, str]
    judge: str
    fingerprint: str
    upstream: str

    @property
    def base(self) -> Any:
        return self.probed.base

    def describe(self) -> dict[str, Any]:
        return {
            **self.probed.base.describe(),
            "sha256": self.upstream,
            "items": sum(1 if plan.control is None else 2 for plan in self.plans),
        }


class PlantedItems(_Wrapped):
    """The attack and control items of each clean item and case (its data: the clean run)."""

    def __init__(self, base: Task, settings: ProbeSettings, data: str | Path) -> None:
        super().__init__(base, settings, f"{base.name} injection probe: planted items")
        self.data = data

    def read(self, path: str | Path, options: BaseModel) -> _Planted:
        """The clean run ``path``'s verdicts, and the items planted from them.

        Its identity (the ``sha256`` its manifest records) is that of the clean run: its data,
        judge and start, so a probes run is resumed only over the clean run it was planted from.
        """
        from jurist.datasets.samples import resolve_input

        clean_dir = Path(path)
        try:
            manifest = json.loads((clean_dir / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise InputError("not a probe's clean run (no readable manifest.json)", path=clean_dir) from None
        probed = _first_items(self.base, resolve_input(self.data), options, self.settings.limit)
        declared = list(self.base.outputs)
        results = {result.id: result for result in iter_run_results(clean_dir)}
        cleans = {item.id: verdict_of(results.get(item.id), declared) for item in probed.items}
        plans, skipped = plan_probes(
            self.base, probed.items, cleans, options, self.settings.cases, self.settings.fields
        )
        upstream = "|".join(
            str(manifest.get(key)) for key in ("dataset_sha256", "judge_fingerprint", "created_at")
        )
        return _Planted(
            probed=probed,
            plans=plans,
            skipped=skipped,
            judge=str(manifest.get("judge")),
            fingerprint=str(manifest.get("judge_fingerprint")),
            upstream=hashlib.sha256(upstream.encode("utf-8")).hexdigest(),
        )

    def items(self, dataset: Any, options: BaseModel) -> Iterable[Item]:
        for plan in dataset.plans:
            yield Item(id=plan.attack_id, inputs=plan.attack)
            if plan.control is not None:
                yield Item(id=plan.control_id, inputs=plan.control)

    def run_identity(self, dataset: Any, options: BaseModel) -> dict[str, Any]:
        return {**self.base.run_identity(dataset.base, options), **self.settings.identity()}

    def judge_options(self, dataset: Any, options: BaseModel) -> BaseModel:
        return self.base.judge_options(dataset.base, options)


class InjectionProbe(_Wrapped):
    """The injection probe of a task's judge: its :class:`CleanItems` run, then its
    :class:`PlantedItems` run, combined into a :class:`ProbeReport`."""

    def __init__(self, base: Task, settings: ProbeSettings) -> None:
        super().__init__(base, settings, f"{base.name} injection probe")

    def plan(self, data: str | Path, options: BaseModel) -> Recipe:
        """The clean run of ``data``'s first items, then the run of the items planted from it."""
        limit, cases = self.settings.limit, len(self.settings.cases)
        return Recipe(
            parts=[
                Part(
                    name=CLEAN,
                    task=CleanItems(self.base, self.settings),
                    options=options,
                    data=data,
                    says=f"probe: judge the first {limit} item(s) as they are",
                ),
                Part(
                    name=PROBES,
                    task=PlantedItems(self.base, self.settings, data),
                    options=options,
                    reads=CLEAN,
                    says=f"probe: judge them with each of {cases} payloads, and the controls",
                ),
            ]
        )

    def combine(
        self, recipe: Recipe, runs: Mapping[str, JudgeRun], out: Path, config: JudgeConfig, options: BaseModel
    ) -> Scores:
        """The report of the two runs, written as ``summary.json`` and ``report.md`` into ``out``.

        The planted items are those the probes part judged: its task's dataset of the clean
        run, made again from the clean verdicts (the same on every read; the probed data is
        not read again)."""
        (part,) = (part for part in recipe.parts if part.name == PROBES)
        planted: _Planted = part.task.read(runs[CLEAN].run_dir, part.options)
        results = {result.id: result for result in iter_run_results(runs[PROBES].run_dir)}
        declared = list(self.base.outputs)
        report = ProbeReport(
            task=self.base.name,
            judge=planted.judge,
            fingerprint=planted.fingerprint,
            items=len(planted.probed.items),
            cases=len(self.settings.cases),
            skipped=dict(planted.skipped),
            run_dir=out,
        )
        report.outcomes = [
            outcome_of(plan, results.get(plan.attack_id), results.get(plan.control_id), declared)
            for plan in planted.plans
        ]
        summary = report.to_dict()
        text = f"# Injection probe of task {self.base.name!r}\n\n```\n{report.table()}\n```\n"
        atomic_write_text(out / "summary.json", strict_json(summary, indent=2) + "\n")
        atomic_write_text(out / "report.md", text)
        return Scores(items=_outcomes_table(report), summary=summary, report=text, extra={"report": report})


def _outcomes_table(report: ProbeReport) -> pd.DataFrame:
    """One row per probe: item, case, family, status, changed and the three verdicts."""
    columns = ["item", "case", "family", "status", "changed", "clean", "attack", "control", "error"]
    rows = [{name: getattr(outcome, name) for name in columns} for outcome in report.outcomes]
    return pd.DataFrame(rows, columns=columns)
