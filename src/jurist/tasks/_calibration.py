"""What a task declares for ``jurist calibrate``: how its judged gold items compare with gold.

The ``calibrate`` verb owns the pipeline of a leaderboard row, the same for every task and
every judge kind (one judge, a jury, a cascade): it resolves the gold file, names its dataset,
picks the run directory under ``OUT/runs/{judge}-{fingerprint}/``, judges, and builds the row's
common columns (:func:`jurist.tasks.calibration_rows.leaderboard_row`). A task says only what
is its own, through :meth:`jurist.Task.calibration`:

- before judging, a :class:`CalibrationPlan`: the options to judge the gold file with, which
  items to judge (``only``), the run folder's name, and how to compare;
- after judging, its ``compare`` gives a :class:`GoldAgreement`: the task's own figures, its
  per-label table, the counts and the results whose usage the row reports.

Neither judges: a task never calls a judge, a jury or the runner for its calibration.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from pydantic import BaseModel

    from jurist.schemas import ItemResult
    from jurist.tasks._results import JudgeRun

__all__ = ["DATASET", "CalibrationPlan", "GoldAgreement"]

DATASET = "{dataset}"
"""What :attr:`CalibrationPlan.folder` writes for the gold file's dataset name."""


@dataclass(frozen=True)
class GoldAgreement:
    """How one judge's run on a gold file agrees with gold: what its leaderboard row says
    beyond the columns every row has.

    Attributes:
        items: Gold items compared (the row's ``items``).
        failed: Gold items whose judgment failed or is missing (``failed``).
        results: The recorded results the row's usage (tokens, cost, latency, calls) is taken
            from: those of the compared items.
        figures: The task's own columns (agreement, bias, ...); none may name a common column.
        by_label: The per-label table (``side``, ``label``, ``n``, ``agreed``, ``rate``,
            ``rate_low``, ``rate_high``); its rates also give the row's ``recall_{label}`` and
            ``precision_{label}``. ``None``: the task's verdict has no classes.
        judgments: Judgments made (default: ``items``; e.g. two per pair judged in both orders).
        model: The row's ``model`` (default: the judge config's).
        settings: Settings the calibration records (``calibration.json``, and the report's
            wording: ``length_unit``, ``agreement_names``, ...), each set unless already set.
    """

    items: int
    failed: int
    results: Sequence[ItemResult]
    figures: Mapping[str, Any] = field(default_factory=dict)
    by_label: pd.DataFrame | None = None
    judgments: int | None = None
    model: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CalibrationPlan:
    """What the ``calibrate`` verb judges for one gold file, and how the task compares the run.

    Attributes:
        options: The task's options the gold file is judged with.
        compare: The finished run (a :class:`~jurist.tasks._results.JudgeRun`, whoever judged
            it: one judge, a jury, a cascade) -> its :class:`GoldAgreement` with gold.
        folder: The run's folder under the judge's ``OUT/runs/{judge}-{fingerprint}/``, with
            :data:`DATASET` standing for the gold file's dataset name (``/`` allowed, e.g.
            ``{dataset}/pairs__2opt``). A rerun resumes the same folder.
        only: The ids of the items to judge (``None``: every item of the gold file).
    """

    options: BaseModel
    compare: Callable[[JudgeRun], GoldAgreement]
    folder: str = DATASET
    only: Collection[str] | None = None

    def run_folder(self, dataset: str) -> str:
        """:attr:`folder` with the dataset's name in place of :data:`DATASET`."""
        return self.folder.replace(DATASET, dataset)
