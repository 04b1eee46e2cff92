"""The folder ``jurist view`` serves: its runs looked up by id, and what the pages keep cached.

:class:`Viewer` reads the run directories as they are on disk now (a run still being judged
shows its latest state). The pages built on it are in :mod:`jurist.view.run_pages` (the
history, a run, an item) and :mod:`jurist.view.review_pages` (two runs compared, the queue
of items to label, the labels); each returns the values of its template, and
:mod:`jurist.view.app` renders them and maps errors to HTTP statuses
(:class:`~jurist.errors.RunDirectoryError` → 404, :class:`ValueError` and
:class:`~jurist.errors.InputError` → 400).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from jurist.errors import InputError, RunDirectoryError
from jurist.report.figures import Figure, figures_from_json
from jurist.report.review import Review
from jurist.view.compare import Comparison, compare_tables
from jurist.view.runs import (
    FIGURES_FILE,
    ITEMS_FILE,
    MANIFEST,
    RunRecord,
    file_signature,
    find_runs,
    read_json,
    resolve_run,
    run_record,
    run_review,
)
from jurist.view.table import ItemTable, TableCache

if TYPE_CHECKING:
    from jurist.tasks.run_inputs import RunInputs

__all__ = [
    "DEFAULT_BELOW",
    "DEFAULT_PAGE",
    "MAX_PAGE",
    "PAGE_SIZES",
    "REFRESH_SECONDS",
    "RunView",
    "Viewer",
    "page_size",
]

PAGE_SIZES = (25, 50, 100, 200)
"""The page sizes offered; any size from 1 to 500 is accepted."""

MAX_PAGE = 500
DEFAULT_PAGE = 50
DEFAULT_BELOW = 0.6
"""The confidence under which the queue lists an item, when none is given."""

REFRESH_SECONDS = 5
"""How often a page of a run that is still being judged reloads itself."""

T = TypeVar("T")


class _Memo:
    """Results kept while their inputs are unchanged (the key carries the files' signatures)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            self._values[key] = value
            while len(self._values) > self._size:
                self._values.popitem(last=False)
        return value


@dataclass(frozen=True)
class RunView:
    """A run as a page sees it: its directory, history entry, review columns and item table."""

    id: str
    path: Path
    record: RunRecord
    review: Review
    table: ItemTable | None

    @property
    def running(self) -> bool:
        return self.record.status == "running"

    def require_table(self) -> ItemTable:
        if self.table is None:
            raise InputError(
                f"the run has no {ITEMS_FILE} yet (it is written when the run is scored)", path=self.path
            )
        return self.table


def page_size(value: int | None) -> int:
    """A page size within 1..:data:`MAX_PAGE` (default :data:`DEFAULT_PAGE`)."""
    return DEFAULT_PAGE if value is None else max(1, min(MAX_PAGE, int(value)))


class Viewer:
    """One folder of runs, served.

    Args:
        root: The folder; every run directory under it (at any depth) is served, nothing
            outside it.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        if not self.root.is_dir():
            raise InputError("not a folder of runs", path=root)
        self.tables = TableCache()
        self._figures = _Memo(16)
        self._comparisons = _Memo(8)
        self._inputs = _Memo(4)

    def run(self, identifier: str) -> RunView:
        """The run with this id.

        Raises:
            RunDirectoryError: No run has this id under the folder (or it resolves outside).
            LinkedFileError: A file of the run is a symbolic link (the run is not served).
        """
        path = resolve_run(self.root, identifier)
        record = run_record(self.root, path)
        if record is None:
            raise RunDirectoryError(f"no run {identifier!r} in the served folder")
        items = path / ITEMS_FILE
        try:
            table = self.tables.get(items) if os.path.lexists(items) else None
        except (OSError, pa.ArrowInvalid) as exc:
            raise InputError(f"the item table cannot be read ({exc})", path=items) from None
        return RunView(id=record.id, path=path, record=record, review=run_review(path), table=table)

    def other_runs(self, view: RunView) -> list[RunRecord]:
        """The other runs of the same task, newest first (what a run may be compared with)."""
        return [r for r in find_runs(self.root) if r.task == view.record.task and r.id != view.id]

    def history_svg(self, key: Hashable, figure: Callable[[], Figure]) -> str:
        """A figure of the history drawn as SVG, drawn again only for another ``key``."""
        from jurist.report.plots import figure_svg

        return self._figures.get(key, lambda: figure_svg(figure(), id_prefix="history-"))

    def figures(self, view: RunView) -> list[dict[str, Any]]:
        """The run's figures (``figures.json``) drawn as SVG, redrawn only when the file changes
        (and read from the figure cache of the run's judge config where drawn before)."""
        path = view.path / FIGURES_FILE
        signature = file_signature(path)
        if signature is None:
            return []

        def draw() -> list[dict[str, Any]]:
            from jurist.report.svg_cache import figure_svgs, run_cache_dir

            found = read_json(path)
            try:
                figures = figures_from_json(found) if isinstance(found, list) else []
            except (KeyError, TypeError, ValueError):
                figures = []
            prefixes = [f"fig{index}-" for index in range(1, len(figures) + 1)]
            svgs = figure_svgs(figures, prefixes, run_cache_dir(view.path))
            return [{"figure": figure, "svg": svg} for figure, svg in zip(figures, svgs, strict=True)]

        return self._figures.get((str(path), signature), draw)  # type: ignore[no-any-return]

    def inputs(self, view: RunView) -> RunInputs:
        """The judged inputs of the run's items (kept, with what it read of the run's data
        file, while the manifest is unchanged)."""
        from jurist.tasks import run_task
        from jurist.tasks.run_inputs import RunInputs

        key = ("inputs", str(view.path), file_signature(view.path / MANIFEST))
        return self._inputs.get(key, lambda: RunInputs(view.path, lambda: run_task(view.path)))

    def comparison(self, a: RunView, b: RunView) -> Comparison:
        """The two runs compared (kept while both tables are unchanged)."""
        table_a, table_b = a.require_table(), b.require_table()
        key = (str(table_a.path), table_a.signature, str(table_b.path), table_b.signature)
        return self._comparisons.get(key, lambda: compare_tables(table_a, a.review, table_b, b.review))
